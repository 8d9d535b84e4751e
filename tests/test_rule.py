"""The DE rule against hand computations, limiting cases, brute force and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from delight_gym.agents.base import DelightSettings
from delight_gym.de.rule import (
    apply_delight_rule,
    check_gate_settings,
    delight_rule,
    epsilon_schedule,
    sample_acting,
    sample_acting_on_explore_rows,
    sample_categorical,
    surprisal,
)
from delight_gym.posteriors.beta import beta_expected_improvement

LAM, CAP = 0.1, 10.0


def brute_force_rule(pi, ei, eps, lam=LAM, cap=CAP):
    """Algorithm 1 for a single decision, written as a plain loop (independent of rule.py)."""
    a_count = len(pi)
    neglog = [math.inf if p == 0 else -math.log(p) for p in pi]
    lmin = min(neglog)
    surp = [min(max(x - lmin, 0.0), cap) for x in neglog]
    chi = [ei[a] * surp[a] for a in range(a_count)]
    gate = [chi[a] >= lam and chi[a] > 0 for a in range(a_count)]
    if any(gate):
        z = sum(chi[a] for a in range(a_count) if gate[a])
        q = [chi[a] / z if gate[a] else 0.0 for a in range(a_count)]
    else:
        q = list(pi)
    return [(1 - eps) * pi[a] + eps * q[a] for a in range(a_count)], surp, gate


def one_hot(k, n):
    x = np.zeros(n)
    x[k] = 1.0
    return x


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_greedy_host_surprisal_is_exactly_cap(backend):
    pi = np.stack([one_hot(2, 5), one_hot(0, 5)])
    if backend == "torch":
        pi = torch.tensor(pi)
    s = np.asarray(surprisal(pi, CAP))
    expected = np.full((2, 5), CAP)
    expected[0, 2] = expected[1, 0] = 0.0
    np.testing.assert_array_equal(s, expected)


@pytest.mark.parametrize("tau", [0.01, 0.3, 1.0, 5.0])
def test_boltzmann_host_surprisal_matches_formula(tau):
    rng = np.random.default_rng(1)
    q = rng.normal(size=(4, 7))
    logits = q / tau
    pi = np.exp(logits - logits.max(-1, keepdims=True))
    pi /= pi.sum(-1, keepdims=True)
    # −log π(a) − min_b −log π(b) = (max_b Q(b) − Q(a)) / τ for a Boltzmann host.
    expected = np.minimum((q.max(-1, keepdims=True) - q) / tau, CAP)
    np.testing.assert_allclose(surprisal(pi, CAP), expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_infinite_price_or_zero_epsilon_gives_host(backend):
    rng = np.random.default_rng(2)
    pi = rng.dirichlet(np.ones(6), size=3)
    ei = rng.uniform(0, 5, size=(3, 6))
    if backend == "torch":
        pi, ei = torch.tensor(pi), torch.tensor(ei)
    d_inf = delight_rule(pi, ei, 0.7, gate_price=math.inf)
    assert bool(d_inf.gate_empty.all())
    np.testing.assert_allclose(np.asarray(d_inf.probs), np.asarray(pi), atol=1e-12)
    d_eps0 = delight_rule(pi, ei, 0.0)
    assert not bool(d_eps0.gate_empty.all())  # the gate is not empty, yet ε = 0 ⇒ host
    np.testing.assert_allclose(np.asarray(d_eps0.probs), np.asarray(pi), atol=1e-12)


def test_empty_gate_gives_host():
    pi = np.stack([one_hot(1, 4), np.array([0.4, 0.3, 0.2, 0.1])])
    ei = np.full((2, 4), 1e-4)  # L·EI = 1e-3 < λ everywhere
    d = delight_rule(pi, ei, 1.0)
    assert d.gate_empty.tolist() == [True, True]
    np.testing.assert_array_equal(d.probs, pi)
    np.testing.assert_array_equal(d.override, pi)


def test_hand_worked_example():
    pi = one_hot(0, 4)
    ei = np.array([0.5, 0.02, 0.03, 0.005])  # delight: 0, 0.2, 0.3, 0.05 → gate {1, 2}
    d = delight_rule(pi, ei, 0.5)
    np.testing.assert_allclose(d.override, [0, 0.4, 0.6, 0])
    np.testing.assert_allclose(d.probs, [0.5, 0.2, 0.3, 0])
    assert d.gate.tolist() == [False, True, True, False]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            arrays(np.float64, n, elements=st.floats(0, 1)),
            arrays(np.float64, n, elements=st.floats(0, 2)),
        )
    ),
    st.floats(0, 1),
    st.floats(0, 1),
)
def test_rule_matches_brute_force_and_laws(inputs, eps, lam):
    raw, ei = inputs
    if raw.sum() == 0:
        raw = np.ones_like(raw)
    pi = raw / raw.sum()
    d = delight_rule(pi, ei, eps, gate_price=lam)
    probs, surp, gate = brute_force_rule(pi.tolist(), ei.tolist(), eps, lam=lam)
    np.testing.assert_allclose(d.probs, probs, atol=1e-12)
    np.testing.assert_allclose(d.surprisal, surp, atol=1e-9)
    assert d.gate.tolist() == gate
    assert abs(d.probs.sum() - 1) < 1e-9
    # Support of the acting distribution ⊆ host support ∪ gate.
    outside = (pi == 0) & ~d.gate
    assert np.all(d.probs[outside] == 0)


def test_torch_matches_numpy_and_keeps_dtype_and_batch_shape():
    rng = np.random.default_rng(3)
    pi = rng.dirichlet(np.ones(5) * 0.3, size=(2, 3))
    ei = rng.uniform(0, 0.1, size=(2, 3, 5))
    eps = rng.uniform(size=(2, 3))
    d_np = delight_rule(pi, ei, eps)
    d_t = delight_rule(torch.tensor(pi), torch.tensor(ei), torch.tensor(eps))
    for a, b in zip(d_np, d_t, strict=True):
        np.testing.assert_allclose(np.asarray(a, dtype=float), b.double().numpy(), atol=1e-12)
    d32 = delight_rule(
        torch.tensor(pi, dtype=torch.float32), torch.tensor(ei, dtype=torch.float32), 0.5
    )
    assert d32.probs.dtype == torch.float32 and d32.probs.shape == (2, 3, 5)


@pytest.mark.parametrize(
    ("v", "in_gate"),
    [
        (0.5, True),
        (1 - math.sqrt(0.02) - 1e-9, True),
        (1 - math.sqrt(0.02) + 1e-9, False),
        (0.95, False),
    ],
)
def test_fresh_arm_shutoff(v, in_gate):
    """A fresh Beta(1,1) arm is in the gate iff v ≤ v_off = 1 − √(2λ/L) (= 0.8586 here)."""
    ei_fresh = beta_expected_improvement(1.0, 1.0, v)
    np.testing.assert_allclose(ei_fresh, (1 - v) ** 2 / 2, rtol=1e-12)
    pi = one_hot(0, 3)
    d = delight_rule(pi, np.array([0.0, ei_fresh, ei_fresh]), 1.0)
    assert d.gate[1:].tolist() == [in_gate, in_gate]


def test_epsilon_schedule():
    assert epsilon_schedule(0) == 1.0
    assert epsilon_schedule(100) == 0.5
    assert epsilon_schedule(30, half_life=10) == 0.25
    np.testing.assert_allclose(epsilon_schedule(np.array([0.0, 100.0, 300.0])), [1, 0.5, 0.25])
    with pytest.raises(ValueError, match="half_life"):
        epsilon_schedule(1, half_life=0)
    with pytest.raises(ValueError, match="t"):
        epsilon_schedule(-1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"host_probs": np.array([0.5, 0.6])}, "host_probs"),
        ({"host_probs": np.array([1.5, -0.5])}, "host_probs"),
        ({"host_probs": np.array([np.nan, 1.0])}, "host_probs"),
        ({"expected_improvement": np.array([np.nan, 0.1])}, "expected_improvement"),
        ({"expected_improvement": np.array([-0.1, 0.1])}, "expected_improvement"),
        ({"epsilon": 1.5}, "epsilon"),
        ({"epsilon": np.array(-0.1)}, "epsilon"),
        ({"gate_price": -0.1}, "gate_price"),
        ({"gate_price": float("nan")}, "gate_price"),
        ({"surprisal_cap": 0.0}, "surprisal_cap"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    args = {
        "host_probs": np.array([0.5, 0.5]),
        "expected_improvement": np.array([0.1, 0.1]),
        "epsilon": 0.5,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        delight_rule(**args)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_sample_acting_matches_acting_distribution(backend):
    pi = np.array([0.6, 0.4, 0.0, 0.0])
    ei = np.array([0.0, 0.0, 0.03, 0.01])  # delight (L=10) on arms 2 and 3: 0.3+, 0.1
    n = 200_000
    pis, eis = np.tile(pi, (n, 1)), np.tile(ei, (n, 1))
    if backend == "torch":
        d = delight_rule(torch.tensor(pis), torch.tensor(eis), 0.3)
        actions, explored = sample_acting(d, torch.Generator().manual_seed(0))
        actions, explored = actions.numpy(), explored.numpy()
        expected = d.probs[0].numpy()
    else:
        d = delight_rule(pis, eis, 0.3)
        actions, explored = sample_acting(d, np.random.default_rng(0))
        expected = d.probs[0]
    freq = np.bincount(actions, minlength=4) / n
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(freq - expected) <= 5 * se + 1e-12)
    assert abs(explored.mean() - 0.3) < 5 * math.sqrt(0.21 / n)
    assert np.all(actions[~explored] < 2)  # host draws stay in the host's support


@settings(max_examples=200, deadline=None)
@given(
    arrays(np.float64, 6, elements=st.sampled_from([0.0, 1e-300, 1e-17, 0.1, 0.5, 1.0])),
    st.floats(0, 1, exclude_max=True),
)
def test_sample_categorical_only_draws_positive_probability(raw, u):
    if raw.sum() == 0:
        raw[0] = 1.0
    p = raw / raw.sum()
    a = int(sample_categorical(p[None], np.array([u]))[0])
    assert p[a] > 0


def test_sample_acting_rejects_wrong_generator():
    d = delight_rule(np.array([[0.5, 0.5]]), np.array([[0.0, 0.0]]), 0.5)
    with pytest.raises(TypeError, match="rng"):
        sample_acting(d, 0)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=5),
    st.floats(0, 1),
    st.floats(0.01, 1),
    st.integers(0, 10_000),
)
def test_multiplicity_equals_the_expanded_rule(counts, eps, lam, seed):
    """Columns standing for m interchangeable actions give the expanded rule's totals."""
    rng = np.random.default_rng(seed)
    m = np.array(counts, dtype=float)
    if m.sum() == 0:
        m[0] = 1
    raw = rng.dirichlet(np.ones(m.size)) * (m > 0)
    member = raw / (raw * m).sum()  # per-member host probability, Σ m·π = 1
    ei = rng.uniform(0, 0.05, size=m.size)
    col = delight_rule(member, ei, eps, gate_price=lam, multiplicity=m)
    expand = np.repeat(np.arange(m.size), m.astype(int))
    full = delight_rule(member[expand], ei[expand], eps, gate_price=lam)
    totals = np.bincount(expand, weights=full.probs, minlength=m.size)
    np.testing.assert_allclose(col.probs, totals, atol=1e-12)
    gate_size = np.bincount(expand, weights=full.gate, minlength=m.size)
    np.testing.assert_array_equal(col.gate * m, gate_size)


