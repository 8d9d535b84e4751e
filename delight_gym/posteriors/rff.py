"""Bayesian linear regression on random Fourier features: a GP posterior for continuum bandits.

Features ``φ(x) = √(2/M) cos(Ωx + β)``, ``Ω ~ N(0, I/ℓ²)``, ``β ~ U(0, 2π)`` ("Random Features
for Large-Scale Kernel Machines", Rahimi & Recht) satisfy ``E[φ(x)ᵀφ(y)] = exp(−‖x − y‖²/(2ℓ²))``.
With weights ``w ~ N(0, s²I)`` and rewards ``y = φ(x)ᵀw + N(0, σ²)``, ``f = φᵀw`` approximates a
GP with kernel ``s²·exp(−‖x − y‖²/(2ℓ²))``. The posterior ``N(μ, Λ⁻¹)``, ``Λ = I/s² + ΦᵀΦ/σ²``,
is kept as an upper-triangular ``U`` with ``UUᵀ = Λ``: the precision, never the covariance, is
updated, so it stays positive definite over any number of updates.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from delight_gym._checks import (
    array_bytes,
    check_magnitude,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_seed,
    check_shape,
    check_would_fit,
    magnitude_limit,
)
from delight_gym.posteriors.arguments import check_regression_options, seeded_generator
from delight_gym.posteriors.gaussian import (
    gaussian_expected_improvement,
    log_gaussian_expected_improvement,
)
from delight_gym.posteriors.linear import cholesky_rank_one_update, real_tensor

__all__ = ["RFFPosterior", "RFFSample"]

#: ``n`` rewards per row are absorbed by rank-one updates (``O(nM²)``) while
#: ``REFACTOR_RATIO·n < M``, else by one QR of ``[Uᵀ; Φ/σ]`` (``O((M + n)M²)``).
REFACTOR_RATIO = 8
#: The statistics (``U``, ``Φᵀy/σ²``, ``μ``) are float64 whatever the posterior's dtype.
STATS_DTYPE = torch.float64


def _as_tensor(
    value: Any, name: str, shape: tuple[int | None, ...], device: Any, limit: float
) -> torch.Tensor:
    """``value`` as a finite float64 tensor of ``shape`` (``None``: any size) on ``device``, at
    most ``limit`` in magnitude."""
    out = check_shape(real_tensor(value, name, STATS_DTYPE, device), shape, name)
    check_magnitude(out, name, limit, why="(the posterior's stated input range)")
    return out


def _stacked_factor(factor: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Upper-triangular ``U'`` with positive diagonal and ``U'U'ᵀ = UUᵀ + rowsᵀrows``, from
    ``U`` ``(B, M, M)`` and ``rows`` ``(B, n, M)``."""
    # QR of [Uᵀ; rows] with reversed columns gives a lower factor, flipped back to upper; Λ is
    # never formed, so its condition number is not squared.
    stacked = torch.flip(torch.cat([factor.mT, rows], dim=-2), (-1,))
    r = torch.linalg.qr(stacked, mode="r")[1]
    r = r * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-1)
    return torch.flip(r.mT, (-2, -1))


