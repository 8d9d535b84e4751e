"""The contextual bandits: WheelBandit-v0 and NeuralBandit-v0.

References: the wheel's rule written out per context from the showdown's sampler (a Python
loop over quadrants), the neural bandit's means recomputed from its features, ``θ`` and
context, pseudo-regret as ``max - mean`` of those, and single envs stepped beside the vector
env with the same seeds and actions. The registry-wide contract (Gymnasium's and SB3's
checkers, same-seed rollouts, pickling, ``make_vec``) runs in ``test_env_contract.py``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from delight_gym.envs import (
    ENV_IDS,
    NeuralBanditEnv,
    NeuralBanditVectorEnv,
    WheelBanditEnv,
    WheelBanditVectorEnv,
)
from delight_gym.envs.contextual import WHEEL_SAFE_ARM, neural_mean_reward, wheel_means


def _showdown_wheel(x: tuple[float, float], delta: float) -> list[float]:
    """The showdown's ``sample_wheel_bandit_data`` rule for one context, written out."""
    means = [1.0, 1.0, 1.0, 1.0, 1.2]
    if math.hypot(*x) >= delta:
        if x[0] > 0:
            arm = 0 if x[1] > 0 else 1
        else:
            arm = 2 if x[1] > 0 else 3
        means[arm] = 50.0
    return means


def test_ids_are_registered() -> None:
    assert {"WheelBandit-v0", "NeuralBandit-v0"} <= set(ENV_IDS)
    assert isinstance(gym.make("delight_gym:WheelBandit-v0").unwrapped, WheelBanditEnv)
    envs = gym.make_vec("NeuralBandit-v0", num_envs=2, num_arms=7, reward="cosine")
    assert isinstance(envs, NeuralBanditVectorEnv) and envs.num_arms == 7


# ------------------------------------------------------------------------------ wheel
@pytest.mark.parametrize(
    ("x", "arm"),
    [
        ((0.6, 0.6), 0),
        ((0.6, -0.6), 1),
        ((-0.6, 0.6), 2),
        ((-0.6, -0.6), 3),
        ((0.0, 0.9), 2),  # x₁ = 0 counts as x₁ <= 0
        ((0.9, 0.0), 1),  # x₂ = 0 counts as x₂ <= 0
        ((0.0, 0.0), None),
        ((0.5, 0.0), 1),  # ‖x‖ = delta pays the large reward
        ((0.49, 0.0), None),
    ],
)
def test_wheel_quadrant_rule(x: tuple[float, float], arm: int | None) -> None:
    means = wheel_means(np.array(x), delta=0.5)
    expected = np.array([1.0, 1.0, 1.0, 1.0, 1.2])
    if arm is not None:
        expected[arm] = 50.0
    np.testing.assert_array_equal(means, expected)
    assert int(np.argmax(means)) == (WHEEL_SAFE_ARM if arm is None else arm)


def test_wheel_means_match_the_showdown_rule_on_random_contexts() -> None:
    rng = np.random.default_rng(100)
    contexts = rng.uniform(-1, 1, (500, 2))
    for delta in (0.0, 0.5, 0.95, 1.0):
        got = wheel_means(contexts, delta)
        want = np.array([_showdown_wheel((a, b), delta) for a, b in contexts])
        np.testing.assert_array_equal(got, want)


def test_wheel_steps_pay_the_context_means_and_pseudo_regret() -> None:
    env = WheelBanditEnv(delta=0.5, noise=0.0)
    env.reset(seed=1)
    action_rng = np.random.default_rng(2)
    for _ in range(300):
        x = env.context
        means = np.array(_showdown_wheel((x[0], x[1]), 0.5))
        np.testing.assert_array_equal(env.means, means)
        arm = int(action_rng.integers(5))
        obs, reward, terminated, truncated, info = env.step(arm)
        np.testing.assert_array_equal(obs, x.astype(np.float32))
        assert reward == means[arm]  # noise 0: the mean itself
        assert info["expected_reward"] == means[arm]
        assert info["optimal_expected_reward"] == means.max()
        assert info["regret"] == means.max() - means[arm]
        assert info["optimal_action"] == int(np.argmax(means))
        assert terminated and not truncated
        env.reset()


def test_wheel_contexts_are_uniform_in_the_disk() -> None:
    env = WheelBanditEnv(delta=0.7)
    env.reset(seed=3)
    contexts = []
    for _ in range(4000):
        contexts.append(env.context)
        env.reset()
    x = np.array(contexts)
    radius = np.hypot(x[:, 0], x[:, 1])
    assert radius.max() <= 1.0
    # P(‖x‖ >= δ) = 1 - δ² under the uniform law on the disk; quadrants equally likely.
    p = 1 - 0.7**2
    assert abs((radius >= 0.7).mean() - p) < 5 * math.sqrt(p * (1 - p) / len(x))
    quadrant = (x[:, 0] > 0) * 2 + (x[:, 1] > 0)
    np.testing.assert_allclose(
        np.bincount(quadrant) / len(x), 0.25, atol=5 * math.sqrt(0.1875 / len(x))
    )


