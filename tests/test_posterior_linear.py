"""Tests of ``delight_gym.posteriors.linear``: the incremental linear-Gaussian posterior (its
Gaussian EI maths is tested in ``tests/test_posterior_gaussian.py``).

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

import numpy as np
import pytest
import torch

from delight_gym.posteriors.gaussian import (
    gaussian_expected_improvement,
    log_gaussian_expected_improvement,
)
from delight_gym.posteriors.linear import LinearGaussianPosterior, cholesky_rank_one_update

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
