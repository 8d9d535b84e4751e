"""BernoulliBanditEnv and BernoulliBanditVectorEnv against independent references, and the
one-step bandit contract that the Bernoulli and linear families share (the second half,
parameterised over both families; the linear family's own laws are in
``test_envs_linear.py``).

References used: numpy's ``Generator(PCG64(seed))`` (what ``gymnasium.utils.seeding``
documents it builds), the U(0,1) distribution (KS test), binomial frequencies (z-test),
hand-computed infos, and Gymnasium's own ``SyncVectorEnv`` of single envs in SAME_STEP mode.
"""

from __future__ import annotations

import doctest
import pickle
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from scipy import stats

import delight_gym.envs.bandits as bandits_module
from delight_gym.envs import (
    BernoulliBanditEnv,
    BernoulliBanditVectorEnv,
    LinearBanditEnv,
    LinearBanditVectorEnv,
    register_envs,
)

register_envs()  # delight_gym/__init__.py does this on import; do it here explicitly too

INFO_KEYS = ("expected_reward", "optimal_expected_reward", "regret")


def reference_rng(seed: int) -> np.random.Generator:
    """The generator ``gymnasium.utils.seeding.np_random(seed)`` is documented to build."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


# --------------------------------------------------------------------------- instance
def test_means_are_the_first_draw_of_the_reset_seed_generator() -> None:
    env = BernoulliBanditEnv(num_arms=7)
    env.reset(seed=31)
    np.testing.assert_array_equal(env.means, reference_rng(31).random(7))
    twin = BernoulliBanditEnv(num_arms=7)
    twin.reset(seed=31)
    np.testing.assert_array_equal(env.means, twin.means)
    other = BernoulliBanditEnv(num_arms=7)
    other.reset(seed=32)
    assert not np.array_equal(env.means, other.means)


def test_means_are_uniform_in_distribution() -> None:
    # Seeds 0..399 were fixed before the first run and never tuned to make this pass.
    # Pooled means (K=10 per instance) and, separately, arm 0 across instances.
    pooled, first_arm = [], []
    for seed in range(400):
        env = BernoulliBanditEnv(num_arms=10)
        env.reset(seed=seed)
        pooled.append(env.means)
        first_arm.append(env.means[0])
    values = np.concatenate(pooled)
    assert stats.kstest(values, "uniform").pvalue > 1e-3
    assert stats.kstest(first_arm, "uniform").pvalue > 1e-3
    # The test has power: it rejects a mildly non-uniform transform of the same draws.
    assert stats.kstest(values**1.2, "uniform").pvalue < 1e-3


def test_instance_kept_across_resets_and_resampled_on_request() -> None:
    env = BernoulliBanditEnv(num_arms=5)
    env.reset(seed=3)
    drawn = env.means.copy()
    ref = reference_rng(3)
    np.testing.assert_array_equal(drawn, ref.random(5))
    for seed in (None, 4, None, 3):
        env.step(0)
        ref.random()  # the step's reward draw
        env.reset(seed=seed)
        np.testing.assert_array_equal(env.means, drawn)
    # reset(seed=3) rewound the generator; resample draws the next K uniforms from it.
    ref = reference_rng(3)
    env.step(1)
    ref.random()
    env.reset(options={"resample": True})
    np.testing.assert_array_equal(env.means, ref.random(5))
    assert not np.array_equal(env.means, drawn)
    resampled = env.means.copy()
    env.reset(options={"resample": False})
    np.testing.assert_array_equal(env.means, resampled)


def test_fixed_means_are_used_and_never_resampled() -> None:
    env = BernoulliBanditEnv(means=[0.25, 0.75, 0.5])
    assert env.num_arms == 3 and env.action_space == gym.spaces.Discrete(3)
    env.reset(seed=0)
    np.testing.assert_array_equal(env.means, [0.25, 0.75, 0.5])
    assert env.optimal_arm == 1 and env.optimal_expected_reward == 0.75
    with pytest.raises(ValueError, match="resample"):
        env.reset(options={"resample": True})


def test_means_property_is_a_read_only_copy() -> None:
    source = np.array([0.1, 0.9])
    env = BernoulliBanditEnv(means=source)
    env.reset(seed=0)
    source[0] = 0.5  # the env copied its input
    means = env.means
    assert means[0] == 0.1
    with pytest.raises(ValueError, match="read-only"):
        means[0] = 0.3
    assert env.means[0] == 0.1


# ------------------------------------------------------------------------- rewards/info
def test_rewards_are_the_documented_uniform_comparison() -> None:
    means = np.array([0.3, 0.6, 0.9])
    env = BernoulliBanditEnv(means=means)
    env.reset(seed=8)
    ref = reference_rng(8)  # fixed means: no instance draw, so rewards start the stream
    actions = np.random.default_rng(0).integers(3, size=200)
    for a in actions:
        _, reward, _, _, _ = env.step(int(a))
        assert reward == float(ref.random() < means[a])
        env.reset()


def test_reward_frequencies_match_means() -> None:
    means = np.array([0.0, 0.05, 0.3, 0.5, 0.77, 0.95, 1.0])
    pulls = 3000
    env = BernoulliBanditEnv(means=means)
    env.reset(seed=12345)
    counts = np.zeros(means.size)
    for arm in range(means.size):
        for _ in range(pulls):
            counts[arm] += env.step(arm)[1]
            env.reset()
    freq = counts / pulls
    # |z| < 5 per arm: a correct env fails with probability < 1e-5 over all arms here, while
    # a mean off by 0.03 gives |z| > 3.9 at 3000 pulls (and > 5 for most arms).
    assert freq[0] == 0.0 and freq[-1] == 1.0
    inner = slice(1, -1)
    se = np.sqrt(means[inner] * (1 - means[inner]) / pulls)
    z = (freq[inner] - means[inner]) / se
    assert np.all(np.abs(z) < 5), z


def test_vector_reward_frequencies_match_means() -> None:
    means = np.array([0.1, 0.4, 0.65, 0.9])
    envs = BernoulliBanditVectorEnv(num_envs=40, means=means)
    envs.reset(seed=777)
    actions = np.arange(40) % 4  # 10 sub-envs per arm
    total = np.zeros(40)
    steps = 1000
    for _ in range(steps):
        total += envs.step(actions)[1]
    freq = np.array([total[actions == a].sum() for a in range(4)]) / (10 * steps)
    z = (freq - means) / np.sqrt(means * (1 - means) / (10 * steps))
    assert np.all(np.abs(z) < 5), z


def test_step_returns_documented_values_and_info() -> None:
    means = [0.2, 0.7, 0.4]
    env = BernoulliBanditEnv(means=means)
    obs, info = env.reset(seed=1)
    assert obs == 0 and obs in env.observation_space and info == {}
    assert env.observation_space == gym.spaces.Discrete(1)
    for arm in (0, 1, 2, np.int64(2)):
        obs, reward, terminated, truncated, info = env.step(arm)
        assert obs == 0 and isinstance(obs, np.integer)
        assert reward in (0.0, 1.0) and type(reward) is float
        assert terminated is True and truncated is False
        assert info == {
            "expected_reward": means[arm],
            "optimal_expected_reward": 0.7,
            "regret": 0.7 - means[arm],
        }
        assert all(type(v) is float for v in info.values())
        env.reset()


def test_docstring_examples_run() -> None:
    result = doctest.testmod(bandits_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10 and result.failed == 0


# ------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"num_arms": 0}, ValueError, "num_arms"),
        ({"num_arms": -3}, ValueError, "num_arms"),
        ({"num_arms": 2.5}, TypeError, "num_arms"),
        ({"num_arms": "10"}, TypeError, "num_arms"),
        ({"num_arms": True}, TypeError, "num_arms"),
        ({"means": [0.2, 1.5]}, ValueError, "means"),
        ({"means": [0.2, -0.1]}, ValueError, "means"),
        ({"means": [0.2, float("nan")]}, ValueError, "means"),
        ({"means": [0.2, float("inf")]}, ValueError, "means"),
        ({"means": []}, ValueError, "means"),
        ({"means": [[0.2, 0.3]]}, ValueError, "means"),
        ({"means": ["a", "b"]}, TypeError, "means"),
        ({"num_arms": 4, "means": [0.1, 0.2, 0.3]}, ValueError, "num_arms"),
        ({"render_mode": "human"}, ValueError, "render_mode"),
    ],
)
def test_bad_constructor_arguments_raise_naming_them(
    kwargs: dict[str, Any], error: type[Exception], name: str
) -> None:
    with pytest.raises(error, match=name):
        BernoulliBanditEnv(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"num_envs": 0}, ValueError, "num_envs"),
        ({"num_envs": 2.0}, TypeError, "num_envs"),
        ({"num_envs": 2, "num_arms": 0}, ValueError, "num_arms"),
        ({"num_envs": 2, "means": [[0.1, 0.2]] * 3}, ValueError, "means"),
        ({"num_envs": 2, "means": [[0.1, np.nan]] * 2}, ValueError, "means"),
        ({"num_envs": 2, "means": [0.1, 1.2]}, ValueError, "means"),
        ({"num_envs": 2, "num_arms": 3, "means": [0.1, 0.2]}, ValueError, "num_arms"),
        ({"num_envs": 2, "render_mode": "rgb_array"}, ValueError, "render_mode"),
    ],
)
def test_bad_vector_constructor_arguments_raise_naming_them(
    kwargs: dict[str, Any], error: type[Exception], name: str
) -> None:
    with pytest.raises(error, match=name):
        BernoulliBanditVectorEnv(**kwargs)


# --------------------------------------------------------------------- registration
def test_make_passes_arguments_through() -> None:
    env = gym.make("BernoulliBandit-v0", num_arms=3, means=[0.1, 0.6, 0.3])
    env.reset(seed=0)
    assert isinstance(env.unwrapped, BernoulliBanditEnv)
    assert env.action_space == gym.spaces.Discrete(3)
    np.testing.assert_array_equal(env.unwrapped.means, [0.1, 0.6, 0.3])
    assert env.step(1)[4]["regret"] == 0.0
    assert gym.make("BernoulliBandit-v0").unwrapped.num_arms == 10
    assert env.spec is not None and env.spec.max_episode_steps is None


def test_register_envs_is_idempotent() -> None:
    before = dict(gym.registry)
    register_envs()
    assert dict(gym.registry) == before


def test_import_delight_gym_registers_the_ids() -> None:
    # A fresh interpreter: gymnasium imports the module named before ':' and then looks the
    # id up, so this needs delight_gym/__init__.py to call register_envs().
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('delight_gym:BernoulliBandit-v0', num_arms=3)\n"
        "env.reset(seed=0)\n"
        "assert env.unwrapped.means.shape == (3,)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


# =========================================================================================
# The one-step bandit contract, shared by both families (Bernoulli and linear): parameterised
# over FAMILIES. Each family's own laws (instance draws, reward distribution) are tested above
# and in test_envs_linear.py.
# =========================================================================================
@dataclass(frozen=True)
class Family:
    """One bandit family as the shared tests drive it."""

    name: str
    single: Any  # the env class
    vector: Any  # the native vector env class
    kwargs: dict[str, Any]  # a small random instance: num_arms and the family's parameters
    instance: tuple[str, ...]  # the instance's arrays (properties), compared seed for seed
    batched_ndim: dict[str, int]  # given instance arguments: ndim of the per-sub-env form
    reward_format: str  # how render() prints a reward

    def make(self, **kwargs: Any) -> Any:
        return self.single(**{**self.kwargs, **kwargs})

    def make_vector(self, num_envs: int, **kwargs: Any) -> Any:
        return self.vector(num_envs=num_envs, **{**self.kwargs, **kwargs})

    def fixing(self, means: Any) -> dict[str, Any]:
        """Constructor arguments that fix the arm means to ``means`` (``(K,)``, or
        ``(num_envs, K)`` for a vector env): the means themselves, or one-dimensional
        features with ``θ* = 1`` (so ``φ(a)ᵀθ* = φ(a)`` exactly)."""
        means = np.asarray(means, dtype=np.float64)
        if self.single is BernoulliBanditEnv:
            return {"means": means, "num_arms": means.shape[-1]}
        return {"features": means[..., None], "theta": [1.0], "num_arms": means.shape[-1], "dim": 1}


BERNOULLI = Family(
    "BernoulliBandit-v0",
    BernoulliBanditEnv,
    BernoulliBanditVectorEnv,
    {"num_arms": 5},
    ("means",),
    {"means": 2},
    ".0f",
)
LINEAR = Family(
    "LinearBandit-v0",
    LinearBanditEnv,
    LinearBanditVectorEnv,
    {"num_arms": 5, "dim": 3, "noise": 0.8},
    ("features", "theta", "means"),
    {"features": 3, "theta": 2},
    ".3f",
)
FAMILIES = pytest.mark.parametrize("family", [BERNOULLI, LINEAR], ids=["bernoulli", "linear"])


# ---------------------------------------------------------------------- single env
@FAMILIES
def test_instance_properties_need_a_reset_and_are_read_only_copies(family: Family) -> None:
    env = family.make()
    for name in (*family.instance, "optimal_arm", "optimal_expected_reward"):
        with pytest.raises(ResetNeeded):
            getattr(env, name)
    with pytest.raises(ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    for name in family.instance:
        value = getattr(env, name)
        with pytest.raises(ValueError, match="read-only"):
            value[0] = 1.0
        np.testing.assert_array_equal(getattr(env, name), value)
    obs = env.step(0)[0]
    expected = np.array(obs, copy=True)
    if isinstance(obs, np.ndarray):
        obs[...] = 7.0  # the caller owns the returned observation
    np.testing.assert_array_equal(env.step(0)[0], expected)


@FAMILIES
def test_optimal_arm_breaks_ties_by_lowest_index(family: Family) -> None:
    env = family.make(**family.fixing([0.2, 0.8, 0.8]))
    env.reset(seed=0)
    assert env.optimal_arm == 1 and env.optimal_expected_reward == 0.8
    np.testing.assert_array_equal(env.means, [0.2, 0.8, 0.8])


@FAMILIES
@pytest.mark.parametrize("action", [10, -1, 1.5, 2.0, True, np.array([1]), "1", None])
def test_bad_actions_raise_naming_action(family: Family, action: Any) -> None:
    env = family.make(num_arms=10)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)


@FAMILIES
def test_edge_actions_are_accepted(family: Family) -> None:
    env = family.make(num_arms=10)
    env.reset(seed=0)
    for action in (0, 9, np.int32(9), np.array(9)):
        assert env.step(action)[4]["expected_reward"] == env.means[int(action)]


@FAMILIES
@pytest.mark.parametrize(
    ("options", "error"),
    [({"resampel": True}, ValueError), ({"resample": 1}, TypeError), ("resample", TypeError)],
)
def test_bad_reset_options_raise(family: Family, options: Any, error: type[Exception]) -> None:
    env = family.make(num_arms=3)
    with pytest.raises(error, match="options"):
        env.reset(seed=0, options=options)


@FAMILIES
def test_ansi_render_describes_instance_and_last_pull(family: Family) -> None:
    assert "reset" in family.make(num_arms=2, render_mode="ansi").render()
    env = family.make(**family.fixing([0.2, 0.7]), render_mode="ansi")
    env.reset(seed=0)
    assert "best arm 1" in env.render() and "no pull" in env.render()
    _, reward, *_ = env.step(0)
    text = f"last pull arm 0 (mean 0.200) -> reward {reward:{family.reward_format}}"
    assert text in env.render()
    with pytest.warns(UserWarning, match="render_mode"):
        assert family.make(num_arms=2).render() is None


# ---------------------------------------------------------------------- vector env
@FAMILIES
@pytest.mark.parametrize(
    "actions",
    [
        np.array([0, 1, 2]),  # wrong length
        np.array([[0, 1, 2, 3]]),  # wrong shape
        np.array([0, 1, 2, 10]),  # >= K
        np.array([0, -1, 2, 3]),  # negative
        np.array([0.0, 1.0, 2.0, 3.0]),  # floats
        np.array([True, False, True, False]),  # bools
        3,  # a scalar
    ],
)
def test_bad_vector_actions_raise_naming_actions(family: Family, actions: Any) -> None:
    envs = family.make_vector(4, num_arms=10)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        envs.step(actions)


@FAMILIES
def test_vector_bad_seed_and_options_raise(family: Family) -> None:
    envs = family.make_vector(3, num_arms=2)
    with pytest.raises(ValueError, match="seed"):
        envs.reset(seed=[1, 2])
    with pytest.raises(TypeError, match="seed"):
        envs.reset(seed=1.5)
    with pytest.raises(ValueError, match="resample"):
        envs.reset(seed=0, options={"resample": np.array([True, False])})
    with pytest.raises(ResetNeeded):
        envs.step(np.zeros(3, dtype=int))
    with pytest.raises(ResetNeeded):
        _ = envs.means
    fixed = family.make_vector(3, **family.fixing([0.3, 0.6]))
    with pytest.raises(ValueError, match="resample"):
        fixed.reset(seed=0, options={"resample": True})


def run_singles(
    family: Family,
    seeds: list[int],
    actions: np.ndarray,
    resample_at: int | None = None,
    **kwargs: Any,
) -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray]]:
    """Step ``len(seeds)`` single envs one by one, as the vector env is documented to.

    Returns the final instance arrays, the rewards ``(rounds, num_envs)`` and the infos and
    observations after each pull's reset."""
    singles = []
    for i, seed in enumerate(seeds):
        own = dict(kwargs)  # a batched given argument: sub-env i gets row i
        for name, ndim in family.batched_ndim.items():
            if np.ndim(kwargs.get(name)) == ndim:
                own[name] = kwargs[name][i]
        env = family.make(**own)
        env.reset(seed=seed)
        singles.append(env)
    rewards = np.zeros(actions.shape)
    first_obs = np.asarray(singles[0].reset()[0])
    obs = np.zeros((*actions.shape, *first_obs.shape), dtype=first_obs.dtype)
    infos = {key: np.zeros(actions.shape) for key in INFO_KEYS}
    for t, row in enumerate(actions):
        if t == resample_at:
            for env in singles:
                env.reset(options={"resample": True})
        for i, env in enumerate(singles):
            _, rewards[t, i], terminated, truncated, info = env.step(int(row[i]))
            assert terminated and not truncated
            for key in INFO_KEYS:
                infos[key][t, i] = info[key]
            obs[t, i], _ = env.reset()
    instance = {name: np.stack([getattr(env, name) for env in singles]) for name in family.instance}
    return instance, rewards, {**infos, "obs": obs}


