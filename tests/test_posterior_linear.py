"""Tests of ``delight_gym.posteriors.linear``: the incremental linear-Gaussian posterior and
the package's Gaussian expected improvement (plain and log-space).

References:

* posterior: the closed-form batch posterior ``Σ = (ηI + ΦᵀΦ/σ²)⁻¹``, ``μ = Σ Φᵀy/σ²``
  (numpy float64, well conditioned here, so accurate to ``~1e-15``);
* EI: ``scipy.integrate.quad`` of ``(x - v)·pdf(x)`` over ``x > v`` (written as
  ``s ∫_0^∞ w φ(w - z) dw`` with ``x = v + s w``; for ``z <= 0`` the constant ``φ(z)`` is
  factored out so the integrand does not underflow); it agrees with the 50-digit mpmath value
  of ``s (φ(z) + zΦ(z))`` to ``~6e-16``;
* log EI: mpmath at 50 digits (plus ``2 log10|z|`` guard digits for the cancellation of
  ``φ(z) + zΦ(z)``), and the asymptotic series ``φ(u)/u² (1 - 3/u² + 15/u⁴ - …)`` for
  ``u = -z >= 1e3``, where mpmath's ``erfc`` overflows.

Tolerances (the promises of the module): posterior mean and covariance ``1e-8`` *relative to
the largest entry* of the reference (``max|Δ| <= 1e-8 max|ref|`` per seed; measured
``~2e-14``); EI ``1e-10`` relative where ``EI > 1e-300`` (measured ``1.3e-13``); log EI
``1e-12 · max(1, |log EI|)`` in float64 (measured ``7e-16``) and ``2e-6 · max(1, |log EI|)`` in
float32 (measured ``4e-7``).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from delight_gym.posteriors.linear import (
    LinearGaussianPosterior,
    cholesky_rank_one_update,
    gaussian_expected_improvement,
    log_gaussian_expected_improvement,
)

DPS = 50
PHI0 = 1.0 / math.sqrt(2.0 * math.pi)

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available"),
    ),
]


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _stream(
    batch: int, dim: int, steps: int, *, noise: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Features ``~ N(0, I/D)`` (steps, B, D) and rewards ``φᵀθ* + N(0, σ²)`` (steps, B)."""
    gen = torch.Generator().manual_seed(seed)
    phi = torch.randn(steps, batch, dim, generator=gen, dtype=torch.float64) / math.sqrt(dim)
    theta = torch.randn(batch, dim, generator=gen, dtype=torch.float64)
    y = (phi * theta).sum(-1) + noise * torch.randn(
        steps, batch, generator=gen, dtype=torch.float64
    )
    return phi, y


def _batch_posterior(
    phi: np.ndarray, y: np.ndarray, *, noise: float, eta: float
) -> tuple[np.ndarray, np.ndarray]:
    """Closed form for one seed: ``phi`` (n, D), ``y`` (n,) -> (μ, Σ)."""
    dim = phi.shape[1]
    precision = eta * np.eye(dim) + phi.T @ phi / noise**2
    cov = np.linalg.inv(precision)
    cov = 0.5 * (cov + cov.T)
    mean = np.linalg.solve(precision, phi.T @ y / noise**2)
    return mean, cov


def _rel_max(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(got - ref).max() / np.abs(ref).max())


def _h_mp(z: float) -> mp.mpf:
    """``h(z) = φ(z) + zΦ(z)`` to ``DPS`` digits (asymptotic series for ``z <= -1e3``)."""
    with mp.workdps(DPS):
        zz = mp.mpf(z)
        if z <= -1e3:
            inv = 1 / (zz * zz)
            series = 1 - 3 * inv + 15 * inv**2 - 105 * inv**3 + 945 * inv**4 - 10395 * inv**5
            return mp.npdf(zz) * inv * series
    with mp.workdps(DPS + 2 * int(math.log10(abs(z) + 1.0)) + 5):
        zz = mp.mpf(z)
        return +(mp.npdf(zz) + zz * mp.ncdf(zz))


