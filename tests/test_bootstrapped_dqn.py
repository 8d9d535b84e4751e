"""BootstrappedDQN: a head per episode per env, DE on top, save/load, envs, bad arguments."""

from __future__ import annotations

import importlib.util

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3.common.buffers import ReplayBuffer  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402

import delight_gym  # noqa: E402, F401  (registers DeepSea-v0)
from delight_gym.de.options import DelightOptions  # noqa: E402
from delight_gym.de.rule import delight_rule, sample_acting  # noqa: E402
from delight_gym.de.stats import DelightStats  # noqa: E402
from delight_gym.sb3.bootstrapped_dqn import BootstrappedDQN  # noqa: E402

SMALL = {
    "learning_starts": 32,
    "batch_size": 16,
    "num_heads": 4,
    "policy_kwargs": {"net_arch": [16, 16]},
    "device": "cpu",
}


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Small batched heads run fastest on one thread (and a shared machine stays usable)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class _Recorder(BaseCallback):
    """Checks, at every step, the action against the heads' greedy actions on the same obs."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def _on_step(self) -> bool:
        model = self.model
        obs = np.asarray(model._last_obs)  # the observation the action was chosen for
        heads = model.episode_heads.copy()  # not yet redrawn for finished episodes
        q = model.ensemble.head_values(obs)  # no gradient step since the action was chosen
        expected = q[heads, np.arange(len(heads))].argmax(axis=1)
        self.rows.append(
            (heads, expected, np.asarray(self.locals["actions"]), self.locals["dones"])
        )
        return True


def test_without_delight_acts_greedily_on_each_envs_episode_head() -> None:
    env = make_vec_env("CartPole-v1", n_envs=2, seed=0)
    model = BootstrappedDQN("MlpPolicy", env, seed=0, **SMALL)
    rec = _Recorder()
    model.learn(300, callback=rec)
    heads = np.array([r[0] for r in rec.rows])
    expected = np.array([r[1] for r in rec.rows])
    actions = np.array([r[2] for r in rec.rows])
    dones = np.array([r[3] for r in rec.rows])
    np.testing.assert_array_equal(actions, expected)
    # A head changes only right after its env's episode ended, and does change across episodes.
    changed = heads[1:] != heads[:-1]
    assert not np.any(changed & ~dones[:-1])
    assert dones.sum() >= 4 and changed.sum() >= 2
    assert model.episodes == dones.sum() and model.steps == 300
    assert model.epsilon == 0.0


def _reference_de_actions(
    model: BootstrappedDQN, obs: np.ndarray, heads: np.ndarray, rng
) -> np.ndarray:
    """DE on top of the episode's head, written out per row and per head."""
    k, n = model.num_heads, len(obs)
    q = np.stack([model.ensemble.q_values(obs, h) for h in range(k)])
    means = q.mean(axis=0)
    host = np.zeros_like(means)
    for i in range(n):
        host[i, np.argmax(q[heads[i], i])] = 1.0
    base = np.array([means[i, np.argmax(host[i])] for i in range(n)])
    ei = np.zeros_like(means)
    for i in range(n):
        for a in range(means.shape[1]):
            ei[i, a] = sum(max(q[h, i, a] - base[i], 0.0) for h in range(k)) / k
    ei /= model.value_scale
    decision = delight_rule(
        host,
        ei,
        model.epsilon,
        gate_price=model.delight.gate_price,
        surprisal_cap=model.delight.surprisal_cap,
    )
    return np.asarray(sample_acting(decision, rng)[0])


