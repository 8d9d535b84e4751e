"""What the batched contextual-bandit posteriors (LinFull, NeuralLinear, the bandit ensemble)
share: the checks of their inputs, observations, generators and baselines, and
:class:`BatchedBanditPosterior`, the base that holds their shape and applies those checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from delight_gym._checks import check_all_finite, check_magnitude, check_positive_int, check_shape

__all__ = [
    "BatchedBanditPosterior",
    "check_arm_inputs",
    "check_baseline",
    "check_generators",
    "check_observations",
]


def check_baseline(baseline: Any, rows: int, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """``baseline`` (a number or a tensor of shape ``()``, ``(rows,)`` or ``(rows, 1)``) as a
    finite ``(rows, 1)`` tensor of ``dtype`` on ``device``, checked."""
    try:
        v = torch.as_tensor(baseline, device=device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"baseline must be a number or a tensor: {exc}") from None
    if v.is_complex() or v.dtype == torch.bool:
        raise TypeError(f"baseline must be real, got dtype {v.dtype}")
    if tuple(v.shape) not in ((), (rows,), (rows, 1)):
        raise ValueError(
            f"baseline must have shape (), ({rows},) or ({rows}, 1) (one per row asked), "
            f"got {tuple(v.shape)}"
        )
    v = v.to(dtype)
    check_all_finite(v, "baseline")
    return v.reshape(-1, 1).expand(rows, 1)


def check_generators(generators: Any, batch_size: int) -> list[torch.Generator]:
    """``generators`` as a list of ``batch_size`` CPU ``torch.Generator`` objects, checked."""
    if isinstance(generators, torch.Generator) or not isinstance(generators, Sequence):
        raise TypeError("generators must be a sequence of torch.Generator, one per row")
    gens = list(generators)
    if len(gens) != batch_size:
        raise ValueError(f"generators must hold {batch_size} generators, got {len(gens)}")
    for g in gens:
        if not isinstance(g, torch.Generator):
            raise TypeError(f"generators must hold torch.Generator objects, got {type(g)}")
        if g.device.type != "cpu":
            raise ValueError("generators must be CPU generators")
    return gens


def check_arm_inputs(
    inputs: Any, shape: tuple[int, int], num_groups: int, dtype: torch.dtype, device: Any
) -> torch.Tensor:
    """``inputs`` as a finite ``(B, K, d)`` tensor of ``dtype`` on ``device``, for
    ``shape = (B, d)`` and ``K = num_groups`` unless ``num_groups = 1``, checked."""
    batch, dim = shape
    x = check_shape(
        torch.as_tensor(inputs, dtype=dtype, device=device), (batch, None, dim), "inputs", "K"
    )
    if num_groups not in (1, x.shape[1]):
        raise ValueError(
            f"inputs must hold 1 or num_groups = {num_groups} arms per row, got {x.shape[1]}"
        )
    check_all_finite(x, "inputs")
    return x


def check_observations(
    inputs: Any,
    groups: Any,
    targets: Any,
    *,
    shape: tuple[int, int],
    num_groups: int,
    dtype: torch.dtype,
    device: Any,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Observations checked and shaped ``(B, n, d)``, int64 ``(B, n)``, ``(B, n)``, from finite
    ``inputs`` ``(B, d)`` or ``(B, n, d)`` (``shape = (B, d)``), ``B·n`` integer ``groups`` in
    ``[0, num_groups)`` and ``B·n`` finite ``targets``; errors name the argument."""
    batch, dim = shape
    x = torch.as_tensor(inputs, dtype=dtype, device=device)
    if x.ndim == 2:
        x = x[:, None]
    if x.ndim != 3 or x.shape[0] != batch or x.shape[2] != dim:
        raise ValueError(
            f"inputs must have shape ({batch}, {dim}) or ({batch}, n, {dim}), got {tuple(x.shape)}"
        )
    n = x.shape[1]
    g = torch.as_tensor(groups, device=device)
    if g.is_floating_point() or g.dtype == torch.bool:
        raise TypeError(f"groups must be an integer tensor, got {g.dtype}")
    y = torch.as_tensor(targets, dtype=dtype, device=device)
    for name, t in (("groups", g), ("targets", y)):
        if t.numel() != batch * n:
            raise ValueError(f"{name} must have {batch * n} entries, got {t.numel()}")
    g, y = g.reshape(batch, n), y.reshape(batch, n)
    if bool(((g < 0) | (g >= num_groups)).any()):
        raise ValueError(f"groups must lie in [0, {num_groups})")
    for name, t in (("inputs", x), ("targets", y)):
        check_all_finite(t, name)
    return x, g.long(), y


class BatchedBanditPosterior:
    """``G`` reward models (one per arm, or one shared) in each of ``B`` rows (seeds), on
    inputs of dimension ``d``: the shape, and the checks of what the posteriors are given.
    Subclasses call :meth:`_set_shape` first in ``__init__`` and set ``dtype`` and ``device``."""

    batch_size: int
    num_groups: int
    input_dim: int
    dtype: torch.dtype
    device: torch.device

    def _set_shape(self, batch_size: Any, num_groups: Any, input_dim: Any) -> None:
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.num_groups = check_positive_int(num_groups, "num_groups")
        self.input_dim = check_positive_int(input_dim, "input_dim")

    def check_inputs(self, inputs: Any) -> torch.Tensor:
        """:func:`check_arm_inputs` for this posterior."""
        return check_arm_inputs(
            inputs, (self.batch_size, self.input_dim), self.num_groups, self.dtype, self.device
        )

    def check_observations(
        self, inputs: Any, groups: Any, targets: Any, input_dim: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:func:`check_observations` for this posterior (``input_dim`` default: its ``d``),
        then :meth:`check_magnitudes`."""
        x, g, y = check_observations(
            inputs,
            groups,
            targets,
            shape=(self.batch_size, self.input_dim if input_dim is None else input_dim),
            num_groups=self.num_groups,
            dtype=self.dtype,
            device=self.device,
        )
        self.check_magnitudes(x, y)
        return x, g, y

    def one_observation(
        self, inputs: Any, groups: Any, targets: Any
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The one observation per row a network posterior's update absorbs, checked with its
        magnitudes: ``(B, d)``, int64 ``(B,)`` in ``[0, G)``, ``(B,)``."""
        x, g, y = self.check_observations(inputs, groups, targets)
        if x.shape[1] != 1:
            raise ValueError("inputs must hold one observation per row, shape (B, d)")
        return x[:, 0], g[:, 0], y[:, 0]

    def check_magnitudes(self, inputs: torch.Tensor, targets: torch.Tensor) -> None:
        """Refuse inputs or targets whose magnitude exceeds :meth:`_magnitude_limit`."""
        limit, why = self._magnitude_limit()
        check_magnitude(inputs, "inputs", limit, why=why)
        check_magnitude(targets, "targets", limit, why=why)

    def _magnitude_limit(self) -> tuple[float, str]:
        """The largest magnitude an input or a target may have, and why."""
        raise NotImplementedError
