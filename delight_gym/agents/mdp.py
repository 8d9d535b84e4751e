"""Tabular MDP agents (DeepSea and other finite-horizon MDPs) in torch, batched over seeds.

Every agent treats its environment as an unknown tabular MDP with a
:class:`~delight_gym.posteriors.tabular.TabularMDPPosterior`. Per episode:
``agent.begin_episode()``, then per step ``h``: ``actions = agent.act(states, h)``, step the
environments, ``agent.observe(states, actions, rewards, next_states, h)``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch

from delight_gym._checks import check_choice, check_nonnegative_int, check_positive_float
from delight_gym.agents.base import (
    AnnealedSettings,
    DelightSettings,
    TorchPosteriorAgent,
    agent_registry,
    build_agent,
    delight_step_info,
)
from delight_gym.agents.seeding import SeedLike, seed_generators
from delight_gym.de.rule import (
    DelightDecision,
    epsilon_schedule,
    sample_acting_on_explore_rows,
    sample_categorical,
)
from delight_gym.posteriors.tabular import DEFAULT_STICK_TOLERANCE, TabularMDPPosterior

__all__ = [
    "DEFAULT_TEMPERATURE",
    "MDP_AGENTS",
    "MDPAgent",
    "MDPDelightAgent",
    "MDPEpsilonGreedyAgent",
    "MDPGreedyAgent",
    "PSRLAgent",
    "make_mdp_agent",
    "seed_generators",
]

#: Boltzmann temperature of the DE host (paper §3.3).
DEFAULT_TEMPERATURE = 0.01


class MDPAgent(TorchPosteriorAgent):
    """Base class: a tabular posterior, per-seed generators and the episode clock.

    Parameters
    ----------
    *sizes : int
        ``batch_size`` (``B``, seeds), ``num_states`` (``S``), ``num_actions`` (``A``) and
        ``horizon`` (``H``), in this order, or by these names as keywords.
    seed : SeedLike
        Seed of the ``B`` per-row generators.
    **posterior_options
        The posterior's other keywords (priors, ``device``, ``dtype``), passed to
        :class:`~delight_gym.posteriors.tabular.TabularMDPPosterior`.
    """

    name: ClassVar[str] = "base"
    uses_uniforms: ClassVar[bool] = True

    def __init__(self, *sizes: int, seed: SeedLike = None, **posterior_options: Any) -> None:
        self.posterior = TabularMDPPosterior(*sizes, **posterior_options)
        self.num_states = self.posterior.num_states
        self.num_actions = self.posterior.num_actions
        self.horizon = self.posterior.horizon
        self._rows = torch.arange(self.batch_size, device=self.device)
        self.reset(seed)

    def reset(self, seed: SeedLike = None) -> None:
        """Forget everything: prior posterior, clocks at 0, generators seeded by ``seed``."""
        self.posterior.reset()
        self.generators = seed_generators(seed, self.batch_size, self.device)
        self.decisions = 0  # decisions taken so far (per row; all rows step together)
        self.episodes = 0  # completed episodes
        self.step = -1  # -1: between episodes
        self.q_plan: torch.Tensor | None = None
        # Plan buffers reused across episodes (page faults of fresh 60 MB tensors cost as much
        # as the planning at N = 50): the frozen plan, and scratch space for re-plans.
        shape = (self.horizon, self.batch_size, self.num_states, self.num_actions)
        self._plan_buffer = torch.empty(shape, dtype=self.dtype, device=self.device)
        self._scratch: torch.Tensor | None = None
        self._uniforms: torch.Tensor | None = None
        self.last_info: dict[str, Any] = {}

    def begin_episode(self) -> None:
        """Freeze this episode's plan (and draw the rows' uniforms)."""
        if self.step not in (-1, self.horizon):
            raise RuntimeError(
                f"begin_episode() called in the middle of an episode (step {self.step})"
            )
        self.q_plan = self._plan()
        if self.uses_uniforms:  # each row's two uniforms per step, drawn up front: (H, B, 2)
            draws = [
                torch.rand((self.horizon, 2), generator=g, dtype=torch.float64, device=self.device)
                for g in self.generators
            ]
            self._uniforms = torch.stack(draws, dim=1)
        self.step = 0

    def _plan(self) -> torch.Tensor:
        return self.posterior.plan_mean(out=self._plan_buffer)

    def _check_step(self, h: Any, states: Any) -> torch.Tensor:
        if self.step < 0:
            raise RuntimeError("call begin_episode() before act()")
        check_nonnegative_int(h, "h")
        if int(h) != self.step:
            raise ValueError(f"h must be the current step {self.step}, got {h}")
        return self.posterior._check_index(states, "states", self.num_states)

    def act(self, states: Any, h: int) -> torch.Tensor:
        """One action per row for ``states`` (int ``(B,)``) at step ``h``; int64 ``(B,)``."""
        return self._act(self._check_step(h, states), int(h))

    def _act(self, s: torch.Tensor, h: int) -> torch.Tensor:
        raise NotImplementedError

    def _q_plan_at(self, s: torch.Tensor, h: int) -> torch.Tensor:
        assert self.q_plan is not None
        return self.q_plan[h][self._rows, s]

    def observe(self, states: Any, actions: Any, rewards: Any, next_states: Any, h: int) -> None:
        """Update the posterior with the step-``h`` transitions of every row, int ``(B,)``
        ``states``, ``actions``, ``next_states`` (ignored, may be ``None``, at ``h = H - 1``)
        and float ``rewards``."""
        self._check_step(h, states)
        last = int(h) == self.horizon - 1
        if not last and next_states is None:
            raise ValueError("next_states is required before the last step")
        self.posterior.update(states, actions, rewards, None if last else next_states)
        self.decisions += 1
        self.step += 1
        if last:
            self.episodes += 1


class PSRLAgent(MDPAgent):
    """Posterior sampling for RL: plan one posterior sample per episode, act greedily in it;
    ``sampler`` and ``stick_tolerance`` are
    :meth:`~delight_gym.posteriors.tabular.TabularMDPPosterior.sample_model`'s."""

    name = "psrl"
    uses_uniforms = False

    def __init__(
        self,
        *args: Any,
        sampler: str = "auto",
        stick_tolerance: float = DEFAULT_STICK_TOLERANCE,
        **kwargs: Any,
    ) -> None:
        self.sampler = sampler
        self.stick_tolerance = stick_tolerance
        super().__init__(*args, **kwargs)

    def _plan(self) -> torch.Tensor:
        return self.posterior.plan_sample(
            self.generators,
            sampler=self.sampler,
            stick_tolerance=self.stick_tolerance,
            out=self._plan_buffer,
        )

    def _act(self, s: torch.Tensor, h: int) -> torch.Tensor:
        return torch.argmax(self._q_plan_at(s, h), dim=-1)


