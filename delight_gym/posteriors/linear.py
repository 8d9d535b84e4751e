"""Bayesian linear regression posteriors, batched over seeds, on any torch device.

Model (paper §3.2): ``θ ~ N(0, I/η)``, ``y = φᵀθ + N(0, σ²)`` with known ``σ``; the
posterior ``N(μ, Σ)`` has precision ``Λ = ηI + ΦᵀΦ/σ²`` and ``μ = Σ Φᵀy/σ²``.
:class:`LinearGaussianPosterior` keeps an upper-triangular ``U`` with ``Λ = U Uᵀ`` and
``b = Φᵀy/σ²``, and applies each observation as a rank-one update of ``U`` in ``O(D²)``.
:class:`LinearGaussianAdapter` makes it a value posterior for DE's wrapper.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from delight_gym._checks import (
    check_all_finite,
    check_device,
    check_finite_array,
    check_instance,
    check_positive_float,
    check_shape,
)
from delight_gym.de.posterior import PosteriorValues, check_baseline, host_baseline
from delight_gym.posteriors.adapters import BanditAdapter, split_values, to_numpy
from delight_gym.posteriors.arguments import check_regression_options
from delight_gym.posteriors.gaussian import gaussian_ei_unchecked

__all__ = [
    "LinearGaussianAdapter",
    "LinearGaussianPosterior",
    "cholesky_rank_one_update",
    "real_tensor",
]


def real_tensor(value: Any, name: str, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """``value`` (a tensor, or array_like of numbers) as a finite tensor of ``dtype`` on
    ``device``, detached; a ``TypeError`` naming ``name`` for a complex or bool tensor or a
    complex array (numpy would drop its imaginary part), a ``ValueError`` for NaN or inf."""
    if isinstance(value, torch.Tensor):
        if value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"{name} must be a real tensor, got dtype {value.dtype}")
        out = value.detach().to(device=device, dtype=dtype)
    elif hasattr(value, "dtype") and np.iscomplexobj(value):
        raise TypeError(f"{name} must be real, got dtype {value.dtype}")
    else:
        out = torch.as_tensor(check_finite_array(value, name), dtype=dtype, device=device)
    check_all_finite(out, name, where=f" in {dtype}")
    return out


def cholesky_rank_one_update(factor: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Upper-triangular ``U'`` with positive diagonal and ``U'U'ᵀ = U Uᵀ + x xᵀ``, from ``U``
    ``(B, D, D)`` (same) and ``x`` ``(B, D)``, in ``O(D²)`` per row; not validated."""
    # U' = U M with M Mᵀ = I + p pᵀ, p = U⁻¹x: method C1 of Gill, Golub, Murray & Saunders,
    # "Methods for modifying matrix factorizations", in reversed order.
    p = torch.linalg.solve_triangular(factor, x.unsqueeze(-1), upper=True).squeeze(-1)
    # s_j = 1 + Σ_{i >= j} p_i² and s_{j+1} (with s_D = 1); (B, D) tensors, cheap to flip.
    s = 1.0 + torch.flip(torch.cumsum(torch.flip(p * p, (-1,)), dim=-1), (-1,))
    s_next = torch.cat([s[..., 1:], torch.ones_like(s[..., :1])], dim=-1)
    # Column j of U' is √(s_{j+1}/s_j)·U[:, j] + p_j/√(s_j s_{j+1})·Σ_{i<=j} U[:, i] p_i.
    inv_sqrt_s = torch.rsqrt(s)
    keep = torch.sqrt(s_next) * inv_sqrt_s
    weight = p * inv_sqrt_s * torch.rsqrt(s_next)
    partial = torch.cumsum(factor * p.unsqueeze(-2), dim=-1)  # [r, j] = Σ_{i<=j} U[r, i] p_i
    return torch.addcmul(factor * keep.unsqueeze(-2), partial, weight.unsqueeze(-2))