@pytest.mark.parametrize("value_scale", [1.0, 0.05])
def test_delight_on_top_of_the_head(value_scale: float) -> None:
    env = make_vec_env("DeepSea-v0", n_envs=3, seed=0, env_kwargs={"size": 6, "mapping_seed": 0})
    model = BootstrappedDQN("MlpPolicy", env, seed=1, delight={"value_scale": value_scale}, **SMALL)
    model.learn(120)
    assert model.episodes == 3 * (40 // 6)  # 3 envs, 40 steps each, 6 steps an episode
    obs = np.asarray(model._last_obs)
    heads = np.array([0, 1, 3])
    rng = np.random.default_rng(5)
    model.rng = np.random.default_rng(5)
    expected = _reference_de_actions(model, obs, heads, rng)
    actions, new_heads = model._act(torch.as_tensor(obs), heads, record=False)
    np.testing.assert_array_equal(actions, expected)
    np.testing.assert_array_equal(new_heads, heads)  # no commit by default


def test_infinite_gate_price_is_the_plain_agent() -> None:
    env = make_vec_env("DeepSea-v0", n_envs=2, seed=0, env_kwargs={"size": 5, "mapping_seed": 1})
    plain = BootstrappedDQN("MlpPolicy", env, seed=3, **SMALL)
    gated = BootstrappedDQN("MlpPolicy", env, seed=3, delight={"gate_price": float("inf")}, **SMALL)
    obs = np.asarray(env.reset())
    heads = np.array([2, 3])
    a0, _ = plain._act(torch.as_tensor(obs), heads, record=False)
    a1, _ = gated._act(torch.as_tensor(obs), heads, record=True)
    np.testing.assert_array_equal(a0, a1)
    assert gated.delight_stats.overridden == 0 and gated.delight_stats.gate_empty == 2


def test_commit_switches_to_a_head_that_improves_on_the_override() -> None:
    env = gym.make("DeepSea-v0", size=4, mapping_seed=0)
    model = BootstrappedDQN(
        "MlpPolicy",
        env,
        seed=0,
        delight={"gate_price": 0.0, "half_life": 1e12, "commit": True},
        **{**SMALL, "num_heads": 16},
    )
    obs = np.zeros((32, 4, 4), dtype=np.float32)
    obs.reshape(32, 16)[np.arange(32), np.arange(32) % 16] = 1.0
    heads = np.zeros(32, dtype=np.int64)
    actions, new_heads = model._act(torch.as_tensor(obs), heads, record=True)
    q = model.ensemble.head_values(obs)
    base = q.mean(axis=0)[np.arange(32), q[0].argmax(axis=1)]
    switched = new_heads != heads
    assert model.delight_stats.overridden > 0 and switched.any()
    for i in np.flatnonzero(switched):
        assert q[new_heads[i], i, actions[i]] > base[i]  # drawn ∝ (Q_k(s, b) − v_s)^+


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("CartPole-v1", {}),
        ("DeepSea-v0", {"size": 5, "mapping_seed": 0}),
        ("FrozenLake-v1", {"is_slippery": False}),
    ],
)
@pytest.mark.parametrize("delight", [None, True])
def test_learns_and_evaluates_on_box_one_hot_and_discrete_observations(
    env_id, kwargs, delight
) -> None:
    env = gym.make(env_id, **kwargs)
    model = BootstrappedDQN("MlpPolicy", env, seed=0, delight=delight, mask_prob=0.5, **SMALL)
    model.learn(200, log_interval=10_000)  # no log dump: the statistics are not reset
    assert model._n_updates == 200 - SMALL["learning_starts"]
    mean, _ = evaluate_policy(model, model.get_env(), n_eval_episodes=2, deterministic=False)
    assert np.isfinite(mean)
    action, state = model.predict(env.observation_space.sample())
    assert action.shape == () and state[0].shape == (1,)
    greedy, _ = model.predict(env.observation_space.sample(), deterministic=True)
    assert 0 <= int(greedy) < env.action_space.n
    if delight:
        summary = model.delight_stats.summary()
        assert 0.0 <= summary["delight/override_rate"] <= 1.0
        # ε of the last decision: the episode clock before that step (it may have ended one).
        eps = summary["rollout/exploration_rate"]
        assert eps in (100 / (100 + model.episodes), 100 / (100 + model.episodes - 1))
        assert model.delight_stats.steps == 200


