"""Bases shared by the agents: their DE settings, Bernoulli and torch bases, name registries.

:class:`AnnealedSettings` and :class:`DelightSettings` build an agent's
:class:`~delight_gym.de.options.DelightOptions` from the keywords it uses and refuse the
others. :class:`BetaBernoulliAgentBase` has none of the fast agents' shortcuts, so the dense
agents stay an independent reference.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np

from delight_gym._checks import check_choice, check_positive_int
from delight_gym.agents.seeding import SeedLike
from delight_gym.de.options import DelightOptions, DelightOptionsView
from delight_gym.de.rule import DelightDecision, apply_delight_rule
from delight_gym.posteriors.beta import BetaBernoulliPosterior

__all__ = [
    "AnnealedSettings",
    "BetaBernoulliAgentBase",
    "DelightSettings",
    "TorchPosteriorAgent",
    "agent_registry",
    "build_agent",
    "delight_step_info",
]

AgentT = TypeVar("AgentT")

_OPTION_KEYWORDS = ("half_life", "gate_price", "surprisal_cap")


class AnnealedSettings:
    """An agent's schedule ``ε_t = M/(M + t)``: the keyword ``half_life`` (``M``, default 100).

    A mixin put before the agent's base class. It takes the keywords of :data:`options_used`
    into :attr:`delight` (a :class:`~delight_gym.de.options.DelightOptions`), refuses DE's
    other keywords with a ``TypeError`` and passes the rest on.
    """

    #: The DE keywords this agent takes; the others are refused.
    options_used: ClassVar[tuple[str, ...]] = ("half_life",)
    delight: DelightOptions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        given = {k: kwargs.pop(k) for k in _OPTION_KEYWORDS if k in kwargs}
        unused = sorted(set(given) - set(self.options_used))
        if unused:
            raise TypeError(f"{type(self).__name__} does not use {', '.join(unused)}")
        self.delight = DelightOptions(**given)
        super().__init__(*args, **kwargs)

    @property
    def half_life(self) -> float:
        """``M``."""
        return self.delight.half_life


class DelightSettings(AnnealedSettings, DelightOptionsView):
    """A DE agent's settings: ``gate_price`` ``λ`` (default 0.1), ``surprisal_cap`` ``L``
    (default 10) and ``half_life`` ``M`` (default 100), in :attr:`delight`."""

    options_used: ClassVar[tuple[str, ...]] = _OPTION_KEYWORDS

    def decide(
        self, host_probs: Any, expected_improvement: Any, epsilon: Any, *, multiplicity: Any = None
    ) -> DelightDecision:
        """:func:`~delight_gym.de.rule.delight_rule` with these options (inputs unchecked)."""
        return apply_delight_rule(
            self.delight, host_probs, expected_improvement, epsilon, multiplicity=multiplicity
        )


class BetaBernoulliAgentBase:
    """Base class: a batch of Beta–Bernoulli posteriors, a generator and a round counter.

    Parameters
    ----------
    batch_size, num_arms : int
        Independent bandits (seeds) acted on at once, and their arms ``K``.
    seed : int or sequence of int, optional
        Seed of the agent's own ``numpy.random.Generator``.
    prior_alpha, prior_beta : float
        Beta prior of every arm (default ``Beta(1, 1)``).

    Attributes
    ----------
    pulls : numpy.ndarray
        int64 ``(batch_size, posterior.num_arms)``: pulls per arm.
    t : int
        Completed rounds.
    """

    name: ClassVar[str] = "base"
    #: Columns of the posterior at reset (``None``: one per arm).
    initial_columns: ClassVar[int | None] = None

    def __init__(
        self,
        batch_size: int,
        num_arms: int,
        *,
        seed: SeedLike = None,
        prior_alpha: float = 1.0,
        prior_beta: float = 1.0,
    ) -> None:
        self.num_arms = check_positive_int(num_arms, "num_arms")
        self.posterior = BetaBernoulliPosterior(
            batch_size, self._reset_columns(), prior_alpha=prior_alpha, prior_beta=prior_beta
        )
        self.batch_size = self.posterior.batch_size
        self.prior_alpha = self.posterior.prior_alpha
        self.prior_beta = self.posterior.prior_beta
        self._rows = np.arange(self.batch_size)
        self.last_info: dict[str, Any] = {}
        self.reset(seed)

    def _reset_columns(self) -> int:
        cap = self.initial_columns
        return self.num_arms if cap is None else min(self.num_arms, cap)

    @property
    def prior_mean(self) -> float:
        """Mean of the Beta prior, ``prior_alpha / (prior_alpha + prior_beta)``."""
        return self.prior_alpha / (self.prior_alpha + self.prior_beta)

    def reset(self, seed: SeedLike = None) -> None:
        """Forget everything: prior posteriors, ``t = 0`` and a generator seeded by ``seed``."""
        columns = self._reset_columns()
        if self.posterior.num_arms != columns:
            self.posterior = BetaBernoulliPosterior(
                self.batch_size, columns, prior_alpha=self.prior_alpha, prior_beta=self.prior_beta
            )
        self.posterior.reset()
        self.pulls = np.zeros((self.batch_size, columns), dtype=np.int64)
        self.rng = np.random.default_rng(seed)
        self.t = 0
        self.last_info = {}

    def act(self) -> np.ndarray:
        """Choose one arm per row; returns an int64 array of shape ``(batch_size,)``."""
        raise NotImplementedError


class TorchPosteriorAgent:
    """Base of the torch agents (linear, MDP): ``batch_size``, ``device`` and ``dtype`` are
    their ``posterior``'s, which a subclass builds first thing."""

    posterior: Any

    @property
    def batch_size(self) -> int:
        """Independent rows (seeds)."""
        return int(self.posterior.batch_size)

    @property
    def device(self) -> Any:
        return self.posterior.device

    @property
    def dtype(self) -> Any:
        return self.posterior.dtype


def agent_registry(*classes: type[AgentT]) -> dict[str, type[AgentT]]:
    """``{cls.name: cls}`` for agent classes (of distinct names), in the order given."""
    return {cls.name: cls for cls in classes}  # type: ignore[attr-defined]


def build_agent(registry: dict[str, type[AgentT]], name: str, *args: Any, **kwargs: Any) -> AgentT:
    """``registry[name](*args, **kwargs)``; ``ValueError`` naming the choices for an unknown
    ``name`` (a keyword the agent does not take is its ``TypeError``)."""
    check_choice(name, sorted(registry), "agent")
    return registry[name](*args, **kwargs)


def delight_step_info(
    epsilon: Any, explored: Any, gate_empty: Any, gate_size: Any
) -> dict[str, Any]:
    """A DE agent's ``last_info`` after one act: ``epsilon``, and per row ``explored`` (the
    override was drawn, ``u1 < ε``), ``overridden`` (and the gate was non-empty), ``gate_size``
    (``-1`` where the gate was not evaluated) and ``gate_empty``."""
    return {
        "epsilon": epsilon,
        "explored": explored,
        "overridden": explored & ~gate_empty,
        "gate_size": gate_size,
        "gate_empty": gate_empty,
    }