class RFFSample:
    """Thompson draws of ``f``: one weight vector per row (and sample), to evaluate anywhere.

    Parameters
    ----------
    frequencies, phases : torch.Tensor
        The posterior's ``Ω`` ``(B, M, d)`` (whose dtype the values take) and ``β`` ``(B, M)``.
    weights : torch.Tensor
        ``(B, M)`` (one draw per row) or ``(B, S, M)``; the values are computed in its dtype.
    """

    def __init__(self, frequencies: torch.Tensor, phases: torch.Tensor, weights: torch.Tensor):
        self.frequencies, self.phases, self.weights = frequencies, phases, weights

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``f(x)`` for ``x`` ``(B, m, d)``: ``(B, m)``, or ``(B, S, m)`` for ``S`` draws."""
        phi = _features(x.to(self.weights.dtype), self.frequencies, self.phases)
        if self.weights.ndim == 2:
            out = (phi @ self.weights.unsqueeze(-1)).squeeze(-1)
        else:
            out = self.weights @ phi.mT
        return out.to(self.frequencies.dtype)


def _features(x: torch.Tensor, frequencies: torch.Tensor, phases: torch.Tensor) -> torch.Tensor:
    """``φ(x) = √(2/M) cos(Ωx + β)``: ``(B, m, d)`` to ``(B, m, M)``, in the dtype of ``x``."""
    scale = math.sqrt(2.0 / frequencies.shape[1])
    omega, beta = frequencies.to(x.dtype), phases.to(x.dtype)
    return scale * torch.cos(x @ omega.mT + beta.unsqueeze(-2))


def _rff_bytes(batch_size: int, num_features: int, dim: int, itemsize: int = 8) -> dict[str, int]:
    """Every buffer :class:`RFFPosterior` allocates, in bytes by name."""
    b, m, d = batch_size, num_features, dim
    return {
        "precision_factor": array_bytes(b, m, m),
        "frequencies": array_bytes(b, m, d, itemsize=itemsize),
        "targets, mean and phases": 3 * array_bytes(b, m),
    }


class RFFPosterior:
    """Posteriors of ``B`` independent functions on ``R^d`` (one per seed): Bayesian linear
    regression on ``M`` random Fourier features of an RBF kernel.

    Row ``i`` has its own features and data; inputs are ``(B, m, d)``, finite and at most ``L``
    in magnitude. Answers are in ``dtype``, from float64 statistics.

    Parameters
    ----------
    batch_size, dim, seed : int
        ``B``, ``d``; ``seed`` (or None: fresh entropy) seeds :attr:`generator`.
    num_features : int, default 512
        ``M``; memory ``8·B·M²`` bytes and more, refused up front where it would not fit.
    lengthscale, prior_std, noise : float, default 0.1, 1.0, 0.1
        ``ℓ``, ``s`` (prior std of ``f(x)``) and the known reward noise std ``σ``; each in
        ``[1/L, L]``, ``L = finfo(dtype).max^(1/4)``, and ``s/σ <= 1.2e77``.
    device, dtype : torch.device or str, optional; torch.dtype, default torch.float64
        Where the tensors live; the dtype of ``Ω``, ``β`` and every output.

    Attributes
    ----------
    frequencies, phases : torch.Tensor
        ``Ω`` ``(B, M, d)`` and ``β`` ``(B, M)``, in ``dtype``.
    precision_factor, weight_mean : torch.Tensor
        ``U`` ``(B, M, M)`` (upper, ``UUᵀ = Λ``) and ``μ`` ``(B, M)``, in float64.
    num_observations : int
        Rewards absorbed per row since the last :meth:`reset`.
    """

    def __init__(
        self,
        batch_size: int,
        dim: int,
        *,
        num_features: int = 512,
        lengthscale: float = 0.1,
        prior_std: float = 1.0,
        noise: float = 0.1,
        seed: int | None = None,
        device: Any = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        options = check_regression_options(batch_size, dim, noise, device, dtype)
        self.batch_size, self.dim, self.noise, self.device, self.dtype = options
        self.num_features = check_positive_int(num_features, "num_features")
        self.lengthscale = check_positive_float(lengthscale, "lengthscale")
        self.prior_std = check_positive_float(prior_std, "prior_std")
        #: ``L``: the bound on ``ℓ``, ``s``, ``σ`` (and their inverses) and on the inputs.
        self.limit = magnitude_limit(self.dtype, 4)
        for name in ("lengthscale", "prior_std", "noise"):
            value = getattr(self, name)
            if not 1.0 / self.limit <= value <= self.limit:
                raise ValueError(
                    f"{name} must lie in [{1.0 / self.limit:.3g}, {self.limit:.3g}] in "
                    f"{self.dtype} (the quarter powers of its largest float), got {value}"
                )
        ratio_limit = magnitude_limit(STATS_DTYPE, 4)
        if self.prior_std / self.noise > ratio_limit:
            raise ValueError(
                f"prior_std / noise must be at most {ratio_limit:.3g} (so that the float64 "
                f"statistics stay finite), got {self.prior_std} / {self.noise}"
            )
        self.seed = check_seed(seed)
        itemsize = 8 if self.dtype == torch.float64 else 4
        check_would_fit(
            _rff_bytes(self.batch_size, self.num_features, self.dim, itemsize),
            f"batch_size={batch_size}, dim={dim}, num_features={num_features}",
            self.device,
        )
        self.generator = seeded_generator(self.seed, self.device)
        b, m, d = self.batch_size, self.num_features, self.dim
        gen, dt, dev = self.generator, self.dtype, self.device
        self.frequencies = torch.randn((b, m, d), generator=gen, dtype=dt, device=dev)
        self.frequencies /= self.lengthscale
        self.phases = 2.0 * math.pi * torch.rand((b, m), generator=gen, dtype=dt, device=dev)
        self.reset()

    def reset(self) -> None:
        """Return every row to the prior (the features are kept)."""
        shape = (self.batch_size, self.num_features)
        self.precision_factor = torch.diag_embed(
            torch.full(shape, 1.0 / self.prior_std, dtype=STATS_DTYPE, device=self.device)
        )
        self.weighted_targets = torch.zeros(shape, dtype=STATS_DTYPE, device=self.device)
        self.weight_mean = torch.zeros_like(self.weighted_targets)
        self.num_observations = 0

    def _inputs(self, x: Any, name: str, *, pairs: bool = False) -> torch.Tensor:
        """``x`` checked: a float64 ``(B, m, d)`` tensor on :attr:`device`, refused if its
        features (at least two ``(B, m, M)`` buffers) and, for ``pairs``, ``(B, m, m)`` would
        not fit."""
        out = _as_tensor(x, name, (self.batch_size, None, self.dim), self.device, self.limit)
        b, m = out.shape[:2]
        need = array_bytes(2, b, m, self.num_features) + pairs * array_bytes(b, m, m)
        shape = f"{name} of shape {tuple(out.shape)} with num_features={self.num_features}"
        check_would_fit(need, shape, self.device)
        return out

    def _out(self, value: torch.Tensor) -> torch.Tensor:
        return value.to(self.dtype)

    def features(self, x: Any) -> torch.Tensor:
        """``φ(x)``: ``(B, m, d)`` inputs to ``(B, m, M)`` features."""
        return self._out(_features(self._inputs(x, "x"), self.frequencies, self.phases))

    def update(self, actions: Any, rewards: Any) -> None:
        """Absorb ``n >= 0`` rewards per row, ``rewards[i, k] = f_i(actions[i, k]) + N(0, σ²)``:
        ``actions`` ``(B, n, d)`` and ``rewards`` ``(B, n)``, finite, at most ``L`` in magnitude."""
        x = self._inputs(actions, "actions")
        shape = (self.batch_size, x.shape[1])
        y = _as_tensor(rewards, "rewards", shape, self.device, self.limit)
        n = x.shape[1]
        if n == 0:
            return
        phi = _features(x, self.frequencies, self.phases) / self.noise  # (B, n, M)
        self.weighted_targets = self.weighted_targets + (
            phi.mT @ (y / self.noise).unsqueeze(-1)
        ).squeeze(-1)
        if REFACTOR_RATIO * n < self.num_features:
            for k in range(n):
                self.precision_factor = cholesky_rank_one_update(self.precision_factor, phi[:, k])
        else:
            self.precision_factor = _stacked_factor(self.precision_factor, phi)
        self.weight_mean = self._solve(self.weighted_targets)
        self.num_observations += n

    def _solve(self, b: torch.Tensor) -> torch.Tensor:
        """``Λ⁻¹b`` for ``b`` ``(B, M)`` (two triangular solves)."""
        u = self.precision_factor
        white = torch.linalg.solve_triangular(u, b.unsqueeze(-1), upper=True)
        return torch.linalg.solve_triangular(u.mT, white, upper=False).squeeze(-1)

    def _whitened(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(φ(x)μ, U⁻¹φ(x)ᵀ)``: float64 ``(B, m)`` means and ``(B, M, m)`` whitened features."""
        phi = _features(x, self.frequencies, self.phases)
        mu = (phi @ self.weight_mean.unsqueeze(-1)).squeeze(-1)
        white = torch.linalg.solve_triangular(self.precision_factor, phi.mT, upper=True)
        return mu, white

    def _predictive(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, white = self._whitened(x)
        return mu, torch.linalg.vector_norm(white, dim=-2)

    def predictive(self, x: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior mean and standard deviation of ``f(x)`` (no noise), each ``(B, m)``."""
        mu, sd = self._predictive(self._inputs(x, "x"))
        return self._out(mu), self._out(sd)

    def mean(self, x: Any) -> torch.Tensor:
        """Posterior mean of ``f(x)`` for ``x`` ``(B, m, d)``: ``(B, m)``."""
        phi = _features(self._inputs(x, "x"), self.frequencies, self.phases)
        return self._out((phi @ self.weight_mean.unsqueeze(-1)).squeeze(-1))

    def std(self, x: Any) -> torch.Tensor:
        """Posterior standard deviation of ``f(x)`` for ``x`` ``(B, m, d)``: ``(B, m)``."""
        return self.predictive(x)[1]

    def covariance(self, x: Any) -> torch.Tensor:
        """Posterior covariance of ``f`` at ``x`` ``(B, m, d)``: ``(B, m, m)``."""
        white = self._whitened(self._inputs(x, "x", pairs=True))[1]
        return self._out(white.mT @ white)

    def ucb(self, x: Any, beta: float) -> torch.Tensor:
        """``mean + √beta·std`` (``beta >= 0``, as in GP-UCB), ``(B, m)``; a ``ValueError`` if
        ``beta`` makes it overflow ``dtype``."""
        beta = check_nonnegative_float(beta, "beta")
        mu, sd = self._predictive(self._inputs(x, "x"))
        out = self._out(mu + math.sqrt(beta) * sd)
        # Only float32 overflows: in float64 √beta < 1.4e154 and std <= √2·s <= 1.7e77.
        if not bool(out.isfinite().all()):
            bound = float((((torch.finfo(self.dtype).max - mu) / sd) ** 2).min())
            raise ValueError(f"beta must be at most {bound:.3g} here in {self.dtype}, got {beta}")
        return out

    def _baseline(self, baseline: Any, m: int) -> torch.Tensor:
        """``baseline`` ``(B,)`` or ``(B, m)`` as float64 ``(B, 1)`` or ``(B, m)``."""
        ndim = baseline.ndim if isinstance(baseline, torch.Tensor) else np.ndim(baseline)
        shape: tuple[int | None, ...] = (self.batch_size,) if ndim == 1 else (self.batch_size, m)
        biggest = float(torch.finfo(self.dtype).max)
        out = _as_tensor(baseline, "baseline", shape, self.device, biggest)
        return out.unsqueeze(-1) if out.ndim == 1 else out

    def expected_improvement(self, x: Any, baseline: Any) -> torch.Tensor:
        """``E[(f(x) − baseline)^+]``, ``(B, m)``, for a ``(B,)`` or ``(B, m)`` baseline."""
        mu, sd = self._predictive(self._inputs(x, "x"))
        base = self._baseline(baseline, mu.shape[1])
        return self._out(gaussian_expected_improvement(mu, sd, base))

    def log_expected_improvement(self, x: Any, baseline: Any) -> torch.Tensor:
        """``log E[(f(x) − baseline)^+]``, ``(B, m)``, finite where the EI underflows (at
        least ``dtype``'s lowest float)."""
        mu, sd = self._predictive(self._inputs(x, "x"))
        base = self._baseline(baseline, mu.shape[1])
        log_ei = log_gaussian_expected_improvement(mu, sd, base)
        return self._out(log_ei.clamp_min(torch.finfo(self.dtype).min))

    def _weights(self, num_samples: int | None) -> torch.Tensor:
        """float64 draws ``w = μ + U⁻ᵀξ``, ``(B, M)``, or ``(B, S, M)`` for ``S`` samples."""
        s = 1 if num_samples is None else check_nonnegative_int(num_samples, "num_samples")
        # ξ, U⁻ᵀξ and the draws: three (B, M, S) float64 buffers.
        need = array_bytes(3, self.batch_size, self.num_features, s)
        check_would_fit(need, f"num_samples={num_samples}", self.device)
        xi = torch.randn(
            (self.batch_size, self.num_features, s),
            generator=self.generator,
            dtype=STATS_DTYPE,
            device=self.device,
        )
        # U⁻ᵀξ has covariance U⁻ᵀU⁻¹ = Λ⁻¹, the posterior's.
        offset = torch.linalg.solve_triangular(self.precision_factor.mT, xi, upper=False)
        draws = self.weight_mean.unsqueeze(-2) + offset.mT
        return draws[:, 0] if num_samples is None else draws

    def sample_weights(self, num_samples: int | None = None) -> torch.Tensor:
        """Draws ``w = μ + U⁻ᵀξ`` from :attr:`generator`: ``(B, M)``, or ``(B, S, M)`` for
        ``num_samples = S``, in the posterior's ``dtype``."""
        return self._out(self._weights(num_samples))

    def sample_function(self, num_samples: int | None = None) -> RFFSample:
        """Thompson draws of ``f`` to evaluate at any inputs (float64 draws, values in
        ``dtype``)."""
        return RFFSample(self.frequencies, self.phases, self._weights(num_samples))

    def thompson(self, x: Any) -> torch.Tensor:
        """One draw of ``f`` per row, evaluated at ``x`` ``(B, m, d)``: ``(B, m)``."""
        return self.sample_function()(self._inputs(x, "x"))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, dim={self.dim}, "
            f"num_features={self.num_features}, lengthscale={self.lengthscale}, "
            f"prior_std={self.prior_std}, noise={self.noise}, seed={self.seed}, "
            f"device={self.device}, dtype={self.dtype})"
        )
