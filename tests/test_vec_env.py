"""``SB3VecEnvAdapter``: Gymnasium vector envs as Stable-Baselines3 ``VecEnv``.

Reference: SB3's own ``DummyVecEnv`` of the single envs (``gym.make``), which implements SB3's
auto-reset semantics one env at a time. With the same seeds and the same actions (drawn from a
fixed generator) the adapter must give the same observations, rewards, dones, terminal
observations and infos, step after step over several episodes — for delight_gym's native
vector envs (SAME_STEP autoreset) and for Gymnasium's ``SyncVectorEnv`` in each of its
autoreset modes (SAME_STEP, NEXT_STEP, DISABLED). PPO then trains on the adapter.
"""

from __future__ import annotations

import doctest
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import OrderEnforcing
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

import delight_gym  # noqa: F401 - registers the ids
from delight_gym.sb3 import vec_env as vec_env_module
from delight_gym.sb3.vec_env import SB3VecEnvAdapter

NUM_ENVS = 3

# (env id, kwargs, how many steps cover several episodes of every sub-env)
CASES = [
    ("BernoulliBandit-v0", {"num_arms": 5}, 12),
    ("LinearBandit-v0", {"num_arms": 6, "dim": 3}, 12),
    ("DeepSea-v0", {"size": 4}, 17),
    ("DeepSeaStochastic-v0", {"size": 3}, 16),
]


def _dummy(env_id: str, kwargs: dict[str, Any]) -> DummyVecEnv:
    return DummyVecEnv([lambda: gym.make(env_id, **kwargs) for _ in range(NUM_ENVS)])


def _assert_same_value(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            _assert_same_value(a[key], b[key], f"{where}[{key!r}]")
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)


def _compare_rollouts(ours, reference, steps: int, seed: int = 7) -> int:
    """Step both with the same actions; return the number of finished episodes seen."""
    ours.seed(seed)
    reference.seed(seed)
    obs_a, obs_b = ours.reset(), reference.reset()
    np.testing.assert_array_equal(obs_a, obs_b)
    assert obs_a.dtype == obs_b.dtype and obs_a.shape == obs_b.shape
    rng = np.random.default_rng(1)
    n_actions = int(reference.action_space.n)
    finished = 0
    for t in range(steps):
        actions = rng.integers(n_actions, size=NUM_ENVS)
        obs_a, rew_a, done_a, infos_a = ours.step(actions)
        obs_b, rew_b, done_b, infos_b = reference.step(actions)
        np.testing.assert_array_equal(obs_a, obs_b, err_msg=f"obs at step {t}")
        assert obs_a.dtype == obs_b.dtype
        np.testing.assert_array_equal(rew_a, rew_b, err_msg=f"rewards at step {t}")
        assert rew_a.dtype == rew_b.dtype == np.float32
        np.testing.assert_array_equal(done_a, done_b, err_msg=f"dones at step {t}")
        assert len(infos_a) == len(infos_b) == NUM_ENVS
        for i in range(NUM_ENVS):
            _assert_same_value(infos_a[i], infos_b[i], f"infos[{i}] at step {t}")
        finished += int(done_b.sum())
    return finished


@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=[c[0] for c in CASES])
def test_native_vector_env_steps_like_dummy_vec_env(env_id, kwargs, steps):
    venv = gym.make_vec(env_id, num_envs=NUM_ENVS, **kwargs)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    finished = _compare_rollouts(SB3VecEnvAdapter(venv), _dummy(env_id, kwargs), steps)
    assert finished >= 3 * NUM_ENVS  # several episodes of every sub-env were compared


@pytest.mark.parametrize("mode", list(AutoresetMode), ids=lambda m: m.name)
def test_sync_vector_env_in_every_autoreset_mode(mode):
    kwargs = {"size": 3}
    venv = gym.make_vec(
        "DeepSeaStochastic-v0",
        num_envs=NUM_ENVS,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **kwargs,
    )
    assert venv.metadata["autoreset_mode"] == mode
    finished = _compare_rollouts(SB3VecEnvAdapter(venv), _dummy("DeepSeaStochastic-v0", kwargs), 13)
    assert finished == 4 * NUM_ENVS


