"""ContinuumBandit-v0: checkers, seeding, the vector form, and the exactly known maximum."""

from __future__ import annotations

import doctest
import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.utils.env_checker import data_equivalence
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import delight_gym  # noqa: F401 (registers the ids)
from delight_gym.envs import continuum
from delight_gym.envs.continuum import (
    BUMP_HEIGHT_RANGE,
    CENTER_MARGIN,
    NEEDLE_HEIGHT,
    ContinuumBanditEnv,
    ContinuumBanditVectorEnv,
)


def _f_reference(x: np.ndarray, centers: np.ndarray, heights: np.ndarray, widths) -> float:
    """``max_j h_j exp(−‖x − c_j‖²/(2w_j²))`` bump by bump, in Python floats."""
    values = []
    for c, h, w in zip(centers, heights, widths, strict=True):
        sq = sum((float(a) - float(b)) ** 2 for a, b in zip(x, c, strict=True))
        values.append(float(h) * math.exp(-sq / (2.0 * float(w) ** 2)))
    return max(values)


def _rollout(env, actions):
    out = [env.reset(seed=3)]
    for a in actions:
        out.append(env.step(a))
        out.append(env.reset())
    return out


# ------------------------------------------------------------------------------ checkers
@pytest.mark.parametrize("dim", [1, 3])
def test_checkers_pass(dim: int) -> None:
    env = gym.make("ContinuumBandit-v0", dim=dim, num_bumps=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym_check_env(env.unwrapped)
        sb3_check_env(env, warn=True)
    # SB3 advises a [-1, 1] action box; the unit cube is this env's domain by design.
    assert [
        str(w.message) for w in caught if "symmetric and normalized" not in str(w.message)
    ] == []


def test_make_and_make_vec_pass_arguments_through() -> None:
    env = gym.make("ContinuumBandit-v0", dim=3, num_bumps=4, noise=0.0)
    assert env.action_space == gym.spaces.Box(0, 1, (3,), np.float32)
    env.reset(seed=0)
    assert env.unwrapped.centers.shape == (5, 3)
    envs = gym.make_vec(
        "ContinuumBandit-v0", num_envs=4, vectorization_mode="vector_entry_point", dim=3
    )
    assert isinstance(envs, ContinuumBanditVectorEnv) and envs.action_space.shape == (4, 3)


# ----------------------------------------------------------------------- the instance
def test_instance_law_and_defaults() -> None:
    env = ContinuumBanditEnv()
    assert (env.dim, env.num_bumps, env.bump_width, env.needle_width, env.noise) == (
        2, 5, 0.15, 0.03, 0.1,
    )  # fmt: skip
    env.reset(seed=1)
    c, h = env.centers, env.heights
    assert h[0] == NEEDLE_HEIGHT and np.all((h[1:] >= BUMP_HEIGHT_RANGE[0]) & (h[1:] < 0.6))
    assert np.all((c >= CENTER_MARGIN) & (c <= 1 - CENTER_MARGIN))
    np.testing.assert_array_equal(c, c.astype(np.float32))  # float32-exact centres
    np.testing.assert_array_equal(env.widths, [0.03, 0.15, 0.15, 0.15, 0.15, 0.15])


def test_centres_are_better_separated_than_uniform_ones() -> None:
    """Best-candidate placement: the closest pair is far apart compared with uniform draws."""
    rng = np.random.default_rng(0)
    placed, uniform = [], []
    for seed in range(200):
        env = ContinuumBanditEnv(dim=2, num_bumps=5)
        env.reset(seed=seed)
        c = env.centers
        placed.append(min(np.linalg.norm(a - b) for i, a in enumerate(c) for b in c[i + 1 :]))
        u = CENTER_MARGIN + (1 - 2 * CENTER_MARGIN) * rng.random((6, 2))
        uniform.append(min(np.linalg.norm(a - b) for i, a in enumerate(u) for b in u[i + 1 :]))
    assert np.median(placed) > 2.0 * np.median(uniform)


def test_instance_kept_across_resets_and_resampled_on_request() -> None:
    env = ContinuumBanditEnv(dim=2)
    env.reset(seed=4)
    first = env.centers.copy()
    env.reset(seed=99)
    np.testing.assert_array_equal(env.centers, first)
    env.reset(options={"resample": True})
    assert not np.array_equal(env.centers, first)
    again = ContinuumBanditEnv(dim=2)
    again.reset(seed=4)
    np.testing.assert_array_equal(again.centers, first)


def test_given_instance_is_used_and_not_resampled() -> None:
    centers = np.array([[0.2, 0.3], [0.7, 0.8], [0.5, 0.5]])
    heights = np.array([0.5, 0.9, 0.4])  # the highest bump need not be row 0
    env = ContinuumBanditEnv(centers=centers, heights=heights, noise=0.0)
    assert (env.dim, env.num_bumps) == (2, 2)
    env.reset(seed=0)
    np.testing.assert_array_equal(env.optimal_action, [0.7, 0.8])
    assert env.optimal_expected_reward == 0.9
    _, reward, *_, info = env.step(np.array([0.7, 0.8]))
    assert reward == 0.9 and info["regret"] == 0.0
    with pytest.raises(ValueError, match="resample"):
        env.reset(options={"resample": True})


# ----------------------------------------------------------------- the exact maximum
@pytest.mark.parametrize("seed", range(5))
def test_maximum_equals_brute_force_in_one_dimension(seed: int) -> None:
    env = ContinuumBanditEnv(dim=1, num_bumps=4)
    env.reset(seed=seed)
    grid = np.linspace(0.0, 1.0, 200_001)[:, None]
    values = env.mean_reward(grid)
    best = grid[np.argmax(values)]
    res = optimize.minimize_scalar(
        lambda t: -env.mean_reward(np.array([t]))[()],
        bounds=(best[0] - 1e-4, best[0] + 1e-4),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert values.max() <= env.optimal_expected_reward
    assert -res.fun == pytest.approx(env.optimal_expected_reward, abs=1e-12)
    assert abs(res.x - env.optimal_action[0]) < 1e-5


@pytest.mark.parametrize("seed", range(3))
def test_maximum_equals_brute_force_in_two_dimensions(seed: int) -> None:
    env = ContinuumBanditEnv(dim=2, num_bumps=6)
    env.reset(seed=seed)
    axis = np.linspace(0.0, 1.0, 801)
    grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
    values = env.mean_reward(grid)
    # Grid spacing 1/800: within ‖δ‖²/(2w²) <= (1/800)²/(4·0.03²) of the maximum.
    assert env.optimal_expected_reward - 5e-4 <= values.max() <= env.optimal_expected_reward
    starts = [grid[np.argmax(values)], *np.random.default_rng(seed).random((20, 2))]
    found = [
        -optimize.minimize(
            lambda x: -env.mean_reward(x)[()],
            x0,
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-15},
        ).fun
        for x0 in starts
    ]
    assert max(found) == pytest.approx(env.optimal_expected_reward, abs=1e-12)
    assert max(found) <= env.optimal_expected_reward


def test_mean_reward_matches_the_bump_by_bump_reference() -> None:
    env = ContinuumBanditEnv(dim=3, num_bumps=4)
    env.reset(seed=5)
    points = np.random.default_rng(1).random((50, 3))
    expected = [_f_reference(x, env.centers, env.heights, env.widths) for x in points]
    np.testing.assert_allclose(env.mean_reward(points), expected, rtol=1e-13)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    action=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2),
)
def test_regret_is_nonnegative_and_zero_at_the_needle(seed: int, action: list[float]) -> None:
    env = ContinuumBanditEnv(dim=2, noise=0.5)
    env.reset(seed=seed)
    info = env.step(np.array(action, dtype=np.float32))[-1]
    assert info["regret"] >= 0.0
    assert info["regret"] == info["optimal_expected_reward"] - info["expected_reward"]
    env.reset()
    info = env.step(env.centers[0].astype(np.float32))[-1]
    assert info["regret"] == 0.0 and info["expected_reward"] == 1.0