def _log_h_mp(z: float) -> mp.mpf:
    """``log h(z)``; in the deep tail through ``log φ`` so that nothing under/overflows."""
    with mp.workdps(DPS):
        zz = mp.mpf(z)
        if z <= -1e3:
            inv = 1 / (zz * zz)
            series = 1 - 3 * inv + 15 * inv**2 - 105 * inv**3 + 945 * inv**4 - 10395 * inv**5
            return -zz * zz / 2 - mp.log(mp.sqrt(2 * mp.pi)) + mp.log(inv) + mp.log(series)
        return mp.log(_h_mp(z))


def _quad_ei(mean: float, std: float, base: float) -> float:
    """``∫_v^∞ (x - v) pdf(x) dx`` by ``scipy.integrate.quad`` (substituting ``x = v + s w``)."""
    z = (mean - base) / std
    if z <= 0:
        scale = float(mp.npdf(z))  # φ(z), factored out of the integrand

        def f(w: float) -> float:
            return w * math.exp(z * w - 0.5 * w * w)

        top = 60.0 / max(1.0, -z)
        parts = [(0.0, top), (top, np.inf)]
    else:
        scale = PHI0

        def f(w: float) -> float:
            return w * math.exp(-0.5 * (w - z) ** 2)

        parts = [(0.0, z), (z, z + 40.0)]  # beyond z + 40 the integrand is < 1e-340
    total = sum(
        integrate.quad(f, lo, hi, epsabs=0.0, epsrel=1e-13, limit=500)[0] for lo, hi in parts
    )
    return std * scale * total


# ---------------------------------------------------------------------------------------------
# posterior: incremental updates against the closed form
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [2, 10, 30])
@pytest.mark.parametrize(("noise", "eta"), [(1.0, 1.0), (0.3, 2.5)])
def test_incremental_matches_batch_posterior(dim: int, noise: float, eta: float) -> None:
    batch, steps = 4, 1000
    phi, y = _stream(batch, dim, steps, noise=noise, seed=dim)
    post = LinearGaussianPosterior(batch, dim, noise=noise, prior_precision=eta)
    checkpoints = {1, 10, 100, steps}
    for t in range(steps):
        post.update(phi[t], y[t])
        if t + 1 not in checkpoints:
            continue
        assert post.num_updates == t + 1
        mean, cov = post.mean().numpy(), post.covariance().numpy()
        factor = post.precision_factor
        assert torch.equal(torch.tril(factor, -1), torch.zeros_like(factor))
        assert bool((factor.diagonal(dim1=-2, dim2=-1) > 0).all())
        for b in range(batch):
            ref_mean, ref_cov = _batch_posterior(
                phi[: t + 1, b].numpy(), y[: t + 1, b].numpy(), noise=noise, eta=eta
            )
            assert _rel_max(mean[b], ref_mean) <= 1e-8
            assert _rel_max(cov[b], ref_cov) <= 1e-8
            precision = (factor[b] @ factor[b].T).numpy()
            ref_precision = np.linalg.inv(ref_cov)
            assert _rel_max(precision, ref_precision) <= 1e-8


def test_incremental_ill_conditioned_stream() -> None:
    """Nearly collinear features (precision condition number ~1e4) and large rewards."""
    batch, dim, steps = 3, 6, 1000
    gen = torch.Generator().manual_seed(7)
    direction = torch.randn(batch, 1, dim, generator=gen, dtype=torch.float64)
    jitter = 1e-2 * torch.randn(batch, steps, dim, generator=gen, dtype=torch.float64)
    phi = (direction + jitter).transpose(0, 1)  # (steps, B, D)
    y = 100.0 * torch.randn(steps, batch, generator=gen, dtype=torch.float64)
    post = LinearGaussianPosterior(batch, dim, noise=0.5, prior_precision=0.1)
    for t in range(steps):
        post.update(phi[t], y[t])
    for b in range(batch):
        ref_mean, ref_cov = _batch_posterior(phi[:, b].numpy(), y[:, b].numpy(), noise=0.5, eta=0.1)
        assert np.linalg.cond(ref_cov) > 1e3
        assert _rel_max(post.mean()[b].numpy(), ref_mean) <= 1e-8
        assert _rel_max(post.covariance()[b].numpy(), ref_cov) <= 1e-8