def run_vector(
    family: Family,
    seed: Any,
    actions: np.ndarray,
    resample_at: int | None = None,
    **kwargs: Any,
) -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The same through the native vector env; also returns the instance before any resample."""
    envs = family.make_vector(actions.shape[1], **kwargs)
    obs, _ = envs.reset(seed=seed)
    first = {name: getattr(envs, name) for name in family.instance}
    rewards = np.zeros(actions.shape)
    all_obs = np.zeros((*actions.shape, *obs.shape[1:]), dtype=obs.dtype)
    infos = {key: np.zeros(actions.shape) for key in INFO_KEYS}
    for t, row in enumerate(actions):
        if t == resample_at:
            envs.reset(options={"resample": True})
        obs, rewards[t], terminated, truncated, info = envs.step(row)
        assert obs in envs.observation_space
        assert terminated.all() and not truncated.any()
        for key in INFO_KEYS:
            infos[key][t] = info[key]
            np.testing.assert_array_equal(info["final_info"][key], info[key])
        np.testing.assert_array_equal(np.stack(list(info["final_obs"])), obs)
        all_obs[t] = obs
    instance = {name: getattr(envs, name) for name in family.instance}
    return instance, rewards, {**infos, "obs": all_obs}, first


def assert_same(
    singles: tuple[dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray]],
    vector: tuple[dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray], Any],
) -> None:
    """Identical instances, rewards, infos and observations, bit for bit."""
    for name, value in singles[0].items():
        np.testing.assert_array_equal(vector[0][name], value, err_msg=name)
    np.testing.assert_array_equal(vector[1], singles[1])
    for key, value in singles[2].items():
        np.testing.assert_array_equal(vector[2][key], value, err_msg=key)


@FAMILIES
@pytest.mark.parametrize(
    ("seed", "seeds"), [(123, [123 + i for i in range(6)]), ([9, 4, 4, 0, 77, 5], None)]
)
def test_vector_equals_single_envs_seed_for_seed(
    family: Family, seed: Any, seeds: list[int] | None
) -> None:
    seeds = seeds if seeds is not None else list(seed)
    actions = np.random.default_rng(99).integers(5, size=(60, 6))
    vector = run_vector(family, seed, actions)
    assert_same(run_singles(family, seeds, actions), vector)
    assert np.std(vector[1]) > 0.1 and np.ptp(vector[0]["means"]) > 0.1  # not vacuous


@FAMILIES
def test_vector_equals_single_envs_through_a_resample(family: Family) -> None:
    seeds = [40 + i for i in range(5)]
    actions = np.random.default_rng(3).integers(4, size=(30, 5))
    kwargs = {"num_arms": 4}
    singles = run_singles(family, seeds, actions, resample_at=12, **kwargs)
    vector = run_vector(family, 40, actions, resample_at=12, **kwargs)
    for name in family.instance:
        assert not np.array_equal(vector[3][name], vector[0][name]), name
    assert_same(singles, vector)


@FAMILIES
def test_vector_matches_gymnasium_sync_vector_env_in_same_step_mode(family: Family) -> None:
    num_envs, num_arms = 5, 6
    native = family.make_vector(num_envs, num_arms=num_arms)
    sync = SyncVectorEnv(
        [lambda: family.make(num_arms=num_arms)] * num_envs,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
    assert native.action_space == sync.action_space
    assert native.observation_space == sync.observation_space
    assert native.single_action_space == sync.single_action_space
    assert native.single_observation_space == sync.single_observation_space
    assert data_equivalence(native.reset(seed=17), sync.reset(seed=17), exact=True)
    actions = np.random.default_rng(1).integers(num_arms, size=(40, num_envs))
    for row in actions:
        n_obs, n_rew, n_term, n_trunc, n_info = native.step(row)
        s_obs, s_rew, s_term, s_trunc, s_info = sync.step(row)
        assert data_equivalence(
            (n_obs, n_rew, n_term, n_trunc), (s_obs, s_rew, s_term, s_trunc), exact=True
        )
        # Everything SAME_STEP puts in the infos agrees, masks and final observations included.
        for key in ("final_info", "_final_info", "_final_obs"):
            assert data_equivalence(n_info[key], s_info[key], exact=True), key
        for a, b in zip(n_info["final_obs"], s_info["final_obs"], strict=True):
            assert data_equivalence(a, b, exact=True)
    for name in family.instance:
        np.testing.assert_array_equal(getattr(native, name), np.stack(sync.get_attr(name)))


@FAMILIES
def test_vector_autoreset_never_resamples_and_partial_resample(family: Family) -> None:
    envs = family.make_vector(3, num_arms=4)
    envs.reset(seed=0)
    before = {name: getattr(envs, name).copy() for name in family.instance}
    for _ in range(50):
        envs.step(np.array([0, 1, 3]))
    envs.reset(seed=5)
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(envs, name), value, err_msg=name)
    means = envs.means
    np.testing.assert_array_equal(envs.optimal_expected_reward, means.max(axis=1))
    np.testing.assert_array_equal(envs.optimal_arm, means.argmax(axis=1))
    partial = np.array([False, True, False])
    envs.reset(options={"resample": partial})
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(envs, name)[~partial], value[~partial])
        assert not np.array_equal(getattr(envs, name)[1], value[1]), name
    # A given instance of one sub-env's shape is shared by all.
    shared = family.make_vector(3, **family.fixing([0.2, 0.9]))
    shared.reset(seed=0)
    np.testing.assert_array_equal(shared.means, [[0.2, 0.9]] * 3)


@FAMILIES
def test_vector_step_outputs_are_fresh_arrays(family: Family) -> None:
    envs = family.make_vector(3, num_arms=4)
    envs.reset(seed=0)
    actions = np.array([0, 1, 2])
    first = envs.step(actions)
    actions[:] = 3  # the caller reusing its buffer must not change what the env recorded
    second = envs.step(actions)
    for a, b in zip(first[:4], second[:4], strict=True):
        assert not np.shares_memory(a, b)
    info = second[4]
    assert not np.shares_memory(info["regret"], info["final_info"]["regret"])
    assert not np.shares_memory(info["final_obs"][0], second[0])
    expected_obs = second[0].copy()
    second[0][...] = 5  # the caller owns every returned array: writing to them ...
    for terminal in info["final_obs"]:
        if isinstance(terminal, np.ndarray):
            terminal[...] = 6
    np.testing.assert_array_equal(envs.step(actions)[0], expected_obs)  # ... changes nothing
    np.testing.assert_array_equal(first[4]["expected_reward"], envs.means[[0, 1, 2], [0, 1, 2]])


@FAMILIES
def test_vector_pickle_round_trip_continues_identically(family: Family) -> None:
    envs = family.make_vector(4, num_arms=3)
    envs.reset(seed=2)
    envs.step(np.array([0, 1, 2, 0]))
    clone = pickle.loads(pickle.dumps(envs))
    for row in np.random.default_rng(0).integers(3, size=(20, 4)):
        assert data_equivalence(envs.step(row), clone.step(row), exact=True)


@FAMILIES
def test_vector_ansi_render_has_one_line_per_sub_env(family: Family) -> None:
    assert all("reset" in line for line in family.make_vector(2, render_mode="ansi").render())
    envs = family.make_vector(2, **family.fixing([[0.1, 0.8], [0.6, 0.3]]), render_mode="ansi")
    envs.reset(seed=0)
    _, rewards, *_ = envs.step(np.array([1, 1]))
    lines = envs.render()
    assert lines is not None and len(lines) == 2
    assert "best arm 1" in lines[0] and "best arm 0" in lines[1]
    text = f"last pull arm 1 (mean 0.300) -> reward {rewards[1]:{family.reward_format}}"
    assert text in lines[1]
    with pytest.warns(UserWarning, match="render_mode"):
        assert family.make_vector(2).render() is None


@FAMILIES
def test_make_vec_uses_the_native_vector_env(family: Family) -> None:
    envs = gym.make_vec(
        family.name, num_envs=8, vectorization_mode="vector_entry_point", num_arms=5
    )
    assert isinstance(envs, family.vector)
    obs, _ = envs.reset(seed=0)
    assert obs in envs.observation_space and obs.shape[0] == 8
    assert envs.means.shape == (8, 5)
    _, rewards, _, _, infos = envs.step(np.full(8, 4))
    assert rewards.shape == (8,) and infos["regret"].shape == (8,)
    # vectorization_mode=None picks the vector entry point too
    assert isinstance(gym.make_vec(family.name, num_envs=2), family.vector)
