"""Candidate-set DE against the full rule, closed forms (scipy's truncated normal) and limits."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch
from gymnasium import spaces
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from delight_gym.de.candidates import (
    CandidateDelight,
    CategoricalHost,
    GaussianProposalHost,
    HostSamples,
    PosteriorArgmax,
    TopK,
    UniformProposals,
    candidate_rule,
)
from delight_gym.de.rule import delight_rule, epsilon_schedule

LAM, CAP = 0.1, 10.0


def random_host(rng: np.random.Generator, b: int, k: int) -> np.ndarray:
    """``(b, k)`` host probabilities: Dirichlet rows of varied concentration, some with zeros,
    one greedy (one-hot) row."""
    probs = rng.dirichlet(np.full(k, rng.choice([0.1, 1.0, 10.0])), size=b)
    probs[rng.random((b, k)) < 0.2] = 0.0
    probs[np.arange(b), rng.integers(0, k, b)] += 1e-3  # at least one positive entry per row
    probs[0] = np.eye(k)[rng.integers(0, k)]
    return probs / probs.sum(axis=-1, keepdims=True)


def full_set_with_duplicates(rng: np.random.Generator, pi: np.ndarray, extra: int) -> np.ndarray:
    """``(b, K + extra)``: a host draw, the other actions shuffled, then ``extra`` repeats."""
    b, k = pi.shape
    host = (pi.cumsum(axis=-1) <= rng.random((b, 1))).sum(axis=-1)
    host = np.where(pi[np.arange(b), np.minimum(host, k - 1)] > 0, host, pi.argmax(axis=-1))
    keys = rng.random((b, k))
    keys[np.arange(b), host] = -1.0  # sorts first
    perm = np.argsort(keys, axis=-1)
    return np.concatenate([perm, rng.integers(0, k, (b, extra))], axis=1)


def gather(values: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return np.take_along_axis(values, cols, axis=-1)


@settings(max_examples=150, deadline=None)
@given(
    k=st.integers(2, 20),
    extra=st.integers(0, 6),
    seed=st.integers(0, 2**32 - 1),
    eps=st.floats(0.0, 1.0),
    lam=st.sampled_from([0.0, 0.01, 0.1, 1.0]),
)
def test_whole_discrete_space_is_the_rule(k, extra, seed, eps, lam):
    """C = every action (shuffled, with repeats): the rule's numbers on the first occurrences,
    zero mass and delight on the repeats."""
    rng = np.random.default_rng(seed)
    b = 6
    pi = random_host(rng, b, k)
    ei = rng.exponential(0.05, (b, k)) * (rng.random((b, k)) < 0.8)
    ref = delight_rule(pi, ei, eps, gate_price=lam)
    assume(np.all(np.abs(ref.delight - lam) > 1e-9))  # no tie on the gate's boundary
    cands = full_set_with_duplicates(rng, pi, extra)
    with np.errstate(divide="ignore"):
        log_pi = np.log(gather(pi, cands))
    got, unique = candidate_rule(cands, log_pi, gather(ei, cands), eps, gate_price=lam)
    assert unique[:, :k].all() and not unique[:, k:].any()
    first = cands[:, :k]
    for field in ("host", "probs", "override", "surprisal", "delight"):
        want = gather(getattr(ref, field), first)
        np.testing.assert_allclose(getattr(got, field)[:, :k], want, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(got.gate[:, :k], gather(ref.gate, first))
    np.testing.assert_array_equal(got.gate_empty, ref.gate_empty)
    assert not got.gate[:, k:].any() and (got.delight[:, k:] == 0).all()
    assert (got.probs[:, k:] == 0).all()


def test_torch_candidates_match_numpy():
    rng = np.random.default_rng(3)
    pi = random_host(rng, 5, 7)
    cands = full_set_with_duplicates(rng, pi, 4)
    ei = rng.exponential(0.05, cands.shape)
    with np.errstate(divide="ignore"):
        log_pi = np.log(gather(pi, cands))
    want, want_unique = candidate_rule(cands, log_pi, ei, 0.4)
    got, unique = candidate_rule(*map(torch.from_numpy, (cands, log_pi, ei)), 0.4)
    np.testing.assert_array_equal(unique.numpy(), want_unique)
    np.testing.assert_allclose(got.probs.numpy(), want.probs, rtol=1e-12)
    np.testing.assert_array_equal(got.gate.numpy(), want.gate)
    box = torch.tensor([[[0.0, 1.0], [0.5, 0.5], [0.0, 1.0], [0.5, 0.5]]], dtype=torch.float64)
    _, box_unique = candidate_rule(box, torch.zeros(1, 4, dtype=torch.float64), 0.1, 1.0)
    assert box_unique.tolist() == [[True, True, False, False]]


def test_duplicates_are_merged_by_hand():
    """π = (0.5, 0.3, 0.2) over C = [0, 2, 0, 2, 1]: the repeats add no mass, so the restricted
    host is π itself and the decision equals the one over C = [0, 2, 1]."""
    pi = np.array([0.5, 0.3, 0.2])
    ei = np.array([0.0, 0.05, 0.2])
    cands = np.array([[0, 2, 0, 2, 1]])
    got, unique = candidate_rule(cands, np.log(pi[cands]), ei[cands], 1.0)
    assert unique.tolist() == [[True, True, False, False, True]]
    np.testing.assert_allclose(got.host, [[0.5, 0.2, 0.0, 0.0, 0.3]])
    # ℓ = log(0.5/0.2) = 0.916 and log(0.5/0.3) = 0.511; χ = 0.183 (gated) and 0.0255 (not).
    np.testing.assert_allclose(got.delight[0, [1, 4]], [0.2 * np.log(2.5), 0.05 * np.log(5 / 3)])
    assert got.gate.tolist() == [[False, True, False, False, False]]
    np.testing.assert_allclose(got.probs, [[0.0, 1.0, 0.0, 0.0, 0.0]])


def test_box_duplicates_keep_the_restricted_density():
    """A Box host action proposed again is merged: the same restricted host as without it."""
    box = spaces.Box(-1.0, 1.0, (2,))
    host = GaussianProposalHost(box, 0.2)
    rng = np.random.default_rng(0)
    mu = np.array([[0.1, -0.3], [0.9, 0.9]])
    draws = host.sample(None, mu, 3, rng)
    base = np.concatenate([mu[:, None], draws], axis=1)
    repeated = np.concatenate([base, mu[:, None], draws[:, :1]], axis=1)
    ei = np.full(repeated.shape[:2], 0.05)
    want, _ = candidate_rule(base, host.log_weight(None, mu, base), ei[:, :4], 0.5)
    got, unique = candidate_rule(repeated, host.log_weight(None, mu, repeated), ei, 0.5)
    assert unique.tolist() == [[True] * 4 + [False] * 2] * 2
    np.testing.assert_allclose(got.host[:, :4], want.host, rtol=1e-13)
    np.testing.assert_allclose(got.probs[:, :4], want.probs, rtol=1e-13)
    assert (got.host[:, 4:] == 0).all() and not got.gate[:, 4:].any()


def categorical_delight(pi, ei, **kwargs):
    """DE over the whole space of one fixed state: C = host action + every action (TopK)."""
    host = CategoricalHost(lambda s: np.broadcast_to(pi, (len(s), pi.size)))
    k = pi.size
    return host, CandidateDelight(
        spaces.Discrete(k), host, lambda s, c: ei[c], [(TopK(host), k)], **kwargs
    )


def test_acting_frequencies_are_the_rules_distribution():
    """Monte Carlo over 40 000 rows: P(action) = (1 − ε)π + εq within 5 binomial s.d.; an
    empty gate plays the host's own draw (q = π)."""
    pi = np.array([0.55, 0.3, 0.1, 0.05, 0.0])
    ei = np.array([0.0, 0.002, 0.05, 0.03, 0.02])
    t = 100.0  # ε = 1/2
    ref = delight_rule(pi[None], ei[None], epsilon_schedule(t))
    host, de = categorical_delight(pi, ei)
    n = 40_000
    rng = np.random.default_rng(1)
    states = np.zeros(n, dtype=np.int64)
    out = de.decide(states, host.sample(states, None, 1, rng)[:, 0], t, rng)
    freq = np.bincount(out.actions, minlength=pi.size) / n
    p = ref.probs[0]
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12)
    assert set(out.rows.tolist()) == set(np.flatnonzero(out.explored).tolist())
    assert out.candidates.shape == (out.rows.size, 1 + pi.size)


