"""Pandora's boxes: the env's accounting, Weitzman's rule, and Proposition 1 (DE = Pandora)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from scipy import stats

import delight_gym  # noqa: F401  (registers the ids)
from delight_gym.envs.pandora import PandoraBoxesEnv, draw_boxes
from delight_gym.theory.claims import check_pandora_optimality, check_pandora_proposition
from delight_gym.theory.pandora import (
    DelightPandoraAgent,
    OrderedSearchAgent,
    WeitzmanAgent,
    run_search,
    sample_instances,
)
from delight_gym.theory.reservation import reservation_index

A, B, C = [1.0, 2.0, 3.0], [1.0, 1.0, 2.0], [0.01, 0.05, 0.2]


def test_env_payoff_accounting_reopen_and_stop():
    env = PandoraBoxesEnv(alphas=A, betas=B, costs=C)
    obs, info = env.reset(seed=1)
    assert obs.shape == (3, 3) and info == {} and not obs[:, 0].any()
    np.testing.assert_allclose(obs[:, 2], C, rtol=1e-6)
    obs, r1, term, trunc, info = env.step(1)
    assert r1 == pytest.approx(-0.05) and not term and not trunc and info["opened"] == [1]
    obs, r2, term, _, _ = env.step(1)  # reopening: the fee again, nothing new
    assert r2 == pytest.approx(-0.05) and not term and obs[:, 0].sum() == 1
    value = float(obs[1, 1])
    obs, r3, term, _, info = env.step(3)  # stop
    assert term and r3 == pytest.approx(info["best_value"])
    assert info["best_value"] == pytest.approx(value, rel=1e-6)
    assert info["payoff"] == pytest.approx(r1 + r2 + r3)
    with pytest.raises(ResetNeeded):
        env.step(0)


def test_env_ends_when_every_box_is_open_and_truncates_repeats():
    env = PandoraBoxesEnv(alphas=A, betas=B, costs=C, outside_option=0.5)
    env.reset(seed=2)
    for a in (0, 1):
        assert not env.step(a)[2]
    _, reward, term, _, info = env.step(2)
    assert term and info["best_value"] == pytest.approx(max(0.5, info["values"].max()))
    assert reward == pytest.approx(info["best_value"] - 0.2)
    env = PandoraBoxesEnv(alphas=A, betas=B, costs=C, max_steps=3)
    env.reset(seed=3)
    out = [env.step(0) for _ in range(3)]
    assert [o[3] for o in out] == [False, False, True] and not out[-1][2]
    assert out[-1][4]["payoff"] == pytest.approx(out[-1][4]["values"][0] - 3 * 0.01)


def test_instance_kept_until_resample_and_values_redrawn_each_episode():
    env = gym.make("PandoraBoxes-v0", num_boxes=4)
    env.reset(seed=0)
    u = env.unwrapped
    costs = u.costs
    # The instance comes from the reset's generator, as draw_boxes makes it.
    np.testing.assert_array_equal(costs, draw_boxes(np.random.default_rng(0), 4)[2])
    v1 = env.step(4)[4]["values"]
    env.reset()
    np.testing.assert_array_equal(u.costs, costs)
    assert not np.array_equal(env.step(4)[4]["values"], v1)
    env.reset(options={"resample": True})
    assert not np.array_equal(u.costs, costs)


def test_env_bad_arguments():
    with pytest.raises(ValueError, match="together"):
        PandoraBoxesEnv(alphas=A, betas=B)
    with pytest.raises(ValueError, match="costs"):
        PandoraBoxesEnv(alphas=A, betas=B, costs=[0.1, -0.1, 0.1])
    with pytest.raises(ValueError, match="num_boxes"):
        PandoraBoxesEnv(num_boxes=2, alphas=A, betas=B, costs=C)
    with pytest.raises(ValueError, match="outside_option"):
        PandoraBoxesEnv(outside_option=2.0)
    env = PandoraBoxesEnv(alphas=A, betas=B, costs=C)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(4)
    with pytest.raises(ValueError, match="resample"):
        env.reset(options={"resample": True})


def test_weitzman_reservation_values_solve_the_cost_equation():
    agent = WeitzmanAgent(A, B, C)
    for z, a, b, c in zip(agent.reservation, A, B, C, strict=True):
        tail = stats.beta(a, b).expect(lambda x, z=z: x - z, lb=z)  # independent quadrature
        assert tail == pytest.approx(c, rel=1e-7)


def _optimal_payoff(hi: np.ndarray, q: np.ndarray, c: np.ndarray) -> float:
    """Best expected payoff over all adaptive policies, by dynamic programming over the set of
    opened boxes and the best value in hand (box a is worth hi[a] w.p. q[a], else 0)."""
    k = hi.size
    cache: dict[tuple[int, float], float] = {}

    def value(mask: int, best: float) -> float:
        key = (mask, best)
        if key not in cache:
            options = [best]
            for a in range(k):
                if not mask >> a & 1:
                    m = mask | 1 << a
                    win = value(m, max(best, hi[a]))
                    options.append(-c[a] + q[a] * win + (1 - q[a]) * value(m, best))
            cache[key] = max(options)
        return cache[key]

    return value(0, 0.0)


def test_weitzman_is_optimal_and_beats_naive_orders_exactly_on_two_point_priors():
    # Each box is worth hi with probability q, else 0; exhaustive search over all adaptive
    # policies (dynamic programming over opened sets and the best value) gives the optimum.
    rng = np.random.default_rng(7)
    gains = dict.fromkeys(["by prior mean", "cheapest first", "open all"], 0.0)
    for _ in range(30):
        k = 3
        hi, q = rng.uniform(0.2, 1.0, k), rng.uniform(0.1, 0.9, k)
        c = rng.uniform(0.005, 0.3, k)
        z = hi - c / q  # E[(X − z)^+] = q (hi − z) = c
        optimum = _optimal_payoff(hi, q, c)
        agents = {
            "weitzman": OrderedSearchAgent(z, z),
            "by prior mean": OrderedSearchAgent(z, hi * q),
            "cheapest first": OrderedSearchAgent(z, -c),
            "open all": OrderedSearchAgent(np.full(k, 2.0), -np.arange(k)),
        }
        expected = dict.fromkeys(agents, 0.0)
        for outcome in range(2**k):  # exact expectations over the 2^k value vectors
            wins = np.array([outcome >> a & 1 for a in range(k)], dtype=bool)
            prob = np.prod(np.where(wins, q, 1 - q))
            for name, agent in agents.items():
                payoff = run_search(agent.choose, np.where(wins, hi, 0.0), c)[1]
                expected[name] += prob * payoff
        assert expected["weitzman"] == pytest.approx(optimum, abs=1e-12)
        for name in gains:
            assert expected[name] <= expected["weitzman"] + 1e-12
            gains[name] += expected["weitzman"] - expected[name]
    assert all(gains[name] > 0 for name in ("by prior mean", "cheapest first", "open all"))


def test_proposition_1_on_1000_random_instances_through_the_env():
    # DE (gate from delight_rule, unthrottled max-z^λ override) and Weitzman: same boxes, same
    # order, same stopping time and payoff on every instance; gate == {z >= v} at every step.
    result = check_pandora_proposition(quick=False, seed=0)
    assert result.passed, result.measured
    assert "in 1000;" in result.measured


def test_delight_agent_computes_its_own_reservation_and_matches_weitzman():
    rng = np.random.default_rng(3)
    alphas, betas, costs = sample_instances(50, 4, rng)
    for i in range(50):
        w = WeitzmanAgent(alphas[i], betas[i], costs[i])
        d = DelightPandoraAgent(alphas[i], betas[i], costs[i], gate_price=0.3)
        np.testing.assert_allclose(d.reservation, w.reservation, atol=1e-12)
        x = rng.beta(alphas[i], betas[i])
        assert run_search(w.choose, x, costs[i]) == run_search(d.choose, x, costs[i])


@pytest.mark.slow
def test_weitzman_beats_naive_orders_monte_carlo():
    result = check_pandora_optimality(quick=True, seed=0)
    assert result.passed, result.measured


def test_delight_agent_rejects_unrepresentable_surprisal():
    with pytest.raises(ValueError, match="gate_price"):
        DelightPandoraAgent(A, B, [1e-6, 0.1, 0.1], gate_price=1.0)
    z = reservation_index(stats.beta(A, B), 1.0, C)
    with pytest.raises(ValueError, match="obs"):
        WeitzmanAgent(A, B, C, reservation=z).act(np.zeros((2, 3)))