class LinearGaussianPosterior:
    """Gaussian posteriors of a batch of Bayesian linear regressions (one per seed).

    Row ``i``: prior ``θ_i ~ N(0, I/prior_precision)``, observations ``y = φᵀθ_i + N(0, σ²)``.

    Parameters
    ----------
    batch_size, dim : int
        Independent posteriors ``B`` and feature dimension ``D``.
    noise : float, default 1.0
        Known observation noise standard deviation ``σ > 0``.
    prior_precision : float, default 1.0
        ``η > 0``: prior covariance ``I/η``.
    device : torch.device or str, optional
    dtype : torch.dtype, default torch.float64

    Attributes
    ----------
    num_updates : int
        Observations absorbed per row since the last :meth:`reset`.
    precision_factor, weighted_targets : torch.Tensor
        Upper-triangular ``U`` ``(B, D, D)``, ``U Uᵀ = ηI + ΦᵀΦ/σ²``, and ``b = Φᵀy/σ²``
        ``(B, D)`` (read-only by convention).
    """

    def __init__(
        self,
        batch_size: int,
        dim: int,
        *,
        noise: float = 1.0,
        prior_precision: float = 1.0,
        device: Any = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        options = check_regression_options(batch_size, dim, noise, device, dtype)
        self.batch_size, self.dim, self.noise, self.device, self.dtype = options
        self.prior_precision = check_positive_float(prior_precision, "prior_precision")
        self.precision_factor = torch.empty(
            (self.batch_size, self.dim, self.dim), dtype=dtype, device=self.device
        )
        self.weighted_targets = torch.empty(
            (self.batch_size, self.dim), dtype=dtype, device=self.device
        )
        self.num_updates = 0
        self.reset()

    def reset(self) -> None:
        """Return every row to the prior ``N(0, I/η)`` (in place)."""
        self.precision_factor.zero_()
        self.precision_factor.diagonal(dim1=-2, dim2=-1).fill_(math.sqrt(self.prior_precision))
        self.weighted_targets.zero_()
        self.num_updates = 0

    def update(self, features: Any, rewards: Any) -> None:
        """Absorb one observation per row, ``rewards[i] = features[i]ᵀθ_i + noise``, for finite
        ``features`` ``(B, D)`` and ``rewards`` ``(B,)``; ``ValueError``/``TypeError`` naming
        the argument."""
        phi = self._checked(features, "features", (self.batch_size, self.dim))
        y = self._checked(rewards, "rewards", (self.batch_size,))
        x = phi / self.noise
        self.precision_factor = cholesky_rank_one_update(self.precision_factor, x)
        self.weighted_targets = self.weighted_targets + x * (y / self.noise).unsqueeze(-1)
        self.num_updates += 1

    def mean(self) -> torch.Tensor:
        """Posterior means ``μ = Λ⁻¹ b``, shape ``(B, D)`` (two triangular solves).

        Examples
        --------
        >>> post = LinearGaussianPosterior(2, 3)
        >>> post.update(torch.eye(3)[:2], torch.tensor([1.0, -1.0]))
        >>> post.mean()
        tensor([[ 0.5000,  0.0000,  0.0000],
                [ 0.0000, -0.5000,  0.0000]], dtype=torch.float64)
        """
        white = torch.linalg.solve_triangular(
            self.precision_factor, self.weighted_targets.unsqueeze(-1), upper=True
        )
        return torch.linalg.solve_triangular(self.precision_factor.mT, white, upper=False).squeeze(
            -1
        )

    def covariance(self) -> torch.Tensor:
        """Posterior covariances ``Σ = Λ⁻¹``, shape ``(B, D, D)``, symmetric (``O(D³)``)."""
        eye = torch.eye(self.dim, dtype=self.dtype, device=self.device)
        inv = torch.linalg.solve_triangular(self.precision_factor, eye, upper=True)  # U⁻¹
        cov = inv.mT @ inv
        return 0.5 * (cov + cov.mT)

    def _checked(self, value: Any, name: str, shape: tuple[int | None, ...]) -> torch.Tensor:
        """``value`` as a finite tensor of ``shape`` (``None``: any size, shown as ``K``)."""
        return check_shape(real_tensor(value, name, self.dtype, self.device), shape, name, "K")

    def predictive(self, features: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior mean and standard deviation ``‖U⁻¹φ(a)‖``, each ``(B, K)``, of
        ``f(a) = φ(a)ᵀθ`` (no observation noise) for ``(B, K, D)`` features."""
        phi = self._checked(features, "features", (self.batch_size, None, self.dim))
        return self._predictive(phi)

    def _predictive(self, phi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`predictive` of checked features."""
        mu = phi @ self.mean().unsqueeze(-1)
        white = torch.linalg.solve_triangular(self.precision_factor, phi.mT, upper=True)
        return mu.squeeze(-1), torch.linalg.vector_norm(white, dim=-2)

    def sample(self, generator: torch.Generator) -> torch.Tensor:
        """One Thompson draw per row, ``θ = μ + U⁻ᵀ ξ`` with ``ξ ~ N(0, I)`` from ``generator``
        (on the posterior's device): ``(B, D)``."""
        check_instance(generator, torch.Generator, "generator", "a torch.Generator")
        if check_device(generator.device, "generator.device") != self.device:
            raise ValueError(
                f"generator must be on the posterior's device {self.device}, got {generator.device}"
            )
        xi = torch.randn(
            (self.batch_size, self.dim, 1),
            generator=generator,
            dtype=self.dtype,
            device=self.device,
        )
        offset = torch.linalg.solve_triangular(self.precision_factor.mT, xi, upper=False)
        return self.mean() + offset.squeeze(-1)

    def expected_improvement(self, features: Any, baseline: Any) -> torch.Tensor:
        """``E[(f(a) - baseline_i)^+]`` of every action, ``(B, K)``, for ``(B, K, D)``
        features and a ``(B,)`` baseline."""
        return self._ei(features, baseline, log=False)

    def log_expected_improvement(self, features: Any, baseline: Any) -> torch.Tensor:
        """``log E[(f(a) - baseline_i)^+]``, ``(B, K)``; finite where EI underflows."""
        return self._ei(features, baseline, log=True)

    def _ei(self, features: Any, baseline: Any, log: bool) -> Any:
        base = self._checked(baseline, "baseline", (self.batch_size,))
        mu, sd = self.predictive(features)
        return gaussian_ei_unchecked(mu, sd, base.unsqueeze(-1), log=log)

    def as_value_posterior(
        self, *, num_actions: int | None = None, observation_space: Any = None
    ) -> Any:
        """A :class:`LinearGaussianAdapter` whose observations are the ``(A, D)`` arm features
        (as ``LinearBandit-v0``'s); ``TypeError`` if ``num_actions`` is ``None``."""
        if num_actions is None:
            raise TypeError(
                "a LinearGaussianPosterior needs the number of actions: pass action_space"
            )
        return LinearGaussianAdapter(self, num_actions)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, dim={self.dim}, "
            f"noise={self.noise}, prior_precision={self.prior_precision}, "
            f"device={self.device}, dtype={self.dtype})"
        )


class LinearGaussianAdapter(BanditAdapter):
    """A :class:`~delight_gym.posteriors.LinearGaussianPosterior` as a value posterior.

    ``f(s, a) = φ(s, a)ᵀθ``; by default the observation itself is the ``(A, D)`` feature
    matrix (as in ``LinearBandit-v0``). For one-step problems: a transition updates ``θ`` with
    ``(φ(s, a), r)`` and does not bootstrap. EI is Gaussian EI of the predictive.

    Parameters
    ----------
    posterior : LinearGaussianPosterior
    num_actions : int
    features : callable, optional
        ``observations (n, ...) -> (n, A, D)`` array or tensor.
    """

    def __init__(
        self,
        posterior: Any,
        num_actions: int,
        features: Callable[[np.ndarray], Any] | None = None,
    ) -> None:
        super().__init__(posterior, LinearGaussianPosterior, num_actions)
        self.features = features

    def _phi(self, observations: Any) -> Any:
        raw = observations if self.features is None else self.features(observations)
        expected = (len(observations), self.num_actions, self.posterior.dim)
        return self.posterior._checked(raw, "features", expected)

    def _predictive(self, observations: Any) -> tuple[Any, Any]:
        """Predictive mean and standard deviation, ``(n, A)`` tensors on the device."""
        n = len(observations)
        self.row_map(n)
        phi = self._phi(observations)
        # One shared posterior row: the n observations' arms become one row of n·A arms.
        if self.posterior.batch_size == 1 and n > 1:
            mu, sd = self.posterior._predictive(phi.reshape(1, -1, self.posterior.dim))
            return mu.reshape(n, -1), sd.reshape(n, -1)
        return self.posterior._predictive(phi)

    def mean(self, observations: Any) -> np.ndarray:
        """Predictive means ``φ(s, a)ᵀμ``, ``(n, A)``."""
        return to_numpy(self._predictive(observations)[0])

    def expected_improvement(self, observations: Any, baseline: np.ndarray) -> np.ndarray:
        """Gaussian EI of ``φ(s, a)ᵀθ`` over ``baseline`` (``(n,)``), ``(n, A)``."""
        mu, sd = self._predictive(observations)
        base = check_baseline(baseline, mu.shape[0])
        ei = gaussian_ei_unchecked(to_numpy(mu), to_numpy(sd), base[:, None])
        return np.asarray(ei, dtype=np.float64)

    def evaluate(
        self, observations: Any, host_probs: np.ndarray, baseline: str = "host"
    ) -> PosteriorValues:
        """Means, baseline and Gaussian EI, on the posterior's device, copied to the host once."""
        mu, sd = self._predictive(observations)
        probs = self.posterior_tensor(host_probs, mu.shape, "host_probs")
        base = host_baseline(mu, probs, baseline)
        ei = gaussian_ei_unchecked(mu, sd, base[:, None])
        return split_values(mu, base, ei)

    def absorb(self, observations: Any, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Regress each reward on the played action's features (rows in order when shared)."""
        phi = self._phi(observations)
        chosen = phi[np.arange(len(observations)), actions]  # (n, D)
        self.absorb_rows(self.posterior.update, chosen, rewards)
