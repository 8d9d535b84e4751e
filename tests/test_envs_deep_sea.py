"""DeepSeaEnv and DeepSeaVectorEnv against bsuite 0.3.6's deep_sea and other references.

References used:

- ``tests/bsuite_deep_sea_reference.py``, a line-by-line transcription of bsuite 0.3.6's
  ``deep_sea.py`` (plain numpy), stepped next to our env over thousands of random steps;
- bsuite itself (``bsuite.environments.deep_sea.DeepSea``) when it is installed
  (``pip install delight-gym[bsuite]``), also checked against the transcription;
- brute-force enumeration of action sequences and of the stochastic variant's move outcomes
  for the expected-return helper and the optimal return;
- frequencies and moments (z-tests) for the stochastic variant's law;
- Gymnasium's own ``SyncVectorEnv`` of single envs for the vector env.

The stochastic variant draws from a random stream, so the comparison with bsuite *shares the
stream*: bsuite draws ``randn()`` for the end-state noise and then ``rand()`` for every "right"
(also in the deterministic variant, where the draw is ignored); our env draws
``standard_normal()`` and ``random()`` from ``np_random`` at the same points (none in the
deterministic variant). The transcription takes the stream as an argument, so it is run with
our env's generator (wrapped to RandomState's method names) to compare step for step, and with
``RandomState(seed)`` to compare with bsuite itself. The law of the stream is then checked
separately in distribution.
"""

from __future__ import annotations

import doctest
import itertools
import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from hypothesis import given, settings
from hypothesis import strategies as st

import delight_gym.envs.deep_sea as deep_sea_module
import delight_gym.envs.deep_sea_maths as deep_sea_maths
from delight_gym.envs import (
    DeepSeaEnv,
    DeepSeaVectorEnv,
    deep_sea_expected_return,
    deep_sea_optimal_return,
    register_envs,
)
from tests.bsuite_deep_sea_reference import GeneratorAsRandomState, ReferenceDeepSea

register_envs()  # delight_gym/__init__.py does this on import; do it here explicitly too

INFO_KEYS = ("optimal_return", "bad_episode", "denoised_reward", "denoised_return")


def reference_rng(seed: int) -> np.random.Generator:
    """The generator ``gymnasium.utils.seeding.np_random(seed)`` is documented to build."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def make_reference(size: int, rng: Any = None, **kwargs: Any) -> ReferenceDeepSea:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bsuite warns in randomize_actions=False mode
        return ReferenceDeepSea(size, rng=rng, **kwargs)


def mostly_right(rng: np.random.Generator, p_right: float) -> Any:
    """A closed-loop policy: "right" (read off the env's public mapping) with ``p_right``."""

    def choose(env: DeepSeaEnv) -> int:
        row, column = env.position
        right = int(env.action_mapping[row, column])
        return right if rng.random() < p_right else 1 - right

    return choose


def play_side_by_side(
    env: DeepSeaEnv,
    ref: Any,
    actions: np.ndarray | Any,
    *,
    env_seed: int | None = None,
    steps: int | None = None,
) -> dict[str, int]:
    """Step ``env`` (a gymnasium env) and ``ref`` (bsuite-style) with the same actions.

    ``actions`` is an array of actions, or a policy ``env -> action`` run for ``steps``.
    Asserts identical observations, rewards (exactly), terminations and bad-episode flags;
    resets both when an episode ends. Returns counts that show the run was not vacuous.
    """
    obs, _ = env.reset(seed=env_seed)
    first = ref.reset()
    np.testing.assert_array_equal(obs, first.observation)
    counts = {"steps": 0, "episodes": 0, "treasures": 0, "bad": 0, "neither": 0}
    treasures_before = ref._denoised_return  # bsuite counts treasures over the env's life
    if isinstance(actions, np.ndarray):
        sequence = iter(actions.tolist())
        steps = actions.size
    else:
        assert steps is not None
    for _ in range(steps):
        action = next(sequence) if isinstance(actions, np.ndarray) else actions(env)
        obs, reward, terminated, truncated, info = env.step(action)
        ts = ref.step(action)
        assert obs.dtype == ts.observation.dtype == np.float32
        assert np.array_equal(obs, ts.observation)
        assert reward == ts.reward, (reward, ts.reward)
        assert terminated == ts.last() and not truncated
        assert info["bad_episode"] == ref._bad_episode
        assert info["optimal_return"] == ref._optimal_return
        counts["steps"] += 1
        assert ("is_success" in info) == terminated  # set at the episode's end only
        if terminated:
            # is_success: the episode added one to bsuite's treasure count.
            found = ref._denoised_return == treasures_before + 1
            assert info["is_success"] is found
            treasures_before = ref._denoised_return
            counts["episodes"] += 1
            counts["bad"] += info["bad_episode"]
            counts["treasures"] += info["denoised_return"] > 0.5
            counts["neither"] += not info["bad_episode"] and not found
            obs, _ = env.reset()
            np.testing.assert_array_equal(obs, ref.step(0).observation)  # bsuite auto-resets
    return counts


# ----------------------------------------------------------- bsuite, deterministic
@pytest.mark.parametrize("size", [1, 2, 3, 10, 50])
@pytest.mark.parametrize("mapping_seed", [0, 42, 2**32 - 1])
def test_deterministic_equals_bsuite_transcription(size: int, mapping_seed: int) -> None:
    env = DeepSeaEnv(size=size, mapping_seed=mapping_seed)
    ref = make_reference(size, seed=0, mapping_seed=mapping_seed)
    np.testing.assert_array_equal(env.action_mapping, ref._action_mapping)
    # Random actions, plus episodes that follow "right" (mostly) to reach the treasure.
    rng = np.random.default_rng(size * 1000 + mapping_seed % 997)
    steps = 2000
    random_actions = rng.integers(2, size=steps)
    counts = play_side_by_side(env, ref, random_actions, env_seed=1)
    assert counts["steps"] == steps and counts["episodes"] == steps // size
    policy = mostly_right(rng, 1 - 0.5 / size)  # finds the treasure in ~60% of episodes
    counts = play_side_by_side(env, ref, policy, env_seed=2, steps=max(600, 20 * size))
    assert counts["treasures"] > 0 and (counts["bad"] > 0 or size == 1)
    assert counts["neither"] == 0  # deterministic: a success iff not a bad episode


@pytest.mark.parametrize("size", [1, 2, 7])
def test_randomize_actions_false_equals_bsuite_transcription(size: int) -> None:
    env = DeepSeaEnv(size=size, randomize_actions=False)
    ref = make_reference(size, randomize_actions=False)
    env.reset(seed=0)
    np.testing.assert_array_equal(env.action_mapping, np.ones((size, size)))
    assert env.mapping_seed is None
    actions = np.random.default_rng(size).integers(2, size=1500)
    counts = play_side_by_side(env, ref, actions, env_seed=0)
    assert counts["episodes"] == 1500 // size
    # Action 1 is "right" everywhere: all ones find the treasure.
    env.reset()
    rewards = [env.step(1)[1] for _ in range(size)]
    assert sum(rewards) == pytest.approx(0.99)


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(1, 12),
    mapping_seed=st.integers(0, 2**32 - 1),
    actions=st.lists(st.integers(0, 1), min_size=1, max_size=80),
    cost=st.sampled_from([0.0, 0.01, 0.5, 3.0]),
)
def test_any_action_sequence_equals_bsuite_transcription(
    size: int, mapping_seed: int, actions: list[int], cost: float
) -> None:
    env = DeepSeaEnv(size=size, mapping_seed=mapping_seed, unscaled_move_cost=cost)
    ref = make_reference(size, mapping_seed=mapping_seed, unscaled_move_cost=cost)
    counts = play_side_by_side(env, ref, np.array(actions), env_seed=0)
    # Every action was compared, and every N steps one episode ended on both sides.
    assert counts["steps"] == len(actions)
    assert counts["episodes"] == len(actions) // size