def test_predict_carries_heads_in_state_and_redraws_them_at_episode_start() -> None:
    env = gym.make("CartPole-v1")
    model = BootstrappedDQN("MlpPolicy", env, seed=0, **SMALL)
    obs = np.stack([env.observation_space.sample() for _ in range(6)])
    actions, (heads,) = model.predict(obs)
    q = model.ensemble.head_values(obs)
    np.testing.assert_array_equal(actions, q[heads, np.arange(6)].argmax(axis=1))
    _, (same,) = model.predict(obs, state=(heads,), episode_start=np.zeros(6, bool))
    np.testing.assert_array_equal(same, heads)
    start = np.array([True] * 6)
    redrawn = [model.predict(obs, state=(heads,), episode_start=start)[1][0] for _ in range(5)]
    assert any(not np.array_equal(r, heads) for r in redrawn)
    greedy, _ = model.predict(obs, deterministic=True)
    np.testing.assert_array_equal(greedy, q.mean(axis=0).argmax(axis=1))


def test_save_load_round_trip(tmp_path) -> None:
    env = gym.make("DeepSea-v0", size=5, mapping_seed=0)
    model = BootstrappedDQN(
        "MlpPolicy", env, seed=2, delight={"clock": "step", "commit": True}, mask_prob=0.5, **SMALL
    )
    model.learn(150)
    model.save(tmp_path / "boot")
    loaded = BootstrappedDQN.load(tmp_path / "boot", env=env, device="cpu")
    obs = np.zeros((25, 5, 5), dtype=np.float32)
    obs.reshape(25, 25)[np.arange(25), np.arange(25)] = 1.0
    np.testing.assert_array_equal(loaded.ensemble.head_values(obs), model.ensemble.head_values(obs))
    for name, buf in model.ensemble.network.named_buffers():  # priors and targets
        assert torch.equal(buf, dict(loaded.ensemble.network.named_buffers())[name]), name
    state, loaded_state = model.policy.optimizer.state_dict(), loaded.policy.optimizer.state_dict()
    for key, value in state["state"].items():
        assert torch.equal(value["exp_avg"], loaded_state["state"][key]["exp_avg"])
    assert loaded.rng.bit_generator.state == model.rng.bit_generator.state
    assert loaded.delight == model.delight == DelightOptions(clock="step", commit=True, host="head")
    assert (loaded.episodes, loaded.steps, loaded._n_updates) == (
        model.episodes,
        model.steps,
        model._n_updates,
    )
    np.testing.assert_array_equal(loaded.episode_heads, model.episode_heads)
    assert loaded.epsilon == model.epsilon == 100 / 250
    # Same state, same generator: same DE decisions.
    a0, s0 = model.predict(obs, state=(np.arange(25) % 4,))
    a1, s1 = loaded.predict(obs, state=(np.arange(25) % 4,))
    np.testing.assert_array_equal(a0, a1)
    np.testing.assert_array_equal(s0[0], s1[0])


def test_replay_buffer_masks_and_own_generator() -> None:
    env = make_vec_env("CartPole-v1", n_envs=2, seed=0)
    model = BootstrappedDQN("MlpPolicy", env, seed=0, mask_prob=0.25, **{**SMALL, "num_heads": 40})
    model.learn(100)
    buf = model.replay_buffer
    masks = buf.masks[: buf.pos]
    assert masks.shape == (50, 2, 40)
    assert abs(masks.mean() - 0.25) < 0.04  # 4000 draws: s.e. 0.007
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    samples = buf.sample(8)
    assert samples.masks.shape == (8, 40) and samples.observations.shape == (8, 4)
    untouched = np.random.get_state()[1]  # noqa: NPY002
    np.testing.assert_array_equal(untouched, state)  # the global RNG is untouched


def test_stats_summary_arithmetic() -> None:
    stats = DelightStats()
    stats.record(
        np.array([True, False]), np.array([2, 0]), np.array([False, True]), np.array([0.4]), 0.5
    )
    stats.record(
        np.array([True, True]),
        np.array([1, 1]),
        np.array([False, False]),
        np.array([0.2, 0.3]),
        0.25,
    )
    s = stats.summary()
    assert s["delight/override_rate"] == 0.75
    assert s["delight/gate_size"] == 1.0
    assert s["delight/gate_empty_rate"] == 0.25
    assert s["delight/overridden_ei"] == pytest.approx(0.3)
    assert s["rollout/exploration_rate"] == 0.25
    stats.reset()
    assert stats.steps == 0


