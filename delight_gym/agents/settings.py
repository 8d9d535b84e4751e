"""The DE settings of the agents, checked once, in the constructor.

Agents mix these classes in before their base class (``class DelightAgent(DelightSettings,
BernoulliAgent)``): each takes its keyword arguments, checks them (``ValueError`` or
``TypeError`` naming the argument), stores them and passes the rest on. The per-step code then
calls the rule through :meth:`DelightSettings.decide` (``validate=False``): nothing is
re-checked on every act. :func:`delight_step_info` is the one layout of a DE agent's
``last_info``.
"""

from __future__ import annotations

from typing import Any

from delight_gym._checks import check_positive_float
from delight_gym.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    DelightDecision,
    apply_delight_rule,
    check_gate_settings,
)

__all__ = ["AnnealedSettings", "DelightSettings", "delight_step_info"]


class AnnealedSettings:
    """``half_life``: ``M > 0`` of the override schedule ``ε_t = M/(M + t)`` (default 100).

    Attributes
    ----------
    half_life : float
    """

    def __init__(self, *args: Any, half_life: float = DEFAULT_HALF_LIFE, **kwargs: Any) -> None:
        self.half_life = check_positive_float(half_life, "half_life")
        super().__init__(*args, **kwargs)


class DelightSettings(AnnealedSettings):
    """``half_life`` (as :class:`AnnealedSettings`), ``gate_price`` ``λ >= 0`` (``inf``: never
    override; default 0.1) and ``surprisal_cap`` ``L > 0`` (default 10).

    Attributes
    ----------
    half_life, gate_price, surprisal_cap : float
    """

    def __init__(
        self,
        *args: Any,
        gate_price: float = DEFAULT_GATE_PRICE,
        surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
        **kwargs: Any,
    ) -> None:
        self.gate_price, self.surprisal_cap = check_gate_settings(gate_price, surprisal_cap)
        super().__init__(*args, **kwargs)

    def decide(
        self,
        host_probs: Any,
        expected_improvement: Any,
        epsilon: Any,
        *,
        multiplicity: Any = None,
    ) -> DelightDecision:
        """:func:`~delight_gym.rule.apply_delight_rule` with this agent's settings (checked by
        the constructor; the caller builds the inputs).

        Parameters
        ----------
        host_probs, expected_improvement : numpy.ndarray or torch.Tensor
            ``(..., A)``, as for :func:`~delight_gym.rule.delight_rule`.
        epsilon : float or array
            ``ε``, a scalar or ``(...)``.
        multiplicity : numpy.ndarray or torch.Tensor, optional
            ``(..., A)`` column counts (see :func:`~delight_gym.rule.delight_rule`).
        """
        return apply_delight_rule(
            self, host_probs, expected_improvement, epsilon, multiplicity=multiplicity
        )


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