def test_optimal_path_rewards_at_size_ten() -> None:
    # bsuite's deep_sea at N = 10: nine times -0.001, then 0.999; always exactly N steps.
    env = DeepSeaEnv(size=10, mapping_seed=42)
    env.reset(seed=0)
    rewards, infos = [], []
    for t in range(10):
        row, column = env.position
        assert (row, column) == (t, t)
        _, reward, terminated, _, info = env.step(env.action_mapping[row, column])
        rewards.append(reward)
        infos.append(info)
        assert terminated == (t == 9)
    assert rewards[:9] == [-0.001] * 9
    assert rewards[9] == pytest.approx(0.999, abs=1e-15)
    assert infos[-1]["bad_episode"] is False
    assert infos[-1]["denoised_return"] == pytest.approx(0.99, abs=1e-12)
    assert env.optimal_return == 1.0 - 0.01


def test_bad_episode_iff_no_treasure_in_deterministic_variant() -> None:
    rng = np.random.default_rng(0)
    seen = {True: 0, False: 0}
    for size in (1, 2, 3, 4, 6):
        env = DeepSeaEnv(size=size, mapping_seed=size)
        env.reset(seed=0)
        for _ in range(300):
            env.reset()
            total = 0.0
            for _ in range(size):
                row, column = env.position
                a = env.action_mapping[row, column] if rng.random() < 0.8 else rng.integers(2)
                _, reward, terminated, _, info = env.step(int(a))
                total += reward
            assert terminated
            treasure = info["denoised_return"] > 0.5
            assert info["bad_episode"] == (not treasure)
            assert info["denoised_return"] == total  # deterministic: no noise to remove
            seen[treasure] += 1
    assert min(seen.values()) > 50


# ------------------------------------------------------------- bsuite, stochastic
@pytest.mark.parametrize("size", [1, 2, 3, 10, 50])
@pytest.mark.parametrize("mapping_seed", [0, 42])
def test_stochastic_equals_bsuite_transcription_on_a_shared_stream(
    size: int, mapping_seed: int
) -> None:
    seed = 1000 + size
    env = DeepSeaEnv(size=size, deterministic=False, mapping_seed=mapping_seed)
    ref = make_reference(
        size,
        deterministic=False,
        mapping_seed=mapping_seed,
        rng=GeneratorAsRandomState(reference_rng(seed)),
    )
    # Mostly "right", so that failed moves and both noisy end states occur.
    policy = mostly_right(np.random.default_rng(size), 0.8)
    counts = play_side_by_side(env, ref, policy, env_seed=seed, steps=4000)
    assert counts["steps"] == 4000 and counts["episodes"] == 4000 // size
    assert counts["treasures"] > 0 or size == 50
    # A failed "right" leaves the diagonal without a bad step: neither bad nor a success.
    assert counts["neither"] > 0 or size == 1


