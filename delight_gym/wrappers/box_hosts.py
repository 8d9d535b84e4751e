"""Host adapters for ``Box`` actions: continuous policies as candidate-set DE sees them.

A :class:`BoxHost` gives, for ``n`` observations, its own deterministic actions
(:meth:`BoxHost.act`), the action DE decides on (:meth:`BoxHost.draw`: a draw of a stochastic
host, else its own action) and, as a :class:`~delight_gym.candidates.CandidateHost`,
log-densities of candidates and independent draws. Actions are in the environment's units,
float64 ``(n, d)`` inside ``[low, high]``.

* :class:`SB3GaussianHost` — SB3 SAC (squashed Gaussian), PPO and A2C (Gaussian, clipped to
  the box): the policy's own log-density, with SB3's ``[-1, 1]`` rescaling undone;
* :class:`SB3DeterministicHost` — SB3 TD3 and DDPG, with a stated truncated-Gaussian proposal;
* :class:`CallableBoxHost` — a callable returning actions (and optionally a log-density).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from delight_gym._checks import check_box_bounds, check_positive_float, host_view
from delight_gym.candidates import GaussianProposalHost
from delight_gym.wrappers.hosts import SB3ModelHost

__all__ = [
    "BoxHost",
    "CallableBoxHost",
    "SB3DeterministicHost",
    "SB3GaussianHost",
    "box_bounds",
    "make_box_host",
]

#: The proposal scale of a deterministic host, as a fraction of each coordinate's range.
DEFAULT_HOST_STD = 0.1


#: Checked float64 ``(low, high)`` of a 1-D ``Box``: :func:`delight_gym._checks.check_box_bounds`.
box_bounds = check_box_bounds


def checked_actions(value: Any, n: int, low: np.ndarray, high: np.ndarray, name: str) -> Any:
    """``value`` as float64 ``(n, d)`` actions, finite and inside ``[low, high]``; a
    ``ValueError`` naming ``name`` otherwise (``TypeError`` for non-numbers)."""
    try:
        arr = np.asarray(host_view(value), dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must return numeric actions") from None
    arr = arr.reshape(n, -1) if arr.size == n * low.size else arr
    if arr.shape != (n, low.size):
        raise ValueError(f"{name} must give actions of shape ({n}, {low.size}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} gave non-finite actions")
    if (arr < low).any() or (arr > high).any():
        raise ValueError(f"{name} gave actions outside the action space [{low}, {high}]")
    return arr


@runtime_checkable
class BoxHost(Protocol):
    """A continuous policy DE can wrap (``observation_space`` may be ``None`` for a callable)."""

    observation_space: Any
    action_space: Any

    def act(self, observations: Any) -> np.ndarray:
        """The host's own deterministic actions, float64 ``(n, d)``."""
        ...

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        """The host's action to decide on, float64 ``(n, d)``: a draw if it is stochastic."""
        ...

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> Any:
        """Log-densities ``(b, C)`` of candidates ``(b, C, d)`` (finite inside the box)."""
        ...

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        """``n`` independent draws per row, ``(b, n, d)``."""
        ...


class _SB3BoxHost(SB3ModelHost):
    """An SB3 model with a ``Box`` action space (the model is not pickled with the adapter)."""

    def __init__(self, model: Any) -> None:
        self.low, self.high = box_bounds(model.action_space, "host's action_space")
        super().__init__(model)

    def act(self, observations: Any) -> np.ndarray:
        """``model.policy.predict(observations, deterministic=True)``, float64 ``(n, d)``."""
        actions, _ = self._model().policy.predict(observations, deterministic=True)
        return np.asarray(actions, dtype=np.float64).reshape(len(observations), -1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.model).__name__})"


