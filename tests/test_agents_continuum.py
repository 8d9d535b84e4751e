"""Continuum-bandit agents: each plays what its rule says on the shared posterior and pool."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

from delight_gym.agents.continuum import (
    CONTINUUM_AGENTS,
    ContinuumAgent,
    srinivas_beta,
    srinivas_beta_continuous,
)
from delight_gym.experiments.continuum import (
    FOUND_REGRET,
    needle_found,
    run_continuum,
    scaled_widths,
)


def _trained(name: str, **kwargs: Any) -> ContinuumAgent:
    agent = ContinuumAgent(name, 3, 2, seed=5, num_features=64, **kwargs)
    rng = np.random.default_rng(0)
    x = rng.random((3, 20, 2))
    agent.posterior.update(torch.as_tensor(x), torch.as_tensor(np.sin(6 * x).sum(-1)))
    agent.t = 20
    return agent


def _replayed_pool(agent: ContinuumAgent) -> np.ndarray:
    """The pool the next :meth:`act` draws, from copies of both generators' states."""
    state = agent.rng.bit_generator.state
    torch_state = agent.posterior.generator.get_state()
    incumbent = agent.incumbent.copy()
    pool = agent.pool()
    agent.rng.bit_generator.state = state
    agent.posterior.generator.set_state(torch_state)
    agent.incumbent = incumbent
    return pool


def test_srinivas_beta_is_theorem_1s_closed_form():
    # β_t = 2 log(|D| t² π² / (6δ)), by hand at t = 1 and t = 100.
    assert srinivas_beta(1, 64, 0.1) == pytest.approx(2 * math.log(64 * math.pi**2 / 0.6))
    assert srinivas_beta(100, 64, 0.1) == pytest.approx(
        2 * (math.log(64) + 4 * math.log(10) + math.log(math.pi**2 / 0.6))
    )
    # Doubling t adds 4 log 2; squaring |D| doubles its share.
    assert srinivas_beta(20, 8) - srinivas_beta(10, 8) == pytest.approx(4 * math.log(2))
    with pytest.raises(ValueError, match="delta"):
        srinivas_beta(1, 64, 1.0)
    with pytest.raises(ValueError, match="t must"):
        srinivas_beta(0, 64)


def test_srinivas_beta_continuous_is_theorem_2s_closed_form():
    t, d, delta, a, b, r = 7, 3, 0.1, 2.0, 0.5, 1.0
    by_hand = 2 * math.log(2 * t**2 * math.pi**2 / (3 * delta)) + 2 * d * math.log(
        t**2 * d * b * r * math.sqrt(math.log(4 * d * a / delta))
    )
    assert srinivas_beta_continuous(t, d, delta=delta, a=a, b=b, r=r) == pytest.approx(by_hand)


def test_the_pool_holds_incumbent_posterior_argmaxes_local_steps_and_uniform_points():
    agent = _trained("greedy", num_local=10, num_posterior=4, local_std=0.01)
    pool = agent.pool()
    assert pool.shape == (3, 64, 2)
    np.testing.assert_array_equal(pool[:, 0], agent.incumbent)
    local = pool[:, 5:15]
    assert np.abs(local - agent.incumbent[:, None]).max() < 0.1  # 10 σ
    scored = pool[:, 5:]
    for row in range(3):  # each posterior argmax is one of the scored points
        for k in range(1, 5):
            assert np.any(np.all(scored[row] == pool[row, k], axis=-1))
    assert ((pool >= 0) & (pool <= 1)).all()


def test_greedy_plays_the_best_posterior_mean_of_its_pool():
    agent = _trained("greedy")
    pool = _replayed_pool(agent)
    actions = agent.act()
    means = agent.posterior.mean(torch.as_tensor(pool)).numpy()
    np.testing.assert_array_equal(actions, pool[np.arange(3), means.argmax(1)])
    np.testing.assert_array_equal(agent.incumbent, actions)


