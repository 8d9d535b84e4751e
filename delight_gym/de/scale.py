"""The episode clock and the scale-free gate of committed DE (beyond the paper).

:func:`episode_epsilon` is ``ε_t = M/(M + t)`` with ``t`` in episodes; :func:`scale_free_gate_price`
prices the gate in units of a value scale ``s`` (:func:`range_value_scale` of the observed
returns, or :func:`spread_value_scale` of the posterior means), so that multiplying the rewards
by ``c > 0`` changes nothing. Pure numpy functions. Guide: ``docs/exploring-in-time.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from delight_gym._checks import check_finite_array, check_nonnegative_float, check_positive_float
from delight_gym.de.rule import DEFAULT_HALF_LIFE, epsilon_schedule

__all__ = [
    "DEFAULT_EPISODE_HALF_LIFE",
    "episode_epsilon",
    "range_value_scale",
    "scale_free_gate_price",
    "spread_value_scale",
    "update_value_range",
]

#: ``M`` on the episode clock: ``ε`` halves after ``M`` episodes (a bandit round is an episode).
DEFAULT_EPISODE_HALF_LIFE = DEFAULT_HALF_LIFE


def episode_epsilon(
    episodes: Any = None,
    *,
    steps: Any = None,
    episode_length: float | None = None,
    half_life: float = DEFAULT_EPISODE_HALF_LIFE,
) -> Any:
    """``ε_t = M/(M + t)`` on the episode clock: ``t`` = completed episodes, or
    ``steps / episode_length`` (expected episodes) when episode ends are not counted.

    Parameters
    ----------
    episodes
        completed episodes, scalar or array ``>= 0``; or give ``steps`` and ``episode_length``.
    steps
        environment steps taken (per env), ``>= 0``.
    episode_length : float, optional
        the expected episode length ``> 0`` (e.g. ``TimeLimit``'s ``max_episode_steps``).
    half_life : float, default 100.0
        ``M``, in episodes (a bandit round is one, so 100 is the paper's).

    Returns
    -------
    Any
        ``ε_t``, shaped like ``t``.
    """
    if (episodes is None) == (steps is None):
        raise TypeError("give exactly one of episodes and steps (with episode_length)")
    if episodes is not None:
        return epsilon_schedule(episodes, half_life)
    if episode_length is None:
        raise TypeError("steps needs episode_length")
    length = check_positive_float(episode_length, "episode_length")
    t: Any = np.asarray(steps, dtype=np.float64) / length
    if t.ndim == 0:
        t = float(t)
    return epsilon_schedule(t, half_life)


def update_value_range(
    value_range: tuple[float, float] | None, values: Any
) -> tuple[float, float] | None:
    """The running range ``(lo, hi)`` (``None``: nothing seen yet) widened by the finite, maybe
    empty, ``values`` (e.g. finished episodes' returns)."""
    arr = check_finite_array(values, "values").reshape(-1)
    if arr.size == 0:
        return value_range
    lo, hi = float(arr.min()), float(arr.max())
    if value_range is None:
        return lo, hi
    return min(lo, value_range[0]), max(hi, value_range[1])


def range_value_scale(value_range: tuple[float, float] | None) -> float:
    """``hi − lo`` of a running range (0 before any spread): the default scale, the observed range
    of returns. Rewards in ``[0, 1]`` (the paper's tasks) give 1 once both ends are seen."""
    return 0.0 if value_range is None else float(value_range[1] - value_range[0])


def spread_value_scale(means: Any) -> float:
    """The posterior's spread of values, ``>= 0``: the root mean square over rows of the
    standard deviation of the posterior means ``(..., A)`` across actions."""
    arr = check_finite_array(means, "means")
    return float(np.sqrt(np.mean(np.var(arr, axis=-1))))


def scale_free_gate_price(gate_price: float, value_scale: float) -> float:
    """``λ·s``: the gate price in the task's value units, for ``λ`` in units of the scale ``s``.

    ``χ >= λ·s`` is ``χ/s >= λ``: scaling rewards (so EI and ``s``) by ``c > 0`` changes
    nothing. ``s = 0`` (no spread seen yet) prices nothing; ``λ = inf`` stays ``inf``. Both
    are checked: ``λ >= 0`` (``inf`` allowed), ``s >= 0``.
    """
    lam = check_nonnegative_float(gate_price, "gate_price", allow_inf=True)
    scale = check_nonnegative_float(value_scale, "value_scale")
    return lam if np.isinf(lam) else lam * scale
