"""Tabular MDP posterior: sparse planner vs a dense reference, conjugate updates in closed form,
posterior samples against numpy's dense Dirichlet sampler, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from delight_gym.posteriors.tabular import (
    DEFAULT_TRANSITION_MASS,
    TabularMDPPosterior,
    value_iteration,
)
from tests.tabular_reference import dense_value_iteration

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
    ),
]


def fill_random(post, steps, rng, successors=None):
    """Feed random transitions; return the independent numpy record (counts, reward sums)."""
    b, s, a = post.batch_size, post.num_states, post.num_actions
    counts = np.zeros((b, s, a, s))
    rsum = np.zeros((b, s, a))
    rn = np.zeros((b, s, a))
    for _ in range(steps):
        st = rng.integers(s, size=b)
        ac = rng.integers(a, size=b)
        if successors is None:
            nx = rng.integers(s, size=b)
        else:  # a few fixed successors per pair (sparse, like DeepSea)
            nx = successors[np.arange(b), st, ac, rng.integers(successors.shape[-1], size=b)]
        low, high = post.reward_range
        r = low + (high - low) * rng.random(b)
        post.update(
            torch.as_tensor(st), torch.as_tensor(ac), torch.as_tensor(r), torch.as_tensor(nx)
        )
        counts[np.arange(b), st, ac, nx] += 1
        rsum[np.arange(b), st, ac] += (r - low) / (high - low)
        rn[np.arange(b), st, ac] += 1
    return counts, rsum, rn


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("states", "alpha0", "fanout"), [(9, 0.3, None), (25, 1e-3, 2), (16, None, 1)]
)
def test_sparse_mean_plan_equals_dense_plan(device, states, alpha0, fanout):
    rng = np.random.default_rng(0)
    b, a, h = 3, 2, 6
    post = TabularMDPPosterior(
        b, states, a, h, transition_prior=alpha0, reward_range=(-0.5, 1.0), device=device
    )
    succ = None if fanout is None else rng.integers(states, size=(b, states, a, fanout))
    counts, rsum, rn = fill_random(post, 120, rng, succ)
    a0 = DEFAULT_TRANSITION_MASS / states if alpha0 is None else alpha0
    assert post.transition_prior == pytest.approx(a0)
    # Independent dense posterior mean from the numpy record.
    p_dense = (a0 + counts) / (states * a0 + counts.sum(-1, keepdims=True))
    r_dense = -0.5 + 1.5 * (1.0 + rsum) / (2.0 + rn)
    ref = dense_value_iteration(
        torch.as_tensor(r_dense, device=device), torch.as_tensor(p_dense, device=device), h
    )
    fast = post.plan_mean()
    assert fast.shape == (h, b, states, a)
    assert torch.allclose(fast, ref, atol=1e-10, rtol=0)
    torch.testing.assert_close(post.mean_transitions_dense().cpu(), torch.as_tensor(p_dense))
    # A later first step is the tail of the full plan; a subset of rows is those rows.
    rows = torch.tensor([2, 0], device=device)
    tail = post.plan_mean(rows=rows, first_step=3)
    assert torch.allclose(tail, fast[3:, rows], atol=1e-12, rtol=0)


def test_brute_force_values_on_a_two_state_chain():
    """V_0 by enumerating every policy-free path of a known 2-state MDP (H = 3)."""
    rewards = torch.tensor([[[0.0, 1.0], [2.0, 0.5]]], dtype=torch.float64)
    trans = torch.tensor(
        [[[[1.0, 0.0], [0.3, 0.7]], [[0.5, 0.5], [0.0, 1.0]]]], dtype=torch.float64
    )
    q = dense_value_iteration(rewards, trans, 3)

    def best(s, steps):
        if steps == 0:
            return 0.0
        return max(
            float(rewards[0, s, a])
            + sum(float(trans[0, s, a, t]) * best(t, steps - 1) for t in (0, 1))
            for a in (0, 1)
        )

    for s in (0, 1):
        assert float(q[0, 0, s].max()) == pytest.approx(best(s, 3), abs=1e-14)


def test_slots_grow_and_counts_match():
    rng = np.random.default_rng(1)
    post = TabularMDPPosterior(2, 6, 2, 3, transition_prior=0.1)
    counts, _, _ = fill_random(post, 300, rng)
    assert post.num_slots >= 4  # up to 6 distinct successors per pair
    dense = torch.zeros(2, 6, 2, 6, dtype=torch.float64).scatter_add_(
        -1, post.succ, post.succ_counts
    )
    np.testing.assert_array_equal(dense.numpy(), counts)
    np.testing.assert_array_equal(post.visits.numpy(), counts.sum(-1))


def test_last_step_records_reward_but_no_successor():
    post = TabularMDPPosterior(2, 4, 2, 3)
    s = torch.tensor([1, 2])
    a = torch.tensor([0, 1])
    post.update(s, a, torch.tensor([1.0, 0.25]), None)
    post.update(s, a, torch.tensor([0.0, 0.5]), torch.tensor([-1, 3]))
    assert post.visits.sum() == 1 and post.visits[1, 2, 1] == 1
    # Beta(1, 1) with fractional updates: (1 + Σr)/(2 + n).
    mean = post.mean_reward()
    assert float(mean[0, 1, 0]) == pytest.approx((1 + 1.0) / 4)
    assert float(mean[1, 2, 1]) == pytest.approx((1 + 0.75) / 4)
    assert float(mean[0, 0, 0]) == 0.5


def test_normal_reward_posterior_closed_form():
    post = TabularMDPPosterior(
        1, 2, 2, 2, reward_model="normal", reward_prior=(0.5, 2.0), reward_noise=3.0
    )
    rs = [1.0, -2.0, 4.5]
    for r in rs:
        post.update(torch.tensor([0]), torch.tensor([1]), torch.tensor([r]), None)
    prec = 1 / 2.0**2 + len(rs) / 3.0**2
    expected = (0.5 / 4 + sum(rs) / 9) / prec
    assert float(post.mean_reward()[0, 0, 1]) == pytest.approx(expected, rel=1e-14)
    draws = torch.stack(
        [post.sample_model(torch.Generator().manual_seed(i)).reward[0, 0, 1] for i in range(2000)]
    ).numpy()
    assert stats.kstest(draws, stats.norm(expected, prec**-0.5).cdf).pvalue > 1e-3


def _identical_rows_posterior(batch, states, alpha0, successors):
    """Every (seed, s, a) pair has observed the same successor counts."""
    post = TabularMDPPosterior(batch, states, 2, 4, transition_prior=alpha0)
    for s in range(states):
        for a in range(2):
            for nxt, n in successors.items():
                for _ in range(n):
                    post.update(
                        torch.full((batch,), s),
                        torch.full((batch,), a),
                        torch.full((batch,), 0.5, dtype=torch.float64),
                        torch.full((batch,), nxt),
                    )
    return post


@pytest.mark.parametrize(
    ("alpha0", "successors"),
    [(0.3, {0: 3, 2: 1}), (0.05, {}), (0.02, {4: 1}), (1.0, {1: 2})],
)
def test_sparse_samples_match_dense_dirichlet_in_distribution(alpha0, successors):
    states, batch = 5, 60
    post = _identical_rows_posterior(batch, states, alpha0, successors)
    alpha = np.full(states, alpha0)
    for nxt, n in successors.items():
        alpha[nxt] += n
    gen = torch.Generator().manual_seed(3)
    ours = []
    for _ in range(20):
        model = post.sample_model(gen, sampler="sparse")
        ours.append(model.dense_transitions().reshape(-1, states).numpy())
        assert float(model.uniform.max()) <= 1e-7  # leftover + dropped sticks ≤ (1 + T)·tol
    p_ours = np.concatenate(ours)  # 20 * 60 * 5 * 2 = 12,000 rows
    p_ref = np.random.default_rng(4).dirichlet(alpha, size=p_ours.shape[0])
    np.testing.assert_allclose(p_ours.sum(-1), 1.0, atol=1e-12)
    values = np.array([0.0, 1.0, 0.3, -2.0, 5.0])
    # Masses below the truncation tolerance are moved to the uniform part by design: compare
    # single coordinates above it.
    floor = 1e-8
    first = (np.maximum(p_ours[:, 0], floor), np.maximum(p_ref[:, 0], floor))
    for x_ours, x_ref in [(p_ours @ values, p_ref @ values), first]:
        assert stats.ks_2samp(x_ours, x_ref).pvalue > 1e-3
    # Moments against the closed forms of the Dirichlet.
    a_tot = alpha.sum()
    mean = alpha / a_tot
    var = mean * (1 - mean) / (a_tot + 1)
    n = p_ours.shape[0]
    se_mean = np.sqrt(var / n)
    assert np.all(np.abs(p_ours.mean(0) - mean) < 5 * se_mean + 1e-12)
    # The sample variance within 5 of its own standard errors, like the mean above. Coordinate
    # i is Beta(α_i, Σα - α_i), with raw moments E[X^k] = Π_{j<k} (α_i + j)/(Σα + j); its
    # fourth central moment μ4 gives Var(s²) = μ4/n - σ⁴(n - 3)/(n(n - 1)) for the unbiased s².
    # Catches draws with the right mean and the wrong spread: a concentration 10% too high
    # lowers the variance by 8% at α0 = 0.3 and 1.0, beyond 5 s.e. (about 5.5% there on the
    # best-measured coordinate; a fixed rtol=0.15 let it through).
    raw = [np.prod([(alpha + j) / (a_tot + j) for j in range(k)], axis=0) for k in range(5)]
    mu4 = raw[4] - 4 * mean * raw[3] + 6 * mean**2 * raw[2] - 3 * mean**4
    se_var = np.sqrt(mu4 / n - var**2 * (n - 3) / (n * (n - 1)))
    assert np.all(np.abs(p_ours.var(0, ddof=1) - var) < 5 * se_var + 1e-15)


def test_dense_sampler_matches_and_auto_switches():
    post = _identical_rows_posterior(40, 4, 2.0, {1: 1})
    # c = S·α0 = 8 → sticks ~ 8·log(1e9) > S/4: auto falls back to the dense draw.
    model = post.sample_model(torch.Generator().manual_seed(0))
    assert model.succ is None
    draws = np.concatenate(
        [
            post.sample_model(torch.Generator().manual_seed(i)).dense_transitions().reshape(-1, 4)
            for i in range(10)
        ]
    )
    ref = np.random.default_rng(0).dirichlet([2.0, 3.0, 2.0, 2.0], size=draws.shape[0])
    assert stats.ks_2samp(draws[:, 1], ref[:, 1]).pvalue > 1e-3


def test_sampled_plan_equals_dense_plan_of_the_sample():
    rng = np.random.default_rng(5)
    post = TabularMDPPosterior(3, 16, 2, 5, transition_prior=0.02)
    fill_random(post, 80, rng, rng.integers(16, size=(3, 16, 2, 2)))
    model = post.sample_model([torch.Generator().manual_seed(i) for i in range(3)])
    ref = dense_value_iteration(model.reward, model.dense_transitions(), 5)
    assert torch.allclose(value_iteration(model, 5), ref, atol=1e-10, rtol=0)


def test_samples_are_per_row_reproducible():
    rng = np.random.default_rng(6)
    post = TabularMDPPosterior(3, 9, 2, 3)
    fill_random(post, 40, rng)
    gens = [torch.Generator().manual_seed(10 + i) for i in range(3)]
    full = post.sample_model(gens)
    one = post.sample_model([torch.Generator().manual_seed(11)], rows=torch.tensor([1]))
    p_full = full.dense_transitions()[1]
    p_one = one.dense_transitions()[0]
    assert torch.equal(full.reward[1], one.reward[0])
    assert torch.allclose(p_full, p_one, atol=1e-15)


def test_beta_reward_samples_match_beta_law():
    post = TabularMDPPosterior(1, 1, 1, 1, reward_prior=(2.0, 0.5))
    for r in (0.2, 1.0, 0.7):
        post.update(torch.tensor([0]), torch.tensor([0]), torch.tensor([r]), None)
    gen = torch.Generator().manual_seed(2)
    draws = np.array([float(post.sample_model(gen).reward[0, 0, 0]) for _ in range(3000)])
    assert stats.kstest(draws, stats.beta(2.0 + 1.9, 0.5 + 1.1).cdf).pvalue > 1e-3


def test_bad_input():
    with pytest.raises(ValueError, match="transition_prior"):
        TabularMDPPosterior(1, 2, 2, 2, transition_prior=0.0)
    with pytest.raises(ValueError, match="reward_model"):
        TabularMDPPosterior(1, 2, 2, 2, reward_model="poisson")
    with pytest.raises(ValueError, match="reward_range"):
        TabularMDPPosterior(1, 2, 2, 2, reward_range=(1.0, 0.0))
    with pytest.raises(TypeError, match="num_states"):
        TabularMDPPosterior(1, 2.5, 2, 2)
    with pytest.raises(TypeError, match="dtype"):
        TabularMDPPosterior(1, 2, 2, 2, dtype=torch.int64)
    post = TabularMDPPosterior(2, 3, 2, 2)
    ok = torch.tensor([0, 1])
    r = torch.tensor([0.5, 0.5])
    with pytest.raises(ValueError, match="states"):
        post.update(torch.tensor([0, 3]), ok, r, ok)
    with pytest.raises(ValueError, match="actions"):
        post.update(ok, torch.tensor([0.0, 1.0]), r, ok)
    with pytest.raises(ValueError, match="rewards must lie in reward_range"):
        post.update(ok, ok, torch.tensor([0.5, 1.5]), ok)
    with pytest.raises(ValueError, match="rewards must be finite"):
        post.update(ok, ok, torch.tensor([0.5, float("nan")]), ok)
    with pytest.raises(ValueError, match="next_states"):
        post.update(ok, ok, r, torch.tensor([0, -2]))
    with pytest.raises(ValueError, match="sampler"):
        post.sample_model(torch.Generator(), sampler="exact")
    with pytest.raises(ValueError, match="stick_tolerance"):
        post.sample_model(torch.Generator(), stick_tolerance=0.0)
    with pytest.raises(ValueError, match="one generator per row"):
        post.sample_model([torch.Generator()])
    with pytest.raises(ValueError, match="first_step"):
        post.plan_mean(first_step=2)


def test_device_and_prior_arguments():
    # The device is the one tensors made there get (so comparisons with them hold).
    post = TabularMDPPosterior(1, 2, 2, 2)
    assert post.device == torch.empty(0).device
    assert post.plan_mean().device == post.device
    with pytest.raises(ValueError, match="device 'no-such-device' is not usable"):
        TabularMDPPosterior(1, 2, 2, 2, device="no-such-device")
    normal = TabularMDPPosterior(1, 2, 2, 2, reward_model="normal", reward_prior=(-1, 2.0))
    assert normal.reward_prior == (-1.0, 2.0)
    with pytest.raises(ValueError, match=r"reward_prior\[0\] must be finite"):
        TabularMDPPosterior(1, 2, 2, 2, reward_model="normal", reward_prior=(np.inf, 1.0))
    with pytest.raises(TypeError, match=r"reward_prior\[0\] must be a real number"):
        TabularMDPPosterior(1, 2, 2, 2, reward_model="normal", reward_prior=("0", 1.0))
