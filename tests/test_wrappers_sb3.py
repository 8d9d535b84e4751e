"""Stable-Baselines3 integration: PPO / A2C / DQN hosts over ``DeepSea-v0``, ``DelightDQN``
training, save and load, and registration (``gym.make`` and SB3's env-id strings).

References: host probabilities are recomputed through a different SB3 path
(``policy.evaluate_actions`` log-probabilities; the Q-network's argmax / softmax in torch), and
the actions the replay buffer stores are compared with the actions the environment executed
(recorded by a wrapper around the env). Training is a few hundred steps (seconds).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import A2C, DQN, PPO

import delight_gym  # noqa: F401 - registers DeepSea-v0
from delight_gym import DelightExplorationWrapper
from delight_gym.posteriors.value import TabularValuePosterior
from delight_gym.sb3 import DelightDQN
from delight_gym.sb3.hosts import SB3PolicyHost, SB3QHost

SIZE = 4


def _env() -> gym.Env:
    return gym.make("DeepSea-v0", size=SIZE, mapping_seed=0)


def _all_states() -> np.ndarray:
    """Every one-hot DeepSea observation, shape (N², N, N)."""
    return np.eye(SIZE * SIZE, dtype=np.float32).reshape(-1, SIZE, SIZE)


def _make(cls):
    kwargs: dict = {"PPO": {"n_steps": 8, "batch_size": 8}, "A2C": {"n_steps": 8}}.get(
        cls.__name__, {"learning_starts": 10}
    )
    return cls("MlpPolicy", _env(), seed=0, device="cpu", **kwargs)


@pytest.mark.parametrize("cls", [PPO, A2C])
def test_actor_critic_hosts_probabilities_and_deterministic_choice(cls) -> None:
    model = _make(cls)
    de = DelightExplorationWrapper(model, seed=0)
    assert isinstance(de.host, SB3PolicyHost)
    assert isinstance(de.posterior, TabularValuePosterior) and de.posterior.num_states == 16
    obs = _all_states()
    n = len(obs)
    probs = de.host_probs(obs)
    with torch.no_grad():
        obs_t, _ = model.policy.obs_to_tensor(obs)
        ref = np.stack(
            [
                torch.exp(model.policy.evaluate_actions(obs_t, torch.full((n,), a))[1]).numpy()
                for a in range(2)
            ],
            axis=1,
        )
    np.testing.assert_allclose(probs, ref, rtol=1e-5)
    actions, _ = de.predict(obs, deterministic=True)
    np.testing.assert_array_equal(actions, model.predict(obs, deterministic=True)[0])
    single, _ = de.predict(obs[5], deterministic=True)
    assert np.ndim(single) == 0 and single == model.predict(obs[5], deterministic=True)[0]


@pytest.mark.parametrize("temperature", [None, 0.05])
def test_dqn_host_greedy_and_boltzmann(temperature) -> None:
    model = _make(DQN)
    de = DelightExplorationWrapper(model, host_temperature=temperature, seed=0)
    assert isinstance(de.host, SB3QHost)
    assert de.posterior.gamma == model.gamma  # type: ignore[attr-defined]
    obs = _all_states()
    with torch.no_grad():
        q = model.q_net(torch.as_tensor(obs).reshape(len(obs), -1)).double()
    if temperature is None:
        ref = torch.nn.functional.one_hot(q.argmax(dim=1), 2).double().numpy()
    else:
        ref = torch.softmax(q / temperature, dim=1).numpy()
    np.testing.assert_allclose(de.host_probs(obs), ref, rtol=1e-6, atol=1e-12)
    actions, _ = de.predict(obs, deterministic=True)
    np.testing.assert_array_equal(actions, model.predict(obs, deterministic=True)[0])


@pytest.mark.parametrize("cls", [PPO, A2C, DQN])
def test_hosts_run_episodes_on_deep_sea(cls) -> None:
    model = _make(cls)
    de = DelightExplorationWrapper(model, seed=1)
    env = _env()
    for episode in range(3):
        obs, _ = env.reset(seed=episode)
        done = False
        while not done:
            action, _ = de.predict(obs)
            assert np.ndim(action) == 0 and de.last_info["gate_size"] in (0, 1)
            nxt, reward, term, trunc, _ = env.step(action)
            de.observe(obs, action, reward, nxt, term, trunc)
            obs, done = nxt, term or trunc
    assert de.t == 3 * SIZE and de.posterior.counts.sum() == 3 * SIZE  # type: ignore[attr-defined]


class ActionRecorder(gym.Wrapper):
    """Records every action the environment executes."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.executed: list[int] = []

    def step(self, action):
        self.executed.append(int(action))
        return self.env.step(action)


