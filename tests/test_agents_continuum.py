"""Continuum-bandit agents: each plays what its rule says on the shared posterior."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from delight_gym.agents.continuum import CONTINUUM_AGENTS, ContinuumAgent
from delight_gym.experiments.continuum import run_continuum


def _trained(name: str, **kwargs) -> ContinuumAgent:
    agent = ContinuumAgent(name, 3, 2, seed=5, num_features=64, **kwargs)
    rng = np.random.default_rng(0)
    x = rng.random((3, 20, 2))
    agent.posterior.update(torch.as_tensor(x), torch.as_tensor(np.sin(6 * x).sum(-1)))
    agent.t = 20
    return agent


def test_infinite_gate_price_plays_the_greedy_host():
    agent = _trained("delight", gate_price=math.inf)
    for _ in range(5):
        actions = agent.act()
        np.testing.assert_array_equal(actions, agent.incumbent)  # the host's own action
    assert agent.override_count.sum() == 0


def test_an_open_gate_overrides_early():
    agent = _trained("delight", gate_price=0.0, half_life=1e9)  # ε_t ≈ 1, every χ > 0 gates
    agent.act()
    assert agent.override_count.sum() > 0


def test_delight_ei_is_the_posteriors_ei_over_the_host_mean():
    agent = _trained("delight")
    rng = np.random.default_rng(1)
    cands = rng.random((3, 4, 2))
    ei = agent._expected_improvement(np.arange(3), cands)
    x = torch.as_tensor(cands)
    base = agent.posterior.mean(x[:, :1])[:, 0]
    ref = agent.posterior.expected_improvement(x, base).numpy()
    np.testing.assert_allclose(ei, ref)


def test_greedy_plays_the_best_posterior_mean_of_its_pool():
    agent = _trained("greedy")
    state = agent.rng.bit_generator.state
    incumbent = agent.incumbent.copy()
    actions = agent.act()
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    pool = np.concatenate([incumbent[:, None], rng.random((3, agent.num_candidates, 2))], 1)
    means = agent.posterior.mean(torch.as_tensor(pool)).numpy()
    np.testing.assert_array_equal(actions, pool[np.arange(3), means.argmax(1)])


@pytest.mark.parametrize("name", CONTINUUM_AGENTS)
def test_every_agent_runs_and_regret_is_nonnegative(name):
    result = run_continuum(name, 2, 15, 2, seed=3, num_features=32, num_candidates=8)
    assert result.regret.shape == (2, 15)
    assert (result.regret >= 0).all()
    again = run_continuum(name, 2, 15, 2, seed=3, num_features=32, num_candidates=8)
    np.testing.assert_array_equal(result.regret, again.regret)  # seeds reproduce


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="name"):
        ContinuumAgent("sarsa", 1, 1, seed=0)
    with pytest.raises(ValueError, match="num_candidates"):
        ContinuumAgent("greedy", 1, 1, seed=0, num_candidates=0)
    with pytest.raises(ValueError, match="n_host"):
        ContinuumAgent("delight", 1, 1, seed=0, n_host=0)