def test_ucb_plays_the_best_srinivas_upper_bound_of_its_pool():
    agent = _trained("ucb")
    pool = _replayed_pool(agent)
    actions = agent.act()
    mean, std = agent.posterior.predictive(torch.as_tensor(pool))
    beta = 2 * math.log(64 * 21**2 * math.pi**2 / 0.6)  # round t = 21
    scores = (mean + math.sqrt(beta) * std).numpy()
    np.testing.assert_array_equal(actions, pool[np.arange(3), scores.argmax(1)])


def test_infinite_gate_price_plays_the_greedy_host():
    agent = _trained("delight", gate_price=math.inf)
    for _ in range(5):
        actions = agent.act()
        np.testing.assert_array_equal(actions, agent.incumbent)  # the host's own action
    assert agent.override_count.sum() == 0


def test_an_open_gate_overrides_early_and_its_sources_are_counted():
    agent = _trained("delight", gate_price=0.0, half_life=1e9)  # ε_t ≈ 1, every χ > 0 gates
    for _ in range(3):
        agent.act()
    assert agent.override_count.sum() > 0
    assert agent.explored_count.sum() == 9
    assert 0 < agent.override_sources.sum() <= agent.override_count.sum()


def test_delight_ei_is_the_posteriors_ei_over_the_host_mean():
    agent = _trained("delight")
    rng = np.random.default_rng(1)
    cands = rng.random((3, 4, 2))
    ei = agent._expected_improvement(np.arange(3), cands)
    x = torch.as_tensor(cands)
    base = agent.posterior.mean(x[:, :1])[:, 0]
    ref = agent.posterior.expected_improvement(x, base).numpy()
    np.testing.assert_allclose(ei, ref)


@pytest.mark.parametrize("name", CONTINUUM_AGENTS)
def test_every_agent_runs_and_regret_is_nonnegative(name):
    kwargs: dict[str, Any] = {
        "num_features": 32,
        "num_candidates": 12,
        "num_local": 4,
        "num_posterior": 2,
    }
    result = run_continuum(name, 2, 15, 2, seed=3, **kwargs)
    assert result.regret.shape == (2, 15)
    assert (result.regret >= 0).all()
    again = run_continuum(name, 2, 15, 2, seed=3, **kwargs)
    np.testing.assert_array_equal(result.regret, again.regret)  # seeds reproduce


def test_widths_scale_with_the_root_of_the_dimension_and_set_the_lengthscale():
    assert scaled_widths(4, 0.15, 0.3) == pytest.approx((0.3, 0.6))
    diagnostics: dict = {}
    result = run_continuum("delight", 4, 5, 1, num_features=16, diagnostics=diagnostics)
    assert set(diagnostics) == {"explored", "overridden", "sources"}
    assert result.regret.shape == (1, 5)


def test_needle_found_reads_the_last_tenth_of_rounds():
    regret = np.full((2, 100), 0.7)
    regret[0, 90:] = FOUND_REGRET - 0.01
    np.testing.assert_array_equal(needle_found(regret), [True, False])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="name"):
        ContinuumAgent("sarsa", 1, 1, seed=0)
    with pytest.raises(ValueError, match="num_candidates"):
        ContinuumAgent("greedy", 1, 1, seed=0, num_candidates=0)
    with pytest.raises(ValueError, match="num_candidates=8 must be at least"):
        ContinuumAgent("greedy", 1, 1, seed=0, num_candidates=8, num_local=8)
    with pytest.raises(ValueError, match="local_std"):
        ContinuumAgent("delight", 1, 1, seed=0, local_std=0.0)
    with pytest.raises(ValueError, match="delta"):
        ContinuumAgent("ucb", 1, 1, seed=0, ucb_delta=2.0)


def test_the_family_report_counts_seeds_in_the_needles_basin():
    from types import SimpleNamespace

    from delight_gym.experiments.families.continuum import CONTINUUM_BOTORCH, needle_report

    regret = np.full((3, 50), 0.7)
    regret[:2, 40:] = 0.1
    row = {"dim": 2, "agent": "delight", "cumulative": np.cumsum(regret, axis=1)}
    result = SimpleNamespace(spec=SimpleNamespace(setting_columns=("dim",)), rows=[row])
    assert needle_report(result)[1] == "  dim=2 delight: 2/3"
    assert CONTINUUM_BOTORCH.batch_size == 1 and CONTINUUM_BOTORCH.horizon == 200