def test_rank_one_update_helper() -> None:
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(5, 7, 12, generator=gen, dtype=torch.float64)
    precision = a @ a.mT / 12 + torch.eye(7, dtype=torch.float64)
    flip = torch.arange(6, -1, -1)
    # Upper square root U (U Uᵀ = precision): the reversed Cholesky factor of the reversed matrix.
    upper = torch.linalg.cholesky(precision[:, flip][:, :, flip])[:, flip][:, :, flip]
    assert torch.allclose(upper @ upper.mT, precision, rtol=0, atol=1e-13)
    x = torch.randn(5, 7, generator=gen, dtype=torch.float64)
    new = cholesky_rank_one_update(upper, x)
    target = precision + x[:, :, None] * x[:, None, :]
    assert torch.equal(torch.tril(new, -1), torch.zeros_like(new))
    assert float((new @ new.mT - target).abs().max()) <= 1e-13
    # Unique: it equals the factor computed from scratch.
    direct = torch.linalg.cholesky(target[:, flip][:, :, flip])[:, flip][:, :, flip]
    assert float((new - direct).abs().max()) <= 1e-13


def test_float32_matches_float64() -> None:
    batch, dim, steps = 4, 10, 300
    phi, y = _stream(batch, dim, steps, noise=1.0, seed=11)
    p64 = LinearGaussianPosterior(batch, dim)
    p32 = LinearGaussianPosterior(batch, dim, dtype=torch.float32)
    for t in range(steps):
        p64.update(phi[t], y[t])
        p32.update(phi[t], y[t])  # cast to float32 on the way in
    assert p32.mean().dtype == torch.float32
    assert _rel_max(p32.mean().double().numpy(), p64.mean().numpy()) <= 1e-5
    assert _rel_max(p32.covariance().double().numpy(), p64.covariance().numpy()) <= 1e-5
    feats = torch.randn(batch, 20, dim, generator=torch.Generator().manual_seed(1))
    m32, s32 = p32.predictive(feats)
    m64, s64 = p64.predictive(feats.double())
    assert m32.dtype == s32.dtype == torch.float32
    assert float((m32.double() - m64).abs().max()) <= 1e-5 * float(m64.abs().max())
    assert float(((s32.double() - s64) / s64).abs().max()) <= 1e-5


def test_prior_reset_and_attributes() -> None:
    post = LinearGaussianPosterior(3, 4, noise=0.5, prior_precision=4.0)
    assert (post.batch_size, post.dim, post.noise, post.prior_precision) == (3, 4, 0.5, 4.0)
    assert post.device == torch.device("cpu") and post.dtype == torch.float64
    assert post.num_updates == 0
    assert "LinearGaussianPosterior(batch_size=3" in repr(post)
    prior_cov = torch.eye(4, dtype=torch.float64).expand(3, 4, 4) / 4.0
    assert torch.allclose(post.covariance(), prior_cov, rtol=0, atol=1e-15)
    assert torch.equal(post.mean(), torch.zeros(3, 4, dtype=torch.float64))
    # numpy and list inputs are accepted.
    post.update(np.ones((3, 4)), [1.0, 2.0, 3.0])
    post.update(torch.ones(3, 4, dtype=torch.float32), torch.zeros(3))
    assert post.num_updates == 2
    assert not torch.equal(post.mean(), torch.zeros(3, 4, dtype=torch.float64))
    post.reset()
    assert post.num_updates == 0
    assert torch.equal(post.mean(), torch.zeros(3, 4, dtype=torch.float64))
    assert torch.allclose(post.covariance(), prior_cov, rtol=0, atol=1e-15)


