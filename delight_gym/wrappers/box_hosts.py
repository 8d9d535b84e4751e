"""Host adapters for ``Box`` actions: continuous policies as candidate-set DE sees them.

A host (:class:`~delight_gym.de.engine_box.BoxHost`) gives, for ``n`` observations, its
own deterministic actions, the action DE decides on (a draw of a stochastic host, else its own
action) and, as a :class:`~delight_gym.de.candidates.CandidateHost`, log-densities of candidates
and independent draws; actions in the environment's units, float64 ``(n, d)`` inside the box.

* :class:`~delight_gym.sb3.hosts.SB3GaussianHost` — SB3 SAC, PPO and A2C (own log-density);
* :class:`~delight_gym.sb3.hosts.SB3DeterministicHost` — SB3 TD3 and DDPG (stated proposal);
* :class:`CallableBoxHost` — a callable returning actions (and optionally a log-density).

The SB3 adapters live in :mod:`delight_gym.sb3.hosts` and are re-exported here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from delight_gym._checks import check_box_bounds, check_positive_float, host_view
from delight_gym.de.candidates import GaussianProposalHost
from delight_gym.de.engine_box import BoxHost, checked_actions
from delight_gym.sb3.hosts import DEFAULT_HOST_STD, SB3DeterministicHost, SB3GaussianHost

__all__ = [
    "BoxHost",
    "CallableBoxHost",
    "SB3DeterministicHost",
    "SB3GaussianHost",
    "box_bounds",
    "make_box_host",
]

#: Checked float64 ``(low, high)`` of a 1-D ``Box``: :func:`delight_gym._checks.check_box_bounds`.
box_bounds = check_box_bounds


class CallableBoxHost:
    """A callable ``observations (n, ...) -> actions (n, d)`` as a host.

    Without ``log_density`` the callable is deterministic and its density is the stated proposal
    of :class:`~delight_gym.de.candidates.GaussianProposalHost`. With it, the callable is a
    stochastic policy (its own randomness): its output is a draw, ``n`` more draws are one call
    on the observations repeated ``n`` times, and ``log_density(observations (b, ...),
    candidates (b, C, d)) -> (b, C)`` scores candidates.

    Parameters
    ----------
    fn : callable
    action_space : gymnasium.spaces.Box
        1-D, finite bounds.
    observation_space : gymnasium.Space, optional
    log_density : callable, optional
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
        if not callable(fn):
            raise TypeError(f"host must be callable, got {type(fn).__name__}")
        if log_density is not None and not callable(log_density):
            raise TypeError(f"host_log_density must be callable, got {type(log_density).__name__}")
        self.low, self.high = box_bounds(action_space, "action_space")
        self.fn, self.log_density = fn, log_density
        self.action_space, self.observation_space = action_space, observation_space
        self.proposal = None if log_density else GaussianProposalHost(action_space, host_std)

    def act(self, observations: Any) -> np.ndarray:
        """``fn(observations)``, checked: float64 ``(n, d)`` inside the box."""
        return checked_actions(
            self.fn(observations), len(observations), self.low, self.high, "host"
        )

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        """``fn(observations)`` (a draw of a stochastic callable)."""
        return self.act(observations)

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> np.ndarray:
        """``log_density`` of the candidates, or the proposal's; ``(b, C)``, checked finite."""
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
        """``n`` draws per row: the proposal's, or ``fn`` on the observations repeated."""
        if self.proposal is not None:
            return self.proposal.sample(states, host_actions, n, rng)
        b = len(host_actions)
        obs = np.repeat(np.asarray(states), n, axis=0)
        return checked_actions(self.fn(obs), b * n, self.low, self.high, "host").reshape(b, n, -1)

    def __repr__(self) -> str:
        kind = "stochastic" if self.log_density is not None else "deterministic"
        return f"{type(self).__name__}({self.fn!r}, {kind})"


def make_box_host(
    host: Any,
    *,
    observation_space: Any = None,
    action_space: Any = None,
    host_std: float | None = None,
    host_log_density: Callable[[Any, Any], Any] | None = None,
) -> BoxHost:
    """Wrap ``host`` in the adapter that fits it.

    Parameters
    ----------
    host : BoxHost, stable_baselines3 model or callable
        An adapter (returned as is); SB3 SAC, PPO, A2C (:class:`SB3GaussianHost`); SB3 TD3,
        DDPG (:class:`SB3DeterministicHost`); a callable (:class:`CallableBoxHost`).
    observation_space, action_space : gymnasium.Space, optional
        For callables (SB3 models carry their own).
    host_std : float, optional
        The proposal's scale for a deterministic host (default 0.1); refused for the others.
    host_log_density : callable, optional
        For callables only: makes the callable a stochastic host.

    Raises
    ------
    TypeError
        For anything else, or an option the host cannot use.
    """
    base_class = sys.modules.get("stable_baselines3.common.base_class")
    is_model = base_class is not None and isinstance(host, base_class.BaseAlgorithm)
    if host_log_density is not None and (is_model or not callable(host)):
        raise TypeError("host_log_density applies only to a callable host")
    if isinstance(host, (SB3GaussianHost, SB3DeterministicHost, CallableBoxHost)):
        if host_std is not None:
            raise TypeError("host_std applies to a host built here, not to an adapter")
        return host
    std = DEFAULT_HOST_STD if host_std is None else check_positive_float(host_std, "host_std")
    if is_model:
        policy = host.policy
        if hasattr(policy, "get_distribution") or hasattr(
            getattr(policy, "actor", None), "get_action_dist_params"
        ):
            if host_std is not None:
                raise TypeError(
                    f"host_std is the proposal of a deterministic host; {type(host).__name__} "
                    "has a density of its own"
                )
            return SB3GaussianHost(host)
        return SB3DeterministicHost(host, std)
    if callable(host):
        if host_log_density is not None and host_std is not None:
            raise TypeError("host_std is for a deterministic callable; host_log_density was given")
        return CallableBoxHost(host, action_space, observation_space, host_log_density, std)
    raise TypeError(
        "host must be a callable returning actions or a Stable-Baselines3 SAC/TD3/DDPG/PPO/A2C "
        f"model, got {type(host).__name__}"
    )
