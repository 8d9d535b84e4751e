"""Contextual-bandit agents on learned posteriors, batched over seeds (torch, any device).

Each round every row (seed) sees its ``K`` arms' inputs ``(batch, K, input_dim)`` and plays
one arm. Agents are ``RULE-POSTERIOR`` (rules ``delight``, ``thompson``, ``greedy``; posteriors
``linfull``, ``neurallinear``, ``ensemble``), ``egreedy`` and ``uniform``. Row ``i`` draws only
from its own generator, so a batch equals per-seed agents of batch 1.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from delight_gym._checks import (
    check_all_finite,
    check_choice,
    check_device,
    check_flag,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_would_fit,
)
from delight_gym.agents.base import DelightSettings, agent_registry
from delight_gym.agents.seeding import torch_seed
from delight_gym.de.rule import epsilon_schedule, sample_acting_on_explore_rows

__all__ = [
    "CONTEXTUAL_AGENTS",
    "CONTEXTUAL_POSTERIORS",
    "ContextualAgent",
    "make_contextual_agent",
    "row_generators",
]

#: Posteriors of the ``RULE-POSTERIOR`` agents.
CONTEXTUAL_POSTERIORS: tuple[str, ...] = ("linfull", "neurallinear", "ensemble")
#: Every agent name :func:`make_contextual_agent` takes.
CONTEXTUAL_AGENTS: tuple[str, ...] = (
    *(f"{r}-{p}" for p in CONTEXTUAL_POSTERIORS for r in ("delight", "thompson", "greedy")),
    "egreedy",
    "uniform",
)

#: Mixed into every row's seed, so an agent's stream differs from an env seeded alike.
_SALT = 0x5EED_C0DE


def row_generators(seed: int, batch: int) -> list[torch.Generator]:
    """``batch`` CPU generators, row ``i`` seeded from ``[seed + i, salt]``."""
    return [torch.Generator().manual_seed(torch_seed([seed + i, _SALT])) for i in range(batch)]


def _build_posterior(
    kind: str, sizes: tuple[int, int, int], gens: list, device: Any, kw: dict[str, Any]
) -> Any:
    if kind == "linfull":
        from delight_gym.posteriors.linfull import LinFullPosterior

        return LinFullPosterior(*sizes, device=device, **kw)
    cls: Any
    if kind == "neurallinear":
        from delight_gym.posteriors.neural_linear import NeuralLinearPosterior as cls
    else:
        from delight_gym.posteriors.bandit_ensemble import BanditEnsemblePosterior as cls
    return cls(*sizes, generators=gens, device=device, **kw)


def _check_shape(value: torch.Tensor, name: str, shape: tuple[int, ...]) -> None:
    if tuple(value.shape) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {tuple(value.shape)}")


class ContextualAgent:
    """Base of the contextual agents: sizes, the posterior, the row generators and ``t``.

    Parameters
    ----------
    batch, num_arms, input_dim : int
        Rows (seeds) ``B``, arms ``K`` and ``d`` of each arm's input.
    per_arm : bool
        One model per arm (``True``) or one shared model (``False``).
    seed : int
        Row ``i`` draws from a generator seeded from ``seed + i`` (:func:`row_generators`).
    posterior : str or None
        One of :data:`CONTEXTUAL_POSTERIORS` (``None``: no posterior, for ``uniform``).
    nl_settings : str, default "example"
        A name from :data:`~delight_gym.posteriors.neural_linear.NEURAL_LINEAR_SETTINGS`: the
        ``neurallinear`` posterior's defaults.
    **posterior_options
        Keywords of the posterior (``lambda_prior``, ``hidden_sizes``, ``dtype``, …).

    Attributes
    ----------
    overrides : torch.Tensor
        int64 ``(B,)``: rounds where DE's override fired with a non-empty gate.
    """

    name: ClassVar[str] = "base"

    def __init__(
        self,
        batch: int,
        num_arms: int,
        input_dim: int,
        *,
        per_arm: bool,
        seed: int,
        posterior: str | None = "linfull",
        device: Any = None,
        nl_settings: str = "example",
        **posterior_options: Any,
    ) -> None:
        from delight_gym.posteriors.neural_linear import (
            NEURAL_LINEAR_SETTINGS,
            neural_linear_settings,
        )

        self.nl_settings = neural_linear_settings(nl_settings, "nl_settings")
        if posterior == "neurallinear":
            posterior_options = {**NEURAL_LINEAR_SETTINGS[self.nl_settings], **posterior_options}
        elif self.nl_settings != "example":
            raise ValueError(
                f"nl_settings={self.nl_settings!r} needs the neurallinear posterior, "
                f"got {posterior!r}"
            )
        self.batch = check_positive_int(batch, "batch")
        self.num_arms = check_positive_int(num_arms, "num_arms")
        self.input_dim = check_positive_int(input_dim, "input_dim")
        self.per_arm = check_flag(per_arm, "per_arm")
        self.seed = check_nonnegative_int(seed, "seed")
        self.generators = row_generators(self.seed, self.batch)
        if posterior is None:
            if posterior_options:
                raise TypeError(f"unexpected keyword arguments {sorted(posterior_options)}")
            self.posterior: Any = None
            self.device = check_device(device)
            self.dtype = torch.float64
        else:
            check_choice(posterior, CONTEXTUAL_POSTERIORS, "posterior")
            sizes = (self.batch, self.num_arms if self.per_arm else 1, self.input_dim)
            self.posterior = _build_posterior(
                posterior, sizes, self.generators, device, posterior_options
            )
            self.device = self.posterior.device
            self.dtype = self.posterior.dtype
        self._check_round_fits()
        self._rows = torch.arange(self.batch, device=self.device)
        self.t = 0
        self.overrides = torch.zeros(self.batch, dtype=torch.int64, device=self.device)

    def _check_round_fits(self) -> None:
        # A round holds a few copies of the (B, K, d) inputs and, for a network posterior,
        # its (B, K, width) activations.
        network = getattr(self.posterior, "network", None)
        width = max(network.sizes[1:-1]) if network is not None else 0
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        check_would_fit(
            4 * self.batch * self.num_arms * (self.input_dim + width + 2) * itemsize,
            f"num_arms={self.num_arms} x input_dim={self.input_dim} (x batch={self.batch}: "
            "a round's inputs and activations)",
            self.device,
        )

    def _check_inputs(self, inputs: Any) -> torch.Tensor:
        x = torch.as_tensor(inputs, device=self.device)
        if not x.is_floating_point():
            raise TypeError(f"inputs must be a float tensor, got {x.dtype}")
        _check_shape(x, "inputs", (self.batch, self.num_arms, self.input_dim))
        x = x.to(self.dtype)
        check_all_finite(x, "inputs")
        return x

    def _uniforms(self, count: int) -> torch.Tensor:
        """float64 ``(B, count)`` uniforms, row ``i`` from its own generator."""
        draws = [torch.rand(count, generator=g, dtype=torch.float64) for g in self.generators]
        return torch.stack(draws).to(self.device)

    def _random_arms(self) -> torch.Tensor:
        draws = [torch.randint(self.num_arms, (1,), generator=g) for g in self.generators]
        return torch.cat(draws).to(self.device)

    def act(self, inputs: Any) -> torch.Tensor:
        """One arm per row, int64 ``(B,)``, from every arm's input, float ``(B, K, input_dim)``."""
        return self._act(self._check_inputs(inputs))

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    # act() checked x once this round: the posterior's private methods trust it.
    def _greedy(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(self.posterior._mean(x), dim=-1)

    def update(self, inputs: Any, actions: Any, rewards: Any) -> None:
        """Feed back the finite ``rewards`` ``(B,)`` of the ``actions`` ``(B,)`` played on
        ``inputs`` ``(B, K, input_dim)``."""
        x = self._check_inputs(inputs)
        a = torch.as_tensor(actions, device=self.device)
        if a.is_floating_point() or a.dtype == torch.bool:
            raise TypeError(f"actions must be an integer tensor, got {a.dtype}")
        _check_shape(a, "actions", (self.batch,))
        if bool(((a < 0) | (a >= self.num_arms)).any()):
            raise ValueError(f"actions must lie in [0, {self.num_arms})")
        r = torch.as_tensor(rewards, device=self.device)
        _check_shape(r, "rewards", (self.batch,))
        r = r.to(self.dtype)
        check_all_finite(r, "rewards")
        a = a.long()
        if self.posterior is not None:
            groups = a if self.per_arm else torch.zeros_like(a)  # one shared model: group 0
            self.posterior.update(x[self._rows, a], groups, r)
        self.t += 1

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch={self.batch}, num_arms={self.num_arms}, "
            f"input_dim={self.input_dim}, per_arm={self.per_arm}, posterior={self.posterior!r})"
        )