@pytest.mark.parametrize("t", [0.0, 100.0, 300.0, 1900.0])
def test_override_frequency_follows_the_schedule(t):
    pi = np.array([0.9, 0.1])
    _, de = categorical_delight(pi, np.array([0.0, 1.0]))
    n = 20_000
    out = de.decide(
        np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), t, np.random.default_rng(2)
    )
    eps = 100.0 / (100.0 + t)
    assert abs(out.explored.mean() - eps) <= 5 * np.sqrt(eps * (1 - eps) / n)
    # χ(1) = 1·log 9 ≥ λ: every exploring row is overridden, and plays action 1.
    np.testing.assert_array_equal(out.overridden, out.explored)
    np.testing.assert_array_equal(out.actions, out.explored.astype(np.int64))


def test_per_row_schedule():
    pi = np.array([0.9, 0.1])
    _, de = categorical_delight(pi, np.array([0.0, 1.0]))
    t = np.array([0.0, 1e12])
    out = de.decide(
        np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64), t, np.random.default_rng(0)
    )
    assert out.explored.tolist() == [True, False]


@pytest.mark.parametrize("case", ["infinite price", "zero EI", "below the price"])
def test_limits_give_the_host(case):
    pi = np.array([0.4, 0.3, 0.2, 0.1])
    ei = np.zeros(4) if case == "zero EI" else np.full(4, 0.5)
    kwargs = {"gate_price": np.inf} if case == "infinite price" else {}
    if case == "below the price":
        ei = np.full(4, 0.999 * LAM / CAP)  # L·EI < λ: never gated
    host, de = categorical_delight(pi, ei, **kwargs)
    rng = np.random.default_rng(4)
    states = np.zeros(500, dtype=np.int64)
    acts = host.sample(states, None, 1, rng)[:, 0]
    out = de.decide(states, acts, 0.0, rng)  # ε = 1: every row explores
    assert out.explored.all() and not out.overridden.any() and not out.gate.any()
    np.testing.assert_array_equal(out.actions, acts)