def test_multiplicity_rejects_negative_counts():
    with pytest.raises(ValueError, match="multiplicity"):
        delight_rule(np.array([1.0, 0.0]), np.zeros(2), 0.5, multiplicity=np.array([1.0, -1.0]))


# ---------------------------------------------------------------------------------------------
# The one "gate only on the rows that explore" draw
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), eps=st.floats(0.0, 1.0))
def test_explore_rows_draw_equals_sample_acting_on_the_full_decision(backend, seed, eps):
    # Same uniforms => the same actions and the same explored rows as the full two-stage draw;
    # decide() sees exactly the exploring rows.
    rng = np.random.default_rng(seed)
    n, a = 9, 4
    host = rng.dirichlet(np.ones(a), size=n)
    host[0] = [1.0, 0.0, 0.0, 0.0]  # a greedy row
    ei = rng.exponential(0.05, size=(n, a))
    full = delight_rule(host, ei, eps)
    u1, u2 = rng.random(n), rng.random(n)
    seen = []

    def decide(rows):
        seen.append(rows)
        return delight_rule(host_t[rows], ei_t[rows], eps)

    if backend == "torch":
        host_t, ei_t = torch.as_tensor(host), torch.as_tensor(ei)
        draw = sample_acting_on_explore_rows(
            (torch.as_tensor(u1), torch.as_tensor(u2)), eps, decide, host_probs=host_t
        )
        actions, explored = draw.actions.numpy(), draw.explored.numpy()
    else:
        host_t, ei_t = host, ei
        draw = sample_acting_on_explore_rows((u1, u2), eps, decide, host_probs=host)
        actions, explored = draw.actions, draw.explored
    # sample_acting's own two-stage draw, written out with the same uniforms
    expect_explored = u1 < eps
    choose = np.where(expect_explored[:, None], full.override, host)
    np.testing.assert_array_equal(actions, sample_categorical(choose, u2))
    np.testing.assert_array_equal(explored, expect_explored)
    if expect_explored.any():
        np.testing.assert_array_equal(np.asarray(seen[0]), np.flatnonzero(expect_explored))
    else:
        assert not seen and draw.decision is None and draw.chosen is None