class ContextualGreedyAgent(ContextualAgent):
    """The host alone: the arm of largest posterior mean reward (lowest index on ties)."""

    name = "greedy"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        return self._greedy(x)


class ContextualThompsonAgent(ContextualAgent):
    """Thompson sampling: the best arm under one posterior draw per round and row."""

    name = "thompson"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        values = self.posterior._thompson_values(x, self.generators)
        return torch.argmax(values, dim=-1)


class ContextualEpsilonGreedyAgent(ContextualAgent):
    """Annealed ε-greedy: a uniform arm with probability ``ε_t = M/(M + t)`` (``half_life``
    ``M``, default 100), else greedy."""

    name = "egreedy"

    def __init__(self, *args: Any, half_life: float = 100.0, **kwargs: Any) -> None:
        self.half_life = check_positive_float(half_life, "half_life")
        super().__init__(*args, **kwargs)

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        eps = epsilon_schedule(self.t, self.half_life)
        u = self._uniforms(1)[:, 0]
        random_arm = self._random_arms()
        return torch.where(u < eps, random_arm, self._greedy(x))


class ContextualUniformAgent(ContextualAgent):
    """Uniform play: every arm with probability ``1/K`` (no posterior)."""

    name = "uniform"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        return self._random_arms()


class ContextualDelightAgent(DelightSettings, ContextualAgent):
    """Delight-gated exploration (Algorithm 1) with a greedy host on the posterior mean:
    baseline ``v = max_a`` posterior mean, EI of each arm's mean reward; ``gate_price`` ``λ``
    is in reward units (:func:`make_contextual_agent` scales it)."""

    name = "delight"

    def _act(self, x: torch.Tensor) -> torch.Tensor:
        pred = self.posterior._predictive(x)
        mean = pred.mean
        host_arm = torch.argmax(mean, dim=-1)
        baseline = mean[self._rows, host_arm]
        eps = epsilon_schedule(self.t, self.half_life)
        u = self._uniforms(2)
        ei_floor = self.gate_price / self.surprisal_cap  # smaller EI: outside the gate anyway

        def decide(rows: torch.Tensor) -> Any:
            host = torch.zeros((rows.shape[0], self.num_arms), dtype=mean.dtype, device=self.device)
            host[torch.arange(rows.shape[0], device=self.device), host_arm[rows]] = 1.0
            ei = pred._expected_improvement(baseline[rows, None], rows, ei_floor)
            return self.decide(host, ei.to(mean.dtype), eps)

        draw = sample_acting_on_explore_rows((u[:, 0], u[:, 1]), eps, decide, host_actions=host_arm)
        if draw.decision is not None:
            self.overrides[draw.rows] += (~draw.decision.gate_empty).to(torch.int64)
        return draw.actions