@pytest.mark.parametrize(
    "mu",
    [[0.0, 0.0], [0.95, -0.2], [-1.0, 1.0], [0.3, 2.9]],
    ids=["centre", "near", "corner", "edge"],
)
def test_gaussian_proposal_density_is_scipys_truncated_normal(mu):
    low, high = np.array([-1.0, -3.0]), np.array([1.0, 3.0])
    host = GaussianProposalHost(spaces.Box(low, high, dtype=np.float64), host_std=0.15)
    mu_b = np.array([mu])
    rng = np.random.default_rng(5)
    x = host.sample(None, mu_b, 4000, rng)
    assert x.shape == (1, 4000, 2) and (x >= low).all() and (x <= high).all()
    assert not np.isin(x, np.stack([low, high])).any()  # no mass clipped onto the boundary
    sigma = 0.15 * (high - low)
    a, b = (low - mu_b) / sigma, (high - mu_b) / sigma
    want = stats.truncnorm.logpdf(x, a, b, loc=mu_b, scale=sigma).sum(axis=-1)
    np.testing.assert_allclose(host.log_weight(None, mu_b, x), want, rtol=1e-10)
    for i in range(2):  # the draws follow the truncated law (Kolmogorov–Smirnov)
        cdf = stats.truncnorm(a[0, i], b[0, i], loc=mu[i], scale=sigma[i]).cdf
        assert stats.kstest(x[0, :, i], cdf).pvalue > 1e-3
    outside = np.array([[[1.5, 0.0]]])
    assert host.log_weight(None, mu_b, outside)[0, 0] == -np.inf


