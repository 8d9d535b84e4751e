"""RFFPosterior against independent references: dense Bayesian linear regression in numpy,
quadrature for EI, Monte Carlo for the kernel and the Thompson draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate, stats

from delight_gym.posteriors import RFFPosterior
from delight_gym.posteriors.rff import REFACTOR_RATIO

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))]  # fmt: skip
DTYPES = [torch.float64, torch.float32]


def _np_features(post: RFFPosterior, x: np.ndarray, row: int) -> np.ndarray:
    """``√(2/M) cos(xΩᵀ + β)`` of row ``row`` in numpy float64: ``(n, d)`` to ``(n, M)``."""
    omega = post.frequencies[row].cpu().double().numpy()
    beta = post.phases[row].cpu().double().numpy()
    return math.sqrt(2.0 / omega.shape[0]) * np.cos(x @ omega.T + beta)


def _dense_posterior(post: RFFPosterior, x: np.ndarray, y: np.ndarray, x_new: np.ndarray):
    """Mean ``(B, m)`` and covariance ``(B, m, m)`` of ``f(x_new)``: weight space and, as a
    cross-check, function space ``K*ᵀ(K + σ²I)⁻¹y`` with ``K = s²ΦΦᵀ``."""
    s2, n2 = post.prior_std**2, post.noise**2
    means, covs = [], []
    for b in range(post.batch_size):
        phi = _np_features(post, x[b], b)
        phi_new = _np_features(post, x_new[b], b)
        precision = np.eye(phi.shape[1]) / s2 + phi.T @ phi / n2
        cov_w = np.linalg.inv(precision)
        mu_w = cov_w @ phi.T @ y[b] / n2
        means.append(phi_new @ mu_w)
        covs.append(phi_new @ cov_w @ phi_new.T)
        k = s2 * phi @ phi.T
        k_star = s2 * phi @ phi_new.T
        np.testing.assert_allclose(
            k_star.T @ np.linalg.solve(k + n2 * np.eye(len(k)), y[b]), means[-1], atol=1e-8
        )
    return np.array(means), np.array(covs)


def _data(batch: int, n: int, dim: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.random((batch, n, dim))
    y = np.sin(6.0 * x.sum(-1)) + 0.1 * rng.standard_normal((batch, n))
    return x, y


# ------------------------------------------------------------------ closed form
@pytest.mark.parametrize("chunk", [1, 5, 40])  # rank-one updates, then refactorisations
def test_posterior_equals_dense_bayesian_linear_regression(chunk: int) -> None:
    batch, dim, n, m = 3, 2, 40, 48
    post = RFFPosterior(
        batch, dim, num_features=m, lengthscale=0.3, prior_std=0.7, noise=0.2, seed=1
    )
    x, y = _data(batch, n, dim)
    for start in range(0, n, chunk):
        post.update(torch.from_numpy(x[:, start : start + chunk]), y[:, start : start + chunk])
    assert post.num_observations == n
    x_new = np.random.default_rng(5).random((batch, 7, dim))
    mean, cov = _dense_posterior(post, x, y, x_new)
    np.testing.assert_allclose(post.mean(x_new).numpy(), mean, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(post.covariance(x_new).numpy(), cov, rtol=1e-8, atol=1e-12)
    sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    np.testing.assert_allclose(post.std(x_new).numpy(), sd, rtol=1e-8)
    mu2, sd2 = post.predictive(x_new)
    np.testing.assert_allclose(mu2.numpy(), mean, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(sd2.numpy(), sd, rtol=1e-8)


def test_both_update_paths_are_exercised() -> None:
    m = 48
    assert REFACTOR_RATIO * 5 < m <= REFACTOR_RATIO * 40


def test_sequential_updates_equal_one_batch_update() -> None:
    batch, dim, n = 2, 3, 30
    one = RFFPosterior(batch, dim, num_features=64, lengthscale=0.4, seed=3)
    many = RFFPosterior(batch, dim, num_features=64, lengthscale=0.4, seed=3)
    x, y = _data(batch, n, dim, seed=1)
    one.update(x, y)
    for t in range(n):
        many.update(x[:, t : t + 1], y[:, t : t + 1])
    x_new = np.random.default_rng(2).random((batch, 9, dim))
    np.testing.assert_allclose(one.mean(x_new), many.mean(x_new), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(one.std(x_new), many.std(x_new), rtol=1e-9)
    torch.testing.assert_close(one.weight_mean, many.weight_mean, rtol=1e-8, atol=1e-10)


def test_reset_returns_to_the_prior_and_keeps_the_features() -> None:
    post = RFFPosterior(2, 1, num_features=16, prior_std=2.0, seed=0)
    omega = post.frequencies.clone()
    x = torch.rand(2, 5, 1, dtype=torch.float64)
    prior_sd = post.std(x)
    post.update(x, torch.ones(2, 5))
    post.reset()
    assert post.num_observations == 0 and torch.equal(post.frequencies, omega)
    assert torch.equal(post.mean(x), torch.zeros(2, 5, dtype=torch.float64))
    torch.testing.assert_close(post.std(x), prior_sd)
    post.update(x[:, :0], torch.zeros(2, 0))  # n = 0 is a no-op
    assert post.num_observations == 0


# -------------------------------------------------------------------------- EI, UCB
@pytest.mark.parametrize("per_point", [False, True])
def test_expected_improvement_equals_quadrature(per_point: bool) -> None:
    batch, dim = 2, 2
    post = RFFPosterior(batch, dim, num_features=32, lengthscale=0.3, noise=0.3, seed=4)
    x, y = _data(batch, 6, dim)
    post.update(x, y)
    x_new = np.random.default_rng(3).random((batch, 5, dim))
    mu, sd = (t.numpy() for t in post.predictive(x_new))
    rng = np.random.default_rng(4)
    base = rng.normal(0.0, 1.0, (batch, 5) if per_point else (batch,))
    ei = post.expected_improvement(x_new, torch.from_numpy(base)).numpy()
    assert ei.shape == (batch, 5)
    for b in range(batch):
        for j in range(5):
            v = base[b, j] if per_point else base[b]
            ref, _ = integrate.quad(
                lambda f, b=b, j=j, v=v: (f - v) * stats.norm.pdf(f, mu[b, j], sd[b, j]),
                v,
                mu[b, j] + 12 * sd[b, j],
                epsabs=1e-13,
                epsrel=1e-11,
            )
            assert ei[b, j] == pytest.approx(ref, rel=1e-8, abs=1e-13)
    log_ei = post.log_expected_improvement(x_new, base).numpy()
    np.testing.assert_allclose(np.exp(log_ei), ei, rtol=1e-12)


def test_ucb_is_mean_plus_root_beta_std() -> None:
    post = RFFPosterior(2, 1, num_features=16, seed=0)
    x = torch.rand(2, 4, 1, dtype=torch.float64)
    post.update(x[:, :2], torch.ones(2, 2))
    torch.testing.assert_close(post.ucb(x, 4.0), post.mean(x) + 2.0 * post.std(x))
    torch.testing.assert_close(post.ucb(x, 0.0), post.mean(x))


# ------------------------------------------------------------------ the kernel
@pytest.mark.parametrize("num_features", [16, 64, 256])
def test_prior_covariance_approximates_the_rbf_kernel(num_features: int) -> None:
    """Monte Carlo over independent rows: unbiased, with the exact per-entry variance
    ``(1 + k⁴/2 − k²)/M`` of the random-feature estimate, and within Hoeffding's bound."""
    batch, dim, ell, s = 200, 2, 0.3, 1.5
    post = RFFPosterior(batch, dim, num_features=num_features, lengthscale=ell, prior_std=s, seed=7)
    pts = np.random.default_rng(0).random((6, dim))
    cov = post.covariance(np.broadcast_to(pts, (batch, 6, dim)).copy()).numpy() / s**2
    k = np.exp(-((pts[:, None] - pts[None]) ** 2).sum(-1) / (2 * ell**2))
    err = cov - k
    var = (1 + k**4 / 2 - k**2) / num_features
    iu = np.triu_indices(6, 1)
    # Unbiased: the mean error over rows is within 5 standard errors, entry by entry.
    assert np.all(np.abs(err.mean(0))[iu] <= 5 * np.sqrt(var[iu] / batch))
    # Mean squared error / closed-form variance, pooled over 15 entries and 200 rows, is 1
    # up to its Monte Carlo error (about √(2/(15·200)) ≈ 0.03 for independent entries).
    assert (err[:, iu[0], iu[1]] ** 2 / var[iu]).mean() == pytest.approx(1.0, abs=0.15)
    # Hoeffding (each term in [−2, 2]), union bound over every entry: δ = 1e-6 overall.
    delta = 1e-6 / err.size
    assert np.abs(err).max() <= math.sqrt(8 * math.log(2 / delta) / num_features)


