"""Hosts, the policies DE wraps: the :class:`Host` (``Discrete``) and :class:`BoxHost` (``Box``)
protocols, adapters of callables, and :func:`make_host`, which picks the adapter (SB3 models:
:mod:`delight_gym.sb3.hosts`). :func:`checked_actions` is importable from here too."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from delight_gym._checks import check_box_bounds, check_callable, host_view
from delight_gym.de.proposers import DEFAULT_HOST_STD, GaussianProposalHost, checked_actions

__all__ = ["BoxHost", "CallableBoxHost", "CallableHost", "Host", "checked_actions", "make_host"]


class Host(Protocol):
    """A policy DE can wrap. ``observation_space`` / ``action_space`` may be ``None``."""

    observation_space: Any
    action_space: Any

    def probs(self, observations: np.ndarray) -> np.ndarray:
        """Action probabilities ``(n, A)`` of ``n`` observations."""

    def act(self, observations: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """The host's own deterministic actions ``(n,)`` (``probs`` are :meth:`probs`' output)."""


@runtime_checkable
class BoxHost(Protocol):
    """A continuous policy DE can wrap (``observation_space`` may be ``None`` for a callable)."""

    observation_space: Any
    action_space: Any

    def act(self, observations: Any) -> np.ndarray:
        """The host's own deterministic actions, float64 ``(n, d)``."""

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        """The host's action to decide on, float64 ``(n, d)``: a draw if it is stochastic."""

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> Any:
        """Log-densities ``(b, C)`` of candidates ``(b, C, d)`` (finite inside the box)."""

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        """``n`` independent draws per row, ``(b, n, d)``."""


class CallableHost:
    """A callable ``observations (n, ...) -> probabilities (n, A)`` as a host; its own choice is
    the (first) argmax."""

    def __init__(
        self,
        fn: Callable[[np.ndarray], Any],
        observation_space: Any = None,
        action_space: Any = None,
    ) -> None:
        self.fn = check_callable(fn, "host")
        self.observation_space, self.action_space = observation_space, action_space

    def probs(self, observations: np.ndarray) -> np.ndarray:
        out = self.fn(observations)
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(out, torch.Tensor):
            out = out.detach().cpu().numpy()
        try:
            return np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"host must return numeric probabilities: {exc}") from None

    def act(self, observations: np.ndarray, probs: np.ndarray) -> np.ndarray:
        return np.argmax(probs, axis=-1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fn!r})"


class CallableBoxHost:
    """A callable ``observations (n, ...) -> actions (n, d)`` as a host: deterministic, with a
    :class:`~delight_gym.de.candidates.GaussianProposalHost` density, unless ``log_density``
    makes it stochastic (its output a draw; more draws: one call on repeated observations).

    Parameters
    ----------
    fn : callable
        The policy.
    action_space : gymnasium.spaces.Box
        1-D with finite bounds.
    observation_space : gymnasium.Space, optional
    log_density : callable, optional
        ``(observations (b, ...), candidates (b, C, d)) -> (b, C)``.
    host_std : float, default 0.1
        The proposal's scale (deterministic callables only).
    """

    def __init__(
        self,
        fn: Callable[[Any], Any],
        action_space: Any,
        observation_space: Any = None,
        log_density: Callable[[Any, Any], Any] | None = None,
        host_std: float = DEFAULT_HOST_STD,
    ) -> None:
        check_callable(fn, "host")
        if log_density is not None:
            check_callable(log_density, "host_log_density")
        self.low, self.high = check_box_bounds(action_space, "action_space")
        self.fn, self.log_density = fn, log_density
        self.action_space, self.observation_space = action_space, observation_space
        self.proposal = None if log_density else GaussianProposalHost(action_space, host_std)

    def act(self, observations: Any) -> np.ndarray:
        return checked_actions(
            self.fn(observations), len(observations), self.low, self.high, "host"
        )

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        return self.act(observations)

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> np.ndarray:
        if self.proposal is not None:
            return self.proposal.log_weight(states, host_actions, candidates)
        assert self.log_density is not None
        out = np.asarray(host_view(self.log_density(states, candidates)), dtype=np.float64)
        if out.shape != candidates.shape[:2]:
            raise ValueError(
                f"host_log_density must return shape {candidates.shape[:2]}, got {out.shape}"
            )
        if not np.isfinite(out).all():
            raise ValueError("host_log_density must be finite for candidates inside the box")
        return out

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        if self.proposal is not None:
            return self.proposal.sample(states, host_actions, n, rng)
        b = len(host_actions)
        obs = np.repeat(np.asarray(states), n, axis=0)
        return checked_actions(self.fn(obs), b * n, self.low, self.high, "host").reshape(b, n, -1)

    def __repr__(self) -> str:
        kind = "stochastic" if self.log_density is not None else "deterministic"
        return f"{type(self).__name__}({self.fn!r}, {kind})"