def test_stochastic_with_drawn_mapping_equals_transcription() -> None:
    # mapping_seed=None: one integers() draw gives the mapping seed, then the same stream.
    for seed in (3, 4):
        env = DeepSeaEnv(size=6, deterministic=False)
        env.reset(seed=seed)
        gen = reference_rng(seed)
        drawn = int(gen.integers(0, 2**32))
        assert env.mapping_seed == drawn
        ref = make_reference(
            6, deterministic=False, mapping_seed=drawn, rng=GeneratorAsRandomState(gen)
        )
        np.testing.assert_array_equal(env.action_mapping, ref._action_mapping)
        # Continue from the same generator state: reset without a seed keeps the stream.
        actions = np.random.default_rng(seed).integers(2, size=600)
        counts = play_side_by_side(env, ref, actions)
        assert counts["episodes"] == 100


def _always_right_outcomes(env: DeepSeaEnv, episodes: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"moved": [], "noise": [], "return": [], "denoised": []}
    size = env.size
    for _ in range(episodes):
        env.reset()
        total = 0.0
        for _ in range(size):
            row, column = env.position
            _, reward, _, _, info = env.step(env.action_mapping[row, column])
            total += reward
            if row < size - 1:
                out["moved"].append(float(env.position[1] == min(column + 1, size - 1)))
            if row == size - 1 and column in (0, size - 1):
                out["noise"].append(reward - info["denoised_reward"])
            else:
                assert reward == info["denoised_reward"]
        out["return"].append(total)
        out["denoised"].append(info["denoised_return"])
    return out


def test_stochastic_law_moves_noise_and_optimal_return() -> None:
    # Seeds fixed before the first run. z-tests at |z| < 4.5; each also has power (below).
    size = 5
    env = DeepSeaEnv(size=size, deterministic=False, mapping_seed=7)
    env.reset(seed=123)
    out = _always_right_outcomes(env, 6000)
    moved = np.array(out["moved"])
    p = 1 - 1 / size
    z_moved = (moved.mean() - p) / np.sqrt(p * (1 - p) / moved.size)
    assert abs(z_moved) < 4.5
    assert abs((moved.mean() - 0.75) / np.sqrt(0.75 * 0.25 / moved.size)) > 4.5  # power
    noise = np.array(out["noise"])
    # Noise only in the two end states (asserted in the helper); always-right reaches the
    # last column with probability (1 - 1/N)**(N - 1) = 0.41 and column 0 with 0.0016.
    assert 2000 < noise.size < 3000
    assert abs(noise.mean() / np.sqrt(1 / noise.size)) < 4.5
    assert abs((noise.var() - 1) / np.sqrt(2 / noise.size)) < 4.5
    denoised = np.array(out["denoised"])
    z_opt = (denoised.mean() - env.optimal_return) / (denoised.std() / np.sqrt(denoised.size))
    assert abs(z_opt) < 4.5
    assert env.optimal_return == pytest.approx((1 - 1 / size) ** (size - 1) - 0.01)
    # The noisy return has the same mean (noise has mean zero).
    returns = np.array(out["return"])
    assert abs((returns.mean() - env.optimal_return) / (returns.std() / np.sqrt(6000))) < 4.5


def test_bsuite_random_state_stream_has_the_same_law() -> None:
    # The transcription on bsuite's own RandomState stream: same law as our env's stream.
    size = 4
    ref = make_reference(size, deterministic=False, mapping_seed=1, seed=99)
    mapping = ref._action_mapping
    returns = []
    for _ in range(5000):
        ref.reset()
        total = 0.0
        for row in range(size):  # always "right", read off the transcription's own state
            total += ref.step(int(mapping[row, ref._column])).reward
        returns.append(total)
    env = DeepSeaEnv(size=size, deterministic=False, mapping_seed=1)
    returns_arr = np.array(returns)
    z = (returns_arr.mean() - env.optimal_return) / (returns_arr.std() / np.sqrt(5000))
    assert abs(z) < 4.5


# ---------------------------------------------------------------- expected return
def _brute_force_expected_return(
    mapping: np.ndarray, probs: np.ndarray, deterministic: bool, cost: float
) -> float:
    """Enumerate every action path and move outcome (exact, exponential in N)."""
    n = mapping.shape[0]
    success = 1.0 if deterministic else 1 - 1 / n

    def rec(row: int, column: int) -> float:
        if row == n:
            return 0.0
        total = 0.0
        for action, p_action in ((1, probs[row, column]), (0, 1 - probs[row, column])):
            if p_action == 0:
                continue
            if action == mapping[row, column]:  # right
                r = (1.0 if column == n - 1 else 0.0) - cost / n
                moved = rec(row + 1, min(column + 1, n - 1))
                stayed = rec(row + 1, column) if success < 1 else 0.0
                total += p_action * (r + success * moved + (1 - success) * stayed)
            else:
                total += p_action * rec(row + 1, max(column - 1, 0))
        return total

    return rec(0, 0)