def test_explore_rows_draw_with_host_actions_and_columns():
    # A greedy host given by its actions, and a decision over columns mapped to actions:
    # column c of row i plays columns[i, c].
    host_actions = np.array([5, 6, 7])
    u1, u2 = np.array([0.9, 0.1, 0.2]), np.array([0.5, 0.5, 0.99])
    columns = np.array([[10, 11], [20, 21], [30, 31]])

    def decide(rows):
        pi = np.tile([1.0, 0.0], (rows.size, 1))
        return delight_rule(pi, np.tile([0.0, 1.0], (rows.size, 1)), 0.5), columns[rows]

    draw = sample_acting_on_explore_rows((u1, u2), 0.5, decide, host_actions=host_actions)
    # row 0 does not explore (host 5); rows 1, 2 explore and the gate holds column 1 only
    assert draw.actions.tolist() == [5, 21, 31]
    assert draw.rows.tolist() == [1, 2] and draw.chosen.tolist() == [1, 1]
    assert host_actions.tolist() == [5, 6, 7]  # not modified in place
    with pytest.raises(TypeError, match="exactly one of host_probs and host_actions"):
        sample_acting_on_explore_rows((u1, u2), 0.5, decide)


# Actions recorded from the code before the draw was one function (commit b38c350: the bandit
# agent, the MDP agent and the wrapper each wrote the draw out), for the runs below.
_PINNED_BANDIT = [
    "011121101101111111111111111111111111111111111111111111111111",
    "012304455366633664036666666666666666666666666665666666666666",
    "012345666166166666666666666666666666666266666665646666666666",
    "012122034524425222522222222222222222222222222222222222222222",
]
_PINNED_MDP = [
    "001111000110100011000001110001111100110011000000",
    "000110000110111110100100010110010101010101011111",
    "011110001101001011110101111001100110011001101001",
]
_PINNED_WRAPPER = [
    "220022110200222212222020021102",
    "002222002222111022221020002210",
    "001002200200122222112200202212",
    "221210200120021202200222200002",
    "112220001000200202222020220120",
]