class _HostAgent(AnnealedSettings, MDPAgent):
    """Agents acting on the frozen posterior-mean plan through a Boltzmann host."""

    def __init__(
        self,
        *args: Any,
        temperature: float = DEFAULT_TEMPERATURE,
        epsilon_clock: str = "step",
        **kwargs: Any,
    ) -> None:
        self.temperature = check_positive_float(temperature, "temperature")
        self.epsilon_clock = check_choice(epsilon_clock, ("step", "episode"), "epsilon_clock")
        super().__init__(*args, **kwargs)

    def _epsilon(self) -> float:
        t = self.decisions if self.epsilon_clock == "step" else self.episodes
        return float(epsilon_schedule(t, self.half_life))

    def host_probs(self, q: torch.Tensor) -> torch.Tensor:
        """``softmax(q/τ)``."""
        return torch.softmax(q / self.temperature, dim=-1)


class MDPGreedyAgent(_HostAgent):
    """The DE host alone: Boltzmann(τ = 0.01) over the frozen posterior-mean plan."""

    name = "greedy"

    def _act(self, s: torch.Tensor, h: int) -> torch.Tensor:
        assert self._uniforms is not None
        host = self.host_probs(self._q_plan_at(s, h))
        return sample_categorical(host, self._uniforms[h, :, 1].to(host.dtype))


class MDPEpsilonGreedyAgent(_HostAgent):
    """Annealed ε-greedy on the frozen posterior-mean plan (uniform action w.p. ``ε_t``)."""

    name = "egreedy"

    def _act(self, s: torch.Tensor, h: int) -> torch.Tensor:
        assert self._uniforms is not None
        u = self._uniforms[h]
        eps = self._epsilon()
        greedy = torch.argmax(self._q_plan_at(s, h), dim=-1)
        # A uniform action from the row's second uniform (clamped against rounding up to A).
        uniform = torch.clamp((u[:, 1] * self.num_actions).long(), max=self.num_actions - 1)
        explored = u[:, 0] < eps
        self.last_info = {"epsilon": eps, "explored": explored}
        return torch.where(explored, uniform, greedy)