def test_auto_value_scale_tracks_td_targets() -> None:
    env = gym.make("CartPole-v1")
    model = BootstrappedDQN("MlpPolicy", env, seed=0, delight={"value_scale": "auto"}, **SMALL)
    assert model.value_scale == 1.0  # before the first gradient step
    model.learn(100)
    assert (
        model.value_scale_estimate is not None
        and model.value_scale == model.value_scale_estimate > 0
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"delight": {"clock": "weeks"}}, ValueError, "clock"),
        ({"delight": {"colour": 1}}, TypeError, "colour"),
        ({"delight": {"host": "mean", "commit": True}}, ValueError, "commit"),
        ({"delight": {"host": "best"}}, ValueError, "host"),
        ({"delight": {"gate_price": -1.0}}, ValueError, "gate_price"),
        ({"delight": {"value_scale": -2.0}}, ValueError, "value_scale"),
        ({"delight": {"value_scale": "big"}}, ValueError, "value_scale"),
        ({"delight": "yes"}, TypeError, "delight"),
        ({"target_update_interval": 0}, ValueError, "target_update_interval"),
        ({"num_heads": 0}, ValueError, "num_heads"),
        ({"mask_prob": 0.0}, ValueError, "mask_prob"),
        ({"mask_prob": 2.0}, ValueError, "mask_prob"),
        ({"replay_buffer_class": ReplayBuffer}, TypeError, "replay_buffer_class"),
        ({"policy_kwargs": {"num_heads": 3}}, ValueError, "num_heads"),
        ({"delight": {"clock": "weeks"}}, ValueError, "clock"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        BootstrappedDQN("MlpPolicy", "CartPole-v1", **kwargs)


def test_unsupported_spaces_are_refused() -> None:
    with pytest.raises((TypeError, AssertionError), match=r"Box or Discrete|not supported"):
        BootstrappedDQN("MlpPolicy", gym.make("Blackjack-v1"))  # Tuple observations


@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda",
            marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
        ),
    ],
)
def test_learns_on_every_device_from_the_same_initial_heads(device: str) -> None:
    env = gym.make("DeepSea-v0", size=5, mapping_seed=0)
    cpu = BootstrappedDQN("MlpPolicy", env, seed=4, **SMALL)
    model = BootstrappedDQN("MlpPolicy", env, seed=4, delight=True, **{**SMALL, "device": device})
    assert model.ensemble.device.type == device
    obs = np.zeros((25, 5, 5), dtype=np.float32)
    obs.reshape(25, 25)[np.arange(25), np.arange(25)] = 1.0
    np.testing.assert_allclose(
        model.ensemble.head_values(obs), cpu.ensemble.head_values(obs), rtol=1e-5, atol=1e-6
    )
    model.learn(100)
    assert model._n_updates == 100 - SMALL["learning_starts"]
    assert np.all(np.isfinite(model.ensemble.head_values(obs)))


# Recorded by running the same code on commit 480e03e (before the ensemble's speed-ups of
# issue #12: numpy one-hot checks, index_select look-ups, in-place blank rows): the executed
# actions (np.packbits, hex) and the sum and sum of squares of the heads' parameters after
# 300 steps, one torch thread.
_PINNED_RUNS = {
    "DeepSea-v0": (
        True,
        "befbef13ffc49000a509df2f004ad0405ed26a37ffd537d2622ec24b6da28e38ff963b25f3f0",
        [16.603616729087662, 117.00325169771874],
    ),
    "CartPole-v1": (
        None,
        "ffffd56aaaaaad56aaaaaaaaaabffc9555290001fffff555556aaad7ffffffd555554e6aaa90",
        [160.58025766187347, 175.58761615132735],
    ),
}