def _as_strings(actions):
    return ["".join(map(str, row)) for row in np.asarray(actions).T]


def test_pinned_actions_bandit_delight_agent():
    from delight_gym.agents.bandits import DelightAgent

    agent = DelightAgent(4, 7, seed=3, half_life=15.0)
    means = np.random.default_rng(1).random((4, 7))
    env_rng = np.random.default_rng(2)
    out = []
    for _ in range(60):
        a = agent.act()
        agent.update(a, (env_rng.random(4) < means[np.arange(4), a]).astype(float))
        out.append(a)
    assert _as_strings(out) == _PINNED_BANDIT


def test_pinned_actions_mdp_delight_agent():
    from delight_gym.agents.mdp import make_mdp_agent

    n, b = 4, 3
    right = np.random.default_rng(5).integers(2, size=(b, n, n))
    agent = make_mdp_agent(
        "delight", b, n * n, 2, n, reward_range=(-0.01 / n, 1.0), seed=4, half_life=10.0
    )
    rows, out = np.arange(b), []
    for _ in range(12):
        agent.begin_episode()
        row, col = np.zeros(b, dtype=np.int64), np.zeros(b, dtype=np.int64)
        for h in range(n):
            s = row * n + col
            a = agent.act(torch.as_tensor(s), h).numpy()
            good = a == right[rows, row, col]
            rew = np.where(good, -0.01 / n, 0.0) + (good & (col == n - 1) & (row == n - 1))
            col = np.where(good, np.minimum(col + 1, n - 1), np.maximum(col - 1, 0))
            row = row + 1
            nxt = torch.as_tensor(row * n + col) if h < n - 1 else None
            agent.observe(torch.as_tensor(s), torch.as_tensor(a), torch.as_tensor(rew), nxt, h)
            out.append(a)
    assert _as_strings(out) == _PINNED_MDP


def test_pinned_actions_wrapper_lazy_gate():
    from gymnasium import spaces

    from delight_gym import DelightExplorationWrapper

    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.34, 0.33, 0.33]])
    de = DelightExplorationWrapper(
        lambda obs: probs[np.asarray(obs) % 3],
        observation_space=spaces.Discrete(5),
        action_space=spaces.Discrete(3),
        seed=11,
        delight={"half_life": 8.0},
        lazy_gate=True,
    )
    env_rng = np.random.default_rng(6)
    obs, out = np.arange(5), []
    for _ in range(30):
        a, _ = de.predict(obs)
        rew = env_rng.normal(size=5) + (a == 2)
        nxt = env_rng.integers(5, size=5)
        de.observe(obs, a, rew, nxt, np.zeros(5, bool), np.zeros(5, bool))
        obs = nxt
        out.append(a)
    assert _as_strings(out) == _PINNED_WRAPPER