_RULES: dict[str, type[ContextualAgent]] = agent_registry(
    ContextualDelightAgent,
    ContextualThompsonAgent,
    ContextualGreedyAgent,
    ContextualEpsilonGreedyAgent,
    ContextualUniformAgent,
)


def make_contextual_agent(
    name: str,
    batch: int,
    num_arms: int,
    input_dim: int,
    *,
    per_arm: bool,
    seed: int,
    device: Any = None,
    reward_scale: float = 1.0,
    half_life: float = 100.0,
    gate_price: float = 0.1,
    surprisal_cap: float = 10.0,
    **posterior_kwargs: Any,
) -> ContextualAgent:
    """Build a contextual agent by name (one of :data:`CONTEXTUAL_AGENTS`).

    Parameters
    ----------
    name : str
        ``RULE-POSTERIOR`` (``delight-linfull``, …), ``egreedy`` or ``uniform``.
    batch, num_arms, input_dim, per_arm, seed, device :
        As for :class:`ContextualAgent`.
    reward_scale : float, default 1.0
        The mean reward's range: DE's price is ``λ = gate_price · reward_scale``.
    half_life, gate_price, surprisal_cap : float
        ``M`` (``delight``, ``egreedy``), ``λ`` per unit of ``reward_scale`` and ``L``
        (``delight``); the paper's 100, 0.1, 10.
    **posterior_kwargs
        Keywords of the posterior (``egreedy``: LinFull's).

    Raises
    ------
    ValueError
        An unknown ``name`` (naming the choices) or a bad setting (naming it).
    """
    check_choice(name, CONTEXTUAL_AGENTS, "name")
    scale = check_positive_float(reward_scale, "reward_scale")
    sizes = (batch, num_arms, input_dim)
    common: dict[str, Any] = {"per_arm": per_arm, "seed": seed, "device": device}
    if name == "uniform":
        if posterior_kwargs:
            raise TypeError(f"uniform takes no posterior keywords, got {sorted(posterior_kwargs)}")
        return ContextualUniformAgent(*sizes, posterior=None, **common)
    if name == "egreedy":
        common.update(posterior="linfull", half_life=half_life)
        return ContextualEpsilonGreedyAgent(*sizes, **common, **posterior_kwargs)
    rule, posterior = name.split("-", 1)
    cls = _RULES[rule]
    if cls is ContextualDelightAgent:
        lam = check_nonnegative_float(gate_price, "gate_price", allow_inf=True)
        common.update(half_life=half_life, gate_price=lam * scale, surprisal_cap=surprisal_cap)
    return cls(batch, num_arms, input_dim, posterior=posterior, **common, **posterior_kwargs)