@pytest.mark.parametrize("env_id", list(_PINNED_RUNS))
def test_seeded_run_matches_the_run_recorded_before_the_speed_ups(env_id: str) -> None:
    """Same seed, same actions and same heads as before issue #12's speed-ups (DeepSea with
    DE: one-hot look-ups with all-zero final observations; CartPole: dense inputs)."""
    delight, pinned_actions, pinned_heads = _PINNED_RUNS[env_id]
    kw = {"size": 6, "mapping_seed": 0} if env_id == "DeepSea-v0" else {}
    model = BootstrappedDQN(
        "MlpPolicy",
        gym.make(env_id, **kw),
        num_heads=4,
        policy_kwargs={"net_arch": [16, 16]},
        delight=delight,
        seed=0,
        learning_starts=50,
        buffer_size=2000,
        batch_size=32,
        train_freq=1,
        device="cpu",
    )
    model.learn(300)
    actions = model.replay_buffer.actions[:300, 0, 0].astype(np.uint8)
    assert np.packbits(actions).tobytes().hex() == pinned_actions
    params = [p.detach().double() for p in model.ensemble.network.parameters()]
    checksums = [float(sum(p.sum() for p in params)), float(sum((p**2).sum() for p in params))]
    np.testing.assert_allclose(checksums, pinned_heads, rtol=1e-6)


# -- SB3's conventions -------------------------------------------------------------------------


def _mask_sample_reference(buf, batch_inds: np.ndarray, env_inds: np.ndarray) -> dict:
    """The transitions at these indices, read straight from the buffer's arrays."""
    return {
        "observations": buf.observations[batch_inds, env_inds],
        "actions": buf.actions[batch_inds, env_inds],
        "rewards": buf.rewards[batch_inds, env_inds].reshape(-1, 1),
        "masks": buf.masks[batch_inds, env_inds],
    }


def test_buffer_samples_its_masks_with_the_transitions() -> None:
    """``sample`` returns each transition with its own slot's mask: the same draws replayed on a
    copy of the buffer's generator pick the same rows, read directly from its arrays."""
    env = make_vec_env("CartPole-v1", n_envs=3, seed=1)
    model = BootstrappedDQN("MlpPolicy", env, seed=3, mask_prob=0.5, **SMALL)
    model.learn(90)
    buf = model.replay_buffer
    rng = np.random.Generator(type(buf.rng.bit_generator)())
    rng.bit_generator.state = buf.rng.bit_generator.state
    batch_inds = rng.integers(0, buf.pos, size=64)
    env_inds = rng.integers(0, 3, size=64)
    got = buf.sample(64)
    want = _mask_sample_reference(buf, batch_inds, env_inds)
    for name, value in want.items():
        np.testing.assert_array_equal(getattr(got, name).cpu().numpy(), value, err_msg=name)
    assert got.masks.dtype == torch.bool


def test_buffer_keeps_one_hot_columns_and_training_on_them_is_bitwise_the_same() -> None:
    """On one-hot observations the buffer keeps each stored row's column (a sample carries
    them, ``None`` where a row is not one-hot) and the heads train on them exactly as on the
    encoded rows."""
    env = gym.make("DeepSea-v0", size=6)
    models = [BootstrappedDQN("MlpPolicy", env, seed=4, **SMALL) for _ in range(2)]
    models[1].replay_buffer.one_hot_codes = None  # the encoding path
    for model in models:
        model.learn(200)
    buf = models[0].replay_buffer
    got = buf.sample(32)
    for rows, idx in ((got.observations, got.observation_indices),
                      (got.next_observations, got.next_observation_indices)):  # fmt: skip
        flat = rows.reshape(32, -1)
        want = torch.where(flat.sum(1) > 0, flat.argmax(1), -1)
        assert idx is not None and torch.equal(idx, want)
    assert models[1].replay_buffer.sample(8).observation_indices is None
    for a, b in zip(*(m.policy.state_dict().values() for m in models), strict=True):
        assert torch.equal(a, b)
    buf.one_hot_codes[: buf.pos, :, 0] = -2  # a row that is not one-hot: no columns
    assert buf.sample(8).observation_indices is None


def test_load_without_env(tmp_path) -> None:
    """``BootstrappedDQN.load(path)`` with no env, as ``DQN.load(path)``: same greedy and
    exploring actions as the saved model."""
    env = gym.make("CartPole-v1")
    model = BootstrappedDQN("MlpPolicy", env, seed=0, delight=True, **SMALL)
    model.learn(64)
    model.save(tmp_path / "boot")
    loaded = BootstrappedDQN.load(tmp_path / "boot", device="cpu")
    assert loaded.env is None and loaded.delight == model.delight
    obs = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
    np.testing.assert_array_equal(
        loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
    )
    heads = (np.arange(16) % 4,)
    np.testing.assert_array_equal(loaded.predict(obs, heads)[0], model.predict(obs, heads)[0])


