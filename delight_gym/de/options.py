"""DE's options, checked once: :class:`DelightOptions`, the one record of DE's settings
(``delight=`` of the wrapper, ``DelightDQN`` and ``BootstrappedDQN``). Its constructor checks
every field; the holders trust it. Guide: ``docs/sb3.md``.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from delight_gym._checks import check_choice, check_flag, check_positive_float, check_probability
from delight_gym.de.commitment import check_durations
from delight_gym.de.posterior import BASELINES
from delight_gym.de.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    check_gate_settings,
)

__all__ = [
    "CLOCKS",
    "HOSTS",
    "DelightOptions",
    "DelightOptionsView",
]

#: What ``t`` of ``ε_t = M/(M + t)`` may count.
CLOCKS = ("step", "episode")
#: :class:`~delight_gym.sb3.BootstrappedDQN`'s hosts: the episode's head or the ensemble mean.
HOSTS = ("head", "mean")
_CLOCK_ALIASES = {"steps": "step", "episodes": "episode"}
#: The values of ``value_scale`` that are not a number.
_SCALE_MODES = ("auto", "spread")


@dataclasses.dataclass(frozen=True)
class DelightOptions:
    """Delight-gated exploration's options (checked on construction, and only there).

    Parameters
    ----------
    gate_price, surprisal_cap, half_life : float, default 0.1, 10.0, 100.0
        ``λ >= 0`` (``inf``: never override), ``L > 0`` and ``M > 0`` of ``ε_t = M/(M + t)``.
    baseline : {"host", "max"}, default "host"
        The EI baseline ``v_s`` (:func:`~delight_gym.de.posterior.host_baseline`'s ``kind``).
    value_scale : float or "auto" or "spread", default 1.0
        EI's unit, in the environment's values (a float at least ``2.2e-308``); ``"auto"``
        (TD targets): ``BootstrappedDQN`` only; ``"spread"`` (the posterior's spread of values
        at each state): ``BootstrappedDQN`` and the ``Box`` engine.
    clock : {"step", "episode"}, optional
        What ``t`` counts (``None``: the holder's default; ``"steps"``/``"episodes"`` accepted).
    host, commit, agreement : {"head", "mean"} or None, bool, float or None
        ``BootstrappedDQN`` only: greedy on the episode's head (default) or the ensemble mean;
        an override also switches the head; the gate is closed where this share, in
        ``(0, 1]``, of the heads agree on their greedy action.
    durations : tuple of int, default (1,)
        An override holds ``a`` for ``k`` steps, ``k`` among these (increasing from 1;
        ``(1,)``: the paper's rule). The engines and ``DelightSAC/TD3/DQN`` only.

    Examples
    --------
    >>> DelightOptions(half_life=50).resolve("DelightDQN", clocks=("step",)).clock
    'step'
    >>> DelightOptions.make({"gate_price": 0.2}).gate_price
    0.2
    """

    gate_price: float = DEFAULT_GATE_PRICE
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP
    half_life: float = DEFAULT_HALF_LIFE
    baseline: str = "host"
    value_scale: float | str = 1.0
    clock: str | None = None
    host: str | None = None
    commit: bool = False
    agreement: float | None = None
    durations: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        gate_price, surprisal_cap = check_gate_settings(self.gate_price, self.surprisal_cap)
        set_(self, "gate_price", gate_price)
        set_(self, "surprisal_cap", surprisal_cap)
        set_(self, "half_life", check_positive_float(self.half_life, "half_life", normal=True))
        check_choice(self.baseline, BASELINES, "baseline")
        if self.value_scale not in _SCALE_MODES:
            if isinstance(self.value_scale, str):
                raise ValueError(
                    "value_scale must be a positive float, 'auto' or 'spread', got "
                    f"{self.value_scale!r}"
                )
            scale = check_positive_float(self.value_scale, "value_scale", normal=True)
            set_(self, "value_scale", scale)  # normal: EI is divided by it
        if self.clock is not None:
            clock = _CLOCK_ALIASES.get(self.clock, self.clock)
            set_(self, "clock", check_choice(clock, (*CLOCKS, None), "clock"))
        check_choice(self.host, (*HOSTS, None), "host")
        set_(self, "commit", check_flag(self.commit, "commit"))
        if self.commit and self.host == "mean":
            raise ValueError("commit switches the episode's head: it needs host='head'")
        set_(self, "durations", tuple(int(k) for k in check_durations(self.durations)))
        if self.agreement is not None:
            agreement = check_probability(self.agreement, "agreement")
            if agreement == 0:
                raise ValueError("agreement must lie in (0, 1], got 0")
            set_(self, "agreement", agreement)

    @classmethod
    def make(cls, value: Any) -> DelightOptions | None:
        """``None``/``False`` → ``None``, ``True`` → defaults, a dict → ``DelightOptions(**value)``,
        a :class:`DelightOptions` as is; else a ``TypeError`` naming ``delight``."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            try:
                return cls(**value)
            except TypeError as exc:
                raise TypeError(f"delight: {exc}") from None
        raise TypeError(
            f"delight must be None, a bool, a dict or DelightOptions, got {type(value).__name__}"
        )

    def resolve(
        self,
        owner: str,
        *,
        clocks: tuple[str, ...],
        hosts: tuple[str, ...] = (),
        auto_scale: bool = False,
        spread_scale: bool = False,
        commits: bool = False,
    ) -> DelightOptions:
        """These options as ``owner`` uses them: ``clock`` and ``host`` filled with its defaults
        (the first of ``clocks`` / ``hosts``); ``ValueError`` naming the field it cannot honour.

        Parameters
        ----------
        owner : str
            The class's name (for the messages).
        clocks, hosts : tuple of str
            The clocks it counts and hosts it chooses, defaults first (no hosts: ``host`` and
            ``commit`` are refused).
        auto_scale, spread_scale, commits : bool, default False
            Whether it estimates ``value_scale="auto"`` and acts on heads (``"spread"``,
            ``agreement``); divides EI by its posterior's spread; holds overrides.
        """
        clock = self.clock or clocks[0]
        if clock not in clocks:
            raise ValueError(f"{owner} counts clock in {clocks}; got clock={self.clock!r}")
        if not hosts and self.host is not None:
            raise ValueError(f"{owner} takes its host as an argument; delight.host must be None")
        if not hosts and self.commit:
            raise ValueError(f"{owner} has no episode head to commit to; commit must be False")
        if self.durations != (1,) and not commits:
            raise ValueError(f"{owner} does not hold overrides; durations must be (1,)")
        spread = self.value_scale == "spread" and spread_scale
        if not spread and self.value_scale in _SCALE_MODES and not auto_scale:
            raise ValueError(
                f"{owner} has no running value scale nor heads; value_scale must be a float"
            )
        if self.agreement is not None and not auto_scale:
            raise ValueError(f"{owner} has no heads to agree; agreement must be None")
        resolved = copy.copy(self)  # the fields were checked on construction: no second check
        object.__setattr__(resolved, "clock", clock)
        object.__setattr__(resolved, "host", self.host or (hosts[0] if hosts else None))
        return resolved


class DelightOptionsView:
    """Read-only ``half_life``, ``gate_price``, ``surprisal_cap`` and ``baseline`` of a holder's
    :attr:`delight` (the agents' settings and the engines)."""

    delight: DelightOptions

    @property
    def half_life(self) -> float:
        """``M``."""
        return self.delight.half_life

    @property
    def gate_price(self) -> float:
        """``λ``."""
        return self.delight.gate_price

    @property
    def surprisal_cap(self) -> float:
        """``L``."""
        return self.delight.surprisal_cap

    @property
    def baseline(self) -> str:
        """The EI baseline, ``"host"`` or ``"max"``."""
        return self.delight.baseline
