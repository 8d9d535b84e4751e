"""Linear–Gaussian bandit agents in torch, batched over seeds (CPU or GPU).

Every agent keeps a :class:`~delight_gym.posteriors.linear.LinearGaussianPosterior` over the
reward parameter θ of a batch of linear bandits and one ``torch.Generator``;
:meth:`LinearAgent.act` takes the arm features ``(batch, K, D)`` and returns one arm per row.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from delight_gym._checks import check_all_finite, check_positive_int
from delight_gym.agents.base import (
    AnnealedSettings,
    DelightSettings,
    TorchPosteriorAgent,
    agent_registry,
    build_agent,
    delight_step_info,
)
from delight_gym.agents.seeding import SeedLike, torch_seed
from delight_gym.de.rule import epsilon_schedule, sample_acting
from delight_gym.posteriors.gaussian import gaussian_expected_improvement
from delight_gym.posteriors.linear import LinearGaussianPosterior

__all__ = [
    "LINEAR_AGENTS",
    "LinearAgent",
    "LinearDelightAgent",
    "LinearEpsilonGreedyAgent",
    "LinearGreedyAgent",
    "LinearThompsonAgent",
    "LinearUCBAgent",
    "make_linear_agent",
]


class LinearAgent(TorchPosteriorAgent):
    """Base class: a batched linear–Gaussian posterior, a torch generator and ``t``.

    Parameters
    ----------
    batch_size, num_arms, dim : int
        Independent bandits (seeds), ``K`` and the feature dimension ``D``.
    seed : SeedLike
        Seed of the agent's generator.
    **posterior_options
        Keywords of :class:`~delight_gym.posteriors.linear.LinearGaussianPosterior`:
        ``noise`` ``σ``, ``prior_precision`` ``η``, ``device``, ``dtype``.
    """

    name: ClassVar[str] = "base"

    def __init__(
        self,
        batch_size: int,
        num_arms: int,
        dim: int,
        *,
        seed: SeedLike = None,
        **posterior_options: Any,
    ) -> None:
        self.num_arms = check_positive_int(num_arms, "num_arms")
        self.posterior = LinearGaussianPosterior(batch_size, dim, **posterior_options)
        self.dim = self.posterior.dim
        self._rows = torch.arange(self.batch_size, device=self.device)
        self._features: torch.Tensor | None = None
        self.last_info: dict[str, Any] = {}
        self.reset(seed)

    def reset(self, seed: SeedLike = None) -> None:
        """Forget everything: prior posterior, ``t = 0``, a generator seeded by ``seed``."""
        self.posterior.reset()
        self.generator = torch.Generator(device=self.device).manual_seed(torch_seed(seed))
        self.t = 0
        self.gate_rounds = torch.zeros(self.batch_size, dtype=torch.int64, device=self.device)
        self.last_info = {}

    def _check_features(self, features: Any) -> torch.Tensor:
        x = torch.as_tensor(features, dtype=self.dtype, device=self.device)
        if x.shape != (self.batch_size, self.num_arms, self.dim):
            raise ValueError(
                f"features must have shape ({self.batch_size}, {self.num_arms}, {self.dim}), "
                f"got {tuple(x.shape)}"
            )
        check_all_finite(x, "features")
        self._features = x
        return x

    def act(self, features: Any) -> torch.Tensor:
        """Choose one arm per row given features ``(batch, K, D)``; int64 tensor ``(batch,)``."""
        return self._act(self._check_features(features))

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def update(self, actions: Any, rewards: Any) -> None:
        """Feed back the arms chosen at the last :meth:`act` and their rewards ``(batch,)``."""
        if self._features is None:
            raise RuntimeError("call act(features) before update()")
        a = torch.as_tensor(actions, device=self.device)
        if a.shape != (self.batch_size,) or a.dtype not in (torch.int32, torch.int64):
            raise ValueError(f"actions must be an integer tensor of shape ({self.batch_size},)")
        if bool((a < 0).any()) or bool((a >= self.num_arms).any()):
            raise ValueError(f"actions must lie in [0, {self.num_arms})")
        r = torch.as_tensor(rewards, dtype=self.dtype, device=self.device)
        self.posterior.update(self._features[self._rows, a.long()], r)
        self.t += 1

    def _greedy(self, mean: torch.Tensor) -> torch.Tensor:
        return torch.argmax(mean, dim=-1)


class LinearGreedyAgent(LinearAgent):
    """The host alone: the arm of largest posterior mean reward."""

    name = "greedy"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        return self._greedy(torch.einsum("bkd,bd->bk", x, self.posterior.mean()))


class LinearThompsonAgent(LinearAgent):
    """Exact linear Thompson sampling: best arm under one posterior draw of θ."""

    name = "thompson"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        theta = self.posterior.sample(self.generator)
        return torch.argmax(torch.einsum("bkd,bd->bk", x, theta), dim=-1)


class LinearEpsilonGreedyAgent(AnnealedSettings, LinearAgent):
    """Annealed ε-greedy, uniform over all K arms with probability ``ε_t = M/(M+t)``."""

    name = "egreedy"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        eps = epsilon_schedule(self.t, self.half_life)
        u = torch.rand(self.batch_size, generator=self.generator, device=self.device)
        random_arm = torch.randint(
            self.num_arms, (self.batch_size,), generator=self.generator, device=self.device
        )
        greedy = self._greedy(torch.einsum("bkd,bd->bk", x, self.posterior.mean()))
        return torch.where(u < eps, random_arm, greedy)


class LinearUCBAgent(LinearAgent):
    """Bayes-UCB (Kaufmann, Cappé & Garivier): ``φᵀμ + Φ⁻¹(1 − 1/(t+2))·s(a)``."""

    name = "ucb"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        mean, std = self.posterior.predictive(x)
        level = torch.tensor(1.0 - 1.0 / (self.t + 2), dtype=self.dtype, device=self.device)
        z = torch.special.ndtri(level)
        return torch.argmax(mean + z * std, dim=-1)


class LinearDelightAgent(DelightSettings, LinearAgent):
    """Delight-gated exploration with a greedy host and Gaussian EI of ``f(a) = φ(a)ᵀθ``;
    ``gate_rounds`` counts, per row, the rounds the override fired with a non-empty gate.

    Other Parameters
    ----------------
    half_life, gate_price, surprisal_cap : float
        ``M``, ``λ``, ``L`` (defaults 100, 0.1, 10, the Bernoulli values).
    """

    name = "delight"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        mean, std = self.posterior.predictive(x)
        host_arm = self._greedy(mean)
        baseline = mean[self._rows, host_arm]
        host = torch.zeros_like(mean)
        host[self._rows, host_arm] = 1.0
        ei = gaussian_expected_improvement(mean, std, baseline[:, None])
        decision = self.decide(host, ei, epsilon_schedule(self.t, self.half_life))
        actions, explored = sample_acting(decision, self.generator)
        self.last_info = delight_step_info(
            float(decision.epsilon.flatten()[0]),  # one ε for every row
            explored,
            decision.gate_empty,
            decision.gate.sum(dim=-1),
        )
        self.gate_rounds += self.last_info["overridden"].to(torch.int64)
        return actions


LINEAR_AGENTS: dict[str, type[LinearAgent]] = agent_registry(
    LinearDelightAgent,
    LinearThompsonAgent,
    LinearEpsilonGreedyAgent,
    LinearGreedyAgent,
    LinearUCBAgent,
)


def make_linear_agent(
    name: str, batch_size: int, num_arms: int, dim: int, **kwargs: Any
) -> LinearAgent:
    """Build a linear agent by name: ``delight, thompson, egreedy, greedy, ucb``."""
    return build_agent(LINEAR_AGENTS, name, batch_size, num_arms, dim, **kwargs)