@pytest.mark.parametrize("deterministic", [True, False])
@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_expected_return_equals_brute_force(deterministic: bool, size: int) -> None:
    rng = np.random.default_rng(size)
    env = DeepSeaEnv(size=size, deterministic=deterministic, mapping_seed=size + 10)
    mapping = np.asarray(env.action_mapping)
    for _ in range(5):
        probs = rng.random((size, size))
        probs[rng.random((size, size)) < 0.3] = 1.0
        expected = _brute_force_expected_return(mapping, probs, deterministic, 0.01)
        assert env.expected_return(probs) == pytest.approx(expected, abs=1e-12)
    # Always "right" is the optimal policy and returns bsuite's optimal return.
    assert env.expected_return(mapping) == pytest.approx(env.optimal_return, abs=1e-12)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 6])
def test_optimal_return_is_the_best_action_sequence(size: int) -> None:
    for deterministic in (True, False):
        env = DeepSeaEnv(size=size, deterministic=deterministic, mapping_seed=5)
        env.reset(seed=0)
        best = -np.inf
        for seq in itertools.product((0, 1), repeat=size):
            value = env.expected_return(np.array(seq))
            if deterministic:  # an open-loop sequence's return is just its actual return
                env.reset()
                actual = sum(env.step(a)[1] for a in seq)
                assert value == pytest.approx(actual, abs=1e-12)
            best = max(best, value)
        if deterministic:
            assert best == pytest.approx(env.optimal_return, abs=1e-12)
        else:
            # bsuite's optimal return is always-right's; a policy that stops paying for
            # "right" once the treasure is out of reach beats it by less than the move cost.
            assert best <= env.optimal_return + env.unscaled_move_cost
        always_right = env.expected_return(np.asarray(env.action_mapping))
        assert always_right == pytest.approx(env.optimal_return, abs=1e-12)


def _exact_optimal_value(size: int, deterministic: bool, cost: float) -> float:
    """Backward induction over (row, column) on "right"/"left" (the mapping is irrelevant)."""
    success = 1.0 if deterministic else 1 - 1 / size
    value = np.zeros(size + 1)  # value[column] of the next row; row N is worth 0
    for _ in range(size):
        nxt = value
        value = np.zeros(size)
        for c in range(size):
            right = (c == size - 1) - cost / size
            right += success * nxt[min(c + 1, size - 1)] + (1 - success) * nxt[c]
            value[c] = max(right, nxt[max(c - 1, 0)])
        value = np.append(value, 0.0)
    return float(value[0])


@pytest.mark.parametrize("size", [1, 2, 3, 10, 50])
def test_bsuite_optimal_return_versus_the_exact_optimum(size: int) -> None:
    # Deterministic: bsuite's optimal return is the optimum. Stochastic: bsuite's number
    # (always "right") is below the optimum, by less than unscaled_move_cost (documented).
    assert deep_sea_optimal_return(size, True) == pytest.approx(
        _exact_optimal_value(size, True, 0.01), abs=1e-12
    )
    exact = _exact_optimal_value(size, False, 0.01)
    bsuite = deep_sea_optimal_return(size, False)
    assert bsuite <= exact + 1e-12 and exact - bsuite < 0.01
    if size >= 2:
        assert exact > bsuite + 1e-6


def test_expected_return_of_agent_episodes_is_the_denoised_return() -> None:
    # What an agent's experiment does: regret = optimal_return - denoised return per episode.
    env = DeepSeaEnv(size=8, mapping_seed=3)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(50):
        env.reset()
        actions = []
        for _ in range(8):
            a = int(rng.integers(2))
            actions.append(a)
            info = env.step(a)[4]
        assert env.expected_return(np.array(actions)) == pytest.approx(
            info["denoised_return"], abs=1e-12
        )


def test_optimal_return_function_matches_bsuite_formula() -> None:
    for size in (1, 2, 10, 50):
        ref = make_reference(size, deterministic=False, mapping_seed=0, seed=0)
        assert deep_sea_optimal_return(size, False) == ref._optimal_return
        ref = make_reference(size, mapping_seed=0, unscaled_move_cost=0.3)
        assert deep_sea_optimal_return(size, True, 0.3) == ref._optimal_return
        assert DeepSeaEnv(size=size).optimal_return == deep_sea_optimal_return(size)


def test_expected_return_rejects_bad_input() -> None:
    mapping = np.ones((3, 3))
    with pytest.raises(ValueError, match="action_mapping"):
        deep_sea_expected_return(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="action_mapping"):
        deep_sea_expected_return(np.full((3, 3), 2), np.ones((3, 3)))
    with pytest.raises(ValueError, match="action_one_probs"):
        deep_sea_expected_return(mapping, np.ones((2, 2)))
    with pytest.raises(ValueError, match="action_one_probs"):
        deep_sea_expected_return(mapping, np.full((3, 3), 1.5))
    with pytest.raises(ValueError, match="action_one_probs"):
        deep_sea_expected_return(mapping, np.array([0, 1, 0.5]))
    with pytest.raises(ValueError, match="action_one_probs"):
        deep_sea_expected_return(mapping, np.full((3, 3), np.nan))


