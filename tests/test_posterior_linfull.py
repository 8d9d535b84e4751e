"""Student-t EI against quadrature; the Normal-Inverse-Gamma posterior against a direct batch
computation, its Student-t predictive and Thompson draws against their definitions."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import torch
from scipy import integrate, stats

from delight_gym.posteriors.linfull import LinFullPosterior
from delight_gym.posteriors.student_t import student_t_expected_improvement


def _quad_ei(z: float, nu: float) -> float:
    """``E[(T + z)^+]``, ``T ~ t_ν``, by SciPy quadrature of ``∫ x f(c + x) dx`` (``c = −z``),
    the integrand scaled by ``f(c)``; the density's constant from mpmath's log-gamma."""
    c = -z

    def log_kernel(t: float) -> float:
        return -(nu + 1) / 2 * math.log1p(t * t / nu)

    def integrand(x: float) -> float:
        return x * math.exp(log_kernel(c + x) - log_kernel(c))

    scale = 1.0 / max(1.0, abs(c))
    total, lo = 0.0, 0.0
    for hi in (scale, 3 * scale, 10 * scale, 30 * scale, math.inf):
        total += integrate.quad(integrand, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
        lo = hi
    with mp.workdps(40):
        n = mp.mpf(nu)
        log_c = float(mp.loggamma((n + 1) / 2) - mp.loggamma(n / 2) - mp.log(n * mp.pi) / 2)
    return math.exp(log_c + log_kernel(c)) * total


@pytest.mark.parametrize("nu", [1.5, 2.5, 12.0, 113.0, 1e4, 1e6, 1e9])
@pytest.mark.parametrize("z", [-30.0, -10.0, -3.0, -0.5, 0.0, 0.7, 4.0])
def test_student_t_ei_against_quadrature(nu: float, z: float) -> None:
    for scale, shift in ((1.0, 0.0), (0.37, 2.5)):
        # X = m + sT with (m − v)/s = z.
        m = shift + z * scale
        got = float(student_t_expected_improvement(m, scale, nu, shift))
        want = scale * _quad_ei((m - shift) / scale, nu)  # the z of the rounded inputs
        assert got == pytest.approx(want, rel=1e-10, abs=0)


def test_student_t_ei_known_values_and_limits() -> None:
    assert float(student_t_expected_improvement(0.0, 1.0, 3.0, 0.0)) == pytest.approx(
        math.sqrt(3) / math.pi, rel=1e-15
    )
    # scale 0: (m - v)^+ exactly.
    out = student_t_expected_improvement(np.array([2.0, -1.0]), 0.0, 5.0, 0.5)
    assert out.tolist() == [1.5, 0.0]
    # ν → ∞: the Gaussian EI s(φ(z) + zΦ(z)).
    z = -1.3
    gauss = stats.norm.pdf(z) + z * stats.norm.cdf(z)
    assert float(student_t_expected_improvement(z, 1.0, 1e12, 0.0)) == pytest.approx(
        gauss, rel=1e-9
    )
    # Heavier tails than the Gaussian: larger EI below the mean.
    assert float(student_t_expected_improvement(z, 1.0, 4.0, 0.0)) > gauss


def test_student_t_ei_torch_device_dtype_and_checks() -> None:
    m = torch.tensor([[0.0, 1.0]], dtype=torch.float32)
    out = student_t_expected_improvement(m, torch.ones(1, 2), torch.full((1, 2), 7.0), 0.5)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32 and out.shape == (1, 2)
    ref = student_t_expected_improvement(m.double().numpy(), 1.0, 7.0, 0.5)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    with pytest.raises(ValueError, match="dof"):
        student_t_expected_improvement(0.0, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="scale"):
        student_t_expected_improvement(0.0, -1.0, 3.0, 0.0)
    with pytest.raises(ValueError, match="mean"):
        student_t_expected_improvement(np.nan, 1.0, 3.0, 0.0)


def _direct_nig(
    x: np.ndarray, y: np.ndarray, lam: float, a0: float, b0: float
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """The NIG posterior from all data at once (the showdown's formulas, numpy)."""
    xt = np.hstack([x, np.ones((len(x), 1))])
    prec = xt.T @ xt + lam * np.eye(xt.shape[1])
    cov = np.linalg.inv(prec)
    mu = cov @ xt.T @ y
    a = a0 + len(y) / 2
    b = b0 + 0.5 * (y @ y - mu @ prec @ mu)
    return mu, cov, a, b


def _assert_direct_posteriors(
    post: LinFullPosterior, x: np.ndarray, g: np.ndarray, y: np.ndarray, *, loc_rtol: float
) -> None:
    """Every (row, model) of ``post`` is the direct NIG posterior of the data ``x, g, y`` that
    fell to that model (the prior when none did)."""
    cov = post.whitener.mT @ post.whitener
    for i in range(g.shape[0]):
        for k in range(post.loc.shape[1]):
            sel = g[i] == k
            mu, sigma, a, b = _direct_nig(x[i, sel], y[i, sel], 0.25, 6.0, 6.0)
            np.testing.assert_allclose(post.loc[i, k].numpy(), mu, rtol=loc_rtol, atol=1e-12)
            np.testing.assert_allclose(cov[i, k].numpy(), sigma, rtol=1e-11, atol=1e-13)
            assert float(post.count[i, k]) == sel.sum()
            assert float(post.shape[i, k]) == a
            assert float(post.rate[i, k]) == pytest.approx(b, rel=1e-12)


def test_nig_incremental_equals_direct_batch_computation() -> None:
    rng = np.random.default_rng(100)
    batch, groups, d, n = 3, 4, 2, 60
    x = rng.normal(size=(batch, n, d))
    g = rng.integers(groups, size=(batch, n))
    y = x @ np.array([0.5, -1.0]) + 0.3 + 0.2 * rng.normal(size=(batch, n))
    post = LinFullPosterior(batch, groups, d)
    for j in range(n):
        post.update(torch.as_tensor(x[:, j]), torch.as_tensor(g[:, j]), torch.as_tensor(y[:, j]))
    _assert_direct_posteriors(post, x, g, y, loc_rtol=1e-12)
    # refit with all data at once: the same posterior.
    again = LinFullPosterior(batch, groups, d)
    again.refit(torch.as_tensor(x), torch.as_tensor(g), torch.as_tensor(y))
    torch.testing.assert_close(again.loc, post.loc, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(again.rate, post.rate, rtol=1e-12, atol=1e-12)


def test_many_observation_update_adds_to_earlier_data_and_skips_empty_models() -> None:
    """An update of many observations per row (summed model by model) on top of earlier data,
    with models that get nothing in the update and one that never sees data: every model is
    the direct posterior of all its data (the prior when it has none)."""
    rng = np.random.default_rng(101)
    batch, groups, d, n1, n2 = 3, 5, 2, 7, 40
    x = rng.normal(size=(batch, n1 + n2, d))
    g = rng.integers(groups, size=(batch, n1 + n2))
    g[0, n1:] = np.where(g[0, n1:] == 2, 3, g[0, n1:])  # row 0: model 2 only in the first part
    g[1] = np.where(g[1] == 4, 0, g[1])  # row 1: model 4 never
    g[2, n1:] = 1  # row 2: the whole update in one model
    y = x @ np.array([-0.7, 1.1]) + 0.4 + 0.3 * rng.normal(size=(batch, n1 + n2))
    post = LinFullPosterior(batch, groups, d)
    for part in (slice(0, n1), slice(n1, n1 + n2)):
        post.update(
            torch.as_tensor(x[:, part]), torch.as_tensor(g[:, part]), torch.as_tensor(y[:, part])
        )
    _assert_direct_posteriors(post, x, g, y, loc_rtol=1e-11)
    assert float(post.count[1, 4]) == 0.0


def test_predictive_and_thompson_draws_match_the_nig_marginal() -> None:
    rng = np.random.default_rng(101)
    d, n = 2, 30
    x = rng.normal(size=(1, n, d))
    y = x @ np.array([1.0, 2.0]) + rng.normal(size=(1, n))
    post = LinFullPosterior(1, 1, d)
    post.update(torch.as_tensor(x), torch.zeros(1, n, dtype=torch.int64), torch.as_tensor(y))
    arms = torch.as_tensor(rng.normal(size=(1, 3, d)))
    pred = post.predictive(arms)
    mu, cov, a, b = _direct_nig(x[0], y[0], 0.25, 6.0, 6.0)
    xt = np.hstack([arms[0].numpy(), np.ones((3, 1))])
    np.testing.assert_allclose(pred.mean[0].numpy(), xt @ mu, rtol=1e-12)
    np.testing.assert_allclose(
        pred.scale[0].numpy(), np.sqrt(b / a * np.einsum("ki,ij,kj->k", xt, cov, xt)), rtol=1e-12
    )
    assert pred.dof.tolist() == [[2 * a] * 3]
    # Thompson draws: their law is the Student-t marginal (KS test on 4000 draws).
    gen = [torch.Generator().manual_seed(102)]
    draws = torch.stack([post.thompson_values(arms, gen)[0] for _ in range(4000)]).numpy()
    for k in range(3):
        std = (draws[:, k] - pred.mean[0, k].item()) / pred.scale[0, k].item()
        assert stats.kstest(std, stats.t(df=2 * a).cdf).pvalue > 1e-3


def test_per_arm_and_shared_predictive_and_checks() -> None:
    post = LinFullPosterior(2, 3, 2)
    post.update(torch.ones(2, 2), torch.tensor([0, 2]), torch.tensor([1.0, 2.0]))
    pred = post.predictive(torch.ones(2, 3, 2))
    # untouched arms keep the prior: mean 0, the same scale.
    assert pred.mean[0, 1] == 0 and pred.mean[0, 0] > 0 and pred.mean[1, 2] > 0
    assert pred.scale[0, 1] == pred.scale[1, 0]
    with pytest.raises(ValueError, match="inputs"):
        post.predictive(torch.ones(2, 4, 2))
    with pytest.raises(ValueError, match="groups"):
        post.update(torch.ones(2, 2), torch.tensor([0, 3]), torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="groups"):
        post.update(torch.ones(2, 2), torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="targets"):
        post.update(torch.ones(2, 2), torch.tensor([0, 1]), torch.tensor([1.0, np.inf]))
    with pytest.raises(ValueError, match="lambda_prior"):
        LinFullPosterior(1, 1, 1, lambda_prior=0.0)
    shared = LinFullPosterior(2, 1, 2, dtype=torch.float32)
    shared.update(torch.ones(2, 2), torch.zeros(2, dtype=torch.int64), torch.ones(2))
    assert shared.predictive(torch.ones(2, 5, 2)).mean.dtype == torch.float32


def test_ei_with_a_floor_is_exact_wherever_it_can_reach_the_floor() -> None:
    rng = np.random.default_rng(107)
    post = LinFullPosterior(4, 1, 3)
    x = torch.as_tensor(rng.normal(size=(4, 40, 3)))
    post.update(
        x,
        torch.zeros(4, 40, dtype=torch.int64),
        x.sum(-1) + torch.as_tensor(rng.normal(size=(4, 40))),
    )
    arms = torch.as_tensor(rng.normal(size=(4, 500, 3)) * 3)
    pred = post.predictive(arms)
    base = pred.mean.max(-1).values
    exact = pred.expected_improvement(base)
    skipped = []
    for floor in (1e-3, 0.1, 1.0):
        got = pred.expected_improvement(base, at_least=floor)
        kept = got > 0
        assert torch.equal(got[kept], exact[kept])
        assert bool((exact[~kept] < floor).all())  # only arms below the floor are skipped
        skipped.append(int((~kept).sum()))
    assert skipped[-1] > 0
    rows = torch.tensor([2, 0])
    torch.testing.assert_close(
        pred.expected_improvement(base[rows], rows, at_least=1e-3),
        pred.expected_improvement(base, at_least=1e-3)[rows],
    )