def test_next_step_env_with_varying_episode_lengths_and_truncation():
    """PandoraBoxes (via SyncVectorEnv, NEXT_STEP): episodes end at different steps, by
    termination or by the time limit, so sub-envs restart out of step with each other."""
    kwargs = {"num_boxes": 3, "max_steps": 3}
    venv = gym.make_vec("PandoraBoxes-v0", num_envs=NUM_ENVS, **kwargs)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    ours, reference = SB3VecEnvAdapter(venv), _dummy("PandoraBoxes-v0", kwargs)
    assert _compare_rollouts(ours, reference, 40) >= 10
    # Both kinds of episode end were compared: DummyVecEnv marks time-limit truncations.
    ours.seed(3)
    ours.reset()
    rng = np.random.default_rng(5)
    truncations = terminations = 0
    for _ in range(60):
        _, _, dones, infos = ours.step(rng.integers(4, size=NUM_ENVS))
        for done, info in zip(dones, infos, strict=True):
            truncations += int(info["TimeLimit.truncated"])
            terminations += int(done and not info["TimeLimit.truncated"])
    assert truncations > 0 and terminations > 0


def test_terminal_observation_and_reset_observation_deep_sea():
    """By hand: after N steps every sub-env returns DeepSea's all-zero terminal observation in
    ``infos`` and the start cell (0, 0) as the observation."""
    size = 3
    ours = SB3VecEnvAdapter(gym.make_vec("DeepSea-v0", num_envs=2, size=size))
    ours.seed(0)
    obs = ours.reset()
    assert obs.shape == (2, size, size) and (obs[:, 0, 0] == 1).all()
    for step in range(1, size + 1):
        obs, _, dones, infos = ours.step(np.array([0, 1]))
        if step < size:
            assert not dones.any() and all("terminal_observation" not in i for i in infos)
    assert dones.all()
    for info in infos:
        np.testing.assert_array_equal(info["terminal_observation"], np.zeros((size, size)))
        assert info["TimeLimit.truncated"] is False
    np.testing.assert_array_equal(obs[:, 0, 0], [1.0, 1.0])
    assert obs.sum() == 2


def test_seed_reaches_every_sub_env_and_is_used_once():
    """``seed(s)`` gives sub-env ``i`` the instance of the single env reset with ``s + i``;
    a later plain ``reset()`` keeps the instances (the seeds are spent)."""
    ours = SB3VecEnvAdapter(gym.make_vec("BernoulliBandit-v0", num_envs=NUM_ENVS, num_arms=4))
    assert ours.seed(11) == [11, 12, 13]
    ours.reset()
    for i in range(NUM_ENVS):
        single = gym.make("BernoulliBandit-v0", num_arms=4)
        single.reset(seed=11 + i)
        np.testing.assert_array_equal(ours.venv.means[i], single.unwrapped.means)
    assert ours._seeds == [None] * NUM_ENVS
    before = ours.venv.means
    ours.reset()
    np.testing.assert_array_equal(ours.venv.means, before)


def test_seed_none_leaves_numpy_global_generator_alone():
    ours = SB3VecEnvAdapter(gym.make_vec("BernoulliBandit-v0", num_envs=2, num_arms=3))
    # The legacy global generator's state, read to check that seed() leaves it alone.
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    seeds = ours.seed()
    np.testing.assert_array_equal(np.random.get_state()[1], state)  # noqa: NPY002
    assert seeds[1] == seeds[0] + 1


def test_options_are_passed_once_and_must_agree():
    ours = SB3VecEnvAdapter(gym.make_vec("BernoulliBandit-v0", num_envs=2, num_arms=3))
    ours.seed(0)
    ours.reset()
    first = ours.venv.means
    ours.set_options({"resample": True})
    ours.reset()
    assert not np.array_equal(ours.venv.means, first)
    ours.set_options([{"resample": True}, {}])
    with pytest.raises(ValueError, match="options"):
        ours.reset()