def test_predictive_and_ei_methods() -> None:
    batch, dim, steps, arms = 3, 5, 50, 8
    phi, y = _stream(batch, dim, steps, noise=0.7, seed=5)
    post = LinearGaussianPosterior(batch, dim, noise=0.7)
    for t in range(steps):
        post.update(phi[t], y[t])
    feats = torch.randn(batch, arms, dim, generator=torch.Generator().manual_seed(2)).double()
    mean, std = post.predictive(feats)
    assert mean.shape == std.shape == (batch, arms)
    mu, cov = post.mean(), post.covariance()
    assert torch.allclose(mean, torch.einsum("bkd,bd->bk", feats, mu), rtol=1e-12, atol=1e-14)
    var = torch.einsum("bkd,bde,bke->bk", feats, cov, feats)
    assert torch.allclose(std**2, var, rtol=1e-12, atol=1e-15)
    base = mean.max(dim=1).values  # greedy host baseline
    ei = post.expected_improvement(feats, base)
    log_ei = post.log_expected_improvement(feats, base)
    assert torch.equal(ei, gaussian_expected_improvement(mean, std, base[:, None]))
    assert torch.equal(log_ei, log_gaussian_expected_improvement(mean, std, base[:, None]))
    assert bool((ei <= std).all())  # the paper's Lemma: EI <= s when v >= m
    assert torch.allclose(log_ei, torch.log(ei), rtol=1e-12, atol=0)


# ---------------------------------------------------------------------------------------------
# Thompson sampling
# ---------------------------------------------------------------------------------------------


def test_thompson_draws_match_posterior() -> None:
    """20,000 identical rows give 20,000 draws from one posterior in a single call."""
    draws, dim, steps = 20_000, 3, 20
    phi1, y1 = _stream(1, dim, steps, noise=1.0, seed=9)
    post = LinearGaussianPosterior(draws, dim)
    for t in range(steps):
        post.update(phi1[t].expand(draws, dim), y1[t].expand(draws))
    samples = post.sample(torch.Generator().manual_seed(0))
    mu, cov = post.mean()[0], post.covariance()[0]
    sd = torch.sqrt(torch.diagonal(cov))
    z_mean = (samples.mean(0) - mu) / (sd / math.sqrt(draws))
    assert float(z_mean.abs().max()) < 5.0
    centred = samples - mu
    emp_cov = centred.T @ centred / draws
    se_cov = torch.sqrt((torch.outer(sd**2, sd**2) + cov**2) / draws)
    assert float(((emp_cov - cov) / se_cov).abs().max()) < 5.0


def test_thompson_draws_reproducible() -> None:
    post = LinearGaussianPosterior(4, 6)
    phi, y = _stream(4, 6, 10, noise=1.0, seed=4)
    for t in range(10):
        post.update(phi[t], y[t])
    a = post.sample(torch.Generator().manual_seed(123))
    b = post.sample(torch.Generator().manual_seed(123))
    assert a.shape == (4, 6)
    assert torch.equal(a, b)
    gen = torch.Generator().manual_seed(123)
    post.sample(gen)
    assert not torch.equal(post.sample(gen), a)
    assert not torch.equal(post.sample(torch.Generator().manual_seed(124)), a)


