"""The DE settings of the agents and a DE agent's step info.

Agents mix the settings classes in before their base class (``class
DelightAgent(DelightSettings, BernoulliAgent)``): each takes its keyword arguments and stores
them, checked once, in a :class:`~delight_gym.de.options.DelightOptions` (``ValueError`` or
``TypeError`` naming the argument). The per-step code then calls the rule through
:meth:`DelightSettings.decide` (``validate=False``): nothing is re-checked on every act. The
classes live in :mod:`delight_gym.de.options` and are re-exported here.
:func:`delight_step_info` is the one layout of a DE agent's ``last_info``.
"""

from __future__ import annotations

from typing import Any

from delight_gym.de.options import AnnealedSettings, DelightSettings

__all__ = ["AnnealedSettings", "DelightSettings", "delight_step_info"]


def delight_step_info(
    epsilon: Any, explored: Any, gate_empty: Any, gate_size: Any
) -> dict[str, Any]:
    """A DE agent's ``last_info`` after one act, all per row ``(batch,)`` but ``epsilon``.

    Parameters
    ----------
    epsilon : float
        ``ε_t`` of the act.
    explored : bool array or tensor
        The override was drawn (``u1 < ε``), whether or not the gate was empty.
    gate_empty : bool array or tensor
        The gate was empty (``False`` on rows that did not explore).
    gate_size : int array or tensor
        Actions in the gate (``-1`` where an agent evaluates the gate only on exploring rows).

    Returns
    -------
    dict
        ``epsilon``, ``explored``, ``overridden`` (``explored & ~gate_empty``: the override
        replaced the host), ``gate_size`` and ``gate_empty``.
    """
    return {
        "epsilon": epsilon,
        "explored": explored,
        "overridden": explored & ~gate_empty,
        "gate_size": gate_size,
        "gate_empty": gate_empty,
    }