def test_continuing_training_keeps_each_envs_head() -> None:
    """``learn(..., reset_num_timesteps=False)`` goes on with the envs where they are, so each
    env keeps the head of its unfinished episode (SB3 passes ``_setup_learn``'s arguments by
    position)."""
    env = make_vec_env("CartPole-v1", n_envs=4, seed=0)
    model = BootstrappedDQN("MlpPolicy", env, seed=1, **{**SMALL, "num_heads": 1000})
    model.learn(37)
    heads = model.episode_heads.copy()
    last_obs = np.array(model._last_obs, copy=True)
    model.learn(0, reset_num_timesteps=False)
    np.testing.assert_array_equal(model._last_obs, last_obs)  # the envs were not reset
    np.testing.assert_array_equal(model.episode_heads, heads)
    assert model.ensemble.transitions == 0  # the heads train from SB3's buffer, no copy of it
    model.learn(0)  # reset_num_timesteps=True resets the envs: new episodes, new heads
    assert not np.array_equal(model.episode_heads, heads)  # 1000 heads: P(equal) = 1e-12


@pytest.mark.parametrize("cls_name", ["BootstrappedDQN", "DelightDQN"])
def test_tensorboard_runs_are_named_after_the_algorithm(
    tmp_path, monkeypatch, cls_name: str
) -> None:
    """SB3 names a run's TensorBoard folder ``<tb_log_name>_<i>``, ``tb_log_name`` defaulting
    to the algorithm's name in its ``learn`` (``DQN_1`` would mix DelightDQN's runs with DQN's)."""
    from stable_baselines3.common import utils
    from stable_baselines3.common.logger import configure

    from delight_gym import sb3

    names: list[str] = []

    def configure_logger(verbose, tensorboard_log, tb_log_name, reset_num_timesteps=True):
        names.append(tb_log_name)
        return configure(None, [])

    monkeypatch.setattr(utils, "configure_logger", configure_logger)
    cls = getattr(sb3, cls_name)
    kw = SMALL if cls_name == "BootstrappedDQN" else {"learning_starts": 32, "device": "cpu"}
    model = cls("MlpPolicy", "CartPole-v1", seed=0, tensorboard_log=str(tmp_path), **kw)
    model.learn(8)
    assert names == [cls_name]
    if importlib.util.find_spec("tensorboard") is not None:  # the folder itself
        monkeypatch.undo()
        model.learn(8)
        assert [p.name for p in tmp_path.iterdir()] == [f"{cls_name}_1"]


def test_net_arch_is_taken_through_policy_kwargs() -> None:
    model = BootstrappedDQN(
        "MlpPolicy",
        "CartPole-v1",
        policy_kwargs={"net_arch": [8]},
        **{k: v for k, v in SMALL.items() if k != "policy_kwargs"},
    )
    assert model.policy.net_arch == (8,)


# -- the DE variants' options on the heads (beyond the paper) -----------------------------------


def _fixed_heads_model(monkeypatch, q: np.ndarray, **delight) -> BootstrappedDQN:
    """A model whose heads' values are ``q`` (``(K, n, 2)``) for any observation, with DE at
    ``ε = 1`` (no episode played yet and ``M`` huge), so that the override is certain whenever
    the gate is not empty."""
    env = gym.make("DeepSea-v0", size=4, mapping_seed=0)
    options = {"half_life": 1e12, **delight}
    model = BootstrappedDQN(
        "MlpPolicy", env, seed=0, delight=options, **{**SMALL, "num_heads": q.shape[0]}
    )
    values = torch.as_tensor(q, dtype=torch.float32)
    monkeypatch.setattr(model.ensemble, "head_values_tensor", lambda obs: values)
    assert model.epsilon == 1.0
    return model