# ---------------------------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_device_matches_cpu(device: str, dtype: torch.dtype) -> None:
    batch, dim, steps, arms = 5, 8, 200, 16
    phi, y = _stream(batch, dim, steps, noise=0.8, seed=21)
    cpu = LinearGaussianPosterior(batch, dim, noise=0.8, dtype=dtype)
    dev = LinearGaussianPosterior(batch, dim, noise=0.8, dtype=dtype, device=device)
    assert dev.device.type == device
    for t in range(steps):
        cpu.update(phi[t], y[t])
        dev.update(phi[t].to(device), y[t].to(device))
    tol = 1e-10 if dtype == torch.float64 else 1e-4
    feats = torch.randn(batch, arms, dim, generator=torch.Generator().manual_seed(8), dtype=dtype)
    base = cpu.predictive(feats)[0].max(dim=1).values

    def close(a: torch.Tensor, b: torch.Tensor) -> None:
        assert b.device.type == device and b.dtype == dtype
        assert float((a.double() - b.cpu().double()).abs().max()) <= tol * max(
            1.0, float(a.abs().max())
        )

    close(cpu.mean(), dev.mean())
    close(cpu.covariance(), dev.covariance())
    for a, b in zip(cpu.predictive(feats), dev.predictive(feats.to(device)), strict=True):
        close(a, b)
    close(cpu.expected_improvement(feats, base), dev.expected_improvement(feats, base))
    close(cpu.log_expected_improvement(feats, base), dev.log_expected_improvement(feats, base))
    draw = dev.sample(torch.Generator(device=device).manual_seed(0))
    assert draw.shape == (batch, dim) and draw.device.type == device
    z = torch.linspace(-40.0, 40.0, 161, dtype=dtype)
    close(
        log_gaussian_expected_improvement(z, 1.0, 0.0),
        log_gaussian_expected_improvement(z.to(device), 1.0, 0.0),
    )
    close(
        gaussian_expected_improvement(z, 1.0, 0.0),
        gaussian_expected_improvement(z.to(device), 1.0, 0.0),
    )


# ---------------------------------------------------------------------------------------------
# Gaussian EI: accuracy
# ---------------------------------------------------------------------------------------------


def test_ei_against_quadrature() -> None:
    zs = np.concatenate([np.linspace(-37.0, 37.0, 75), [-4.0, -4.0001, -3.9999, 1e-8, -1e-8]])
    worst = 0.0
    for std in (1e-3, 1.0, 7.5):
        for base in (0.0, -2.0):
            means = base + zs * std
            got = gaussian_expected_improvement(means, std, base)
            for m, g in zip(means, got, strict=True):
                ref = _quad_ei(float(m), std, base)
                if ref > 1e-300:
                    worst = max(worst, abs(g / ref - 1.0))
    assert worst <= 1e-10


@pytest.mark.parametrize(
    ("dtype", "tiny", "rtol"), [(torch.float64, 1e-300, 1e-12), (torch.float32, 1e-36, 2e-5)]
)
def test_ei_against_mpmath(dtype: torch.dtype, tiny: float, rtol: float) -> None:
    # float32: exp(-z²/2) of a rounded z² alone costs ~z²/2 ulps (measured 5e-6 at z = -12.5).
    zs = torch.linspace(-38.0, 40.0, 1561, dtype=torch.float64).to(dtype)
    got = gaussian_expected_improvement(zs, 1.0, 0.0)
    assert got.dtype == dtype
    errs = [
        abs(g / float(ref) - 1.0)
        for z, g in zip(zs.tolist(), got.tolist(), strict=True)
        if (ref := _h_mp(z)) > tiny
    ]
    assert max(errs) <= rtol


_DEEP_TAIL_64 = [-1e3, -3e4, -1e6, -1e10, -1e50, -1e100, -1e150]
_DEEP_TAIL_32 = [-1e3, -3e4, -1e6, -1e10, -1e15, -1e19]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_log_ei_against_mpmath(dtype: torch.dtype) -> None:
    tail = _DEEP_TAIL_64 if dtype == torch.float64 else _DEEP_TAIL_32
    zs = torch.tensor(np.concatenate([np.linspace(-40.0, 40.0, 1601), tail, [1e3, 1e10]]))
    zs = zs.to(dtype)
    got = log_gaussian_expected_improvement(zs, 1.0, 0.0)
    assert got.dtype == dtype
    assert bool(torch.isfinite(got).all())
    rtol = 1e-12 if dtype == torch.float64 else 2e-6
    worst = 0.0
    for z, g in zip(zs.tolist(), got.tolist(), strict=True):
        ref = _log_h_mp(z)
        worst = max(worst, float(abs(g - ref) / max(1, abs(ref))))
    assert worst <= rtol