# ------------------------------------------------------------------ instance / API
def test_mapping_drawn_at_first_reset_kept_and_resampled() -> None:
    env = DeepSeaEnv(size=6)
    with pytest.raises(ResetNeeded):
        _ = env.action_mapping
    env.reset(seed=11)
    seed = env.mapping_seed
    assert seed == int(reference_rng(11).integers(0, 2**32))
    first = env.action_mapping.copy()
    np.testing.assert_array_equal(first, make_reference(6, mapping_seed=seed)._action_mapping)
    for s in (None, 12, None):
        env.reset(seed=s)
        np.testing.assert_array_equal(env.action_mapping, first)
    env.reset(options={"resample": True})
    assert env.mapping_seed != seed
    assert not np.array_equal(env.action_mapping, first)
    with pytest.raises(ValueError, match="resample"):
        DeepSeaEnv(size=3, mapping_seed=1).reset(options={"resample": True})
    with pytest.raises(ValueError, match="resample"):
        DeepSeaEnv(size=3, randomize_actions=False).reset(options={"resample": True})


def test_properties_are_read_only_and_documented_values() -> None:
    env = DeepSeaEnv(size=4, deterministic=False, unscaled_move_cost=0.2, mapping_seed=9)
    assert (env.size, env.deterministic, env.unscaled_move_cost) == (4, False, 0.2)
    assert env.move_cost == 0.2 / 4 and env.randomize_actions and env.mapping_seed == 9
    assert env.optimal_return == pytest.approx((1 - 1 / 4) ** 3 - 0.2)  # the closed form
    envs = DeepSeaVectorEnv(2, size=4)
    for name in ("size", "deterministic", "unscaled_move_cost", "move_cost", "randomize_actions"):
        for holder in (env, envs):
            with pytest.raises(AttributeError, match="has no setter"):
                setattr(holder, name, getattr(holder, name))
    with pytest.raises(AttributeError, match="has no setter"):
        env.optimal_return = 1.0
    assert env.size == 4 and envs.size == 4 and envs.optimal_return == 1.0 - 0.01
    mapping = env.action_mapping
    with pytest.raises(ValueError):
        mapping[0, 0] = 1 - mapping[0, 0]
    assert env.action_space == gym.spaces.Discrete(2)
    assert env.observation_space == gym.spaces.Box(0, 1, (4, 4), np.float32)


def test_step_after_termination_and_before_reset_raise_reset_needed() -> None:
    env = DeepSeaEnv(size=2, mapping_seed=0)
    with pytest.raises(ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    env.step(0)
    obs, *_ = env.step(0)
    assert not obs.any()  # bsuite's null observation after the last step
    with pytest.raises(ResetNeeded, match="terminated"):
        env.step(0)
    env.reset()
    assert env.position == (0, 0)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"size": 0}, ValueError, "size"),
        ({"size": -3}, ValueError, "size"),
        ({"size": 2.0}, TypeError, "size"),
        ({"size": True}, TypeError, "size"),
        ({"unscaled_move_cost": -0.1}, ValueError, "unscaled_move_cost"),
        ({"unscaled_move_cost": float("nan")}, ValueError, "unscaled_move_cost"),
        ({"unscaled_move_cost": "0.01"}, TypeError, "unscaled_move_cost"),
        ({"deterministic": 1}, TypeError, "deterministic"),
        ({"randomize_actions": None}, TypeError, "randomize_actions"),
        ({"mapping_seed": -1}, ValueError, "mapping_seed"),
        ({"mapping_seed": 2**32}, ValueError, "mapping_seed"),
        ({"mapping_seed": 1.0}, TypeError, "mapping_seed"),
        ({"mapping_seed": 1, "randomize_actions": False}, ValueError, "mapping_seed"),
        ({"render_mode": "human"}, ValueError, "render_mode"),
    ],
)
def test_bad_constructor_arguments_raise_naming_them(
    kwargs: dict[str, Any], error: type[Exception], name: str
) -> None:
    with pytest.raises(error, match=name):
        DeepSeaEnv(**kwargs)
    with pytest.raises(error, match=name):
        DeepSeaVectorEnv(num_envs=2, **kwargs)


def test_size_limit_is_one_clear_error_naming_size() -> None:
    # The limit is memory of the N x N arrays: N**2 (times num_envs) cells at most 2**24.
    assert deep_sea_module.MAX_DEEP_SEA_CELLS == 2**24
    assert deep_sea_module.MAX_DEEP_SEA_SIZE == 4096 == int(np.sqrt(2**24))
    for size in (4097, 10**9, 10**30):
        with pytest.raises(ValueError, match=rf"size={size} is too large.*size must be <= 4096"):
            gym.make("DeepSea-v0", size=size)
        with pytest.raises(ValueError, match="size"):
            DeepSeaEnv(size=size, deterministic=False)
    # The vector env counts every sub-env's cells: 30 envs allow N <= isqrt(2**24 // 30) = 747.
    with pytest.raises(ValueError, match=r"size=748 is too large.*<= 747 for num_envs=30"):
        DeepSeaVectorEnv(num_envs=30, size=748)
    with pytest.raises(ValueError, match="size"):
        gym.make_vec("DeepSea-v0", num_envs=2, size=10**9)
    assert deep_sea_optimal_return(10**9) == pytest.approx(0.99)  # no array: no limit