def test_spread_scale_puts_the_gate_price_in_units_of_the_heads_spread(monkeypatch) -> None:
    # Two heads, two actions; the host is head 0's greedy action 0. By hand: means (0, 2),
    # baseline v = 0, EI(1) = ((0 - 0)^+ + (4 - 0)^+)/2 = 2; the heads' variances are 4 for
    # both actions, so the spread is 2 and EI/spread = 1. Delight of action 1: L·EI = 20 on the
    # raw scale, 10 in spread units; of action 0 (the host's, surprisal 0): 0.
    q = np.array([[[2.0, 0.0]], [[-2.0, 4.0]]])
    heads = np.array([0])
    obs = torch.zeros(1, 4, 4)
    for scale, price, action in [
        (1.0, 15.0, 1),  # 20 >= 15: the gate holds action 1, and ε = 1 overrides to it
        ("spread", 15.0, 0),  # 10 < 15: the gate is empty, the host's action is kept
        ("spread", 9.0, 1),  # 10 >= 9
    ]:
        model = _fixed_heads_model(monkeypatch, q, value_scale=scale, gate_price=price)
        actions, _ = model._act(obs, heads, record=True)
        assert int(actions[0]) == action, (scale, price)
        assert model.delight_stats.gate_empty == (action == 0)
        if action == 1:
            seen = model.delight_stats.summary()["delight/overridden_ei"]
            assert seen == pytest.approx(2.0 if scale == 1.0 else 1.0)


def test_spread_scale_keeps_zero_ei_where_every_head_agrees(monkeypatch) -> None:
    q = np.array([[[1.0, 0.5]], [[1.0, 0.5]]])  # no spread, and no EI either
    model = _fixed_heads_model(monkeypatch, q, value_scale="spread", gate_price=0.0)
    actions, _ = model._act(torch.zeros(1, 4, 4), np.array([1]), record=True)
    assert int(actions[0]) == 0 and model.delight_stats.gate_empty == 1


def test_agreement_closes_the_gate_where_enough_heads_share_their_greedy_action(
    monkeypatch,
) -> None:
    # Four heads, two states; the host is head 0, greedy on action 0 at both. By hand:
    # state 0: greedy actions (0, 0, 0, 1), a share of 3/4 agree; EI(1) = (1 - 0.75)/4 > 0;
    # state 1: greedy actions (0, 0, 1, 1), a share of 1/2; EI(1) = (0.5 + 0.5)/4 > 0.
    q = np.array(
        [
            [[1.0, 0.0], [1.0, 0.0]],
            [[1.0, 0.0], [1.0, 0.0]],
            [[1.0, 0.0], [0.0, 1.0]],
            [[0.0, 1.0], [0.0, 1.0]],
        ]
    )
    heads = np.array([0, 0])
    obs = torch.zeros(2, 4, 4)
    for agreement, expected in [(None, [1, 1]), (0.75, [0, 1]), (0.5, [0, 0]), (0.8, [1, 1])]:
        model = _fixed_heads_model(monkeypatch, q, gate_price=0.0, agreement=agreement)
        actions, _ = model._act(obs, heads, record=True)
        np.testing.assert_array_equal(actions, expected, err_msg=str(agreement))
        assert model.delight_stats.gate_empty == expected.count(0)


@pytest.mark.parametrize(
    ("delight", "error", "match"),
    [
        ({"agreement": 0.0}, ValueError, "agreement"),
        ({"agreement": 1.5}, ValueError, "agreement"),
        ({"agreement": "most"}, TypeError, "agreement"),
        ({"value_scale": "spreads"}, ValueError, "value_scale"),
    ],
)
def test_bad_variant_options_name_themselves(delight, error, match) -> None:
    with pytest.raises(error, match=match):
        BootstrappedDQN("MlpPolicy", "CartPole-v1", delight=delight)


def test_options_on_the_heads_are_refused_without_heads() -> None:
    with pytest.raises(ValueError, match="value_scale"):
        DelightOptions(value_scale="spread").resolve("DelightDQN", clocks=("step",))
    with pytest.raises(ValueError, match="agreement"):
        DelightOptions(agreement=0.7).resolve("DelightDQN", clocks=("step",))


