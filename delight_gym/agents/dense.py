"""Dense reference Bernoulli-bandit agents: every arm, every step, as Algorithm 1 is written.

A deliberate second implementation of :mod:`delight_gym.agents.bandits`, the slow reference
the fast agents are tested and benchmarked against: code that looks repeated between the two
modules is this reference, not a copy to factor out. They accept any arm in ``update``; the
rest (batching, priors, ``t``, lowest-index ties) is as for the fast agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from delight_gym.agents.base import (
    AnnealedSettings,
    BetaBernoulliAgentBase,
    DelightSettings,
    agent_registry,
    build_agent,
    delight_step_info,
)
from delight_gym.agents.seeding import SeedLike
from delight_gym.de.rule import epsilon_schedule, sample_acting
from delight_gym.posteriors.beta import beta_expected_improvement

__all__ = [
    "DENSE_BANDIT_AGENTS",
    "DenseBernoulliAgent",
    "DenseDelightAgent",
    "DenseEpsilonGreedyAgent",
    "DenseGreedyAgent",
    "DenseThompsonAgent",
    "DenseUCBAgent",
    "make_dense_bandit_agent",
]


class DenseBernoulliAgent(BetaBernoulliAgentBase):
    """Base class: a ``(batch, K)`` Beta–Bernoulli posterior (every arm), a generator and a
    round counter, with :class:`~delight_gym.agents.base.BetaBernoulliAgentBase`'s arguments."""

    def update(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Feed back the arms played, shape ``(batch_size,)``, and their rewards in ``[0, 1]``."""
        self.posterior.update(actions, rewards)
        self.pulls[self._rows, np.asarray(actions)] += 1
        self.t += 1

    def _greedy(self, means: np.ndarray) -> np.ndarray:
        return np.argmax(means, axis=-1)


class DenseGreedyAgent(DenseBernoulliAgent):
    """The host alone: always plays the arm of largest posterior mean (no exploration)."""

    name = "greedy"

    def act(self) -> np.ndarray:
        return self._greedy(self.posterior.mean())


class DenseThompsonAgent(DenseBernoulliAgent):
    """Thompson sampling with exact Beta–Bernoulli posteriors: argmax of one posterior draw."""

    name = "thompson"

    def act(self) -> np.ndarray:
        return np.argmax(self.posterior.sample(self.rng), axis=-1)


class DenseEpsilonGreedyAgent(AnnealedSettings, DenseBernoulliAgent):
    """Reference for :class:`~delight_gym.agents.bandits.EpsilonGreedyAgent` (same arguments):
    the uniform draw is any of the ``K`` arms as it falls, untried or not."""

    name = "egreedy"

    def act(self) -> np.ndarray:
        eps = epsilon_schedule(self.t, self.half_life)
        explore = self.rng.random(self.batch_size) < eps
        random_arm = self.rng.integers(self.num_arms, size=self.batch_size)
        actions = np.where(explore, random_arm, self._greedy(self.posterior.mean()))
        self.last_info = {"epsilon": eps, "explored": explore}
        return actions


class DenseUCBAgent(DenseBernoulliAgent):
    """UCB1 (Auer et al., 2002): play every arm once (lowest index first), then
    ``argmax_a  S_a/n_a + sqrt(2 ln t / n_a)``; the prior is not used."""

    name = "ucb"

    def act(self) -> np.ndarray:
        n = self.pulls
        successes = self.posterior.alpha - self.posterior.prior_alpha
        with np.errstate(divide="ignore", invalid="ignore"):  # untried arms are set to inf
            index = successes / n + np.sqrt(2.0 * np.log(max(self.t, 1)) / n)
        return np.argmax(np.where(n == 0, np.inf, index), axis=-1)


class DenseDelightAgent(DelightSettings, DenseBernoulliAgent):
    """Delight-gated exploration (Algorithm 1) with a greedy host and exact Beta EI, as
    :class:`~delight_gym.agents.bandits.DelightAgent` (the same keywords).

    Parameters
    ----------
    prune : bool
        Skip the EI of arms that provably cannot pass the gate (default ``True``; the
        actions are identical): an untried arm's EI is the prior's, once per row; a tried arm
        with ``L·Var/(v − m) < λ`` (``EI ≤ Var/(v − m)``) gets EI 0.
    """

    name = "delight"

    def __init__(self, *args: Any, prune: bool = True, **kwargs: Any) -> None:
        self.prune = bool(prune)
        super().__init__(*args, **kwargs)

    def expected_improvement(self, means: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """EI of every arm over ``baseline`` ``(batch,)``, pruned as documented."""
        post = self.posterior
        if not self.prune:
            return beta_expected_improvement(post.alpha, post.beta, baseline[:, None])
        ei = np.zeros_like(means)
        untried = self.pulls == 0
        if untried.any():
            prior_ei = beta_expected_improvement(post.prior_alpha, post.prior_beta, baseline)
            ei = np.where(untried, prior_ei[:, None], ei)
        gap = baseline[:, None] - means
        with np.errstate(divide="ignore"):
            bound = np.where(gap > 0, post.variance() / gap, np.inf)
        candidates = ~untried & (self.surprisal_cap * bound >= self.gate_price)
        rows, cols = np.nonzero(candidates)
        if rows.size:
            ei[rows, cols] = beta_expected_improvement(
                post.alpha[rows, cols], post.beta[rows, cols], baseline[rows]
            )
        return ei

    def act(self) -> np.ndarray:
        means = self.posterior.mean()
        host_arm = self._greedy(means)
        baseline = means[self._rows, host_arm]
        host = np.zeros_like(means)
        host[self._rows, host_arm] = 1.0
        eps = epsilon_schedule(self.t, self.half_life)
        decision = self.decide(host, self.expected_improvement(means, baseline), eps)
        actions, explored = sample_acting(decision, self.rng)
        gate_size = decision.gate.sum(axis=-1)
        self.last_info = delight_step_info(eps, explored, decision.gate_empty, gate_size)
        return actions


DENSE_BANDIT_AGENTS: dict[str, type[DenseBernoulliAgent]] = agent_registry(
    DenseDelightAgent, DenseThompsonAgent, DenseEpsilonGreedyAgent, DenseGreedyAgent, DenseUCBAgent
)


def make_dense_bandit_agent(
    name: str, batch_size: int, num_arms: int, *, seed: SeedLike = None, **kwargs: Any
) -> DenseBernoulliAgent:
    """The dense :func:`~delight_gym.agents.bandits.make_bandit_agent` (and ``prune``)."""
    return build_agent(DENSE_BANDIT_AGENTS, name, batch_size, num_arms, seed=seed, **kwargs)