# --------------------------------------------------------------------- Thompson
def test_weight_draws_have_the_posterior_mean_and_covariance() -> None:
    post = RFFPosterior(2, 1, num_features=6, lengthscale=0.5, noise=0.5, seed=11)
    x, y = _data(2, 8, 1)
    post.update(x, y)
    draws = post.sample_weights(40_000).numpy()  # (B, S, M)
    assert draws.shape == (2, 40_000, 6)
    for b in range(2):
        phi = _np_features(post, x[b], b)
        cov = np.linalg.inv(np.eye(6) + phi.T @ phi / 0.25)
        mu = cov @ phi.T @ y[b] / 0.25
        se = np.sqrt(np.diag(cov) / 40_000)
        assert np.all(np.abs(draws[b].mean(0) - mu) <= 5 * se)
        np.testing.assert_allclose(np.cov(draws[b].T), cov, atol=0.05 * np.abs(cov).max())


def test_sampled_functions_evaluate_the_weights_anywhere_and_are_seeded() -> None:
    a = RFFPosterior(3, 2, num_features=20, seed=5)
    b = RFFPosterior(3, 2, num_features=20, seed=5)
    x = torch.rand(3, 7, 2, dtype=torch.float64)
    fa, fb = a.sample_function(), b.sample_function()
    assert torch.equal(fa.weights, fb.weights) and torch.equal(fa(x), fb(x))
    np.testing.assert_allclose(
        fa(x).numpy(),
        [_np_features(a, x[b].numpy(), b) @ fa.weights[b].numpy() for b in range(3)],
    )
    many = a.sample_function(4)
    assert many(x).shape == (3, 4, 7)
    assert a.thompson(x).shape == (3, 7)
    c = RFFPosterior(3, 2, num_features=20, seed=6)
    assert not torch.equal(c.frequencies, a.frequencies)