def test_bad_input():
    with pytest.raises(TypeError, match="venv"):
        SB3VecEnvAdapter(gym.make("DeepSea-v0"))
    ours = SB3VecEnvAdapter(gym.make_vec("DeepSea-v0", num_envs=2, size=3))
    with pytest.raises(ValueError, match="indices"):
        ours.set_attr("render_mode", None, indices=[0])
    with pytest.raises(ValueError, match="indices"):
        ours.env_method("render", indices=1)
    with pytest.raises(RuntimeError, match="step_async"):
        ours.step_wait()


def test_attributes_native_and_sync():
    native = SB3VecEnvAdapter(gym.make_vec("DeepSea-v0", num_envs=2, size=3, mapping_seed=5))
    native.reset()
    assert native.get_attr("size") == [3, 3]
    assert native.get_attr("mapping_seed", indices=[1]) == [(5, 5)]
    assert native.env_is_wrapped(OrderEnforcing) == [False, False]
    native.set_attr("render_mode", "ansi")
    assert native.venv.render_mode == "ansi"
    assert native.env_method("render")[0] == native.venv.render()

    sync = SB3VecEnvAdapter(
        gym.make_vec("DeepSea-v0", num_envs=2, vectorization_mode="sync", size=3)
    )
    sync.seed(0)
    sync.reset()
    seeds = sync.get_attr("mapping_seed")
    assert seeds == [env.unwrapped.mapping_seed for env in sync.venv.envs]
    assert sync.env_is_wrapped(OrderEnforcing) == [True, True]
    sync.set_attr("marker", 7, indices=[1])
    assert sync.get_attr("marker", indices=1) == [7]
    assert not hasattr(sync.venv.envs[0], "marker")
    assert sync.env_method("expected_return", np.ones((3, 3)), indices=[0]) == [
        sync.venv.envs[0].unwrapped.expected_return(np.ones((3, 3)))
    ]


def test_rgb_frames_tile():
    ours = SB3VecEnvAdapter(gym.make_vec("DeepSea-v0", num_envs=2, size=3, render_mode="rgb_array"))
    ours.reset()
    frames = ours.get_images()
    assert len(frames) == 2 and frames[0].ndim == 3
    assert ours.render().ndim == 3


def test_ppo_trains_on_the_adapter_and_episodes_have_deep_sea_length():
    """PPO's rollout collection through the adapter: VecMonitor (which reads ``dones``) sees
    episodes of exactly ``N`` steps, and PPO's update runs."""
    size = 4
    venv = VecMonitor(SB3VecEnvAdapter(gym.make_vec("DeepSea-v0", num_envs=4, size=size)))
    venv.seed(0)
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(256)
    assert model.num_timesteps == 256
    lengths = [ep["l"] for ep in model.ep_info_buffer]
    assert len(lengths) == 256 // size and set(lengths) == {size}


def test_ppo_learns_a_two_armed_bandit_through_the_adapter():
    """Rewards reach PPO through the adapter: on arms with means 0.1 and 0.9 a few hundred
    one-step episodes move the policy to the better arm."""
    venv = SB3VecEnvAdapter(gym.make_vec("BernoulliBandit-v0", num_envs=8, means=[0.1, 0.9]))
    venv.seed(0)
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=16,
        batch_size=64,
        n_epochs=5,
        learning_rate=3e-3,
        ent_coef=0.0,
        seed=0,
        device="cpu",
    )
    before = _prob_of_arm_one(model)
    model.learn(512)
    assert abs(before - 0.5) < 0.05
    assert _prob_of_arm_one(model) > 0.9


def _prob_of_arm_one(model: PPO) -> float:
    obs, _ = model.policy.obs_to_tensor(np.zeros(1, dtype=np.int64))
    return float(model.policy.get_distribution(obs).distribution.probs[0, 1].detach())


def test_module_example_runs():
    result = doctest.testmod(vec_env_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0