@pytest.mark.parametrize(
    "env_id, kwargs", [("CartPole-v1", {}), ("FrozenLake-v1", {"is_slippery": False})]
)
def test_loaded_predict_has_sb3_dqn_types_and_the_heads_as_recurrent_state(
    env_id, kwargs, tmp_path
) -> None:
    from stable_baselines3 import DQN

    env = gym.make(env_id, **kwargs)
    env.observation_space.seed(0)
    observations = {
        "one": env.observation_space.sample(),
        "batch": np.stack([env.observation_space.sample() for _ in range(5)]),
        "vec_env": make_vec_env(env_id, n_envs=3, seed=0, env_kwargs=kwargs).reset(),
    }
    dqn = DQN("MlpPolicy", env, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    BootstrappedDQN("MlpPolicy", env, seed=0, **SMALL).save(tmp_path / "boot")
    model = BootstrappedDQN.load(tmp_path / "boot", device="cpu")
    for name, obs in observations.items():
        n = 1 if name == "one" else len(obs)
        for deterministic in (True, False):
            theirs, their_state = dqn.predict(obs, deterministic=deterministic)
            ours, state = model.predict(obs, deterministic=deterministic)
            assert type(ours) is type(theirs) is np.ndarray, (name, deterministic)
            assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), (name, deterministic)
            assert their_state is None
            if deterministic:  # the ensemble mean's greedy action: no head, no state
                assert state is None
                continue
            (heads,) = state  # the head each row acts on, as a recurrent policy's state
            assert type(heads) is np.ndarray and heads.dtype == np.int64 and heads.shape == (n,)
            q = model.ensemble.head_values(np.asarray(obs).reshape(n, *env.observation_space.shape))
            np.testing.assert_array_equal(ours.reshape(n), q[heads, np.arange(n)].argmax(axis=1))
            # Passed back: kept while the episode goes on, redrawn at an episode start.
            kept = model.predict(obs, state=state, episode_start=np.zeros(n, bool))[1][0]
            np.testing.assert_array_equal(kept, heads)
            assert model.predict(obs, state=state)[1][0].tolist() == heads.tolist()
            start = np.ones(n, bool)
            starts = [model.predict(obs, state=state, episode_start=start) for _ in range(8)]
            assert any(s[1][0].tolist() != heads.tolist() for s in starts)
            assert all(type(a) is np.ndarray and a.shape == theirs.shape for a, _ in starts)
            greedy, same = model.predict(obs, state=state, deterministic=True)
            assert same is state and greedy.shape == theirs.shape  # passed through unchanged


def test_load_of_a_truncated_or_damaged_file_names_it(tmp_path) -> None:
    env = gym.make("DeepSea-v0", size=4, mapping_seed=0)
    model = BootstrappedDQN("MlpPolicy", env, num_heads=2, learning_starts=8, seed=0)
    model.learn(16)
    path = tmp_path / "model.zip"
    model.save(path)
    raw = path.read_bytes()
    import io
    import zipfile

    def rezip(drop: str | None = None, garbage: str | None = None) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w") as dst:
            for name in src.namelist():
                if name != drop:
                    dst.writestr(name, b"garbage" if name == garbage else src.read(name))
        return buf.getvalue()

    cases = {
        "half": (raw[: len(raw) // 2], "damaged"),
        "tail": (raw[:-10], "damaged"),
        "empty": (b"", "damaged"),
        "no-policy": (rezip(drop="policy.pth"), "no 'policy' entry"),
        "no-data": (rezip(drop="data"), "no 'data' entry"),
        "no-optimizer": (rezip(drop="policy.optimizer.pth"), "no 'policy.optimizer' entry"),
        "bad-policy": (rezip(garbage="policy.pth"), "damaged"),
        "bad-data": (rezip(garbage="data"), "damaged"),
    }
    for name, (data, match) in cases.items():
        bad = tmp_path / f"{name}.zip"
        bad.write_bytes(data)
        with pytest.raises(ValueError, match=match) as info:
            BootstrappedDQN.load(bad)
        assert str(bad) in str(info.value) and "damaged" in str(info.value), name
    with pytest.raises(FileNotFoundError, match="no saved BootstrappedDQN"):
        BootstrappedDQN.load(tmp_path / "absent.zip")
    again = BootstrappedDQN.load(path)  # the whole file still loads
    assert again.num_heads == 2