class SB3GaussianHost(_SB3BoxHost):
    """SB3 SAC, PPO or A2C on a ``Box`` action space as a stochastic host.

    The policy's Gaussian ``N(μ(s), σ(s))`` over its internal action ``u``: SAC squashes it,
    ``a = unscale(tanh u)`` (its ``policy.squash_output``), and the log-density of a candidate is
    SB3's own ``log_prob`` of ``scale(a)`` (tanh Jacobian included) minus ``Σ log((high − low)/2)``;
    PPO and A2C act in the environment's units and clip to the box, so a candidate's
    log-density is the Gaussian's (the clipped law's atoms on the faces are not counted).
    Draws use the caller's generator: ``u = μ + σ z``, ``z ~ N(0, I)`` (gSDE's noise: its
    marginal Gaussian).

    Parameters
    ----------
    model : stable_baselines3.SAC or PPO or A2C
        With a 1-D ``Box`` action space of finite bounds.
    """

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        policy = model.policy
        if not (
            hasattr(policy, "get_distribution")
            or hasattr(getattr(policy, "actor", None), "get_action_dist_params")
        ):
            raise TypeError(
                f"host {type(model).__name__} has no Gaussian policy (SAC, PPO, A2C); use "
                "SB3DeterministicHost for TD3 or DDPG"
            )
        self.squashed = bool(policy.squash_output)

    def _distribution(self, observations: Any) -> Any:
        policy = self._model().policy
        obs, _ = policy.obs_to_tensor(observations)
        if hasattr(policy, "get_distribution"):  # PPO, A2C
            return policy.get_distribution(obs)
        actor = policy.actor  # SAC
        mean, log_std, kwargs = actor.get_action_dist_params(obs)
        return actor.action_dist.proba_distribution(mean, log_std, **kwargs)

    def _to_env_units(self, u: np.ndarray) -> np.ndarray:
        """Internal actions ``u`` → the box: ``unscale(tanh u)`` or ``clip(u)``."""
        if self.squashed:
            u = self.low + 0.5 * (np.tanh(u) + 1.0) * (self.high - self.low)
        return np.clip(u, self.low, self.high)

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> np.ndarray:
        """SB3's log-density of each candidate ``(b, C, d)`` under its row's policy → ``(b, C)``."""
        import torch

        b, c, d = candidates.shape
        obs = np.repeat(np.asarray(states), c, axis=0)
        x = candidates.reshape(b * c, d)
        if self.squashed:
            x = np.clip(2.0 * (x - self.low) / (self.high - self.low) - 1.0, -1.0, 1.0)
        with torch.no_grad():
            dist = self._distribution(obs)
            like = dist.distribution.mean
            log_p = dist.log_prob(torch.as_tensor(x, dtype=like.dtype, device=like.device))
        out = log_p.cpu().numpy().astype(np.float64).reshape(b, c)
        if self.squashed:
            out -= np.log((self.high - self.low) / 2.0).sum()
        return out

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        """``n`` draws per row from the policy, float64 ``(b, n, d)``, with ``rng``."""
        import torch

        with torch.no_grad():
            normal = self._distribution(np.asarray(states)).distribution
            mean = normal.mean.cpu().numpy().astype(np.float64)
            std = normal.stddev.cpu().numpy().astype(np.float64)
        z = rng.standard_normal((mean.shape[0], n, mean.shape[1]))
        return self._to_env_units(mean[:, None] + std[:, None] * z)

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        """One draw per row (what SB3's ``predict(deterministic=False)`` draws, from ``rng``)."""
        return np.asarray(self.sample(observations, None, 1, rng))[:, 0]


class SB3DeterministicHost(_SB3BoxHost):
    """SB3 TD3 or DDPG on a ``Box`` action space: its action ``μ(s)`` with the stated proposal
    of :class:`~delight_gym.candidates.GaussianProposalHost` (truncated Gaussian noise of
    standard deviation ``host_std·(high − low)``) as its density.

    Parameters
    ----------
    model : stable_baselines3.TD3 or DDPG
    host_std : float, default 0.1
        ``> 0``, the proposal's scale as a fraction of each coordinate's range.
    """

    def __init__(self, model: Any, host_std: float = DEFAULT_HOST_STD) -> None:
        super().__init__(model)
        if not hasattr(model.policy, "actor"):
            raise TypeError(f"host {type(model).__name__} has no policy.actor (TD3, DDPG)")
        self.proposal = GaussianProposalHost(model.action_space, host_std)

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        """The host's own action ``μ(s)`` (the proposal's centre)."""
        return self.act(observations)

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> np.ndarray:
        """The proposal's log-density around ``host_actions``, ``(b, C)``."""
        return self.proposal.log_weight(states, host_actions, candidates)

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        """``n`` proposal draws around ``host_actions``, ``(b, n, d)``."""
        return self.proposal.sample(states, host_actions, n, rng)


class CallableBoxHost:
    """A callable ``observations (n, ...) -> actions (n, d)`` as a host.

    Without ``log_density`` the callable is deterministic and its density is the stated proposal
    of :class:`~delight_gym.candidates.GaussianProposalHost`. With it, the callable is a
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