def _is_sb3_model(host: Any) -> bool:
    base_class = sys.modules.get("stable_baselines3.common.base_class")
    return base_class is not None and isinstance(host, base_class.BaseAlgorithm)


def host_action_space(host: Any, action_space: Any = None) -> Any:
    """The action space of ``host``: an SB3 model's or an adapter's own, else ``action_space``."""
    own = getattr(host, "action_space", None)
    if _is_sb3_model(host) or own is not None:
        if action_space is not None and own is not None and action_space != own:
            raise ValueError(f"action_space {action_space!r} is not the host's own {own!r}")
        return own
    return action_space


def make_host(
    host: Any,
    *,
    observation_space: Any = None,
    action_space: Any = None,
    temperature: float | None = None,
    host_std: float | None = None,
    host_log_density: Callable[[Any, Any], Any] | None = None,
) -> Any:
    """Wrap ``host`` in the adapter that fits it and its action space.

    Parameters
    ----------
    host : Host, BoxHost, stable_baselines3 model or callable
        An adapter (returned as is); an SB3 PPO/A2C/DQN or a callable returning probabilities
        (``Discrete``); an SB3 SAC/PPO/A2C/TD3/DDPG or a callable returning actions (``Box``).
    observation_space, action_space : gymnasium.Space, optional
        For callables (SB3 models and adapters carry their own).
    temperature : float, optional
        DQN hosts only: ``None`` greedy, ``τ > 0`` Boltzmann.
    host_std : float, optional
        ``Box`` only: a deterministic host's proposal scale (default 0.1 of the range).
    host_log_density : callable, optional
        ``Box`` only: a callable's log-density, making it a stochastic host.

    Raises
    ------
    TypeError
        For anything else, or an option the host cannot use.
    """
    from delight_gym.sb3 import hosts as sb3_hosts  # never imports SB3 itself

    space = host_action_space(host, action_space)
    is_model = _is_sb3_model(host)
    box = isinstance(space, spaces.Box)
    if not box:
        for name, value in (("host_std", host_std), ("host_log_density", host_log_density)):
            if value is not None:
                raise TypeError(f"{name} applies only to Box action spaces, got {space!r}")
    if space is not None and not isinstance(space, spaces.Discrete | spaces.Box):
        raise ValueError(f"action_space must be Discrete or Box, got {space!r}")
    if temperature is not None and (box or not (is_model and hasattr(host.policy, "q_net"))):
        raise TypeError("host_temperature applies only to DQN hosts on Discrete actions")
    if box:
        return _make_box_host(host, sb3_hosts, observation_space, space, host_std, host_log_density)
    if isinstance(host, CallableHost | sb3_hosts.SB3PolicyHost | sb3_hosts.SB3QHost):
        return host
    if is_model:
        if hasattr(host.policy, "q_net"):
            return sb3_hosts.SB3QHost(host, temperature)
        return sb3_hosts.SB3PolicyHost(host)
    if callable(host):
        return CallableHost(host, observation_space, action_space)
    raise TypeError(
        "host must be a callable or a Stable-Baselines3 model (PPO/A2C/DQN on Discrete actions; "
        f"SAC/TD3/DDPG/PPO/A2C on Box actions), got {type(host).__name__}"
    )


def _make_box_host(
    host: Any,
    sb3_hosts: Any,
    observation_space: Any,
    action_space: Any,
    host_std: float | None,
    host_log_density: Callable[[Any, Any], Any] | None,
) -> BoxHost:
    is_model = _is_sb3_model(host)
    if host_log_density is not None and (is_model or not callable(host)):
        raise TypeError("host_log_density applies only to a callable host")
    if isinstance(
        host, sb3_hosts.SB3GaussianHost | sb3_hosts.SB3DeterministicHost | CallableBoxHost
    ):
        if host_std is not None:
            raise TypeError("host_std applies to a host built here, not to an adapter")
        return host
    std = DEFAULT_HOST_STD if host_std is None else host_std  # the proposal checks it
    if is_model:
        if sb3_hosts.has_gaussian_policy(host):
            if host_std is not None:
                raise TypeError(
                    f"host_std is the proposal of a deterministic host; {type(host).__name__} "
                    "has a density of its own"
                )
            return sb3_hosts.SB3GaussianHost(host)
        return sb3_hosts.SB3DeterministicHost(host, std)
    if callable(host):
        if host_log_density is not None and host_std is not None:
            raise TypeError("host_std is for a deterministic callable; host_log_density was given")
        return CallableBoxHost(host, action_space, observation_space, host_log_density, std)
    raise TypeError(
        "host must be a callable returning actions or a Stable-Baselines3 SAC/TD3/DDPG/PPO/A2C "
        f"model, got {type(host).__name__}"
    )