# ---------------------------------------------------------------------------- rewards
def test_rewards_are_the_mean_plus_scaled_standard_normal() -> None:
    """Two noise levels, same seed: ``(r − f)`` scales with ``noise`` (one draw per step)."""
    a, b = ContinuumBanditEnv(noise=0.3), ContinuumBanditEnv(noise=0.6)
    a.reset(seed=8)
    b.reset(seed=8)
    for x in np.random.default_rng(2).random((20, 2)):
        _, ra, *_, ia = a.step(x)
        _, rb, *_, ib = b.step(x)
        assert ia["expected_reward"] == ib["expected_reward"]
        assert 2.0 * (ra - ia["expected_reward"]) == pytest.approx(rb - ib["expected_reward"])
    c = ContinuumBanditEnv(noise=0.0)
    c.reset(seed=8)
    _, reward, *_, info = c.step(np.array([0.5, 0.5]))
    assert reward == info["expected_reward"]


def test_reward_mean_and_variance_at_one_point() -> None:
    env = ContinuumBanditEnv(noise=0.2)
    env.reset(seed=0)
    x = np.array([0.4, 0.6])
    rewards = np.array([env.step(x)[1] for _ in range(20_000)])
    mean = env.mean_reward(x)[()]
    assert abs(rewards.mean() - mean) < 5 * 0.2 / math.sqrt(20_000)
    assert abs(rewards.var() - 0.04) < 5 * 0.04 * math.sqrt(2 / 20_000)