def test_size_limit_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    # The same rule at a small budget (16 cells), so both sides of the boundary are built.
    monkeypatch.setattr(deep_sea_maths, "MAX_DEEP_SEA_CELLS", 16)
    assert DeepSeaEnv(size=4).size == 4
    with pytest.raises(ValueError, match="size=5"):
        DeepSeaEnv(size=5)
    assert DeepSeaVectorEnv(num_envs=4, size=2).num_envs == 4
    with pytest.raises(ValueError, match=r"size=2 .*<= 1 for num_envs=5"):
        DeepSeaVectorEnv(num_envs=5, size=2)


@pytest.mark.parametrize("action", [2, -1, 0.0, 1.5, True, "1", None, np.array([0, 1])])
def test_bad_actions_raise_naming_action(action: Any) -> None:
    env = DeepSeaEnv(size=3, mapping_seed=0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)
    assert env.position == (0, 0)  # nothing happened


def test_integer_like_actions_are_accepted() -> None:
    """numpy integers and 0-d arrays step exactly like the Python int of the same value."""
    for action in (0, 1, np.int64(1), np.int8(0), np.array(1)):
        env, plain = DeepSeaEnv(size=3, mapping_seed=0), DeepSeaEnv(size=3, mapping_seed=0)
        env.reset(seed=0)
        plain.reset(seed=0)
        obs, reward, *_ = env.step(action)
        obs_int, reward_int, *_ = plain.step(int(action))
        np.testing.assert_array_equal(obs, obs_int)
        assert reward == reward_int and env.position == plain.position


def test_bad_reset_options_raise() -> None:
    env = DeepSeaEnv(size=3)
    with pytest.raises(ValueError, match="unknown keys"):
        env.reset(options={"size": 3})
    with pytest.raises(TypeError, match="resample"):
        env.reset(options={"resample": 1})


def test_render_modes() -> None:
    env = DeepSeaEnv(size=3, mapping_seed=42, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str)
    assert text.splitlines()[1:] == ["@..", "...", "..$"]
    env.step(env.action_mapping[0, 0])
    assert env.render().splitlines()[1:] == ["...", ".@.", "..$"]  # type: ignore[union-attr]
    rgb = DeepSeaEnv(size=5, mapping_seed=1, render_mode="rgb_array")
    rgb.reset(seed=0)
    frame = rgb.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8
    assert frame.ndim == 3 and frame.shape[0] == frame.shape[1] and frame.shape[2] == 3
    cell = frame.shape[0] // 5
    np.testing.assert_array_equal(frame[0, 0], [255, 255, 255])  # the agent, top left
    np.testing.assert_array_equal(frame[-1, -1], [255, 200, 0])  # the treasure cell
    assert frame[cell * 2, cell * 3].tolist() != [255, 255, 255]


