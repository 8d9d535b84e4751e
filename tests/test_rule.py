"""The DE rule against hand computations, limiting cases, brute force and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from delight_gym.posteriors.beta import beta_expected_improvement
from delight_gym.rule import (
    delight_rule,
    epsilon_schedule,
    sample_acting,
    sample_categorical,
    surprisal,
)

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