# --------------------------------------------------------- seeding, pickle, vector
def test_same_seed_same_rollout_and_pickle_round_trip() -> None:
    actions = list(np.random.default_rng(0).random((30, 2)).astype(np.float32))
    a, b = ContinuumBanditEnv(), ContinuumBanditEnv()
    assert data_equivalence(_rollout(a, actions), _rollout(b, actions), exact=True)
    clone = pickle.loads(pickle.dumps(a))
    rest = [a.step(x) for x in actions], [clone.step(x) for x in actions]
    assert data_equivalence(*rest, exact=True)


def test_vector_env_equals_single_envs_seed_for_seed() -> None:
    n, seed = 4, 10
    envs = ContinuumBanditVectorEnv(num_envs=n, dim=2, num_bumps=3, noise=0.3)
    singles = [ContinuumBanditEnv(dim=2, num_bumps=3, noise=0.3) for _ in range(n)]
    envs.reset(seed=seed)
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    rng = np.random.default_rng(0)
    for t in range(25):
        if t == 10:  # resample sub-envs 1 and 3 only
            mask = np.array([False, True, False, True])
            envs.reset(options={"resample": mask})
            for i in np.flatnonzero(mask):
                singles[i].reset(options={"resample": True})
        actions = rng.random((n, 2))
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        assert terminated.all() and not truncated.any() and obs.tolist() == [0] * n
        for i, env in enumerate(singles):
            _, r, *_, info = env.step(actions[i])
            env.reset()
            assert rewards[i] == r
            for key in ("expected_reward", "optimal_expected_reward", "regret"):
                assert infos[key][i] == info[key] == infos["final_info"][key][i]
        np.testing.assert_array_equal(envs.centers, [e.centers for e in singles])
    np.testing.assert_array_equal(envs.optimal_action, [e.optimal_action for e in singles])
    np.testing.assert_array_equal(
        envs.optimal_expected_reward, [e.optimal_expected_reward for e in singles]
    )


def test_vector_env_shared_given_instance_and_render() -> None:
    envs = ContinuumBanditVectorEnv(
        num_envs=2, centers=[[0.5], [0.1]], heights=[1.0, 0.5], render_mode="ansi"
    )
    envs.reset(seed=0)
    np.testing.assert_array_equal(envs.centers, [[[0.5], [0.1]]] * 2)
    envs.step(np.array([[0.5], [0.1]]))
    lines = envs.render()
    assert len(lines) == 2 and "ContinuumBandit d=1" in lines[0]
    with pytest.raises(ValueError, match="resample"):
        envs.reset(options={"resample": True})


def test_render_ansi_single() -> None:
    env = ContinuumBanditEnv(dim=1, render_mode="ansi")
    assert "not drawn" in env.render()
    env.reset(seed=0)
    assert "no pull yet" in env.render()
    env.step(np.array([0.25]))
    assert "last pull [0.25]" in env.render()


# -------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"dim": 0}, "dim"),
        ({"dim": 1.5}, "dim"),
        ({"num_bumps": -1}, "num_bumps"),
        ({"bump_width": 0.0}, "bump_width"),
        ({"bump_width": float("inf")}, "bump_width"),
        ({"needle_width": -0.1}, "needle_width"),
        ({"needle_width": float("nan")}, "needle_width"),
        ({"noise": float("nan")}, "noise"),
        ({"noise": -1.0}, "noise"),
        ({"needle_width": 1e-200}, "needle_width must lie in"),
        ({"bump_width": 1e151}, "bump_width must lie in"),
        ({"noise": 1.7e308}, "noise must be at most"),
        ({"dim": 10**12}, "dim=1000000000000, num_bumps=5 would need"),
        ({"num_bumps": 10**9}, "num_bumps=1000000000 would need"),
        ({"num_bumps": 10**5}, "placing the bumps"),
        ({"num_bumps": 400, "dim": 1000}, "placing the bumps"),
        ({"centers": [[0.5]]}, "centers and heights"),
        ({"centers": [[1.5]], "heights": [1.0]}, "centers"),
        ({"centers": [[np.nan]], "heights": [1.0]}, "centers"),
        ({"centers": [[0.5]], "heights": [0.0]}, "heights"),
        ({"centers": [[0.5]], "heights": [1.0, 0.5]}, "heights"),
        ({"centers": [[0.5]], "heights": [1.0], "dim": 2}, "dim"),
        ({"centers": [[0.5]], "heights": [1.0], "num_bumps": 3}, "num_bumps"),
        ({"render_mode": "human"}, "render_mode"),
    ],
)
def test_bad_arguments_raise_naming_them(kwargs: dict, name: str) -> None:
    with pytest.raises((ValueError, TypeError), match=name):
        ContinuumBanditEnv(**kwargs)


