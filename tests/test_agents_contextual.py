"""Contextual agents: limiting cases of DE, learning on a tiny problem built here, batched rows
equal per-seed agents, seeds reproduce, inputs are checked."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from delight_gym.agents.contextual import CONTEXTUAL_AGENTS, make_contextual_agent
from delight_gym.posteriors.linfull import StudentTPredictive

FAST = [n for n in CONTEXTUAL_AGENTS if n.endswith("linfull")] + ["egreedy", "uniform"]
NEURAL = [n for n in CONTEXTUAL_AGENTS if n.endswith(("neurallinear", "ensemble"))]
SMALL_NET = {
    "neurallinear": {
        "hidden_sizes": (8,),
        "train_every": 5,
        "train_steps": 3,
        "train_batch_size": 16,
    },
    "ensemble": {"num_heads": 3, "hidden_sizes": (8,)},
}


def _options(name: str) -> dict:
    return SMALL_NET.get(name.split("-")[-1], {})


def _problem(batch: int, arms: int, dim: int, seed: int) -> torch.Tensor:
    """Per-arm linear means ``θ_aᵀx`` of a context ``x`` shared by the arms."""
    return torch.randn(batch, arms, dim, generator=torch.Generator().manual_seed(seed))


def _run(agent, theta: torch.Tensor, rounds: int, seed: int, noise: float = 0.1):  # type: ignore[no-untyped-def]
    """Play ``rounds`` rounds; returns the actions ``(rounds, B)`` and the mean regret."""
    gen = torch.Generator().manual_seed(seed)
    batch, arms, dim = theta.shape
    rows = torch.arange(batch)
    actions, regret = [], torch.zeros(batch, dtype=torch.float64)
    for _ in range(rounds):
        context = torch.randn(batch, dim, generator=gen)
        x = context[:, None].expand(batch, arms, dim)
        means = (theta * x).sum(-1).double()
        a = agent.act(x)
        r = means[rows, a] + noise * torch.randn(batch, generator=gen, dtype=torch.float64)
        agent.update(x, a, r)
        actions.append(a)
        regret += means.max(-1).values - means[rows, a]
    return torch.stack(actions), float(regret.mean())


def test_agent_names() -> None:
    rules = ("delight", "thompson", "greedy")
    posts = ("linfull", "neurallinear", "ensemble")
    assert set(CONTEXTUAL_AGENTS) == {f"{r}-{p}" for r in rules for p in posts} | {
        "egreedy",
        "uniform",
    }
    with pytest.raises(ValueError, match="name"):
        make_contextual_agent("delight", 1, 2, 1, per_arm=True, seed=0)


class _ZeroVariance:
    """A LinFull posterior whose predictive has scale 0 (every EI is 0 at ``v = max`` mean)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _predictive(self, x: torch.Tensor) -> StudentTPredictive:  # what the agent calls
        pred = self.inner._predictive(x)

        def spread(rows: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
            scale, dof = pred.spread(rows)
            return torch.zeros_like(scale), dof

        return StudentTPredictive(pred.mean, spread)


def test_zero_variance_and_infinite_price_give_the_greedy_host() -> None:
    theta = _problem(4, 5, 2, 100)
    greedy, _ = _run(
        make_contextual_agent("greedy-linfull", 4, 5, 2, per_arm=True, seed=100), theta, 60, 100
    )
    never = make_contextual_agent(
        "delight-linfull", 4, 5, 2, per_arm=True, seed=100, gate_price=float("inf")
    )
    acts, _ = _run(never, theta, 60, 100)
    assert torch.equal(acts, greedy) and int(never.overrides.sum()) == 0
    flat = make_contextual_agent("delight-linfull", 4, 5, 2, per_arm=True, seed=100)
    flat.posterior = _ZeroVariance(flat.posterior)
    acts, _ = _run(flat, theta, 60, 100)
    assert torch.equal(acts, greedy) and int(flat.overrides.sum()) == 0


def test_delight_overrides_towards_the_uncertain_arm() -> None:
    # At t = 0 (ε = 1) every row explores; all arms have the prior's EI, the host's arm has
    # surprisal 0, so the override picks among the other arms only, and counts.
    agent = make_contextual_agent("delight-linfull", 64, 3, 1, per_arm=True, seed=100)
    acts = agent.act(torch.ones(64, 3, 1))
    assert bool((acts != 0).all())  # the host (ties → arm 0) is never the override's pick
    assert agent.overrides.tolist() == [1] * 64
    # λ = 0.1·reward_scale: above L·EI = 10·EI it closes the gate.
    pred = agent.posterior.predictive(torch.ones(64, 3, 1))
    ei = float(pred.expected_improvement(pred.mean.max(-1).values)[0, 1])
    closed = make_contextual_agent(
        "delight-linfull", 64, 3, 1, per_arm=True, seed=100, reward_scale=200 * ei
    )
    assert closed.act(torch.ones(64, 3, 1)).tolist() == [0] * 64
    assert int(closed.overrides.sum()) == 0


@pytest.mark.parametrize("name", FAST)
def test_agents_learn_a_tiny_per_arm_problem(name: str) -> None:
    theta = _problem(8, 4, 2, 101)
    _, regret = _run(make_contextual_agent(name, 8, 4, 2, per_arm=True, seed=100), theta, 300, 102)
    _, uniform = _run(
        make_contextual_agent("uniform", 8, 4, 2, per_arm=True, seed=100), theta, 300, 102
    )
    if name == "uniform":
        assert regret == uniform
    else:
        assert regret < 0.5 * uniform


def test_shared_model_learns_from_arm_features() -> None:
    # per_arm=False: one model on each arm's own features, means φ_aᵀθ.
    gen = torch.Generator().manual_seed(103)
    batch, arms, dim = 6, 50, 3
    feats = torch.randn(batch, arms, dim, generator=gen)
    theta = torch.randn(batch, dim, 1, generator=gen)
    means = (feats @ theta)[..., 0].double()
    rows = torch.arange(batch)
    out = {}
    for name in ("delight-linfull", "thompson-linfull", "uniform"):
        agent = make_contextual_agent(name, batch, arms, dim, per_arm=False, seed=100)
        regret = torch.zeros(batch, dtype=torch.float64)
        for _ in range(200):
            a = agent.act(feats)
            agent.update(feats, a, means[rows, a] + 0.1 * torch.randn(batch, generator=gen))
            regret += means.max(-1).values - means[rows, a]
        out[name] = float(regret.mean())
    assert out["delight-linfull"] < 0.25 * out["uniform"]
    assert out["thompson-linfull"] < 0.25 * out["uniform"]


def _batched_and_per_seed(name: str, rounds: int) -> tuple[list[Any], list[Any]]:
    """Actions of each round, then override counts: a 3-row agent's, and three 1-row agents'
    seeded 100, 101, 102 (played on the batched agent's actions and rewards)."""
    theta = _problem(3, 4, 2, 104)
    batched = make_contextual_agent(name, 3, 4, 2, per_arm=True, seed=100, **_options(name))
    gen = torch.Generator().manual_seed(105)
    singles = [
        make_contextual_agent(name, 1, 4, 2, per_arm=True, seed=100 + i, **_options(name))
        for i in range(3)
    ]
    got: list[Any] = []
    want: list[Any] = []
    for _ in range(rounds):
        x = torch.randn(3, 2, generator=gen)[:, None].expand(3, 4, 2)
        means = (theta * x).sum(-1).double()
        a = batched.act(x)
        got.append(a.tolist())
        want.append(torch.cat([s.act(x[i : i + 1]) for i, s in enumerate(singles)]).tolist())
        r = means[torch.arange(3), a] + 0.1 * torch.randn(3, generator=gen, dtype=torch.float64)
        batched.update(x, a, r)
        for i, s in enumerate(singles):
            s.update(x[i : i + 1], a[i : i + 1], r[i : i + 1])
    got.append(batched.overrides.tolist())
    want.append([int(s.overrides[0]) for s in singles])
    return got, want


@pytest.mark.parametrize("name", FAST)
def test_batched_rows_equal_per_seed_agents(name: str) -> None:
    got, want = _batched_and_per_seed(name, 40)
    assert got == want


@pytest.mark.parametrize("name", NEURAL)
def test_batched_rows_equal_per_seed_neural_agents(name: str) -> None:
    # Small networks, retrained every 5 rounds: 12 rounds cover two retrainings.
    got, want = _batched_and_per_seed(name, 12)
    assert got == want


@pytest.mark.slow
@pytest.mark.parametrize("name", NEURAL)
def test_neural_agents_learn_a_tiny_per_arm_problem(name: str) -> None:
    theta = _problem(8, 4, 2, 101)
    _, regret = _run(make_contextual_agent(name, 8, 4, 2, per_arm=True, seed=100), theta, 300, 102)
    _, uniform = _run(
        make_contextual_agent("uniform", 8, 4, 2, per_arm=True, seed=100), theta, 300, 102
    )
    assert regret < 0.5 * uniform


@pytest.mark.parametrize("name", FAST + NEURAL)
def test_same_seed_same_actions(name: str) -> None:
    theta = _problem(2, 3, 2, 106)
    first, _ = _run(
        make_contextual_agent(name, 2, 3, 2, per_arm=True, seed=7, **_options(name)), theta, 30, 1
    )
    again, _ = _run(
        make_contextual_agent(name, 2, 3, 2, per_arm=True, seed=7, **_options(name)), theta, 30, 1
    )
    assert torch.equal(first, again)


def test_input_checks_name_the_argument() -> None:
    agent = make_contextual_agent("delight-linfull", 2, 3, 2, per_arm=True, seed=0)
    x = torch.zeros(2, 3, 2)
    with pytest.raises(ValueError, match="inputs"):
        agent.act(torch.zeros(2, 4, 2))
    with pytest.raises(TypeError, match="inputs"):
        agent.act(torch.zeros(2, 3, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="inputs"):
        agent.act(torch.full((2, 3, 2), float("nan")))
    with pytest.raises(ValueError, match="actions"):
        agent.update(x, torch.tensor([0, 3]), torch.zeros(2))
    with pytest.raises(TypeError, match="actions"):
        agent.update(x, torch.tensor([0.0, 1.0]), torch.zeros(2))
    with pytest.raises(ValueError, match="rewards"):
        agent.update(x, torch.tensor([0, 1]), torch.zeros(3))
    with pytest.raises(ValueError, match="rewards"):
        agent.update(x, torch.tensor([0, 1]), torch.tensor([0.0, float("inf")]))
    for key, value in (
        ("gate_price", -1.0),
        ("reward_scale", 0.0),
        ("half_life", 0.0),
        ("surprisal_cap", 0.0),
    ):
        with pytest.raises(ValueError, match=key):
            make_contextual_agent("delight-linfull", 1, 2, 1, per_arm=True, seed=0, **{key: value})
    with pytest.raises(ValueError, match="seed"):
        make_contextual_agent("uniform", 1, 2, 1, per_arm=True, seed=-1)
    with pytest.raises(TypeError, match="lambda"):
        make_contextual_agent("greedy-linfull", 1, 2, 1, per_arm=True, seed=0, lambda_=1.0)