def test_tiny_host_std_has_finite_draws():
    """σ = 10⁻³ of the range at a corner (α, β of ±1000): inverse CDF stays finite."""
    host = GaussianProposalHost(spaces.Box(0.0, 1.0, (3,), dtype=np.float64), host_std=1e-3)
    mu = np.array([[0.0, 1.0, 0.5]])
    x = host.sample(None, mu, 2000, np.random.default_rng(0))
    assert np.isfinite(x).all() and np.isfinite(host.log_weight(None, mu, x)).all()


class RotatedZipfHost:
    """``π(a|s) ∝ (1 + (a − s) mod K)^(−1.1)``: a retrieval-style ranking rotated by the state
    ``s``; log-probabilities, draws and top-k cost O(1) per entry after an O(K) setup."""

    def __init__(self, k: int) -> None:
        w = np.arange(1, k + 1, dtype=np.float64) ** -1.1
        self.k, self.log_z, self.cdf = k, np.log(w.sum()), np.cumsum(w) / w.sum()

    def log_weight(self, states, host_actions, candidates):
        return -1.1 * np.log1p((candidates - states[:, None]) % self.k) - self.log_z

    def sample(self, states, host_actions, n, rng):
        rank = np.searchsorted(self.cdf, rng.random((len(states), n)), side="right")
        return (np.minimum(rank, self.k - 1) + states[:, None]) % self.k

    def top_actions(self, states, k):
        return (states[:, None] + np.arange(k)) % self.k


def test_million_actions_touch_only_the_candidates():
    k, b = 10**6, 16
    space = spaces.Discrete(k)
    host = RotatedZipfHost(k)
    seen = {"ei": [], "values": []}

    def ei(states, cands):
        seen["ei"].append(cands.shape)
        return 0.02 * ((cands * 2654435761) % 1000) / 1000

    def values(states, actions, rng):
        seen["values"].append(actions.shape)
        return np.sin(actions.astype(np.float64))

    proposals = [(TopK(host), 8), (HostSamples(host), 8), (PosteriorArgmax(space, values, 32), 4)]
    de = CandidateDelight(space, host, ei, proposals)
    rng = np.random.default_rng(0)
    states = rng.integers(0, k, b)
    tracemalloc.start()
    out = de.decide(states, states, 0.0, rng)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seen["ei"] == [(b, 21)] and seen["values"] == [(b, 32)] * 4
    assert peak < 200_000  # far below one float per action (8 MB)
    assert out.candidates.shape == (b, 21) and np.isin(out.actions, out.candidates).all()
    np.testing.assert_array_equal(out.candidates[:, 1:9], (states[:, None] + np.arange(8)) % k)
    assert not out.unique[:, 1].any()  # the host's top action is its own action: merged


def test_box_decision_end_to_end():
    box = spaces.Box(-2.0, 2.0, (3,), dtype=np.float64)
    host = GaussianProposalHost(box)
    proposals = [(HostSamples(host), 6), (UniformProposals(box), 4)]
    de = CandidateDelight(box, host, lambda s, c: np.abs(c - c[:, :1]).sum(-1), proposals)
    rng = np.random.default_rng(0)
    mu = rng.uniform(-2, 2, (50, 3))
    out = de.decide(np.zeros((50, 1)), mu, 0.0, rng)
    assert out.candidates.shape == (50, 11, 3) and out.actions.shape == (50, 3)
    np.testing.assert_array_equal(out.candidates[:, 0], mu)
    # every row gated (EI > 0 away from the host action); the action is a gated candidate
    picked = (out.candidates == out.actions[out.rows][:, None]).all(-1)
    assert (picked & out.gate).any(axis=1).all() and out.overridden.all()
    np.testing.assert_array_equal(out.actions[~out.overridden], mu[~out.overridden])


class _Const:
    """A proposer returning fixed candidates (for bad-output tests)."""

    def __init__(self, value):
        self.value = np.asarray(value)

    def propose(self, states, host_actions, n, rng):
        return np.broadcast_to(self.value, (len(host_actions), n, *self.value.shape))


