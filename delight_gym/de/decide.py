"""From a posterior's values to DE's decision (:func:`decide_on_values`), with the EI scaling
applied before the gate."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from delight_gym.de.posterior import PosteriorValues
from delight_gym.de.rule import DelightDecision, GateSettings, apply_delight_rule

__all__ = ["ScaledGateSettings", "decide_on_values", "scaled_expected_improvement"]


class ScaledGateSettings(GateSettings, Protocol):
    """Gate settings with the scale EI is divided by before the gate (``value_scale``)."""

    @property
    def value_scale(self) -> float | str:
        """The value scale: a float, or a mode (``"auto"``, ``"spread"``) whose scale the
        caller passes to :func:`decide_on_values` as ``value_scale``."""
        ...


def scaled_expected_improvement(ei: np.ndarray, scale: float) -> np.ndarray:
    """``ei / scale`` capped at float64's largest value (a numeric guard: a small ``scale``
    never turns a finite EI into ``inf``); float64, the shape of ``ei``."""
    with np.errstate(over="ignore"):
        return np.minimum(np.asarray(ei, dtype=np.float64) / scale, np.finfo(np.float64).max)


def decide_on_values(
    options: ScaledGateSettings,
    host_probs: np.ndarray,
    values: PosteriorValues,
    epsilon: float,
    *,
    value_scale: float | None = None,
) -> tuple[DelightDecision, np.ndarray]:
    """DE's decision for ``n`` rows from the host's checked float64 ``(n, A)`` probabilities and
    the posterior's values, and the float64 ``(n, A)`` EI the gate saw: the one path from
    posterior values to a decision (the engines, so ``DelightDQN``, and ``BootstrappedDQN``).
    The posterior's EI is checked here (shape, finite, ``>= 0``), then divided by
    ``value_scale`` (default ``options.value_scale``, a float)."""
    ei = np.asarray(values.expected_improvement, dtype=np.float64)
    if ei.shape != host_probs.shape:
        raise ValueError(
            f"posterior expected_improvement has shape {ei.shape}, expected {host_probs.shape}"
        )
    if not ((ei >= 0) & (ei < np.inf)).all():  # one pass: NaN, inf and negatives
        raise ValueError("posterior expected_improvement must be finite and non-negative")
    scale = float(options.value_scale if value_scale is None else value_scale)
    if scale != 1.0:
        ei = scaled_expected_improvement(ei, scale)
    return apply_delight_rule(options, host_probs, ei, epsilon), ei
