"""EZGreedyDQN: the zeta duration law, the repeat, ε = 0, seeding and save/load."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats
from stable_baselines3 import DQN
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from delight_gym.sb3.ez_greedy import EZGreedyDQN, zeta_durations

SMALL = {"policy_kwargs": {"net_arch": [16]}, "buffer_size": 2_000, "batch_size": 16}


def _chi_square_p(draws: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square p-value of ``draws`` in bins ``1..B-1`` and a tail bin ``>= B``."""
    n_bins = len(pmf)
    counts = np.bincount(np.minimum(draws, n_bins), minlength=n_bins + 1)[1:]
    expected = np.append(pmf[:-1], 1.0 - pmf[:-1].sum()) * draws.size
    return float(stats.chisquare(counts, expected).pvalue)


@pytest.mark.parametrize("mu", [1.5, 2.0, 3.0])
def test_uncapped_durations_follow_scipy_zipf(mu):
    draws = zeta_durations(np.random.default_rng(11), 100_000, mu, None)
    pmf = stats.zipf(mu).pmf(np.arange(1, 31))
    assert draws.min() >= 1
    assert _chi_square_p(draws, pmf) > 1e-3


@pytest.mark.parametrize("mu, cap", [(2.0, 10_000), (2.0, 7), (1.0, 50), (0.5, 20)])
def test_capped_durations_follow_the_truncated_zipf(mu, cap):
    draws = zeta_durations(np.random.default_rng(12), 100_000, mu, cap)
    assert draws.min() >= 1 and draws.max() <= cap
    support = np.arange(1, min(cap, 30) + 1)
    weights = support.astype(float) ** -mu
    total = (np.arange(1, cap + 1, dtype=float) ** -mu).sum()
    pmf = weights / total
    if mu > 1:
        np.testing.assert_allclose(
            pmf, stats.zipf(mu).pmf(support) / stats.zipf(mu).cdf(cap), rtol=1e-9
        )
    assert _chi_square_p(draws, pmf) > 1e-3
    # The frequency of n = 1 is within 4 standard errors of its probability.
    p1 = pmf[0]
    assert abs(np.mean(draws == 1) - p1) < 4 * np.sqrt(p1 * (1 - p1) / draws.size)


def test_duration_arguments_are_checked():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="mu"):
        zeta_durations(rng, 3, 1.0, None)
    with pytest.raises(ValueError, match="max_duration"):
        zeta_durations(rng, 3, 2.0, 0)
    with pytest.raises(ValueError, match="ez_mu"):
        EZGreedyDQN("MlpPolicy", "CartPole-v1", ez_mu=0.9, ez_max_duration=None)


class _Recorder(BaseCallback):
    """Per step: the actions taken, each env's steps still held, the dones, the observations."""

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[np.ndarray] = []
        self.remaining: list[np.ndarray] = []
        self.dones: list[np.ndarray] = []
        self.obs: list[np.ndarray] = []
        self.greedy: list[np.ndarray] = []

    def _on_step(self) -> bool:
        model = self.model
        self.actions.append(np.array(self.locals["actions"]))
        self.remaining.append(model.ez_remaining.copy())
        self.dones.append(np.array(self.locals["dones"]))
        self.obs.append(np.array(model._last_obs))
        q = model.q_net(model.policy.obs_to_tensor(model._last_obs)[0])
        self.greedy.append(q.argmax(dim=1).cpu().numpy())
        return True


class _Actions(BaseCallback):
    """The actions taken, per step."""

    def __init__(self) -> None:
        super().__init__()
        self.actions: list[np.ndarray] = []

    def _on_step(self) -> bool:
        self.actions.append(np.array(self.locals["actions"]))
        return True


def _vec(n: int = 1) -> DummyVecEnv:
    return DummyVecEnv([lambda: gym.make("CartPole-v1") for _ in range(n)])


def _ez(seed: int = 0, eps: float = 1.0, n_envs: int = 1, **kw) -> EZGreedyDQN:
    params = dict(SMALL, learning_starts=0, exploration_initial_eps=eps)
    params.update(exploration_final_eps=eps, seed=seed, **kw)
    return EZGreedyDQN("MlpPolicy", _vec(n_envs), **params)


