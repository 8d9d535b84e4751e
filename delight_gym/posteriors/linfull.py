"""Bayesian linear regression with unknown noise (Normal-Inverse-Gamma), batched over seeds.

The Deep Bayesian Bandits Showdown's LinFullPost (Riquelme, Tucker & Snoek 2018): for each of
``G`` independent models, reward ``y = x̃ᵀw + N(0, σ²)`` with ``x̃ = [x, 1]`` (or ``x``),
``σ² ~ IG(a0, b0)`` and ``w | σ² ~ N(0, σ²/λ · I)``. After ``n`` observations ``(X̃, y)``:
``Λ = λI + X̃ᵀX̃``, ``μ = Λ⁻¹X̃ᵀy``, ``a = a0 + n/2``, ``b = b0 + ½(yᵀy − μᵀΛμ)``. The mean
reward ``f = x̃ᵀw`` of an input is then Student-t with ``2a`` degrees of freedom, location
``x̃ᵀμ`` and scale ``√(b/a · x̃ᵀΛ⁻¹x̃)``. A Thompson draw is ``σ² ~ IG(a, b)``,
``w ~ N(μ, σ²Λ⁻¹)``. After each update the touched models are refactorised from the exact sums.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from delight_gym._checks import check_flag, check_positive_float, check_would_fit, magnitude_limit
from delight_gym.posteriors.arguments import check_placement
from delight_gym.posteriors.batched_base import (
    BatchedBanditPosterior,
    check_baseline,
    check_generators,
)
from delight_gym.posteriors.student_t import student_t_ei_unchecked

__all__ = [
    "DEFAULT_A0",
    "DEFAULT_B0",
    "DEFAULT_LAMBDA_PRIOR",
    "LinFullPosterior",
    "RowPredictive",
    "StudentTPredictive",
    "check_prior_shape",
    "check_rows",
]

#: The showdown's LinFullPost and NeuralLinear prior: ``λ_prior``, ``a0``, ``b0``.
DEFAULT_LAMBDA_PRIOR = 0.25
DEFAULT_A0 = 6.0
DEFAULT_B0 = 6.0
#: LinFullPosterior's statistics, in the order :meth:`LinFullPosterior._commit` stores them.
_STATS = ("gram", "moment", "sum_squares", "count", "loc", "whitener", "shape", "rate")


def check_prior_shape(value: Any, name: str = "a0") -> float:
    """``value`` as a finite float ``> 0.5`` (the prior predictive's ``2·a0`` degrees of
    freedom must exceed 1 for its mean and EI to exist); ``ValueError`` naming ``name``."""
    a0 = check_positive_float(value, name)
    if a0 <= 0.5:
        raise ValueError(
            f"{name} must be > 0.5 (the prior predictive is Student-t with 2·{name} degrees of "
            f"freedom, and its mean and EI exist only above 1), got {value}"
        )
    return a0


def check_rows(rows: Any, batch_size: int) -> torch.Tensor | None:
    """``rows`` as an int64 tensor ``(r,)`` in ``[0, batch_size)`` (``None``: every row);
    ``ValueError``/``TypeError`` naming ``rows`` otherwise (negative indices do not wrap)."""
    if rows is None:
        return None
    idx = rows if isinstance(rows, torch.Tensor) else torch.as_tensor(np.asarray(rows))
    if idx.dtype == torch.bool or idx.is_floating_point() or idx.is_complex():
        raise TypeError(f"rows must be integer row indices, got dtype {idx.dtype}")
    if idx.ndim != 1:
        raise ValueError(f"rows must be 1-D, got shape {tuple(idx.shape)}")
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= batch_size):
        bad = idx[(idx < 0) | (idx >= batch_size)][:10].tolist()
        raise ValueError(f"rows must lie in [0, {batch_size - 1}] (the B rows), got {bad}")
    return idx.long()


class RowPredictive(abc.ABC):
    """A predictive of the mean reward of ``K`` actions in ``B`` rows (``mean`` ``(B, K)``):
    its expected improvement, checked here and computed by each subclass."""

    mean: torch.Tensor

    def expected_improvement(
        self, baseline: torch.Tensor, rows: torch.Tensor | None = None, *, at_least: float = 0.0
    ) -> torch.Tensor:
        """``E[(f(a) − baseline)^+]``, ``(r, K)``, on ``rows`` (int64 ``(r,)``; all rows when
        ``None``), for a finite baseline of shape ``()``, ``(r,)`` or ``(r, 1)``.

        With ``at_least > 0`` a subclass may return 0, unevaluated, where the EI is provably
        below it (:class:`StudentTPredictive` does; the ensemble's ignores it).
        """
        rows = check_rows(rows, self.mean.shape[0])
        r = self.mean.shape[0] if rows is None else rows.shape[0]
        v = check_baseline(baseline, r, self.mean.dtype, self.mean.device)
        return self._expected_improvement(v, rows, at_least)

    @abc.abstractmethod
    def _expected_improvement(
        self, v: torch.Tensor, rows: torch.Tensor | None, at_least: float
    ) -> torch.Tensor:
        """:meth:`expected_improvement` of a ``(r, 1)`` baseline and int64 ``rows``."""


class StudentTPredictive(RowPredictive):
    """The Student-t posterior of the mean reward of ``K`` actions in ``B`` rows: its location,
    and its scale and degrees of freedom computed on demand for the rows asked.

    ``mean`` is the ``(B, K)`` location; ``spread(rows) -> (scale, dof)``, each ``(r, K)``,
    for int64 ``rows`` ``(r,)`` (all rows for ``None``).
    """

    def __init__(
        self,
        mean: torch.Tensor,
        spread: Callable[[torch.Tensor | None], tuple[torch.Tensor, torch.Tensor]],
    ) -> None:
        self.mean = mean
        self.spread = spread

    @property
    def scale(self) -> torch.Tensor:
        """``(B, K)`` Student-t scale."""
        return self.spread(None)[0]

    @property
    def dof(self) -> torch.Tensor:
        """``(B, K)`` degrees of freedom ``2a``."""
        return self.spread(None)[1]

    def _expected_improvement(
        self, v: torch.Tensor, rows: torch.Tensor | None, at_least: float
    ) -> torch.Tensor:
        m = self.mean if rows is None else self.mean[rows.to(self.mean.device)]
        s, nu = self.spread(rows)
        if at_least <= 0:
            return student_t_ei_unchecked(m, s, nu, v)
        # (t − u)^+ ≤ t²/(4u) gives EI ≤ s²ν/(4(ν − 2)(v − m)) for m < v and ν > 2.
        gap = v - m
        bound = s * s * nu / (4.0 * (nu - 2.0).clamp_min(0.0) * gap)
        keep = ~((gap > 0) & (nu > 2) & (bound < at_least))
        out = torch.zeros_like(m)
        if bool(keep.any()):
            vv = v.expand_as(m)
            out[keep] = student_t_ei_unchecked(m[keep], s[keep], nu[keep], vv[keep])
        return out


class LinFullPosterior(BatchedBanditPosterior):
    """``G`` Normal-Inverse-Gamma linear regressions in each of ``B`` rows (seeds).

    Parameters
    ----------
    batch_size, num_groups, input_dim : int
        ``B`` rows; ``G`` models per row, one per arm (``G = K``) or shared (``G = 1``); ``d``.
    lambda_prior : float, default 0.25
        ``λ > 0``: prior ``w | σ² ~ N(0, σ²/λ·I)``.
    a0, b0 : float, default 6.0
        Inverse-Gamma prior of the noise variance.
    intercept : bool, default True
        Regress on ``[x, 1]`` (``D = d + 1``) or on ``x`` (``D = d``).
    device : torch.device or str, optional
    dtype : torch.dtype, default torch.float64

    Attributes
    ----------
    gram, moment, sum_squares, count : torch.Tensor
        ``Λ = λI + X̃ᵀX̃`` ``(B, G, D, D)``, ``X̃ᵀy`` ``(B, G, D)``, ``yᵀy`` and ``n`` ``(B, G)``.
    loc, whitener : torch.Tensor
        ``μ`` ``(B, G, D)``; lower triangular ``W = L⁻¹`` with ``Λ = LLᵀ`` ``(B, G, D, D)``.
    shape, rate : torch.Tensor
        ``(B, G)``: ``a`` and ``b``.
    """

    def __init__(
        self,
        batch_size: int,
        num_groups: int,
        input_dim: int,
        *,
        lambda_prior: float = DEFAULT_LAMBDA_PRIOR,
        a0: float = DEFAULT_A0,
        b0: float = DEFAULT_B0,
        intercept: bool = True,
        device: Any = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        self._set_shape(batch_size, num_groups, input_dim)
        self.lambda_prior = check_positive_float(lambda_prior, "lambda_prior")
        self.a0 = check_prior_shape(a0)
        self.b0 = check_positive_float(b0, "b0")
        self.intercept = check_flag(intercept, "intercept")
        self.dim = self.input_dim + int(intercept)
        self.device, self.dtype = check_placement(device, dtype)
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        check_would_fit(
            self.batch_size * self.num_groups * (2 * self.dim**2 + 2 * self.dim + 4) * itemsize,
            f"num_groups={self.num_groups} x input_dim={self.input_dim} (x batch_size="
            f"{self.batch_size}: two D x D matrices per model)",
            self.device,
        )
        self.reset()

    def reset(self) -> None:
        """Return every model to the prior."""
        b, g, d = self.batch_size, self.num_groups, self.dim
        kw: dict[str, Any] = {"dtype": self.dtype, "device": self.device}
        eye = torch.eye(d, **kw)
        self.gram = (self.lambda_prior * eye).expand(b, g, d, d).clone()
        self.moment = torch.zeros(b, g, d, **kw)
        self.sum_squares = torch.zeros(b, g, **kw)
        self.count = torch.zeros(b, g, **kw)
        self.loc = torch.zeros(b, g, d, **kw)
        self.whitener = (eye / self.lambda_prior**0.5).expand(b, g, d, d).clone()
        self.shape = torch.full((b, g), self.a0, **kw)
        self.rate = torch.full((b, g), self.b0, **kw)

    def design(self, inputs: torch.Tensor) -> torch.Tensor:
        """``x̃``: ``inputs`` ``(..., d)`` with a trailing 1 if ``intercept``: ``(..., D)``."""
        if not self.intercept:
            return inputs
        return torch.cat([inputs, torch.ones_like(inputs[..., :1])], dim=-1)

    def update(self, inputs: Any, groups: Any, targets: Any) -> None:
        """Absorb observations: row ``i`` saw ``targets[i]`` for ``inputs[i]`` in model
        ``groups[i]``; ``(B, d)``, int ``(B,)`` in ``[0, G)`` and finite ``(B,)`` tensors (one
        per row) or ``(B, n, d)``, ``(B, n)``, ``(B, n)``."""
        x, g, y = self.check_observations(inputs, groups, targets)
        self._update(x, g, y)

    def _update(self, x: torch.Tensor, g: torch.Tensor, y: torch.Tensor) -> None:
        """:meth:`update` of checked ``(B, n, d)``, int64 ``(B, n)``, ``(B, n)`` tensors."""
        b, n = y.shape
        if n == 0:
            return
        z = self.design(x)
        if n == 1:  # a direct update of each row's one touched model
            rows = torch.arange(b, device=self.device)
            idx = (rows, g[:, 0])
            zf = z[:, 0]
            stats = (
                self.gram[idx] + zf[:, :, None] * zf[:, None, :],
                self.moment[idx] + zf * y,
                self.sum_squares[idx] + y[:, 0] ** 2,
                self.count[idx] + 1.0,
            )
            self._commit(idx, stats)
            return
        self._commit((slice(None), slice(None)), self._accumulate_grouped(z, g, y))

    def _magnitude_limit(self) -> tuple[float, str]:
        """``finfo(dtype).max ** ½``: the squares of inputs and targets must stay finite."""
        return magnitude_limit(self.dtype, 2), f"(its square must stay finite in {self.dtype})"

    def _accumulate_grouped(
        self, z: torch.Tensor, g: torch.Tensor, y: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        """The sums after many observations (new tensors): each row's designs sorted by model,
        then every model's block summed by one matrix product (no ``n`` outer products)."""
        gram, moment = self.gram.clone(), self.moment.clone()
        sum_squares, count = self.sum_squares.clone(), self.count.clone()
        order = torch.argsort(g, dim=1, stable=True)
        counts = torch.zeros(g.shape[0], self.num_groups, dtype=torch.int64, device=self.device)
        counts.scatter_add_(1, g, torch.ones_like(g))
        for i, row_counts in enumerate(counts.tolist()):
            zs, ys = z[i].index_select(0, order[i]), y[i].index_select(0, order[i])
            start = 0
            for k, c in enumerate(row_counts):
                if c == 0:
                    continue
                zk, yk = zs[start : start + c], ys[start : start + c]
                gram[i, k] += zk.mT @ zk
                moment[i, k] += zk.mT @ yk
                sum_squares[i, k] += yk @ yk
                count[i, k] += c
                start += c
        return gram, moment, sum_squares, count

    def refit(self, inputs: Any, groups: Any, targets: Any) -> None:
        """:meth:`reset`, then :meth:`update` with all ``(B, n, d)`` observations (a refused
        update leaves the posterior as it was)."""
        x, g, y = self.check_observations(inputs, groups, targets)
        self._refit(x, g, y)

    def _refit(self, x: torch.Tensor, g: torch.Tensor, y: torch.Tensor) -> None:
        """:meth:`refit` of checked tensors, as for :meth:`_update`."""
        state = {name: getattr(self, name) for name in _STATS}  # reset makes new tensors
        self.reset()
        try:
            self._update(x, g, y)
        except ValueError:
            for name, value in state.items():
                setattr(self, name, value)
            raise

    def _commit(self, idx: Any, stats: tuple[torch.Tensor, ...]) -> None:
        """Refactorise the models at ``idx`` from their new sums and store both, unless
        something would be non-finite (then a ``ValueError``, and nothing changes)."""
        gram, moment, sum_squares, count = stats
        why = f"would overflow {self.dtype}; the posterior is unchanged"
        for value, what in (
            (gram, "inputs: the Gram matrix X̃ᵀX̃"),
            (sum_squares, "targets: the sum of squared rewards yᵀy"),
            (moment, "inputs and targets: X̃ᵀy"),
        ):
            if not bool(torch.isfinite(value).all()):
                raise ValueError(f"{what} {why}")
        chol, info = torch.linalg.cholesky_ex(gram)
        eye = torch.eye(self.dim, dtype=self.dtype, device=self.device)
        white = torch.linalg.solve_triangular(chol, eye.expand_as(gram), upper=False)
        proj = (white @ moment[..., None])[..., 0]  # W X̃ᵀy
        loc = (white.mT @ proj[..., None])[..., 0]
        shape = self.a0 + 0.5 * count
        # b − b0 = ½ min_w (‖y − X̃w‖² + λ‖w‖²) >= 0; rounding may not cancel to it exactly.
        rate = (self.b0 + 0.5 * (sum_squares - (proj * proj).sum(-1))).clamp_min(self.b0)
        solved = (white, loc, rate)
        if bool((info != 0).any()) or not all(bool(torch.isfinite(t).all()) for t in solved):
            raise ValueError(f"inputs: the posterior's factorisation {why}")
        for name, value in zip(_STATS, (*stats, loc, white, shape, rate), strict=True):
            getattr(self, name)[idx] = value

    def _values(self, z: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """``x̃_aᵀw_{g(a)}`` of every arm, ``(B, K)``, for designs ``z`` ``(B, K, D)`` of checked
        inputs (``G`` is 1 or ``K``): arm ``k`` uses model ``k`` if ``G = K``, else model 0."""
        if self.num_groups != 1:
            return (z * weights).sum(-1)
        return (z @ weights[:, 0, :, None])[..., 0]

    def predictive(self, inputs: Any) -> StudentTPredictive:
        """The Student-t posterior of the mean reward ``f(a) = x̃_aᵀw_{g(a)}`` of every arm, for
        ``(B, K, d)`` inputs (arm ``a`` uses model ``a`` when ``G = K``, else model 0)."""
        return self._predictive(self.check_inputs(inputs))

    def _predictive(self, x: torch.Tensor) -> StudentTPredictive:
        z = self.design(x)
        mean = self._values(z, self.loc)
        per_arm = self.num_groups != 1  # the inputs were checked: G is 1 or K

        def spread(rows: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
            idx: Any = slice(None) if rows is None else rows
            zr, shape, rate = z[idx], self.shape[idx], self.rate[idx]
            if per_arm:
                white = torch.einsum("bkij,bkj->bki", self.whitener[idx], zr)
            else:
                white = zr @ self.whitener[idx, 0].mT
                shape, rate = shape[:, :1], rate[:, :1]
            var = (white * white).sum(-1) * (rate / shape)
            if not bool(torch.isfinite(var).all()):
                raise ValueError(f"inputs: the predictive variance would overflow {self.dtype}")
            return var.sqrt(), (2.0 * shape).expand_as(var)

        if not bool(torch.isfinite(mean).all()):
            raise ValueError(f"inputs: the posterior mean would overflow {self.dtype}")
        return StudentTPredictive(mean, spread)

    def mean(self, inputs: Any) -> torch.Tensor:
        """Posterior mean reward of every arm, ``(B, K)``."""
        return self._mean(self.check_inputs(inputs))

    def _mean(self, x: torch.Tensor) -> torch.Tensor:
        return self._values(self.design(x), self.loc)

    def sample_weights(self, generators: Sequence[torch.Generator]) -> torch.Tensor:
        """One posterior draw per model, ``σ² ~ IG(a, b)``, ``w ~ N(μ, σ²Λ⁻¹)``, row ``i``
        from ``generators[i]`` (``B`` CPU generators): ``(B, G, D)``."""
        return self._sample_weights(check_generators(generators, self.batch_size))

    def _sample_weights(self, gens: Sequence[torch.Generator]) -> torch.Tensor:
        shape = self.shape.to("cpu", torch.float64)
        gammas, normals = [], []
        for i, gen in enumerate(gens):
            # 1/σ² ~ Gamma(a, 1)/b; drawn in float64 on the CPU, per row's generator.
            gammas.append(torch._standard_gamma(shape[i], generator=gen))
            normals.append(
                torch.randn((self.num_groups, self.dim), generator=gen, dtype=torch.float64)
            )
        gamma = torch.stack(gammas).to(self.device, self.dtype)
        xi = torch.stack(normals).to(self.device, self.dtype)
        sigma = (self.rate / gamma).sqrt()
        return self.loc + sigma[..., None] * (self.whitener.mT @ xi[..., None])[..., 0]

    def thompson_values(self, inputs: Any, generators: Sequence[torch.Generator]) -> torch.Tensor:
        """Every arm's mean reward under one posterior draw (:meth:`sample_weights`): ``(B, K)``."""
        x = self.check_inputs(inputs)
        return self._thompson_values(x, check_generators(generators, self.batch_size))

    def _thompson_values(
        self, x: torch.Tensor, generators: Sequence[torch.Generator]
    ) -> torch.Tensor:
        return self._values(self.design(x), self._sample_weights(generators))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, num_groups={self.num_groups}, "
            f"input_dim={self.input_dim}, lambda_prior={self.lambda_prior}, a0={self.a0}, "
            f"b0={self.b0}, intercept={self.intercept}, device={self.device}, dtype={self.dtype})"
        )