def test_apply_delight_rule_checks_nothing_delight_rule_checks_all():
    # Agents check their settings once in the constructor and call apply_delight_rule:
    # nothing is checked per step (a bad value then is the caller's bug).
    from types import SimpleNamespace

    from delight_gym.de.rule import apply_delight_rule

    pi, ei = np.array([[0.5, 0.5]]), np.array([[0.3, 0.0]])
    apply_delight_rule(SimpleNamespace(gate_price=-1.0, surprisal_cap=-1.0), pi, ei, 0.5)
    for t in (0, 3, 250):
        assert epsilon_schedule(t, 7.5) == 7.5 / (7.5 + t)
    with pytest.raises(ValueError, match="half_life"):
        epsilon_schedule(3, -1.0)
    with pytest.raises(ValueError, match="gate_price"):
        delight_rule(pi, ei, 0.5, gate_price=-1.0)
    from delight_gym.agents.bandits import DelightAgent

    with pytest.raises(ValueError, match="gate_price"):
        DelightAgent(2, 3, gate_price=-0.1)


def test_check_gate_settings_names_the_bad_argument() -> None:
    assert check_gate_settings(0, 10) == (0.0, 10.0)
    assert check_gate_settings(math.inf, 1.5) == (math.inf, 1.5)  # λ = inf: never override
    with pytest.raises(ValueError, match="gate_price"):
        check_gate_settings(-0.1, 10.0)
    with pytest.raises(ValueError, match="gate_price"):
        check_gate_settings(math.nan, 10.0)
    with pytest.raises(ValueError, match="surprisal_cap"):
        check_gate_settings(0.1, 0.0)
    with pytest.raises(ValueError, match="surprisal_cap"):
        check_gate_settings(0.1, math.inf)
    with pytest.raises(TypeError, match="gate_price"):
        check_gate_settings("0.1", 10.0)


def test_apply_delight_rule_is_the_rule_with_the_settings_it_is_given() -> None:
    """A frozen record of settings (as the deep agents keep) gives the plain rule's decision."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Settings:
        gate_price: float
        surprisal_cap: float

    pi = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    ei = np.array([[0.0, 0.05, 0.3], [0.4, 0.0, 0.02]])
    got = apply_delight_rule(Settings(0.5, 4.0), pi, ei, 0.3)
    for row in range(2):
        want, _, gate = brute_force_rule(pi[row], ei[row], 0.3, lam=0.5, cap=4.0)
        np.testing.assert_allclose(got.probs[row], want, rtol=1e-12)
        assert got.gate[row].tolist() == gate
    assert got.gate.any()  # the settings were used: λ = 0.5 lets one action in
    plain = delight_rule(pi, ei, 0.3, gate_price=0.5, surprisal_cap=4.0)
    np.testing.assert_array_equal(got.probs, plain.probs)
    np.testing.assert_array_equal(got.gate, plain.gate)


def test_delight_settings_check_once_and_decide_with_the_rule() -> None:
    """The settings mixin (agents and the wrapper) names a bad argument, passes other keywords
    on, and decides as the brute-force rule with its λ and L."""

    class Base:
        def __init__(self, width: int) -> None:
            self.width = width

    class Holder(DelightSettings, Base):
        pass

    held = Holder(3, gate_price=0.5, surprisal_cap=4.0, half_life=7)
    assert (held.width, held.gate_price, held.surprisal_cap, held.half_life) == (3, 0.5, 4.0, 7.0)
    default = Holder(1)
    assert (default.gate_price, default.surprisal_cap, default.half_life) == (0.1, 10.0, 100.0)
    for bad, name in (
        ({"gate_price": -1.0}, "gate_price"),
        ({"surprisal_cap": 0.0}, "surprisal_cap"),
        ({"half_life": 0.0}, "half_life"),
    ):
        with pytest.raises(ValueError, match=name):
            Holder(1, **bad)
    pi = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    ei = np.array([[0.0, 0.05, 0.3], [0.4, 0.0, 0.02]])
    got = held.decide(pi, ei, 0.3)
    for row in range(2):
        want, _, gate = brute_force_rule(pi[row], ei[row], 0.3, lam=0.5, cap=4.0)
        np.testing.assert_allclose(got.probs[row], want, rtol=1e-12)
        assert got.gate[row].tolist() == gate