def test_bad_vector_arguments_raise_naming_them() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        ContinuumBanditVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match=r"num_envs=1000000000, dim=2.*sub-envs"):
        ContinuumBanditVectorEnv(num_envs=10**9)
    with pytest.raises(ValueError, match=r"num_envs=2, dim=2, num_bumps=4000: placing"):
        ContinuumBanditVectorEnv(num_envs=2, num_bumps=4000)
    with pytest.raises(ValueError, match="centers"):
        ContinuumBanditVectorEnv(num_envs=3, centers=np.full((2, 1, 1), 0.5), heights=[1.0])


@pytest.mark.parametrize(
    "action",
    [
        np.array([0.5, 1.0001]),
        np.array([-1e-9, 0.5]),
        np.array([0.5]),
        np.array([[0.5, 0.5]]),
        np.array([np.nan, 0.5]),
        np.array([True, False]),
        "ab",
        3,
    ],
)
def test_actions_outside_the_box_are_refused_not_clipped(action) -> None:
    env = ContinuumBanditEnv(dim=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)


def test_vector_actions_outside_the_box_are_refused() -> None:
    envs = ContinuumBanditVectorEnv(num_envs=2, dim=2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        envs.step(np.array([[0.5, 0.5], [0.5, 2.0]]))
    with pytest.raises(ValueError, match="actions"):
        envs.step(np.array([0.5, 0.5]))


def test_step_before_reset_and_instance_before_draw() -> None:
    env = ContinuumBanditEnv()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.array([0.5, 0.5]))
    with pytest.raises(gym.error.ResetNeeded):
        _ = env.centers


def test_docstring_examples_run() -> None:
    result = doctest.testmod(continuum, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(("dim", "width"), [(1, 0.3), (2, 0.3), (5, 0.45), (10, 0.48)])
def test_basin_volume_is_the_monte_carlo_share_of_the_cube(dim, width):
    # A bump centred at the cube's middle whose level-0.6 ball lies inside [0, 1]^d: the share
    # of uniform points above 0.6·h is the ball's volume (closed form), within 4 s.e.
    assert width * math.sqrt(2 * math.log(1 / 0.6)) < 0.5
    rng = np.random.default_rng(dim)
    n = 400_000
    x = rng.random((n, dim))
    share = np.mean(np.exp(-np.sum((x - 0.5) ** 2, axis=1) / (2 * width**2)) > 0.6)
    volume = continuum.basin_volume(width, dim, 0.6)
    se = math.sqrt(volume * (1 - volume) / n)
    assert volume > 1e-3 and abs(share - volume) < 4 * se
    if dim == 1:  # an interval of half-width w·√(2 log(1/0.6))
        assert volume == pytest.approx(2 * width * math.sqrt(2 * math.log(1 / 0.6)))


def test_basin_volume_names_bad_input():
    with pytest.raises(ValueError, match="level"):
        continuum.basin_volume(0.1, 2, 1.0)
    with pytest.raises(ValueError, match="width"):
        continuum.basin_volume(0.0, 2, 0.5)


def test_widths_and_noise_at_the_ends_of_their_ranges_give_finite_rewards() -> None:
    low, high = continuum.WIDTH_RANGE
    for needle, bump in ((low, 0.15), (0.03, high), (low, high)):
        env = ContinuumBanditEnv(needle_width=needle, bump_width=bump, noise=continuum.MAX_NOISE)
        env.reset(seed=0)
        for action in (env.optimal_action, np.zeros(2), np.ones(2)):
            _, reward, _, _, info = env.step(action.astype(np.float32))
            assert np.isfinite(reward) and np.isfinite(info["regret"]) and info["regret"] >= 0
        far = env.mean_reward(np.array([[1e200, 0.0], [0.5, -1e300]]))
        assert np.isfinite(far).all()
    # A placement at the largest size MAX_PLACEMENT_WORK allows at d = 2 draws.
    most = int((continuum.MAX_PLACEMENT_WORK / (8 * 10)) ** 0.5) - 1
    assert ContinuumBanditEnv(num_bumps=most).num_bumps == most
    # Given centres skip the placement: more bumps than a drawn instance allows.
    centers = np.random.default_rng(0).random((5000, 1))
    env = ContinuumBanditEnv(centers=centers, heights=np.ones(5000))
    assert env.num_bumps == 4999