def test_delight_dqn_stores_the_executed_action_and_feeds_the_posterior() -> None:
    env = ActionRecorder(_env())
    steps = 300
    model = DelightDQN("MlpPolicy", env, seed=0, learning_starts=50, device="cpu", buffer_size=1000)
    model.learn(steps)
    assert model.delight is not None
    buffer = model.replay_buffer
    assert buffer is not None
    stored = buffer.actions[:steps, 0, 0].astype(int)
    np.testing.assert_array_equal(stored, env.executed)
    # The posterior saw exactly the buffer's (state, action) pairs.
    states = buffer.observations[:steps, 0].reshape(steps, -1).argmax(axis=1)
    counts = np.zeros((SIZE * SIZE, 2))
    np.add.at(counts, (states, stored), 1.0)
    np.testing.assert_array_equal(model.delight.posterior.counts, counts)  # type: ignore[attr-defined]
    assert model.delight.t == steps
    # SB3's ε-greedy is off; exploration_rate reports DE's ε_t = M/(M + t) (M = 100).
    assert model.exploration_rate == pytest.approx(100 / (100 + steps))
    assert model._n_updates > 0  # it trained


def test_delight_dqn_first_action_is_the_override() -> None:
    # At t = 0, ε = 1 and the greedy host gives the other action surprisal L = 10; under the
    # fresh prior both actions have EI = prior_std·φ(0) ≈ 0.4 at the baseline, so the other
    # action's delight is ≈ 4 ≥ λ: it is the only gated action and DE plays it, every time.
    model = DelightDQN("MlpPolicy", _env(), seed=0, device="cpu")
    obs = _all_states()
    greedy = model.predict(obs, deterministic=True)[0]
    actions = model.predict(obs)[0]
    np.testing.assert_array_equal(actions, 1 - greedy)
    assert model.delight is not None and model.delight.last_info["overridden"].all()


def test_delight_dqn_save_and_load(tmp_path: Path) -> None:
    model = DelightDQN(
        "MlpPolicy",
        _env(),
        seed=0,
        learning_starts=20,
        device="cpu",
        buffer_size=500,
        delight={"gate_price": 0.2, "surprisal_cap": 5.0, "half_life": 50.0},
        host_temperature=0.1,
        posterior_kwargs={"noise_std": 0.3},
    )
    model.learn(120)
    path = tmp_path / "delight_dqn.zip"
    model.save(path)
    loaded = DelightDQN.load(path, device="cpu")
    a, b = model.delight, loaded.delight
    assert a is not None and b is not None
    for name in ("gate_price", "surprisal_cap", "half_life", "baseline", "t"):
        assert getattr(b, name) == getattr(a, name), name
    assert b.host.temperature == 0.1 and b.host.model is loaded  # type: ignore[attr-defined]
    pa, pb = a.posterior, b.posterior
    assert isinstance(pb, TabularValuePosterior) and isinstance(pa, TabularValuePosterior)
    assert (pb.noise_std, pb.gamma) == (0.3, model.gamma)
    np.testing.assert_array_equal(pb.means, pa.means)
    np.testing.assert_array_equal(pb.counts, pa.counts)
    obs = _all_states()
    for _ in range(5):  # same generator state: the same DE draws
        np.testing.assert_array_equal(model.predict(obs)[0], loaded.predict(obs)[0])
    np.testing.assert_array_equal(
        model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0]
    )
    # The loaded model keeps training with DE.
    loaded.set_env(_env())
    loaded.learn(40, reset_num_timesteps=False)
    assert b.t == a.t + 40


