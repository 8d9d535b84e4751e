"""Bases shared by the agents, and their name registries.

:class:`BetaBernoulliAgentBase` holds what every Bernoulli agent has, fast
(:mod:`delight_gym.agents.bandits`) or dense reference (:mod:`delight_gym.agents.dense`): the
checked sizes and Beta prior, a :class:`~delight_gym.posteriors.beta.BetaBernoulliPosterior`,
the agent's own ``numpy.random.Generator``, the round counter ``t``, the pull counts and
``last_info``. It holds none of the fast agents' shortcuts, so the dense agents stay an
independent reference for them.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

import numpy as np

from delight_gym._checks import check_positive_int
from delight_gym.agents.seeding import SeedLike
from delight_gym.posteriors.beta import BetaBernoulliPosterior

__all__ = ["BetaBernoulliAgentBase", "TorchPosteriorAgent", "agent_registry", "build_agent"]

AgentT = TypeVar("AgentT")


class BetaBernoulliAgentBase:
    """Base class: a batch of Beta–Bernoulli posteriors, a generator and a round counter.

    Parameters
    ----------
    batch_size : int
        Number of independent bandits (seeds) acted on at once.
    num_arms : int
        ``K``.
    seed : int or sequence of int, optional
        Seed of the agent's own ``numpy.random.Generator``.
    prior_alpha, prior_beta : float
        Beta prior of every arm (default ``Beta(1, 1)``); the posterior checks them.

    Attributes
    ----------
    posterior : BetaBernoulliPosterior
        ``initial_columns`` columns (all ``K`` arms when it is ``None``).
    pulls : numpy.ndarray
        int64 ``(batch_size, posterior.num_arms)``: pulls per arm.
    t : int
        Completed rounds.
    rng : numpy.random.Generator
    last_info : dict
        Diagnostics of the last :meth:`act`.
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
    """Base of the torch agents (linear, MDP): they live where their batched ``posterior`` lives.

    A subclass builds ``self.posterior`` (a torch posterior with ``batch_size``, ``device`` and
    ``dtype``) first thing in its constructor; these properties read them from it.
    """

    posterior: Any

    @property
    def batch_size(self) -> int:
        """Independent rows (seeds), the posterior's ``batch_size``."""
        return int(self.posterior.batch_size)

    @property
    def device(self) -> Any:
        """The posterior's ``torch.device``."""
        return self.posterior.device

    @property
    def dtype(self) -> Any:
        """The posterior's ``torch.dtype``."""
        return self.posterior.dtype


def agent_registry(*classes: type[AgentT]) -> dict[str, type[AgentT]]:
    """``{cls.name: cls}`` for agent classes, in the order given (names must be distinct)."""
    registry = {cls.name: cls for cls in classes}  # type: ignore[attr-defined]
    if len(registry) != len(classes):
        raise ValueError("agent classes must have distinct names")
    return registry


def build_agent(registry: dict[str, type[AgentT]], name: str, *args: Any, **kwargs: Any) -> AgentT:
    """``registry[name](*args, **kwargs)``; ``ValueError`` naming the choices for an unknown
    ``name``. Keyword arguments the agent does not take (``gate_price`` for Thompson sampling,
    say) are a ``TypeError`` naming the keyword, so a typo never goes unnoticed."""
    if name not in registry:
        raise ValueError(f"agent must be one of {sorted(registry)}, got {name!r}")
    return registry[name](*args, **kwargs)
