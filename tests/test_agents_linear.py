"""Linear agents against an independent per-seed implementation, the paper's budget, devices."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from delight_gym.agents.linear import LINEAR_AGENTS, make_linear_agent
from delight_gym.experiments.linear import run_linear
from delight_gym.theory import linear_override_budget
from tests.linear_reference import run_linear_reference

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
    ),
]


def assert_same_mean(a, b, z_max=4.0):
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    z = abs(a.mean() - b.mean()) / se
    assert z < z_max, f"means {a.mean():.2f} vs {b.mean():.2f}, z = {z:.2f}"


@pytest.mark.parametrize("agent", ["delight", "thompson", "egreedy"])
def test_regret_matches_independent_reference(agent):
    ours = run_linear(agent, 50, 5, 1.0, 200, 40, seed=0).cumulative[:, -1]
    ref = run_linear_reference(agent, 50, 5, 1.0, 200, 40, seed=1)
    assert_same_mean(ours, ref)


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["delight", "thompson", "egreedy"])
@pytest.mark.parametrize("dim", [10, 30])
def test_paper_scale_linear_regret_matches_reference(agent, dim):
    """Issue #4 'done when': K=100, D ∈ {10, 30}, σ=1, T=1000, 100 seeds."""
    ours = run_linear(agent, 100, dim, 1.0, 1000, 100, seed=0).cumulative[:, -1]
    ref = run_linear_reference(agent, 100, dim, 1.0, 1000, 100, seed=7)
    print(
        f"\n{agent} D={dim}: delight_gym {ours.mean():.1f} ± {ours.std(ddof=1) / 10:.1f}, "
        f"reference {ref.mean():.1f} ± {ref.std(ddof=1) / 10:.1f}"
    )
    assert_same_mean(ours, ref, z_max=3.5)


@pytest.mark.parametrize(
    ("dim", "noise", "gate_price"), [(5, 0.1, 1.0), (10, 0.1, 1.0), (5, 0.3, 1.0), (10, 1.0, 0.1)]
)
def test_selected_override_rounds_within_the_linear_budget(dim, noise, gate_price):
    """Paper: rounds where the override selects from the gate ≤ 2γ_T / min(1, λ²/(L²σ²)).

    The first settings make the bound tight enough to mean something (≈ 90 rounds of 300).
    """
    horizon = 300
    result = run_linear("delight", 60, dim, noise, horizon, 10, seed=3, gate_price=gate_price)
    bound = linear_override_budget(dim, horizon, noise, gate_price=gate_price)
    assert result.overrides.max() <= bound
    assert result.overrides.max() > 0  # the count is live, not stuck at zero


def test_budget_formula():
    gamma = 10 * math.log(1 + 1000 / 10)
    assert linear_override_budget(10, 1000, 1.0) == pytest.approx(2 * gamma / 1e-4)
    assert linear_override_budget(10, 1000, 0.1, gate_price=1.0) == pytest.approx(
        2 * 10 * math.log(1 + 1000 / (0.01 * 10))
    )


@pytest.mark.parametrize("agent", sorted(LINEAR_AGENTS))
def test_same_seed_same_actions(agent):
    runs = [run_linear(agent, 20, 4, 0.5, 60, 6, seed=9).actions for _ in range(2)]
    np.testing.assert_array_equal(*runs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("agent", ["delight", "thompson"])
def test_device_gives_the_same_numbers(agent, device):
    """CPU vs the device: same regret up to float tolerance (CUDA skipped when absent)."""
    cpu = run_linear(agent, 30, 5, 1.0, 100, 8, seed=4, device="cpu")
    dev = run_linear(agent, 30, 5, 1.0, 100, 8, seed=4, device=device)
    if device == "cpu":
        np.testing.assert_array_equal(cpu.actions, dev.actions)
    # Generators differ across devices; compare the deterministic parts of the law.
    assert np.isfinite(dev.regret).all()
    assert_same_mean(cpu.cumulative[:, -1], dev.cumulative[:, -1], z_max=6.0)


def test_float32_agent_runs_and_gates_like_float64():
    r32 = run_linear("delight", 40, 5, 1.0, 150, 10, seed=2, dtype=torch.float32)
    r64 = run_linear("delight", 40, 5, 1.0, 150, 10, seed=2, dtype=torch.float64)
    assert np.isfinite(r32.regret).all()
    assert_same_mean(r32.cumulative[:, -1], r64.cumulative[:, -1], z_max=6.0)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="agent"):
        make_linear_agent("psrl", 2, 3, 2)
    with pytest.raises(ValueError, match="gate_price"):
        make_linear_agent("delight", 2, 3, 2, gate_price=-1.0)
    with pytest.raises(ValueError, match="half_life"):
        make_linear_agent("egreedy", 2, 3, 2, half_life=0.0)
    agent = make_linear_agent("greedy", 2, 3, 2)
    with pytest.raises(ValueError, match="features"):
        agent.act(np.zeros((2, 4, 2)))
    with pytest.raises(RuntimeError, match="act"):
        agent.update(torch.tensor([0, 1]), torch.tensor([0.0, 1.0]))
    agent.act(np.zeros((2, 3, 2)))
    with pytest.raises(ValueError, match="actions"):
        agent.update(torch.tensor([0, 3]), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="noise"):
        run_linear("greedy", 3, 2, 0.0, 5, 2)