def test_log_ei_scale_and_overflow() -> None:
    # log EI = log s + log h(z): scales and shifts are exact up to rounding.
    z = torch.linspace(-30.0, 30.0, 61, dtype=torch.float64)
    base = log_gaussian_expected_improvement(z, 1.0, 0.0)
    for s in (1e-200, 1e-5, 3.0, 1e200):
        scaled = log_gaussian_expected_improvement((z + 5.0) * s, s, 5.0 * s)
        assert torch.allclose(scaled, base + math.log(s), rtol=1e-13, atol=1e-12)
    # where z^2 overflows the result is -inf (the true value is below -1e308)
    assert log_gaussian_expected_improvement(-1e160, 1.0, 0.0).item() == -math.inf
    assert log_gaussian_expected_improvement(np.float32(-1e20), np.float32(1.0), 0.0) == -np.inf


def test_log_ei_decides_the_gate_where_float32_ei_underflows() -> None:
    # DE gate L·EI >= λ  <=>  log EI >= log(λ/L). At z = -20 float32 EI is 0 (true ~1e-90).
    z = torch.tensor([-20.0, -20.5, -60.0], dtype=torch.float32)
    ei = gaussian_expected_improvement(z, torch.ones(3), torch.zeros(3))
    log_ei = log_gaussian_expected_improvement(z, torch.ones(3), torch.zeros(3))
    assert ei.dtype == log_ei.dtype == torch.float32
    assert bool((ei == 0).all())
    refs = [float(_log_h_mp(float(v))) for v in z.tolist()]
    assert refs[0] == pytest.approx(-206.9178385, abs=1e-6)
    for got, ref in zip(log_ei.tolist(), refs, strict=True):
        assert abs(got - ref) <= 1e-6 * abs(ref)
        # thresholds log(λ/L) just below / above the true log EI are decided correctly
        assert got >= ref - 1e-3 * abs(ref) and not got >= ref + 1e-3 * abs(ref)
    # the arms are still ranked correctly
    assert log_ei[0] > log_ei[1] > log_ei[2]


# ---------------------------------------------------------------------------------------------
# Gaussian EI: exact special cases, types, broadcasting
# ---------------------------------------------------------------------------------------------


def test_ei_zero_std_and_known_values() -> None:
    m = torch.tensor([2.0, -1.0, 0.5], dtype=torch.float64)
    v = torch.tensor([0.5, 0.0, 0.5], dtype=torch.float64)
    ei = gaussian_expected_improvement(m, torch.zeros(3), v)
    assert ei.dtype == torch.float64 and ei.tolist() == [1.5, 0.0, 0.0]
    log_ei = log_gaussian_expected_improvement(m, torch.zeros(3), v)
    assert log_ei[0].item() == pytest.approx(math.log(1.5), rel=1e-15)
    assert log_ei[1].item() == log_ei[2].item() == -math.inf
    assert gaussian_expected_improvement(0.0, 1.0, 0.0) == pytest.approx(PHI0, rel=1e-15)
    assert gaussian_expected_improvement(1.0, 2.0, 1.0) == pytest.approx(2 * PHI0, rel=1e-15)
    # std far below the gap: EI = m - v to the last bit; tiny std: z overflows to inf
    assert gaussian_expected_improvement(3.0, 1e-12, 1.0) == 2.0
    assert gaussian_expected_improvement(3.0, 1e-320, 1.0) == 2.0
    assert log_gaussian_expected_improvement(3.0, 1e-320, 1.0) == pytest.approx(math.log(2.0))


