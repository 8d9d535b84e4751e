"""DE's statistics: :class:`DelightStats`, the one accumulator of what DE decided.

:class:`~delight_gym.wrappers.DelightExplorationWrapper`,
:class:`~delight_gym.sb3.DelightDQN` and :class:`~delight_gym.sb3.BootstrappedDQN` record
into one; :meth:`DelightStats.log` writes the rates of the current window to a
Stable-Baselines3 logger under the keys of :data:`LOG_KEYS` and starts a new window, while
the running totals are never reset. It lives beside the wrapper (not in
:mod:`delight_gym.sb3`) because the wrapper records into it and does not import SB3: the
logger is anything with ``record(key, value)``. What each key means: ``docs/sb3.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["LOG_KEYS", "DelightStats"]

#: The keys :meth:`DelightStats.summary` returns and :meth:`DelightStats.log` records.
LOG_KEYS = (
    "rollout/exploration_rate",
    "delight/override_rate",
    "delight/gate_size",
    "delight/gate_empty_rate",
    "delight/overridden_ei",
)


class DelightStats:
    """DE decisions accumulated between two :meth:`reset` calls.

    Attributes
    ----------
    steps : int
        Decisions recorded (one per observation row).
    overridden : int
        Decisions whose action came from a non-empty override ``q``.
    evaluated : int
        Decisions whose gate was evaluated.
    gate_size_sum : int
        Sum of the gate sizes ``|G|`` of the evaluated decisions.
    gate_empty : int
        Evaluated decisions with an empty gate.
    overridden_ei_sum : float
        Sum of the EI of the overridden actions.
    epsilon : float
        The last ``ε_t`` recorded (NaN before the first).
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything recorded so far."""
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
        overridden : numpy.ndarray
            bool ``(n,)``.
        gate_size, gate_empty : numpy.ndarray
            int and bool ``(n,)`` (entries of rows not evaluated are ignored).
        overridden_ei : numpy.ndarray
            float ``(m,)``: the EI of each overridden action (``m = overridden.sum()``).
        epsilon : float
            ``ε_t`` of this step.
        evaluated : numpy.ndarray, optional
            bool ``(n,)``: rows whose gate was evaluated (default: all).
        """
        over = np.asarray(overridden, dtype=bool).reshape(-1)
        n = over.size
        ev = np.ones(n, dtype=bool) if evaluated is None else np.asarray(evaluated, dtype=bool)
        ev = ev.reshape(-1)
        if ev.shape != (n,):
            raise ValueError(f"evaluated must have shape ({n},), got {ev.shape}")
        ei = np.asarray(overridden_ei, dtype=np.float64).reshape(-1)
        if ei.size != int(over.sum()):
            raise ValueError(
                f"overridden_ei must hold one value per overridden decision ({int(over.sum())}),"
                f" got {ei.size}"
            )
        self.steps += n
        self.overridden += int(over.sum())
        self.evaluated += int(ev.sum())
        self.gate_size_sum += int(np.asarray(gate_size).reshape(-1)[ev].sum())
        self.gate_empty += int(np.asarray(gate_empty, dtype=bool).reshape(-1)[ev].sum())
        self.overridden_ei_sum += float(ei.sum())
        self.epsilon = float(epsilon)

    def record_info(self, info: dict[str, Any], actions: Any) -> None:
        """Add the decisions of one :meth:`DelightExplorationWrapper.predict
        <delight_gym.wrappers.DelightExplorationWrapper.predict>` call from its ``last_info``.

        Parameters
        ----------
        info : dict
            The wrapper's ``last_info`` (scalars for one observation, ``(n,)`` / ``(n, A)``
            arrays for a batch).
        actions : array_like
            int ``()`` or ``(n,)``: the actions that call returned.
        """
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
        """Means since the last reset, keyed as they are logged (:data:`LOG_KEYS`)."""
        steps = max(self.steps, 1)
        evaluated = self.evaluated
        return {
            "rollout/exploration_rate": self.epsilon,
            "delight/override_rate": self.overridden / steps,
            "delight/gate_size": self.gate_size_sum / evaluated if evaluated else float("nan"),
            "delight/gate_empty_rate": self.gate_empty / evaluated if evaluated else float("nan"),
            "delight/overridden_ei": self.overridden_ei_sum / max(self.overridden, 1),
        }

    def log(self, logger: Any) -> bool:
        """Record :meth:`summary` into an SB3 logger, then :meth:`reset`.

        Does nothing when no decision was recorded since the last reset.

        Parameters
        ----------
        logger : stable_baselines3.common.logger.Logger
            Anything with ``record(key, value)``.

        Returns
        -------
        bool
            Whether anything was recorded.
        """
        if not self.steps:
            return False
        for key, value in self.summary().items():
            logger.record(key, value)
        self.reset()
        return True

    def __repr__(self) -> str:
        return f"{type(self).__name__}(steps={self.steps}, overridden={self.overridden})"