def test_delight_dqn_bad_arguments() -> None:
    with pytest.raises(TypeError, match="exploration_fraction"):
        DelightDQN("MlpPolicy", _env(), exploration_fraction=0.5)
    with pytest.raises(ValueError, match="gate_price"):
        DelightDQN("MlpPolicy", _env(), delight={"gate_price": -0.1})
    with pytest.raises(ValueError, match="clock"):
        DelightDQN("MlpPolicy", _env(), delight={"clock": "hours"})
    with pytest.raises(ValueError, match="host"):
        DelightDQN("MlpPolicy", _env(), delight={"host": "mean"})
    with pytest.raises(ValueError, match="delight=False"):
        DelightDQN("MlpPolicy", _env(), delight=False)
    with pytest.raises(TypeError, match="unexpected keyword"):
        DelightDQN("MlpPolicy", _env(), gate_prize=0.1)


def test_delight_dqn_lists_dqns_keywords() -> None:
    """``help(DelightDQN)`` shows DQN's keywords, each with DQN's default, in DQN's order;
    only ``exploration_*`` (DE replaces ε-greedy) are left out."""
    import inspect

    dqn = inspect.signature(DQN.__init__).parameters
    ours = inspect.signature(DelightDQN.__init__).parameters
    kept = [name for name in dqn if not name.startswith("exploration_")]
    assert list(ours)[: len(kept)] == kept
    for name in kept:
        assert ours[name].default == dqn[name].default, name
        assert ours[name].kind == dqn[name].kind, name
    assert not set(ours) & {"exploration_fraction", "exploration_initial_eps"}
    de = ["delight", "posterior", "posterior_kwargs", "host_temperature", "lazy_gate"]
    assert [n for n in ours if ours[n].kind is inspect.Parameter.KEYWORD_ONLY] == de


def test_delight_dqn_one_seed_seeds_de() -> None:
    options = {"gate_price": 0.2, "half_life": 50.0}
    a, b = (DelightDQN("MlpPolicy", _env(), delight=options, seed=3) for _ in range(2))
    assert a.delight is not None and b.delight is not None
    assert a.delight.delight == b.delight.delight
    obs = _all_states()
    np.testing.assert_array_equal(a.predict(obs)[0], b.predict(obs)[0])


@pytest.mark.parametrize("cls", [PPO, DQN])
def test_wrapper_clock_starts_where_the_hosts_training_stopped(cls) -> None:
    """A wrapped trained model is explored at ``ε_t`` of its training steps, not at ``ε_0 = 1``
    as if it were new."""
    model = _make(cls).learn(48)
    assert model.num_timesteps == 48
    de = DelightExplorationWrapper(model, seed=0)
    assert (de.t, de.epsilon) == (48, 100 / 148)
    assert DelightExplorationWrapper(model, start_step=0).epsilon == 1.0