def test_ei_types_and_broadcasting() -> None:
    out = gaussian_expected_improvement(np.zeros((3, 1)), np.ones((1, 4)), 0.0)
    assert isinstance(out, np.ndarray) and out.shape == (3, 4) and out.dtype == np.float64
    out32 = gaussian_expected_improvement(np.zeros(3, np.float32), np.float32(1.0), 0.0)
    assert out32.dtype == np.float32
    scalar = log_gaussian_expected_improvement(0.0, 1.0, 0.0)
    assert isinstance(scalar, np.ndarray) and scalar.shape == ()
    t = gaussian_expected_improvement(torch.zeros(2, 1, dtype=torch.float32), 1.0, torch.zeros(5))
    assert isinstance(t, torch.Tensor) and t.shape == (2, 5) and t.dtype == torch.float32
    t64 = gaussian_expected_improvement(torch.zeros(2), torch.ones(2, dtype=torch.float64), 0.0)
    assert t64.dtype == torch.float64  # promoted
    ti = gaussian_expected_improvement(torch.zeros(2, dtype=torch.int64), 1.0, 0.0)
    assert ti.dtype == torch.float64
    mixed = gaussian_expected_improvement(torch.zeros(3), np.ones(3, np.float32), [0.0, 1.0, 2.0])
    assert isinstance(mixed, torch.Tensor) and mixed.shape == (3,)


# ---------------------------------------------------------------------------------------------
# Gaussian EI: laws (hypothesis)
# ---------------------------------------------------------------------------------------------

_reals = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
_stds = st.one_of(st.just(0.0), st.floats(1e-300, 1e-6), st.floats(1e-6, 1e3, allow_nan=False))


def _ei(m: float, s: float, v: float) -> float:
    return float(gaussian_expected_improvement(m, s, v))


def _log_ei(m: float, s: float, v: float) -> float:
    return float(log_gaussian_expected_improvement(m, s, v))


@settings(max_examples=300, deadline=None)
@given(m=_reals, s=_stds, v=_reals)
def test_ei_bounds(m: float, s: float, v: float) -> None:
    ei = _ei(m, s, v)
    gap = max(m - v, 0.0)
    assert ei >= gap  # exact in floating point
    assert ei <= s * PHI0 + gap  # exact in floating point
    if v >= m:
        assert ei <= s * PHI0 <= s  # the paper's "Gaussian EI <= s"


@settings(max_examples=300, deadline=None)
@given(m=_reals, s=_stds, v1=_reals, v2=_reals)
def test_ei_monotone_in_baseline(m: float, s: float, v1: float, v2: float) -> None:
    lo, hi = min(v1, v2), max(v1, v2)
    assert _ei(m, s, lo) >= _ei(m, s, hi) * (1.0 - 1e-13)
    assert _log_ei(m, s, lo) >= _log_ei(m, s, hi) - 1e-13 * max(1.0, abs(_log_ei(m, s, hi)))


@settings(max_examples=300, deadline=None)
@given(m=_reals, s=_stds, v=_reals)
def test_log_ei_is_log_of_ei(m: float, s: float, v: float) -> None:
    ei, log_ei = _ei(m, s, v), _log_ei(m, s, v)
    if ei > 1e-290:
        assert log_ei == pytest.approx(math.log(ei), rel=1e-12, abs=1e-12)
    elif ei == 0.0 and s > 0 and abs(m - v) / s < 1e150:  # beyond, z² overflows: -inf
        assert math.isfinite(log_ei) and log_ei < math.log(1e-290)


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": 2.0}, TypeError, "batch_size"),
        ({"dim": 0}, ValueError, "dim"),
        ({"dim": True}, TypeError, "dim"),
        ({"noise": 0.0}, ValueError, "noise"),
        ({"noise": -1.0}, ValueError, "noise"),
        ({"noise": math.nan}, ValueError, "noise"),
        ({"noise": math.inf}, ValueError, "noise"),
        ({"prior_precision": 0.0}, ValueError, "prior_precision"),
        ({"prior_precision": -2.0}, ValueError, "prior_precision"),
        ({"prior_precision": "1"}, TypeError, "prior_precision"),
        ({"dtype": torch.int64}, TypeError, "dtype"),
        ({"dtype": torch.float16}, TypeError, "dtype"),
        ({"device": "no-such-device"}, ValueError, "device"),
    ],
)
def test_constructor_validation(kwargs: dict, exc: type, name: str) -> None:
    args = {"batch_size": 2, "dim": 3, **kwargs}
    with pytest.raises(exc, match=name):
        LinearGaussianPosterior(args.pop("batch_size"), args.pop("dim"), **args)