class MDPDelightAgent(DelightSettings, _HostAgent):
    """Delight-gated exploration with a frozen Boltzmann host and the posterior-mean evaluator.

    Per-row int64 counts: ``explore_count`` (decisions with ``u1 < ε``), ``override_count``
    (those with a non-empty gate), ``gate_size_total``. ``last_info`` is
    :func:`~delight_gym.agents.base.delight_step_info`'s plus ``q_post`` and
    ``expected_improvement`` (NaN on non-exploring rows).

    Other Parameters
    ----------------
    half_life, gate_price, surprisal_cap : float
        ``M``, ``λ``, ``L`` (defaults 100, 0.1, 10).
    temperature : float
        ``τ`` of the host (default 0.01).
    epsilon_clock : str
        ``"step"`` (default) or ``"episode"``.
    """

    name = "delight"

    def reset(self, seed: SeedLike = None) -> None:
        super().reset(seed)
        zeros = torch.zeros(self.batch_size, dtype=torch.int64, device=self.device)
        self.explore_count = zeros.clone()
        self.override_count = zeros.clone()
        self.gate_size_total = zeros.clone()

    def posterior_q(self, rows: torch.Tensor, states: torch.Tensor, h: int) -> torch.Tensor:
        """``Q_post_h(s, ·)`` of the current posterior mean for ``rows``, ``(rows, A)``."""
        assert self.q_plan is not None
        if h == 0:
            # Nothing was observed since the plan froze: the posterior mean is the plan's.
            return self.q_plan[0][rows, states[rows]]
        if self._scratch is None:
            self._scratch = torch.empty_like(self._plan_buffer)
        shape = (self.horizon - h, rows.numel(), self.num_states, self.num_actions)
        out = self._scratch.view(-1)[: math.prod(shape)].view(shape)
        q = self.posterior.plan_mean(rows=rows, first_step=h, out=out)[0]
        return q[torch.arange(rows.numel(), device=self.device), states[rows]]

    def _act(self, s: torch.Tensor, h: int) -> torch.Tensor:
        assert self._uniforms is not None
        u = self._uniforms[h]
        q_plan = self._q_plan_at(s, h)
        host = self.host_probs(q_plan)
        eps = self._epsilon()
        q_post_all = torch.full_like(q_plan, float("nan"))
        ei_all = torch.full_like(q_plan, float("nan"))

        def decide(rows: torch.Tensor) -> DelightDecision:
            # The exploring rows re-plan Q_post; EI is its gain over the host's planned value.
            q_post = self.posterior_q(rows, s, h)
            host_r = host[rows]
            v_plan = (host_r * q_plan[rows]).sum(dim=-1, keepdim=True)
            ei = torch.clamp(q_post - v_plan, min=0.0)
            q_post_all[rows] = q_post
            ei_all[rows] = ei
            return self.decide(host_r, ei, eps)

        draw = sample_acting_on_explore_rows((u[:, 0], u[:, 1]), eps, decide, host_probs=host)
        gate_empty = torch.zeros_like(draw.explored)
        gate_size = torch.full((self.batch_size,), -1, dtype=torch.int64, device=self.device)
        if draw.decision is not None:
            rows = draw.rows
            sizes = draw.decision.gate.sum(dim=-1)
            gate_empty[rows] = draw.decision.gate_empty
            gate_size[rows] = sizes
            self.explore_count[rows] += 1
            self.override_count[rows] += (~draw.decision.gate_empty).to(torch.int64)
            self.gate_size_total[rows] += sizes
        self.last_info = {
            **delight_step_info(eps, draw.explored, gate_empty, gate_size),
            "q_post": q_post_all,
            "expected_improvement": ei_all,
        }
        return draw.actions


_CLASSES: dict[str, type[MDPAgent]] = agent_registry(
    PSRLAgent, MDPDelightAgent, MDPEpsilonGreedyAgent, MDPGreedyAgent
)
MDP_AGENTS: tuple[str, ...] = tuple(_CLASSES)  # psrl, delight, egreedy, greedy


def make_mdp_agent(name: str, *sizes: int, **kwargs: Any) -> MDPAgent:
    """Build a tabular MDP agent by name (``psrl, delight, egreedy, greedy``) with
    :class:`MDPAgent`'s arguments."""
    return build_agent(_CLASSES, name, *sizes, **kwargs)