def test_docstring_examples_run() -> None:
    result = doctest.testmod(deep_sea_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 10 and result.failed == 0


# ------------------------------------------------------------------------ vector
def _run_singles(
    seeds: list[int], actions: np.ndarray, **kwargs: Any
) -> tuple[list[np.ndarray], ...]:
    envs = [DeepSeaEnv(**kwargs) for _ in seeds]
    obs = [env.reset(seed=s)[0] for env, s in zip(envs, seeds, strict=True)]
    out_obs, out_rew, out_term, out_info = [np.stack(obs)], [], [], []
    for row in actions:
        step_obs, rewards, terms, infos = [], [], [], []
        for env, a in zip(envs, row.tolist(), strict=True):
            o, r, term, _, info = env.step(a)
            if term:
                o, _ = env.reset()
            step_obs.append(o)
            rewards.append(r)
            terms.append(term)
            infos.append([info[k] for k in INFO_KEYS] + [info.get("is_success", False)])
        out_obs.append(np.stack(step_obs))
        out_rew.append(np.array(rewards))
        out_term.append(np.array(terms))
        out_info.append(np.array(infos, dtype=np.float64))
    mappings = [np.stack([env.action_mapping for env in envs])]
    return out_obs, out_rew, out_term, out_info, mappings


def _run_vector(seed: Any, num_envs: int, actions: np.ndarray, **kwargs: Any) -> Any:
    envs = DeepSeaVectorEnv(num_envs=num_envs, **kwargs)
    obs, _ = envs.reset(seed=seed)
    out_obs, out_rew, out_term, out_info = [obs], [], [], []
    for row in actions:
        o, r, term, trunc, info = envs.step(row)
        assert o in envs.observation_space and not trunc.any()
        out_obs.append(o)
        out_rew.append(r)
        out_term.append(term)
        success = np.zeros(num_envs) if not term.any() else np.where(term, info["is_success"], 0)
        columns = [info[k].astype(np.float64) for k in INFO_KEYS]
        out_info.append(np.stack([*columns, success], axis=1))
        assert ("is_success" in info) == term.any()
        if term.any():
            np.testing.assert_array_equal(info["_is_success"], term)
            for k in (*INFO_KEYS, "is_success"):
                np.testing.assert_array_equal(info["final_info"][k][term], info[k][term])
    return out_obs, out_rew, out_term, out_info, [envs.action_mapping]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": 4},
        {"size": 3, "deterministic": False},
        {"size": 1, "deterministic": False},
        {"size": 5, "deterministic": False, "mapping_seed": 42},
        {"size": 2, "randomize_actions": False},
    ],
)
@pytest.mark.parametrize(("seed", "seeds"), [(7, [7, 8, 9, 10]), ([3, 3, 0, 90], None)])
def test_vector_equals_single_envs_seed_for_seed(
    kwargs: dict[str, Any], seed: Any, seeds: list[int] | None
) -> None:
    seeds = seeds if seeds is not None else list(seed)
    actions = np.random.default_rng(5).integers(2, size=(150, 4))
    single = _run_singles(seeds, actions, **kwargs)
    vector = _run_vector(seed, 4, actions, **kwargs)
    for a, b in zip(single, vector, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
    successes = sum(info[:, -1].sum() for info in vector[3])
    assert successes > 0 or kwargs["size"] == 5  # is_success was compared, not only False


def test_vector_per_env_mapping_seeds_and_expected_return() -> None:
    envs = DeepSeaVectorEnv(num_envs=3, size=4, mapping_seed=[0, 1, 2])
    assert envs.mapping_seed == (0, 1, 2)
    for i in range(3):
        np.testing.assert_array_equal(
            envs.action_mapping[i], DeepSeaEnv(size=4, mapping_seed=i).action_mapping
        )
    values = envs.expected_return(envs.action_mapping)
    np.testing.assert_allclose(values, envs.optimal_return, atol=1e-12)
    with pytest.raises(ValueError, match="mapping_seed"):
        DeepSeaVectorEnv(num_envs=3, size=4, mapping_seed=[0, 1])
    with pytest.raises(ValueError, match="action_one_probs"):
        envs.expected_return(np.ones((2, 4, 4)))


def test_vector_matches_gymnasium_sync_vector_env_in_same_step_mode() -> None:
    num_envs, size = 3, 3
    native = DeepSeaVectorEnv(num_envs=num_envs, size=size, deterministic=False)
    sync = SyncVectorEnv(
        [lambda: DeepSeaEnv(size=size, deterministic=False)] * num_envs,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
    assert native.action_space == sync.action_space
    assert native.observation_space == sync.observation_space
    assert native.single_observation_space == sync.single_observation_space
    assert data_equivalence(native.reset(seed=17), sync.reset(seed=17), exact=True)
    actions = np.random.default_rng(1).integers(2, size=(30, num_envs))
    finals = 0
    for row in actions:
        n_obs, n_rew, n_term, n_trunc, n_info = native.step(row)
        s_obs, s_rew, s_term, s_trunc, s_info = sync.step(row)
        assert data_equivalence((n_obs, n_rew, n_term, n_trunc), (s_obs, s_rew, s_term, s_trunc))
        if n_term.any():
            finals += 1
            for key in ("final_info", "_final_info", "_final_obs"):
                assert data_equivalence(n_info[key], s_info[key], exact=True), key
            for a, b in zip(n_info["final_obs"], s_info["final_obs"], strict=True):
                np.testing.assert_array_equal(a, b)
        else:
            assert "final_info" not in n_info and "final_info" not in s_info
    assert finals == 10
    np.testing.assert_array_equal(native.action_mapping, np.stack(sync.get_attr("action_mapping")))


def test_vector_resample_and_bad_input() -> None:
    envs = DeepSeaVectorEnv(num_envs=3, size=4)
    with pytest.raises(ResetNeeded):
        envs.step(np.zeros(3, dtype=np.int64))
    envs.reset(seed=0)
    first = envs.action_mapping.copy()
    mask = np.array([False, True, False])
    envs.reset(options={"resample": mask})
    np.testing.assert_array_equal(envs.action_mapping[~mask], first[~mask])
    assert not np.array_equal(envs.action_mapping[1], first[1])
    for bad in (np.array([0, 1]), np.array([0, 1, 2]), np.array([0.0, 1.0, 0.0]), [True] * 3):
        with pytest.raises(ValueError, match="actions"):
            envs.step(bad)
    with pytest.raises(ValueError, match="resample"):
        envs.reset(options={"resample": np.array([1, 0, 0])})
    with pytest.raises(ValueError, match="resample"):
        DeepSeaVectorEnv(num_envs=2, size=3, mapping_seed=4).reset(options={"resample": True})


def test_vector_pickle_and_render() -> None:
    envs = DeepSeaVectorEnv(num_envs=2, size=3, deterministic=False, render_mode="ansi")
    envs.reset(seed=2)
    envs.step(np.array([0, 1]))
    clone = pickle.loads(pickle.dumps(envs))
    for row in np.random.default_rng(0).integers(2, size=(20, 2)):
        assert data_equivalence(envs.step(row), clone.step(row), exact=True)
    lines = envs.render()
    assert lines is not None and len(lines) == 2 and all(isinstance(t, str) for t in lines)
    rgb = DeepSeaVectorEnv(num_envs=2, size=3, render_mode="rgb_array")
    rgb.reset(seed=0)
    frames = rgb.render()
    assert frames is not None and len(frames) == 2 and frames[0].shape[2] == 3


# ------------------------------------------------------------------ registration
def test_make_and_make_vec() -> None:
    env = gym.make("DeepSea-v0", size=7, mapping_seed=3)
    assert isinstance(env.unwrapped, DeepSeaEnv) and env.unwrapped.size == 7
    assert env.spec is not None and env.spec.max_episode_steps is None
    stoch = gym.make("DeepSeaStochastic-v0", size=4)
    assert stoch.unwrapped.deterministic is False  # type: ignore[attr-defined]
    envs = gym.make_vec("DeepSeaStochastic-v0", num_envs=5, size=6)
    assert isinstance(envs, DeepSeaVectorEnv)
    assert envs.deterministic is False and envs.size == 6 and envs.num_envs == 5
    assert DeepSeaEnv().size == 10


# ------------------------------------------------------------------ real bsuite
def test_equals_real_bsuite_and_transcription_equals_bsuite() -> None:
    deep_sea = pytest.importorskip("bsuite.environments.deep_sea")
    rng = np.random.default_rng(0)
    for size, deterministic, randomize, mapping_seed in [
        (1, True, True, 0),
        (2, False, True, 1),
        (3, True, True, 42),
        (10, True, True, 42),
        (10, False, True, 7),
        (50, True, True, 42),
        (50, False, True, 3),
        (4, True, False, None),
        (4, False, False, None),
    ]:
        kwargs = {
            "deterministic": deterministic,
            "randomize_actions": randomize,
            "mapping_seed": mapping_seed,
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            real = deep_sea.DeepSea(size, seed=5, **kwargs)
            trans = make_reference(size, seed=5, **kwargs)
        # Transcription vs bsuite on bsuite's own RandomState stream (same seed).
        actions = rng.integers(2, size=2000)
        first_real, first_trans = real.reset(), trans.reset()
        np.testing.assert_array_equal(first_real.observation, first_trans.observation)
        for a in actions.tolist():
            ts_r, ts_t = real.step(a), trans.step(a)
            np.testing.assert_array_equal(ts_r.observation, ts_t.observation)
            assert ts_r.reward == ts_t.reward and ts_r.last() == ts_t.last()
        assert real.bsuite_info() == trans.bsuite_info()
        # Our env vs bsuite, with bsuite drawing from our env's stream (seed 9).
        if not randomize:
            kwargs.pop("mapping_seed")
        env = DeepSeaEnv(size=size, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            real = deep_sea.DeepSea(size, **kwargs)
        real._rng = GeneratorAsRandomState(reference_rng(9))
        counts = play_side_by_side(env, real, rng.integers(2, size=2000), env_seed=9)
        assert counts["steps"] == 2000


# ------------------------------------------------------------ is_success with SB3
@pytest.mark.parametrize("deterministic", [True, False])
def test_monitor_records_is_success_and_sb3_logs_success_rate(deterministic: bool) -> None:
    """Through SB3's ``Monitor`` (which raises if an ``info_keywords`` key is missing on the
    terminal step) and an SB3 algorithm's success buffer, which feeds
    ``rollout/success_rate``. The reference: an episode is a success iff its denoised
    return is 1 - cost (the treasure), computed here from the rewards Monitor logged."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import A2C
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import KVWriter, Logger
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    class Capture(KVWriter):
        def __init__(self) -> None:
            self.rows: list[dict[str, Any]] = []

        def write(self, key_values: dict[str, Any], *args: Any, **kwargs: Any) -> None:
            self.rows.append(dict(key_values))

    class Episodes(BaseCallback):
        """Monitor's episode records (``info["episode"]``) as the algorithm sees them."""

        def __init__(self) -> None:
            super().__init__()
            self.records: list[dict[str, Any]] = []

        def _on_step(self) -> bool:
            self.records += [i["episode"] for i in self.locals["infos"] if "episode" in i]
            return True

    size = 2
    env = Monitor(
        gym.make("DeepSea-v0", size=size, deterministic=deterministic, mapping_seed=0),
        info_keywords=("is_success", "bad_episode", "denoised_return"),
    )
    model = A2C("MlpPolicy", DummyVecEnv([lambda: env]), n_steps=8, seed=0, device="cpu")
    capture = Capture()
    model.set_logger(Logger(folder=None, output_formats=[capture]))
    episodes = Episodes()
    model.learn(total_timesteps=400, log_interval=5, callback=episodes)

    # Monitor's records carry the terminal step's is_success (Monitor raises otherwise).
    records = episodes.records
    assert len(records) == 200 and {r["l"] for r in records} == {size}
    successes = [r["is_success"] for r in records]
    assert all(type(x) is bool for x in successes)
    assert successes == [r["denoised_return"] > 0.5 for r in records]  # the treasure
    assert 0 < sum(successes) < len(successes)  # both outcomes were compared
    if deterministic:
        assert successes == [not r["bad_episode"] for r in records]
    # SB3's success buffer holds the last episodes' is_success; the logger reports its mean.
    buffer = list(model.ep_success_buffer)
    assert len(buffer) == 100 and buffer == successes[-100:]
    logged = [row["rollout/success_rate"] for row in capture.rows if "rollout/success_rate" in row]
    assert logged and logged[-1] == pytest.approx(np.mean(buffer))