def test_method_validation() -> None:
    post = LinearGaussianPosterior(2, 3)
    good_x, good_y = torch.ones(2, 3), torch.zeros(2)
    for bad_x in (torch.ones(3, 3), torch.ones(2, 4), torch.ones(2, 3, 1)):
        with pytest.raises(ValueError, match="features"):
            post.update(bad_x, good_y)
    with pytest.raises(ValueError, match="features"):
        post.update(torch.tensor([[1.0, math.nan, 0.0], [0.0, 0.0, 0.0]]), good_y)
    with pytest.raises(ValueError, match="features"):  # finite in float64, inf in float32
        LinearGaussianPosterior(2, 3, dtype=torch.float32).update(np.full((2, 3), 1e300), good_y)
    with pytest.raises(TypeError, match="features"):
        post.update([["a", "b", "c"], ["d", "e", "f"]], good_y)
    with pytest.raises(TypeError, match="features"):
        post.update(torch.ones(2, 3, dtype=torch.bool), good_y)
    with pytest.raises(ValueError, match="rewards"):
        post.update(good_x, torch.zeros(3))
    with pytest.raises(ValueError, match="rewards"):
        post.update(good_x, [0.0, math.inf])
    assert post.num_updates == 0  # nothing was absorbed
    with pytest.raises(ValueError, match="features"):
        post.predictive(torch.ones(2, 3))
    with pytest.raises(ValueError, match="features"):
        post.predictive(torch.ones(2, 4, 2))
    with pytest.raises(ValueError, match="baseline"):
        post.expected_improvement(torch.ones(2, 4, 3), torch.zeros(3))
    with pytest.raises(ValueError, match="baseline"):
        post.log_expected_improvement(torch.ones(2, 4, 3), torch.tensor([0.0, math.nan]))
    with pytest.raises(TypeError, match="generator"):
        post.sample(np.random.default_rng(0))  # type: ignore[arg-type]


def test_generator_device_validation() -> None:
    # A posterior on the "meta" device needs no accelerator and rejects a CPU generator.
    post = LinearGaussianPosterior(2, 3, device="meta")
    assert post.device.type == "meta"
    with pytest.raises(ValueError, match="generator"):
        post.sample(torch.Generator())


@pytest.mark.parametrize("fn", [gaussian_expected_improvement, log_gaussian_expected_improvement])
def test_ei_validation(fn) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="mean"):
        fn(math.nan, 1.0, 0.0)
    with pytest.raises(ValueError, match="mean"):
        fn(torch.tensor([0.0, math.inf]), 1.0, 0.0)
    with pytest.raises(ValueError, match="std"):
        fn(0.0, -1.0, 0.0)
    with pytest.raises(ValueError, match="std"):
        fn(0.0, torch.tensor([1.0, -1e-30]), 0.0)
    with pytest.raises(ValueError, match="std"):
        fn(0.0, math.inf, 0.0)
    with pytest.raises(ValueError, match="baseline"):
        fn(0.0, 1.0, np.array([0.0, math.nan]))
    with pytest.raises(ValueError, match="broadcast"):
        fn(np.zeros(3), np.ones(4), 0.0)
    with pytest.raises(TypeError, match="mean"):
        fn("a", 1.0, 0.0)
    with pytest.raises(TypeError, match="std"):
        fn(0.0, torch.tensor([1 + 1j]), 0.0)
