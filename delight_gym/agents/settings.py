"""The DE settings of the agents, checked once, in the constructor.

Agents mix these classes in before their base class (``class DelightAgent(DelightSettings,
BernoulliAgent)``): each takes its keyword arguments, checks them (``ValueError`` or
``TypeError`` naming the argument), stores them and passes the rest on. The per-step code then
calls the rule with ``validate=False``: nothing is re-checked on every act.
"""

from __future__ import annotations

from typing import Any

from delight_gym._checks import check_nonnegative_float, check_positive_float
from delight_gym.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE, DEFAULT_SURPRISAL_CAP

__all__ = ["AnnealedSettings", "DelightSettings"]


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
        self.gate_price = check_nonnegative_float(gate_price, "gate_price", allow_inf=True)
        self.surprisal_cap = check_positive_float(surprisal_cap, "surprisal_cap")
        super().__init__(*args, **kwargs)
