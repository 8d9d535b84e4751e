"""Tests of :class:`delight_gym.wrappers.TabularMDPAdapter` (the tabular MDP posterior as a
posterior of :class:`~delight_gym.DelightExplorationWrapper`).

References are independent of the package's planner and posterior: the posterior mean is
rebuilt from the transitions fed in (Dirichlet mean ``(α0 + n(s, a, s'))/(S·α0 + n(s, a))``,
Beta mean of the rescaled rewards) and planned by a dense numpy backward induction; one
value on a two-state MDP is worked out by hand.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

import delight_gym  # noqa: F401 - registers DeepSea-v0
from delight_gym import DelightExplorationWrapper
from delight_gym.de.posterior import ValuePosterior
from delight_gym.posteriors import TabularMDPAdapter, TabularMDPPosterior


class NumpyReference:
    """The posterior mean of ``B`` tabular MDPs from raw counts, planned densely."""

    def __init__(self, b: int, s: int, a: int, h: int, alpha0: float, low: float, high: float):
        self.n = np.zeros((b, s, a, s))
        self.r_sum = np.zeros((b, s, a))  # rescaled rewards
        self.r_count = np.zeros((b, s, a))
        self.alpha0, self.low, self.high, self.horizon = alpha0, low, high, h

    def add(self, row: int, s: int, a: int, r: float, s_next: int) -> None:
        self.r_sum[row, s, a] += (r - self.low) / (self.high - self.low)
        self.r_count[row, s, a] += 1
        if s_next >= 0:
            self.n[row, s, a, s_next] += 1

    def q(self) -> np.ndarray:
        """``Q[h, b, s, a]`` of the posterior-mean MDP (Beta(1, 1) rewards)."""
        num_states = self.n.shape[1]
        reward = self.low + (self.high - self.low) * (1 + self.r_sum) / (2 + self.r_count)
        p = (self.alpha0 + self.n) / (num_states * self.alpha0 + self.n.sum(-1, keepdims=True))
        out = np.zeros((self.horizon, *reward.shape))
        v = np.zeros(reward.shape[:2])
        for h in range(self.horizon - 1, -1, -1):
            out[h] = reward + np.einsum("bsat,bt->bsa", p, v)
            v = out[h].max(-1)
        return out


# ---------------------------------------------------------------------------------------------
# Mean: the posterior-mean plan at each row's step
# ---------------------------------------------------------------------------------------------


def test_mean_on_two_state_mdp_by_hand() -> None:
    adapter = TabularMDPAdapter(TabularMDPPosterior(1, 2, 2, 2))  # α0 = 0.1/2, Beta(1, 1)
    assert isinstance(adapter, ValuePosterior)
    # Prior: r̄ = 1/2 everywhere, so Q_1 = 1/2 and Q_0 = 1/2 + 1/2 = 1.
    np.testing.assert_allclose(adapter.mean(np.array([0])), [[1.0, 1.0]], rtol=1e-12)
    adapter.update(np.array([0]), np.array([1]), np.array([1.0]), np.array([1]), np.array([False]))
    assert adapter.steps.tolist() == [1]
    # Step 1: Q_1(s, a) = r̄(s, a); (0, 1) now has Beta(2, 1), mean 2/3.
    np.testing.assert_allclose(adapter.mean(np.array([0])), [[0.5, 2 / 3]], rtol=1e-12)
    np.testing.assert_allclose(adapter.mean(np.array([1])), [[0.5, 0.5]], rtol=1e-12)
    adapter.update(np.array([1]), np.array([0]), np.array([0.0]), np.array([0]), np.array([True]))
    assert adapter.steps.tolist() == [0]
    # Step 0: V_1 = (2/3, 1/2) now that (1, 0) has Beta(1, 2), mean 1/3, still < 1/2.
    # Q_0(0, 0) = 1/2 + (2/3 + 1/2)/2 (uniform prior row);
    # Q_0(0, 1) = 2/3 + (0.05·2/3 + 1.05·1/2)/1.1 (one observed 0 -> 1, α0 = 0.05).
    q00 = 0.5 + (2 / 3 + 0.5) / 2
    q01 = 2 / 3 + (0.05 * 2 / 3 + 1.05 * 0.5) / 1.1
    np.testing.assert_allclose(adapter.mean(np.array([0])), [[q00, q01]], rtol=1e-12)


def test_mean_matches_dense_reference_on_random_mdp_batch() -> None:
    b, s, a, h = 2, 3, 2, 3
    rng = np.random.default_rng(0)
    transitions = rng.dirichlet(np.ones(s), size=(b, s, a))
    posterior = TabularMDPPosterior(b, s, a, h, transition_prior=0.3, reward_range=(-1.0, 2.0))
    adapter = TabularMDPAdapter(posterior, observation_space=spaces.Discrete(s))
    ref = NumpyReference(b, s, a, h, 0.3, -1.0, 2.0)
    states = np.zeros(b, dtype=np.int64)
    steps = np.zeros(b, dtype=np.int64)
    for _ in range(40):
        q = ref.q()
        np.testing.assert_allclose(
            adapter.mean(states), q[steps, np.arange(b), states], rtol=1e-12, atol=1e-12
        )
        actions = rng.integers(a, size=b)
        rewards = rng.uniform(-1.0, 2.0, size=b)
        nxt = np.array([rng.choice(s, p=transitions[i, states[i], actions[i]]) for i in range(b)])
        # Row 1 sometimes terminates early; otherwise episodes last exactly H steps.
        term = (steps == h - 1) | ((np.arange(b) == 1) & (rng.uniform(size=b) < 0.2))
        adapter.update(states, actions, rewards, nxt, term)
        for i in range(b):
            ref.add(i, states[i], actions[i], rewards[i], -1 if term[i] else nxt[i])
        steps = np.where(term, 0, steps + 1)
        states = np.where(term, 0, nxt)
        assert adapter.steps.tolist() == steps.tolist()


def test_mean_on_deep_sea_matches_reference_and_caches_the_plan() -> None:
    env = gym.make("DeepSea-v0", size=3)
    move_cost = env.unwrapped.move_cost
    posterior = TabularMDPPosterior(1, 9, 2, 3, reward_range=(-move_cost, 1.0))
    adapter = TabularMDPAdapter(posterior)
    ref = NumpyReference(1, 9, 2, 3, 0.1 / 9, -move_cost, 1.0)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=0)
    for _ in range(4):  # episodes
        for step in range(3):
            s = int(np.argmax(obs))
            mean = adapter.mean(obs[None])
            np.testing.assert_allclose(mean, ref.q()[step, :, s], rtol=1e-12, atol=1e-12)
            plan = adapter._plan
            adapter.expected_improvement(obs[None], np.zeros(1))
            assert adapter._plan is plan  # no re-plan without an update
            action = int(rng.integers(2))
            nxt, reward, terminated, truncated, _ = env.step(action)
            assert terminated == (step == 2) and not truncated
            adapter.update(
                obs[None], np.array([action]), np.array([reward]), nxt[None], [terminated]
            )
            ref.add(0, s, action, reward, -1 if terminated else int(np.argmax(nxt)))
            obs = nxt
        assert not obs.any() and adapter.steps.tolist() == [0]
        obs, _ = env.reset()


# ---------------------------------------------------------------------------------------------
# EI: the mean surrogate
# ---------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-3.0, 3.0), min_size=2, max_size=2))
def test_ei_is_the_positive_part_of_mean_minus_baseline(baseline: list[float]) -> None:
    posterior = TabularMDPPosterior(2, 3, 2, 2)
    adapter = TabularMDPAdapter(posterior)
    adapter.update(
        np.array([0, 1]), np.array([1, 0]), np.array([1.0, 0.2]), np.array([2, 0]), [0, 0]
    )
    obs = np.array([2, 1])
    base = np.asarray(baseline)
    ei = adapter.expected_improvement(obs, base)
    mean = adapter.mean(obs)
    expected = np.where(mean > base[:, None], mean - base[:, None], 0.0)
    np.testing.assert_array_equal(ei, expected)


def test_ei_in_the_wrapper_uses_the_host_baseline() -> None:
    posterior = TabularMDPPosterior(1, 3, 2, 2)
    adapter = TabularMDPAdapter(posterior)
    adapter.update(np.array([0]), np.array([0]), np.array([0.0]), np.array([1]), [True])
    probs = np.array([0.8, 0.2])
    de = DelightExplorationWrapper(
        lambda o: np.tile(probs, (len(o), 1)),
        adapter,
        observation_space=spaces.Discrete(3),
        action_space=spaces.Discrete(2),
        seed=0,
    )
    de.predict(0)
    mean = adapter.mean(np.array([0]))[0]
    assert mean[0] < mean[1]  # the played action's reward 0 pulled it below the prior's 1/2
    base = probs @ mean
    assert de.last_info["baseline"] == pytest.approx(base, rel=1e-12)
    np.testing.assert_allclose(
        de.last_info["expected_improvement"], np.maximum(mean - base, 0.0), rtol=1e-12
    )
    assert de.last_info["expected_improvement"][0] == 0.0


# ---------------------------------------------------------------------------------------------
# The wrapper on DeepSea
# ---------------------------------------------------------------------------------------------


def _left_host(env: gym.Env, p_left: float = 0.99):
    """A callable host that plays "left" in every cell with probability ``p_left``."""
    mapping = env.unwrapped.action_mapping
    n = mapping.shape[0]

    def host(obs: np.ndarray) -> np.ndarray:
        cells = np.argmax(obs.reshape(len(obs), -1), axis=1)
        right = mapping[cells // n, cells % n]
        probs = np.full((len(obs), 2), p_left)
        probs[np.arange(len(obs)), right] = 1.0 - p_left
        return probs

    return host


@pytest.mark.parametrize("lazy_gate", [False, True])
def test_wrapper_runs_deep_sea_and_overrides_a_left_host(lazy_gate: bool) -> None:
    env = gym.make("DeepSea-v0", size=4)
    obs, _ = env.reset(seed=3)
    move_cost = env.unwrapped.move_cost
    adapter = TabularMDPAdapter(
        TabularMDPPosterior(1, 16, 2, 4, reward_range=(-move_cost, 1.0)),
        observation_space=env.observation_space,
    )
    de = DelightExplorationWrapper(
        _left_host(env),
        posterior=adapter,
        observation_space=env.observation_space,
        action_space=env.action_space,
        seed=0,
        lazy_gate=lazy_gate,
    )
    episodes, treasures, overrides = 20, 0, 0
    for _ in range(episodes):
        done, steps = False, 0
        while not done:
            assert adapter.steps.tolist() == [steps]
            action, _ = de.predict(obs)
            overrides += int(de.last_info["overridden"])
            nxt, reward, terminated, truncated, _ = env.step(action)
            de.observe(obs, action, reward, nxt, terminated, truncated)
            treasures += int(reward > 0.5)
            obs, done, steps = nxt, terminated or truncated, steps + 1
        assert steps == 4 and adapter.steps.tolist() == [0]
        obs, _ = env.reset()
    post = adapter.posterior
    assert de.t == 4 * episodes
    # Every step's reward is recorded, every step but the last one's successor.
    assert float((post.reward_a + post.reward_b).sum() - 2 * post.reward_a.numel()) == 4 * episodes
    assert float(post.visits.sum()) == 3 * episodes
    # The host alone reaches the treasure with probability 1e-8 per episode; DE prefers the
    # optimistic untried "right" actions once "left" is seen to pay nothing.
    assert overrides > 0 and treasures >= 1


# ---------------------------------------------------------------------------------------------
# Episode bookkeeping and bad inputs
# ---------------------------------------------------------------------------------------------


def test_horizon_overflow_truncation_and_reset_steps() -> None:
    posterior = TabularMDPPosterior(1, 2, 2, 2)
    adapter = TabularMDPAdapter(posterior)
    one = np.array([0]), np.array([0]), np.array([0.5]), np.array([1])
    adapter.update(*one, [False])
    adapter.update(*one, [False])  # step H - 1 without termination: over by the horizon
    assert adapter.steps.tolist() == [2]
    assert float(posterior.visits.sum()) == 1  # the last step records no successor
    with pytest.raises(ValueError, match="horizon=2"):
        adapter.mean(np.array([0]))
    with pytest.raises(ValueError, match="horizon=2"):
        adapter.update(*one, [False])
    adapter.reset_steps()
    assert adapter.steps.tolist() == [0]
    adapter.update(*one, [False], truncated=[True])  # truncated: successor kept, new episode
    assert adapter.steps.tolist() == [0] and float(posterior.visits.sum()) == 2


def test_bad_inputs_raise_naming_the_argument() -> None:
    env = gym.make("DeepSea-v0", size=4)
    obs, _ = env.reset(seed=0)
    host = _left_host(env)
    kwargs = {"observation_space": env.observation_space, "action_space": env.action_space}
    with pytest.raises(ValueError, match=r"observations must encode .*num_states=9"):
        DelightExplorationWrapper(
            host, TabularMDPAdapter(TabularMDPPosterior(1, 9, 2, 4)), **kwargs
        ).predict(obs)
    with pytest.raises(ValueError, match=r"observation_space encodes 16 states .*num_states=9"):
        TabularMDPAdapter(TabularMDPPosterior(1, 9, 2, 4), observation_space=env.observation_space)
    with pytest.raises(ValueError, match="observation_space must be Discrete"):
        TabularMDPAdapter(TabularMDPPosterior(1, 9, 2, 4), spaces.Box(-1.0, 1.0, (3, 3)))
    with pytest.raises(ValueError, match="posterior has 3 actions"):
        DelightExplorationWrapper(
            host, TabularMDPAdapter(TabularMDPPosterior(1, 16, 3, 4)), **kwargs
        )
    with pytest.raises(TypeError, match="TabularMDPPosterior"):
        TabularMDPAdapter(object())
    adapter = TabularMDPAdapter(TabularMDPPosterior(2, 3, 2, 2))
    with pytest.raises(ValueError, match="observations must hold one observation per posterior"):
        adapter.mean(np.array([0]))
    with pytest.raises(ValueError, match="observations must lie in"):
        adapter.mean(np.array([0, 3]))
    with pytest.raises(ValueError, match="baseline must have shape"):
        adapter.expected_improvement(np.array([0, 1]), np.zeros(3))
    good = (np.array([0, 1]), np.array([0, 1]), np.array([0.5, 0.5]), np.array([1, 2]))
    with pytest.raises(ValueError, match="actions must lie in"):
        adapter.update(good[0], np.array([0, 2]), *good[2:], [False, False])
    with pytest.raises(ValueError, match="rewards must lie in reward_range"):
        adapter.update(*good[:2], np.array([0.5, 1.5]), good[3], [False, False])
    with pytest.raises(ValueError, match="terminated must hold one flag per row"):
        adapter.update(*good, [False])
    # A blank (all-zero) successor is accepted only where the episode ends.
    deep = TabularMDPAdapter(TabularMDPPosterior(1, 16, 2, 4, reward_range=(-1.0, 1.0)))
    blank = np.zeros((1, 4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="next_observations must be one-hot"):
        deep.update(obs[None], np.array([0]), np.array([0.0]), blank, [False])
    assert float(deep.posterior.reward_a.sum()) == 16 * 2  # nothing recorded
    deep.update(obs[None], np.array([0]), np.array([0.0]), blank, [True])
    assert deep.steps.tolist() == [0]


def test_float32_posterior_gives_float64_means() -> None:
    adapter = TabularMDPAdapter(TabularMDPPosterior(1, 2, 2, 2, dtype=torch.float32))
    mean = adapter.mean(np.array([1]))
    assert mean.dtype == np.float64
    np.testing.assert_allclose(mean, [[1.0, 1.0]], rtol=1e-6)


def test_wrapper_passes_truncation_on_to_the_adapter() -> None:
    """observe(..., truncated=True) starts a new episode in an episode-aware posterior."""
    posterior = TabularMDPPosterior(1, 2, 2, 3)
    adapter = TabularMDPAdapter(posterior)
    de = DelightExplorationWrapper(
        lambda obs: np.tile([0.5, 0.5], (len(obs), 1)),
        adapter,
        observation_space=gym.spaces.Discrete(2),
        action_space=gym.spaces.Discrete(2),
        seed=0,
    )
    de.observe(0, 1, 0.5, 1, False, False)
    assert adapter.steps.tolist() == [1]
    de.observe(1, 0, 0.5, 0, False, True)  # truncated by the environment
    assert adapter.steps.tolist() == [0]
    assert float(posterior.visits.sum()) == 2  # both transitions recorded with successors