def test_an_action_is_repeated_exactly_n_steps_then_a_fresh_decision():
    model = _ez(seed=3, n_envs=3, ez_max_duration=40)
    rec = _Recorder()
    model.learn(1_500, callback=rec)
    actions, remaining, dones = map(np.array, (rec.actions, rec.remaining, rec.dones))
    fresh_durations = []
    for i in range(3):
        t = 0
        while t < len(actions):
            n = int(remaining[t, i]) + 1  # a fresh decision (ε = 1: an option of n steps)
            fresh_durations.append(n)
            end = t + n
            cut = np.flatnonzero(dones[t : min(end, len(actions)) - 1, i])
            if cut.size:  # the episode ended inside the repeat: the next step decides afresh
                t = t + int(cut[0]) + 1
                continue
            if end > len(actions):
                break
            assert (actions[t:end, i] == actions[t, i]).all()
            np.testing.assert_array_equal(remaining[t:end, i], np.arange(n - 1, -1, -1))
            t = end
    assert max(fresh_durations) > 4 and 1 in fresh_durations


def test_epsilon_zero_is_dqns_greedy_acting():
    kw = dict(SMALL, learning_starts=0, exploration_initial_eps=0.0, exploration_final_eps=0.0)
    model = EZGreedyDQN("MlpPolicy", _vec(), seed=5, train_freq=4, **kw)
    rec = _Recorder()
    model.learn(400, callback=rec)
    np.testing.assert_array_equal(np.array(rec.actions), np.array(rec.greedy))
    assert not np.array(rec.remaining).any()
    # Without gradient steps both see the same states: the same actions as SB3's DQN.
    runs = []
    for cls in (EZGreedyDQN, DQN):
        m = cls("MlpPolicy", _vec(), seed=5, gradient_steps=0, **kw)
        r = _Actions()
        m.learn(300, callback=r)
        runs.append(np.array(r.actions))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_the_epsilon_is_sb3s_schedule():
    model = _ez(eps=1.0)
    model.exploration_initial_eps, model.exploration_final_eps = 1.0, 0.05
    model._setup_model()
    model._current_progress_remaining = 1.0
    assert model.ez_epsilon(learning_starts=0) == pytest.approx(1.0)
    model._current_progress_remaining = 0.0
    assert model.ez_epsilon(learning_starts=0) == pytest.approx(0.05)
    assert model.ez_epsilon(learning_starts=10) == 1.0  # warm-up: every decision explores


def test_seeding_reproduces_and_uses_no_global_rng():
    def run(seed):
        model = _ez(seed=seed, n_envs=2, gradient_steps=0)
        rec = _Actions()
        np.random.seed(123)  # noqa: NPY002 (the global generator must stay untouched)
        model.learn(300, callback=rec)
        return np.array(rec.actions), model.ez_rng.bit_generator.state, np.random.random()  # noqa: NPY002

    a1, s1, g1 = run(8)
    a2, s2, _ = run(8)
    a3, _, _ = run(9)
    np.testing.assert_array_equal(a1, a2)
    assert s1 == s2
    assert not np.array_equal(a1, a3)
    np.random.seed(123)  # noqa: NPY002
    assert g1 == np.random.random()  # noqa: NPY002 (acting never drew from the global one)


def test_save_load_round_trip_and_continued_learning(tmp_path):
    model = _ez(seed=4, n_envs=2, ez_mu=2.5, ez_max_duration=300, gradient_steps=0)
    model.learn(200)
    path = tmp_path / "ez.zip"
    model.save(path)
    loaded = EZGreedyDQN.load(path)  # no env
    assert loaded.ez_mu == 2.5 and loaded.ez_max_duration == 300
    assert loaded.ez_rng.bit_generator.state == model.ez_rng.bit_generator.state
    np.testing.assert_array_equal(loaded.ez_remaining, model.ez_remaining)
    np.testing.assert_array_equal(loaded.ez_action, model.ez_action)
    obs = np.zeros((2, 4), dtype=np.float32)
    np.testing.assert_array_equal(
        loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
    )
    # Continued on the same envs, the repeats and the generator's stream go on.
    while not model.ez_remaining.any():
        model.learn(8, reset_num_timesteps=False)
    held, start = model.ez_remaining.copy(), model.num_timesteps
    rec = _Recorder()
    model.learn(96, callback=rec, reset_num_timesteps=False)
    assert model.num_timesteps == start + 96
    first = np.array(rec.remaining[0])
    np.testing.assert_array_equal(first[held > 0], held[held > 0] - 1)
    # Loaded with an env (SB3 resets it): the clock and the stream go on, the repeats end.
    resumed = EZGreedyDQN.load(path, env=_vec(2))
    state = resumed.ez_rng.bit_generator.state
    resumed.learn(96, reset_num_timesteps=False)
    assert resumed.num_timesteps == 296
    assert resumed.ez_rng.bit_generator.state != state
    # A pickle of the generator round-trips too.
    back = pickle.loads(pickle.dumps(model.ez_rng))
    assert back.random() == model.ez_rng.random()
