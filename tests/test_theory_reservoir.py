"""The reservoir of fresh arms: the env, the horizon-priced agents and the T^{α/(α+1)} rate."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import delight_gym  # noqa: F401  (registers the ids)
from delight_gym.envs.reservoir import ReservoirEnv
from delight_gym.theory.reservation import horizon_price, horizon_threshold
from delight_gym.theory.reservoir import (
    ReservationAgent,
    ReservoirDelightAgent,
    fit_slope,
    reservoir_rates,
    simulate_reservoir,
)


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_env_values_have_the_polynomial_tail(alpha):
    env = ReservoirEnv(tail_exponent=alpha, num_arms=20000)
    env.reset(seed=0)
    values = env.values
    # Kolmogorov–Smirnov against Beta(1, α), and the tail P(X >= 1 − y) = y^α itself.
    assert stats.kstest(values, stats.beta(1, alpha).cdf).pvalue > 1e-3
    for y in (0.05, 0.2):
        emp = float(np.mean(values >= 1 - y))
        se = np.sqrt(y**alpha * (1 - y**alpha) / values.size)
        assert abs(emp - y**alpha) < 5 * se


def test_env_rewards_info_and_bernoulli_variant():
    env = gym.make("Reservoir-v0", tail_exponent=1.0, num_arms=5)
    env.reset(seed=1)
    values = env.unwrapped.values
    _, reward, term, trunc, info = env.step(3)
    assert term and not trunc
    assert reward == info["expected_reward"] == values[3]
    assert info["optimal_expected_reward"] == 1.0 and info["regret"] == pytest.approx(1 - values[3])
    env.reset()
    np.testing.assert_array_equal(env.unwrapped.values, values)  # kept for the env's life
    env.reset(options={"resample": True})
    assert not np.array_equal(env.unwrapped.values, values)
    bern = ReservoirEnv(num_arms=2, reward_mode="bernoulli")
    bern.reset(seed=4)
    rewards = []
    for _ in range(4000):
        rewards.append(bern.step(0)[1])
        bern.reset()
    p = bern.values[0]
    assert set(rewards) <= {0.0, 1.0}
    assert abs(np.mean(rewards) - p) < 5 * np.sqrt(p * (1 - p) / 4000) + 1e-9
    with pytest.raises(ValueError, match="reward_mode"):
        ReservoirEnv(reward_mode="noisy")
    with pytest.raises(ValueError, match="tail_exponent"):
        ReservoirEnv(tail_exponent=0.0)


def _exact_reservation_regret(alpha: float, horizon: int, y: float) -> float:
    """E[R_T] of 'inspect until X >= 1 − y, then exploit', in closed form for Beta(1, α).

    With W = 1 − X (P(W <= w) = w^α) and p = y^α: a failed inspection costs
    E[W | W > y] = α/(α+1)·(1 − y^{α+1})/(1 − y^α), the found arm E[W | W <= y] = α/(α+1)·y.
    """
    p = y**alpha
    r_fail = alpha / (alpha + 1) * (1 - y ** (alpha + 1)) / (1 - p)
    r_hit = alpha / (alpha + 1) * y
    n = np.arange(1, horizon + 1)
    first_hit = (1 - p) ** (n - 1) * p
    total = np.sum(first_hit * ((n - 1) * r_fail + (horizon - n + 1) * r_hit))
    return float(total + (1 - p) ** horizon * horizon * r_fail)


@pytest.mark.parametrize(("alpha", "horizon"), [(1.0, 400), (2.0, 1000)])
def test_simulated_reservation_regret_matches_its_closed_form(alpha, horizon):
    agent = ReservationAgent(4000, alpha, horizon)
    regret = simulate_reservoir(agent, seed=5)
    exact = _exact_reservation_regret(alpha, horizon, agent.threshold_gap)
    assert abs(regret.mean() - exact) < 4 * regret.std(ddof=1) / np.sqrt(regret.size)


def test_unthrottled_delight_is_the_reservation_policy():
    # ε = 1 and the horizon price: DE's gate admits fresh arms exactly while best < 1 − y_T,
    # so on the same values it plays the same arms (Proposition 1 in the reservoir).
    for alpha in (1.0, 2.0):
        a = simulate_reservoir(ReservationAgent(300, alpha, 2000), seed=9)
        b = simulate_reservoir(ReservoirDelightAgent(300, alpha, 2000, seed=1), seed=9)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_delight_agent_price_and_settling():
    agent = ReservoirDelightAgent(3, 1.0, 1000, override_rate=0.1, seed=0)
    prior = stats.beta(1.0, 1.0)
    assert agent.gate_price == pytest.approx(horizon_price(prior, 1000, 10.0, 0.1))
    y = horizon_threshold(prior, 1000, 0.1)
    agent.update(np.array([0, 0, 0]), np.array([0.2, 1 - y - 1e-6, 1 - y + 1e-6]))
    # Row 0: the host itself goes fresh (0.2 < E[X] = 0.5); row 1: gate open; row 2: settled.
    np.testing.assert_array_equal(agent.settled(), [False, False, True])
    actions = np.array([agent.act() for _ in range(200)])
    assert (actions[:, 0] == 1).all() and (actions[:, 2] == 0).all()
    share = np.mean(actions[:, 1] == 1)
    assert 0.02 < share < 0.25  # overrides at rate ε = 0.1
    with pytest.raises(ValueError, match="actions"):
        agent.update(np.array([5, 0, 0]), np.array([0.1, 0.1, 0.1]))


def test_agent_through_the_env_plays_fresh_then_exploits():
    env = ReservoirEnv(tail_exponent=1.0, num_arms=300)
    env.reset(seed=2)
    agent = ReservationAgent(1, 1.0, 300)
    regret = 0.0
    for _ in range(300):
        arm = agent.act()
        _, reward, _, _, info = env.step(int(arm[0]))
        env.reset()
        regret += info["regret"]
        agent.update(arm, np.array([reward]))
    values = env.values
    first_hit = int(np.argmax(values >= 1 - agent.threshold_gap))
    expected = np.sum(1 - values[: first_hit + 1]) + (299 - first_hit) * (1 - values[first_hit])
    assert regret == pytest.approx(expected)


def test_fit_slope_recovers_a_power_law():
    t = np.array([10, 100, 1000])
    assert fit_slope(t, 3 * t**0.4) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        fit_slope([10], [1])


def test_rate_on_a_short_grid_is_near_alpha_over_alpha_plus_one():
    (res,) = reservoir_rates(1.0, [1000, 3162, 10000], seeds=200, agents=["reservation"])
    assert abs(res.slope_top - 0.5) <= 0.1
    again = reservoir_rates(1.0, [1000, 3162, 10000], seeds=200, agents=["reservation"])[0]
    assert again == res  # seeded


@pytest.mark.slow
def test_reservoir_slopes_at_paper_scale():
    from delight_gym.theory.claims import reservoir_claims

    checks, _ = reservoir_claims(quick=False)
    assert all(c.passed for c in checks), [c.measured for c in checks]