def test_registration_and_sb3_env_ids() -> None:
    env = gym.make("DeepSea-v0")
    assert env.observation_space.shape == (10, 10)
    # A fresh interpreter that never imports delight_gym itself: the "module:id" form imports
    # and registers it, for gym.make and for SB3's env-id strings alike.
    code = (
        "import gymnasium as gym\n"
        "from stable_baselines3 import PPO\n"
        "env = gym.make('delight_gym:DeepSea-v0')\n"
        "model = PPO('MlpPolicy', 'delight_gym:DeepSea-v0', n_steps=16, batch_size=16, seed=0)\n"
        "model.learn(16)\n"
        "print(env.observation_space.shape, model.observation_space.shape)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(10, 10) (10, 10)"


class TransitionRecorder(gym.Wrapper):
    """Records every transition as the environment sees it."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.log: list[tuple[int, int, float, int, bool]] = []
        self._obs = 0

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._obs = int(obs)
        return obs, info

    def step(self, action):
        obs, reward, term, trunc, info = self.env.step(action)
        self.log.append((self._obs, int(action), float(reward), int(obs), bool(term)))
        self._obs = int(obs)
        return obs, reward, term, trunc, info


class RecordingPosterior:
    """Zero means and EI (DE never overrides); records every transition it is fed."""

    num_actions = 4

    def __init__(self) -> None:
        self.log: list[tuple[int, int, float, int, bool]] = []

    def mean(self, observations):
        return np.zeros((len(observations), 4))

    def expected_improvement(self, observations, baseline):
        return np.zeros((len(observations), 4))

    def update(self, observations, actions, rewards, next_observations, terminated):
        for row in zip(observations, actions, rewards, next_observations, terminated, strict=True):
            self.log.append((int(row[0]), int(row[1]), float(row[2]), int(row[3]), bool(row[4])))


def test_delight_dqn_feeds_true_final_observations_and_termination() -> None:
    # FrozenLake cut to 3 steps: many episodes end by truncation (not termination), and after
    # every episode end SB3's vector env has already reset; the posterior must still get the
    # true final observation and `terminated` without the time-limit truncations.
    env = TransitionRecorder(
        gym.make("FrozenLake-v1", is_slippery=True, max_episode_steps=3).unwrapped
    )
    env = gym.wrappers.TimeLimit(env, max_episode_steps=3)
    posterior = RecordingPosterior()
    model = DelightDQN(
        "MlpPolicy", env, posterior=posterior, seed=0, device="cpu", learning_starts=1000
    )
    model.learn(200)
    recorder = env.env
    assert isinstance(recorder, TransitionRecorder)
    assert posterior.log == recorder.log
    # Episodes that ended by the time limit: a third step that did not terminate, from a state
    # other than the reset state 0 (so feeding the reset observation would have been caught).
    steps, truncated_from_elsewhere = 0, 0
    for _, _, _, nxt, term in recorder.log:
        steps += 1
        if term or steps == 3:
            truncated_from_elsewhere += (not term) and nxt != 0
            steps = 0
    assert truncated_from_elsewhere >= 3


@pytest.mark.parametrize("kind", ["deep_sea", "frozen_lake"])
def test_predict_has_sb3_dqn_types(kind: str) -> None:
    from stable_baselines3.common.env_util import make_vec_env

    if kind == "deep_sea":
        make = _env
    else:

        def make() -> gym.Env:
            return gym.make("FrozenLake-v1", is_slippery=False)

    env = make()
    batch = _all_states()[:5] if kind == "deep_sea" else np.arange(5)  # valid states
    observations = {
        "one": batch[3],
        "batch": batch,
        "vec_env": make_vec_env(make, n_envs=3, seed=0).reset(),
    }
    dqn = DQN("MlpPolicy", env, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    de = DelightExplorationWrapper(dqn, seed=0)
    for name, obs in observations.items():
        for deterministic in (True, False):
            theirs, their_state = dqn.predict(obs, deterministic=deterministic)
            ours, state = de.predict(obs, deterministic=deterministic)
            assert type(ours) is type(theirs) is np.ndarray, (name, deterministic)
            assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), (name, deterministic)
            assert state is their_state is None


def test_discrete_engine_saves_and_loads_with_its_model(tmp_path):
    """The ``Discrete`` engine round-trips through ``save`` / ``load`` with its SB3 model."""
    from stable_baselines3 import PPO

    from delight_gym import DelightExplorationWrapper, DiscreteDelightWrapper
    from delight_gym.de.engine import DelightEngine

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, seed=0, device="cpu")
    wrapped = DelightExplorationWrapper(model, seed=1)
    assert isinstance(wrapped, DiscreteDelightWrapper)
    obs = np.stack([model.observation_space.sample() for _ in range(5)])
    wrapped.save(tmp_path / "de.zip")
    loaded = DelightEngine.load(tmp_path / "de.zip")
    np.testing.assert_array_equal(loaded.predict(obs)[0], wrapped.predict(obs)[0])
    assert type(loaded.host.model) is PPO
