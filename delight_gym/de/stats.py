"""DE's statistics: :class:`DelightStats`, the one accumulator of what DE decided.

:meth:`DelightStats.log` writes the current window's rates to anything with
``record(key, value)`` (an SB3 logger) under :data:`LOG_KEYS`. What each key means:
``docs/sb3.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from delight_gym._checks import check_shape

__all__ = ["LOG_KEYS", "DelightStats"]

#: The keys :meth:`DelightStats.summary` may return and :meth:`DelightStats.log` records.
LOG_KEYS = (
    "rollout/exploration_rate",
    "delight/override_rate",
    "delight/gate_size",
    "delight/gate_empty_rate",
    "delight/overridden_ei",
)


class DelightStats:
    """DE's decisions: counts of the current window (since the last :meth:`reset`, which
    :meth:`log` calls at every log dump) beside running totals that are never reset.

    Attributes
    ----------
    steps, overridden, evaluated, gate_empty : int
        The window's decisions (one per row), those drawn from a non-empty ``q``, those whose
        gate was evaluated, and those with an empty gate.
    total_steps, total_overridden, total_evaluated, total_gate_empty : int
        The same since construction, never reset.
    gate_size_sum, overridden_ei_sum : int, float
        Sums of the evaluated gates' ``|G|`` and of the overridden actions' EI.
    epsilon : float
        The last ``ε_t`` recorded (NaN before the first).
    """

    def __init__(self) -> None:
        self.total_steps = 0
        self.total_overridden = 0
        self.total_evaluated = 0
        self.total_gate_empty = 0
        self.reset()

    def reset(self) -> None:
        """Start a new window (the ``total_*`` counts are kept)."""
        self.steps = 0
        self.overridden = 0
        self.evaluated = 0
        self.gate_size_sum = 0
        self.gate_empty = 0
        self.overridden_ei_sum = 0.0
        self.epsilon = float("nan")

    def record(
        self,
        overridden: np.ndarray,
        gate_size: np.ndarray,
        gate_empty: np.ndarray,
        overridden_ei: np.ndarray,
        epsilon: float,
        evaluated: np.ndarray | None = None,
    ) -> None:
        """Add one step of ``n`` decisions.

        Parameters
        ----------
        overridden, gate_size, gate_empty : numpy.ndarray
            bool, int and bool ``(n,)`` (entries of rows not evaluated are ignored).
        overridden_ei : numpy.ndarray
            float ``(overridden.sum(),)``: the EI of each overridden action.
        epsilon : float
            ``ε_t`` of this step.
        evaluated : numpy.ndarray, optional
            bool ``(n,)``: rows whose gate was evaluated (default: all).
        """
        over = np.asarray(overridden, dtype=bool).reshape(-1)
        n = over.size
        ev = np.ones(n, dtype=bool) if evaluated is None else np.asarray(evaluated, dtype=bool)
        ev = ev.reshape(-1)
        check_shape(ev, (n,), "evaluated")
        ei = np.asarray(overridden_ei, dtype=np.float64).reshape(-1)
        if ei.size != int(over.sum()):
            raise ValueError(
                f"overridden_ei must hold one value per overridden decision ({int(over.sum())}),"
                f" got {ei.size}"
            )
        overridden_n, evaluated_n = int(over.sum()), int(ev.sum())
        empty_n = int(np.asarray(gate_empty, dtype=bool).reshape(-1)[ev].sum())
        self.steps += n
        self.overridden += overridden_n
        self.evaluated += evaluated_n
        self.gate_size_sum += int(np.asarray(gate_size).reshape(-1)[ev].sum())
        self.gate_empty += empty_n
        self.overridden_ei_sum += float(ei.sum())
        self.epsilon = float(epsilon)
        self.total_steps += n
        self.total_overridden += overridden_n
        self.total_evaluated += evaluated_n
        self.total_gate_empty += empty_n

    def record_info(self, info: dict[str, Any], actions: Any) -> None:
        """Add the decisions of one ``predict`` from its ``last_info`` and the int ``()`` or
        ``(n,)`` actions it returned."""
        over = np.atleast_1d(np.asarray(info["overridden"], dtype=bool))
        n = over.size
        gate = np.atleast_1d(np.asarray(info["gate_size"], dtype=np.int64))
        ei = np.asarray(info["expected_improvement"], dtype=np.float64).reshape(n, -1)
        act = np.asarray(actions, dtype=np.int64).reshape(n)
        self.record(
            over,
            gate,
            gate == 0,
            ei[np.flatnonzero(over), act[over]],
            float(info["epsilon"]),
            evaluated=gate >= 0,
        )

    def summary(self) -> dict[str, float]:
        """The window's rates and means, keyed as logged (:data:`LOG_KEYS`). A mean over no
        decisions is left out (no NaN reaches a logger: TensorBoard shows a gap)."""
        out = {"rollout/exploration_rate": self.epsilon} if self.steps else {}
        if self.steps:
            out["delight/override_rate"] = self.overridden / self.steps
        if self.evaluated:
            out["delight/gate_size"] = self.gate_size_sum / self.evaluated
            out["delight/gate_empty_rate"] = self.gate_empty / self.evaluated
        if self.overridden:
            out["delight/overridden_ei"] = self.overridden_ei_sum / self.overridden
        return out

    def log(self, logger: Any) -> bool:
        """Record :meth:`summary` into ``logger`` (anything with ``record(key, value)``), then
        :meth:`reset`; whether anything was recorded (nothing since the last reset: no-op)."""
        if not self.steps:
            return False
        for key, value in self.summary().items():
            logger.record(key, value)
        self.reset()
        return True

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(steps={self.steps}, overridden={self.overridden}, "
            f"total_steps={self.total_steps}, total_overridden={self.total_overridden})"
        )