def test_wheel_noise_and_reward_scale() -> None:
    env = WheelBanditEnv(noise=0.5)
    env.reset(seed=4)
    residuals = []
    for _ in range(2000):
        _, reward, _, _, info = env.step(4)
        residuals.append(reward - info["expected_reward"])
        env.reset()
    assert abs(np.std(residuals) - 0.5) < 0.05
    assert WheelBanditEnv().reward_scale == pytest.approx(49.0)
    assert WheelBanditEnv(mean_safe=3.0, mean_large=2.0).reward_scale == pytest.approx(2.0)


# ----------------------------------------------------------------------------- neural
def _neural_reference(env: NeuralBanditEnv) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``x_a`` and means ``h(x_aᵀθ)`` recomputed from the env's parts."""
    features, theta = env.features, env.theta
    if env.context_dim == 0:
        rows = features
    else:
        context = np.tile(env.context, (env.num_arms, 1))
        rows = np.hstack([features, context]) / math.sqrt(2)
    s = rows @ theta
    h = 10 * s**2 if env.reward == "quadratic" else np.cos(3 * s)
    return rows, h


@pytest.mark.parametrize("reward", ["quadratic", "cosine"])
@pytest.mark.parametrize("context_dim", [0, 3])
def test_neural_means_match_a_recomputation(reward: str, context_dim: int) -> None:
    env = NeuralBanditEnv(num_arms=50, dim=4, context_dim=context_dim, reward=reward, noise=0.0)
    obs, _ = env.reset(seed=5)
    np.testing.assert_allclose(np.linalg.norm(env.features, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(env.theta), 1.0, rtol=1e-12)
    action_rng = np.random.default_rng(6)
    for _ in range(20):
        rows, h = _neural_reference(env)
        np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-12)
        np.testing.assert_array_equal(obs, rows.astype(np.float32))
        np.testing.assert_allclose(env.means, h, rtol=1e-12, atol=1e-12)
        arm = int(action_rng.integers(50))
        _, reward_value, _, _, info = env.step(arm)
        assert reward_value == pytest.approx(h[arm], abs=1e-12)
        assert info["regret"] == pytest.approx(h.max() - h[arm], abs=1e-12)
        assert info["optimal_action"] == int(np.argmax(env.means))
        obs, _ = env.reset()


def test_neural_reward_functions_and_scales() -> None:
    s = np.linspace(-1, 1, 201)
    np.testing.assert_array_equal(neural_mean_reward(s, "quadratic"), 10 * s * s)
    np.testing.assert_array_equal(neural_mean_reward(s, "cosine"), np.cos(3 * s))
    assert NeuralBanditEnv(reward="quadratic").reward_scale == 10.0
    assert NeuralBanditEnv(reward="cosine").reward_scale == 2.0
    with pytest.raises(ValueError, match="reward"):
        neural_mean_reward(s, "linear")


def test_neural_instance_is_kept_and_contexts_change() -> None:
    env = NeuralBanditEnv(num_arms=8, dim=3, context_dim=2)
    env.reset(seed=7)
    features, theta, context = env.features, env.theta, env.context
    env.step(0)
    env.reset(seed=8)  # reseeds the stream, keeps the instance
    np.testing.assert_array_equal(env.features, features)
    np.testing.assert_array_equal(env.theta, theta)
    assert not np.array_equal(env.context, context)
    env.reset(options={"resample": True})
    assert not np.array_equal(env.features, features)


def test_seeded_reset_draws_the_same_context_whether_or_not_it_draws_the_instance() -> None:
    first, second = NeuralBanditEnv(num_arms=8, context_dim=2), NeuralBanditEnv(num_arms=8)
    first.reset(seed=9)  # draws the instance, then the context
    obs_a, _ = first.reset(seed=9)  # keeps the instance
    obs_b, _ = first.reset(seed=9)
    np.testing.assert_array_equal(obs_a, obs_b)
    second.reset(seed=9)
    fresh = NeuralBanditEnv(num_arms=8, context_dim=2)
    np.testing.assert_array_equal(fresh.reset(seed=9)[0], obs_a)