# -------------------------------------------------------------- batch rows
def test_batch_rows_are_independent_posteriors() -> None:
    post = RFFPosterior(3, 2, num_features=32, seed=2)
    x, y = _data(3, 10, 2)
    y_changed = y.copy()
    y_changed[1] += 5.0
    other = RFFPosterior(3, 2, num_features=32, seed=2)
    post.update(x, y)
    other.update(x, y_changed)
    x_new = np.random.default_rng(9).random((3, 5, 2))
    mean, mean_other = post.mean(x_new), other.mean(x_new)
    assert torch.equal(mean[[0, 2]], mean_other[[0, 2]]) and not torch.equal(mean[1], mean_other[1])
    # Row 1 alone, as a batch of one with the same features, gives the same posterior.
    single = RFFPosterior(1, 2, num_features=32, seed=0)
    single.frequencies, single.phases = post.frequencies[1:2], post.phases[1:2]
    single.update(x[1:2], y[1:2])
    torch.testing.assert_close(single.mean(x_new[1:2]), mean[1:2], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(single.std(x_new[1:2]), post.std(x_new)[1:2], rtol=1e-12, atol=0)
    assert not torch.equal(post.frequencies[0], post.frequencies[1])


# ------------------------------------------------------------ device, dtype
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_device_and_dtype_match_the_dense_reference(device: str, dtype: torch.dtype) -> None:
    batch, dim, n = 2, 2, 24
    post = RFFPosterior(
        batch, dim, num_features=32, lengthscale=0.3, seed=0, device=device, dtype=dtype
    )
    assert post.device.type == device and post.frequencies.dtype == dtype
    x, y = _data(batch, n, dim)
    for t in range(0, n, 3):
        post.update(torch.from_numpy(x[:, t : t + 3]).to(device), y[:, t : t + 3])
    x_new = np.random.default_rng(1).random((batch, 6, dim))
    mean, cov = _dense_posterior(post, x, y, x_new)
    xt = torch.from_numpy(x_new).to(device=device, dtype=dtype)
    mu, sd = post.predictive(xt)
    ei = post.expected_improvement(xt, torch.zeros(batch, device=device, dtype=dtype))
    assert mu.dtype == sd.dtype == ei.dtype == dtype and mu.device == post.device
    tol = 1e-8 if dtype == torch.float64 else 2e-3
    sd_ref = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    np.testing.assert_allclose(mu.cpu().double().numpy(), mean, rtol=tol, atol=tol)
    np.testing.assert_allclose(sd.cpu().double().numpy(), sd_ref, rtol=tol, atol=tol * 0.1)
    assert post.thompson(xt).device == post.device


@pytest.mark.parametrize("dtype", DTYPES)
def test_many_repeated_observations_stay_finite(dtype: torch.dtype) -> None:
    post = RFFPosterior(2, 1, num_features=64, noise=1e-3, seed=0, dtype=dtype)
    x = torch.full((2, 1, 1), 0.5, dtype=dtype)
    for _ in range(300):
        post.update(x, torch.ones(2, 1, dtype=dtype))
    post.update(x.expand(2, 200, 1), torch.ones(2, 200, dtype=dtype))  # refactor path
    grid = torch.linspace(0, 1, 11, dtype=dtype).reshape(1, 11, 1).expand(2, 11, 1)
    mu, sd = post.predictive(grid)
    ei = post.expected_improvement(grid, torch.ones(2, dtype=dtype))
    assert all(bool(torch.isfinite(t).all()) for t in (mu, sd, ei))
    assert float(sd[:, 5].max()) < 1e-3 and abs(float(mu[0, 5]) - 1.0) < 1e-2


def test_float32_statistics_stay_at_the_exact_posterior_over_many_updates() -> None:
    """500 rank-one updates at one point in float32: the float64 statistics keep the mean and
    std within 1e-4 of the dense float64 posterior (float32 statistics drifted by up to 160)."""
    for num_features, noise in ((64, 0.1), (256, 1e-3)):
        post = RFFPosterior(
            1, 1, num_features=num_features, noise=noise, seed=0, dtype=torch.float32
        )
        for _ in range(500):
            post.update(torch.full((1, 1, 1), 0.5, dtype=torch.float32), torch.ones(1, 1))
        assert post.precision_factor.dtype == post.weight_mean.dtype == torch.float64
        # The exact posterior in weight space, float64, on the same (float32) features.
        phi = _np_features(post, np.array([[0.5]]), 0)
        precision = np.eye(num_features) / post.prior_std**2 + 500 * phi.T @ phi / noise**2
        cov_w = np.linalg.inv(precision)
        mu_w = cov_w @ phi[0] * 500 / noise**2
        grid = np.linspace(0.0, 1.0, 21).reshape(1, 21, 1)
        phi_grid = _np_features(post, grid[0], 0)
        mu, sd = post.predictive(torch.as_tensor(grid, dtype=torch.float32))
        assert mu.dtype == sd.dtype == post.sample_weights().dtype == torch.float32
        np.testing.assert_allclose(mu[0].double().numpy(), phi_grid @ mu_w, atol=1e-4)
        sd_ref = np.sqrt(np.einsum("ij,jk,ik->i", phi_grid, cov_w, phi_grid))
        np.testing.assert_allclose(sd[0].double().numpy(), sd_ref, atol=1e-4)


# -------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"dim": 0}, "dim"),
        ({"num_features": 0}, "num_features"),
        ({"lengthscale": 0.0}, "lengthscale"),
        ({"lengthscale": float("nan")}, "lengthscale"),
        ({"prior_std": -1.0}, "prior_std"),
        ({"noise": 0.0}, "noise"),
        ({"noise": float("inf")}, "noise"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"dtype": torch.int64}, "dtype"),
        ({"device": "nonsense"}, "device"),
        ({"noise": 1e-300}, "noise must lie in"),
        ({"prior_std": 1e300}, "prior_std must lie in"),
        ({"lengthscale": 1e-300}, "lengthscale must lie in"),
        ({"noise": 1e-12, "dtype": torch.float32}, r"noise must lie in \[2.33e-10"),
        ({"prior_std": 1e10, "dtype": torch.float32}, r"prior_std must lie in .*4.29e\+09"),
        ({"prior_std": 1e70, "noise": 1e-10}, "prior_std / noise must be at most"),
        ({"dim": 10**9}, "the largest buffer, frequencies"),
    ],
)
def test_bad_constructor_arguments_raise_naming_them(kwargs: dict, name: str) -> None:
    args = {"batch_size": 2, "dim": 1, **kwargs}
    with pytest.raises((ValueError, TypeError), match=name):
        RFFPosterior(**args)