def test_bad_inputs_name_the_argument():
    disc, box = spaces.Discrete(4), spaces.Box(-1.0, 1.0, (2,))
    host = CategoricalHost(lambda s: np.full((len(s), 4), 0.25))
    ei = lambda s, c: np.zeros(c.shape[:2])  # noqa: E731
    with pytest.raises(ValueError, match=r"proposals\[0\] n"):
        CandidateDelight(disc, host, ei, [(TopK(host), 0)])
    with pytest.raises(ValueError, match=r"proposals\[1\] n"):
        CandidateDelight(disc, host, ei, [(TopK(host), 2), (HostSamples(host), -1)])
    with pytest.raises(ValueError, match="n_random"):
        PosteriorArgmax(disc, lambda s, a, r: a, 0)
    unbounded = spaces.Box(-np.inf, np.inf, (2,))
    for make in (UniformProposals, GaussianProposalHost):
        with pytest.raises(ValueError, match="space must have finite bounds"):
            make(unbounded)
    with pytest.raises(ValueError, match="space must have finite bounds"):
        PosteriorArgmax(unbounded, lambda s, a, r: a)
    de = CandidateDelight(disc, host, ei, [(TopK(host), 2)])
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="host_actions"):
        de.decide(np.zeros(2), np.array([0, 4]), 0, rng)
    with pytest.raises(ValueError, match=r"proposals\[0\]"):
        CandidateDelight(disc, host, ei, [(_Const(7), 2)]).decide(
            np.zeros(2), np.zeros(2, int), 0, rng
        )
    with pytest.raises(ValueError, match="t must"):
        de.decide(np.zeros(2), np.zeros(2, int), np.zeros(3), rng)
    gauss = GaussianProposalHost(box)
    bde = CandidateDelight(
        box, gauss, lambda s, c: np.zeros(c.shape[:2]), [(_Const([0.0, 0.0]), 1)]
    )
    with pytest.raises(ValueError, match="host_actions"):
        bde.decide(None, np.array([[0.0, 1.5]]), 0, rng)
    with pytest.raises(ValueError, match=r"proposals\[0\]"):
        CandidateDelight(box, gauss, ei, [(_Const([0.0, 3.0]), 1)]).decide(
            None, np.zeros((1, 2)), 0, rng
        )
    cands = np.zeros((1, 2, 2))
    with pytest.raises(ValueError, match="host_log_weights must be finite"):
        candidate_rule(cands, np.array([[0.0, -np.inf]]), 0.1, 0.5)
    with pytest.raises(ValueError, match="host_log_weights must not hold NaN"):
        candidate_rule(np.zeros((1, 2), int), np.array([[0.0, np.nan]]), 0.1, 0.5)
    with pytest.raises(ValueError, match="host's own action"):
        candidate_rule(np.array([[0, 1]]), np.array([[-np.inf, 0.0]]), 0.1, 0.5)
    with pytest.raises(ValueError, match="expected_improvement"):
        candidate_rule(np.array([[0, 1]]), np.array([[0.0, -1.0]]), np.array([[0.0, -1.0]]), 0.5)
    bad_ei = CandidateDelight(disc, host, lambda s, c: np.zeros((1, 9)), [(TopK(host), 2)])
    with pytest.raises(ValueError, match="expected_improvement must have shape"):
        bad_ei.decide(np.zeros(1), np.zeros(1, int), 0, rng)


def test_box_hash_collision_falls_back_to_exact_comparison():
    """Two distinct 2-d candidates built to share the sort key (bits of x₀·φ xor x₁, wrapping)
    still count as distinct."""
    mix = np.uint64(0x9E3779B97F4A7C15)
    x = np.array([0.25, 0.5])
    x_bits, y0_bits = x.view(np.uint64), np.array([0.75]).view(np.uint64)
    with np.errstate(over="ignore"):
        y1_bits = (x_bits[:1] * mix) ^ x_bits[1:] ^ (y0_bits * mix)
    y = np.array([0.75, y1_bits.view(np.float64)[0]])
    assert np.isfinite(y).all() and not (x == y).all()
    cands = np.stack([x, y, x, y])[None]
    _, unique = candidate_rule(cands, np.zeros((1, 4)), 0.0, 1.0)
    assert unique.tolist() == [[True, True, False, False]]
