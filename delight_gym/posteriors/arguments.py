"""The constructor arguments several posteriors share, each group checked in one place (every
error names the argument)."""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import torch

from delight_gym._checks import (
    check_device,
    check_float_dtype,
    check_nonnegative_float,
    check_positive_float,
    check_positive_int,
)
from delight_gym.posteriors.batched_mlp import check_hidden_sizes

__all__ = [
    "HeadOptions",
    "Placement",
    "RegressionOptions",
    "check_fraction",
    "check_head",
    "check_head_options",
    "check_placement",
    "check_regression_options",
    "seeded_generator",
]


class Placement(NamedTuple):
    """Where a posterior's tensors live (:func:`check_placement`)."""

    device: torch.device
    dtype: torch.dtype


def check_placement(device: Any, dtype: Any) -> Placement:
    """``device`` as the concrete ``torch.device`` torch allocates on (``None``: torch's
    default) and ``dtype``, ``torch.float32`` or ``torch.float64``, checked."""
    return Placement(check_device(device), check_float_dtype(dtype))


class RegressionOptions(NamedTuple):
    """``B`` Bayesian linear regressions of dimension ``D`` with known noise std ``σ``, and
    where they live."""

    batch_size: int
    dim: int
    noise: float
    device: torch.device
    dtype: torch.dtype


def check_regression_options(
    batch_size: Any, dim: Any, noise: Any, device: Any, dtype: Any
) -> RegressionOptions:
    """``batch_size``, ``dim`` (``>= 1``), ``noise`` (``> 0``), ``device`` and ``dtype``,
    checked."""
    return RegressionOptions(
        check_positive_int(batch_size, "batch_size"),
        check_positive_int(dim, "dim"),
        check_positive_float(noise, "noise"),
        *check_placement(device, dtype),
    )


class HeadOptions(NamedTuple):
    """An ensemble's ``K`` heads, each an MLP of ``hidden_sizes`` plus its frozen prior
    scaled by ``β = prior_scale``."""

    num_heads: int
    hidden_sizes: tuple[int, ...]
    prior_scale: float


def check_head_options(
    num_heads: Any, hidden_sizes: Any, prior_scale: Any, *, allow_no_hidden: bool = False
) -> HeadOptions:
    """``num_heads`` (``>= 1``), ``hidden_sizes`` (positive integers, empty only with
    ``allow_no_hidden``) and ``prior_scale`` (``>= 0``), checked."""
    return HeadOptions(
        check_positive_int(num_heads, "num_heads"),
        check_hidden_sizes(hidden_sizes, allow_empty=allow_no_hidden),
        check_nonnegative_float(prior_scale, "prior_scale"),
    )


def check_fraction(value: Any, name: str) -> float:
    """``value`` as a float in ``(0, 1]``, checked."""
    out = check_positive_float(value, name)
    if out > 1:
        raise ValueError(f"{name} must lie in (0, 1], got {value}")
    return out


def check_head(head: Any, num_heads: int) -> int:
    """``head`` as an ``int`` in ``[0, num_heads)``: one head of an ensemble, checked."""
    if isinstance(head, bool) or not isinstance(head, numbers.Integral):
        raise TypeError(f"head must be an int, got {head!r}")
    if not 0 <= int(head) < num_heads:
        raise ValueError(f"head must lie in [0, {num_heads}), got {head}")
    return int(head)


def seeded_generator(seed: int | None, device: Any = "cpu") -> torch.Generator:
    """A ``torch.Generator`` on ``device`` seeded with ``seed`` (``None``: fresh entropy)."""
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(seed)
    return generator