def _full(value: float, *shape: int) -> torch.Tensor:
    return torch.full(shape, value, dtype=torch.float64)


def test_bad_method_inputs_raise_naming_them() -> None:
    post = RFFPosterior(2, 3, num_features=8, seed=0)
    good_x = torch.rand(2, 4, 3, dtype=torch.float64)
    cases = [
        (lambda: post.update(torch.rand(2, 4, 2), torch.rand(2, 4)), "actions"),
        (lambda: post.update(torch.rand(3, 4, 3), torch.rand(3, 4)), "actions"),
        (lambda: post.update(good_x, torch.rand(2, 5)), "rewards"),
        (lambda: post.update(good_x, torch.full((2, 4), float("nan"))), "rewards"),
        (lambda: post.update(good_x, torch.ones(2, 4, dtype=torch.bool)), "rewards"),
        (lambda: post.update([["a"]], torch.rand(2, 4)), "actions"),
        (lambda: post.mean(torch.rand(2, 4)), "x"),
        (lambda: post.std(torch.full((2, 1, 3), float("inf"))), "x"),
        (lambda: post.expected_improvement(good_x, torch.zeros(3)), "baseline"),
        (lambda: post.expected_improvement(good_x, torch.zeros(2, 5)), "baseline"),
        (lambda: post.expected_improvement(good_x, [float("nan")] * 2), "baseline"),
        (lambda: post.ucb(good_x, -1.0), "beta"),
        (lambda: post.sample_weights(-2), "num_samples"),
        (lambda: post.update(_full(1e300, 2, 1, 3), torch.ones(2, 1)), "actions must be at"),
        (lambda: post.update(good_x, _full(1e100, 2, 4)), "rewards must be at most"),
        (lambda: post.mean(_full(-1e78, 2, 1, 3)), "x must be at most"),
        (lambda: post.features(_full(1e78, 2, 1, 3)), "x must be at most"),
    ]
    for call, name in cases:
        with pytest.raises((ValueError, TypeError), match=name):
            call()