def test_large_k_instance() -> None:
    env = NeuralBanditEnv(num_arms=10_000, reward="cosine")
    obs, _ = env.reset(seed=10)
    assert obs.shape == (10_000, 20) and env.means.shape == (10_000,)
    assert env.optimal_expected_reward == pytest.approx(env.means.max())


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("WheelBandit-v0", {"delta": 0.3}),
        ("NeuralBandit-v0", {"num_arms": 6, "dim": 3, "context_dim": 2, "reward": "cosine"}),
    ],
    ids=["wheel", "neural-context"],
)
def test_checkers_pass_on_non_default_settings(env_id: str, kwargs: dict[str, Any]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym_check_env(gym.make(env_id, **kwargs).unwrapped)
        sb3_check_env(gym.make(env_id, **kwargs), warn=True)
    messages = [str(w.message) for w in caught if "unconventional shape" not in str(w.message)]
    assert messages == []


@pytest.mark.parametrize(
    ("cls", "kwargs", "name"),
    [
        (WheelBanditEnv, {"delta": 1.5}, "delta"),
        (WheelBanditEnv, {"noise": -1.0}, "noise"),
        (WheelBanditEnv, {"mean_large": float("inf")}, "mean_large"),
        (NeuralBanditEnv, {"num_arms": 0}, "num_arms"),
        (NeuralBanditEnv, {"context_dim": -1}, "context_dim"),
        (NeuralBanditEnv, {"reward": "linear"}, "reward"),
        (NeuralBanditEnv, {"dim": 2.5}, "dim"),
    ],
)
def test_bad_arguments_are_named(cls: Any, kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises((ValueError, TypeError), match=name):
        cls(**kwargs)


def test_step_before_reset_and_parts_before_reset() -> None:
    for env in (WheelBanditEnv(), NeuralBanditEnv(num_arms=3)):
        with pytest.raises(ResetNeeded):
            env.step(0)
        with pytest.raises(ResetNeeded):
            _ = env.context
    with pytest.raises(ResetNeeded):
        WheelBanditVectorEnv(2).step(np.zeros(2, dtype=np.int64))


# ------------------------------------------------------------------ vector vs single
VECTOR_CASES = [
    (WheelBanditEnv, WheelBanditVectorEnv, {"delta": 0.6, "noise": 0.3}),
    (NeuralBanditEnv, NeuralBanditVectorEnv, {"num_arms": 9, "dim": 3, "noise": 0.5}),
    (
        NeuralBanditEnv,
        NeuralBanditVectorEnv,
        {"num_arms": 9, "dim": 3, "context_dim": 2, "reward": "cosine", "noise": 0.5},
    ),
]


@pytest.mark.parametrize(
    ("single", "vector", "kwargs"), VECTOR_CASES, ids=["wheel", "neural", "neural-context"]
)
def test_vector_env_equals_single_envs_seed_for_seed(
    single: Any, vector: Any, kwargs: dict[str, Any]
) -> None:
    n, seed = 4, 11
    envs = vector(num_envs=n, **kwargs)
    singles = [single(**kwargs) for _ in range(n)]
    obs, _ = envs.reset(seed=seed)
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=seed + i)[0])
    rng = np.random.default_rng(12)
    for step in range(60):
        actions = rng.integers(envs.num_arms, size=n)
        if step == 30:  # a resample of some sub-envs mid-stream, as the single envs would
            mask = np.array([True, False, True, False])
            obs, _ = envs.reset(options={"resample": mask})
            for i, env in enumerate(singles):
                expected = env.reset(options={"resample": bool(mask[i])})[0]
                np.testing.assert_array_equal(obs[i], expected)
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        assert terminated.all() and not truncated.any()
        for i, env in enumerate(singles):
            final_obs, reward, _, _, info = env.step(int(actions[i]))
            np.testing.assert_array_equal(infos["final_obs"][i], final_obs)
            assert rewards[i] == reward
            for key, value in info.items():
                assert infos[key][i] == value, key
                assert infos["final_info"][key][i] == value, key
            np.testing.assert_array_equal(obs[i], env.reset()[0])
        np.testing.assert_array_equal(envs.means, np.stack([env.means for env in singles]))
        assert infos["optimal_action"].dtype == np.int64


def test_vector_reset_with_the_same_seed_reproduces() -> None:
    envs = NeuralBanditVectorEnv(num_envs=3, num_arms=5, context_dim=1)
    first = envs.reset(seed=13)[0]
    envs.step(np.zeros(3, dtype=np.int64))
    again = NeuralBanditVectorEnv(num_envs=3, num_arms=5, context_dim=1).reset(seed=13)[0]
    np.testing.assert_array_equal(first, again)
    other = NeuralBanditVectorEnv(num_envs=3, num_arms=5, context_dim=1).reset(seed=14)[0]
    assert not np.array_equal(first, other)
