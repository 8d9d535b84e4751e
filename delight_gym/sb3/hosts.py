"""Stable-Baselines3 models as DE hosts, for the wrappers and the SB3 algorithms.

:class:`SB3PolicyHost` (PPO, A2C) and :class:`SB3QHost` (DQN) follow
:class:`~delight_gym.de.hosts.Host`; :class:`SB3GaussianHost` (SAC, PPO, A2C) and
:class:`SB3DeterministicHost` (TD3, DDPG) follow :class:`~delight_gym.de.engine_box.BoxHost`.
A host's own choice is ``policy.predict(obs, deterministic=True)``. SB3 is never imported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from delight_gym._checks import check_box_bounds, check_positive_float
from delight_gym.de.proposers import DEFAULT_HOST_STD, GaussianProposalHost
from delight_gym.de.rule import greedy_probs

__all__ = [
    "DEFAULT_HOST_STD",
    "SB3DeterministicHost",
    "SB3GaussianHost",
    "SB3ModelHost",
    "SB3PolicyHost",
    "SB3QHost",
]


def _check_policy(model: Any, has: bool, missing: str) -> None:
    """A ``TypeError`` naming ``model``'s class and what it lacks unless it ``has`` it."""
    if not has:
        raise TypeError(f"host {type(model).__name__} has no {missing}")


class SB3ModelHost:
    """Base of the SB3 hosts: holds the model (not pickled with the host)."""

    def __init__(self, model: Any) -> None:
        self.model: Any = model
        self.observation_space: Any = model.observation_space
        self.action_space: Any = model.action_space

    def _model(self) -> Any:
        if self.model is None:
            raise RuntimeError(
                f"this {type(self).__name__} was unpickled without its model; rebind it with "
                "host.model = model"
            )
        return self.model

    def _predict(self, observations: Any) -> np.ndarray:
        actions, _ = self._model().policy.predict(observations, deterministic=True)
        return np.asarray(actions)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["model"] = None
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.model).__name__})"


class _SB3Host(SB3ModelHost):
    def __init__(self, model: Any) -> None:
        from gymnasium import spaces

        if not isinstance(model.action_space, spaces.Discrete):
            raise ValueError(
                f"host must have a Discrete action space, got {model.action_space!r}; for Box "
                "actions use ContinuousDelightWrapper"
            )
        super().__init__(model)

    def _obs_tensor(self, observations: np.ndarray) -> Any:
        obs, _ = self._model().policy.obs_to_tensor(observations)
        return obs

    def act(self, observations: np.ndarray, probs: np.ndarray) -> np.ndarray:
        return self._predict(observations).reshape(len(probs))


class SB3PolicyHost(_SB3Host):
    """An SB3 PPO or A2C (categorical policy) as a host: ``π`` is its distribution's probs."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        _check_policy(
            model,
            hasattr(model.policy, "get_distribution"),
            "policy.get_distribution; use an actor-critic model (PPO, A2C) or a DQN",
        )

    def probs(self, observations: np.ndarray) -> np.ndarray:
        import torch

        policy = self._model().policy
        with torch.no_grad():
            dist = policy.get_distribution(self._obs_tensor(observations))
        return np.asarray(dist.distribution.probs.cpu().numpy(), dtype=np.float64)


class SB3QHost(_SB3Host):
    """An SB3 DQN as a host: greedy on its Q-values, or Boltzmann at ``temperature``.

    Parameters
    ----------
    model : stable_baselines3.DQN
        Any model whose ``policy.q_net`` maps observations to ``(n, A)`` Q-values.
    temperature : float, optional
        ``None``: ``π`` one-hot on the argmax (first maximal index, as DQN's ``predict``);
        ``τ > 0``: ``π = softmax(Q/τ)``. The deterministic choice is the argmax either way.
    """

    def __init__(self, model: Any, temperature: float | None = None) -> None:
        super().__init__(model)
        _check_policy(model, hasattr(model.policy, "q_net"), "policy.q_net")
        self.temperature = (
            None if temperature is None else check_positive_float(temperature, "temperature")
        )

    def q_values(self, observations: np.ndarray) -> np.ndarray:
        """float64 ``(n, A)``."""
        import torch

        policy = self._model().policy
        with torch.no_grad():
            q = policy.q_net(self._obs_tensor(observations))
        return np.asarray(q.cpu().numpy(), dtype=np.float64)

    def probs(self, observations: np.ndarray) -> np.ndarray:
        q = self.q_values(observations)
        if self.temperature is None:
            return greedy_probs(q)
        z = (q - q.max(axis=1, keepdims=True)) / self.temperature  # shifted: no overflow
        e = np.exp(z)
        return np.asarray(e / e.sum(axis=1, keepdims=True))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.model).__name__}, temperature={self.temperature})"


class _SB3BoxHost(SB3ModelHost):
    def __init__(self, model: Any) -> None:
        self.low, self.high = check_box_bounds(model.action_space, "host's action_space")
        super().__init__(model)

    def act(self, observations: Any) -> np.ndarray:
        """The policy's deterministic action, float64 ``(n, d)``."""
        return self._predict(observations).astype(np.float64).reshape(len(observations), -1)


def has_gaussian_policy(model: Any) -> bool:
    """Whether the SB3 ``model`` acts from a Gaussian (SAC's actor, PPO's or A2C's policy)."""
    policy = model.policy
    return hasattr(policy, "get_distribution") or hasattr(
        getattr(policy, "actor", None), "get_action_dist_params"
    )


class SB3GaussianHost(_SB3BoxHost):
    """SB3 SAC, PPO or A2C on a ``Box`` action space as a stochastic host.

    The policy's Gaussian ``N(μ(s), σ(s))`` over its internal action ``u``; SAC acts
    ``unscale(tanh u)``, PPO and A2C ``clip(u)``. A candidate's log-density is SB3's
    ``log_prob`` (for SAC of ``scale(a)``, tanh Jacobian included, in the env's units). Draws
    ``u = μ + σ z`` use the caller's generator.

    Parameters
    ----------
    model : stable_baselines3.SAC or PPO or A2C
        With a 1-D ``Box`` action space of finite bounds.
    """

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        _check_policy(
            model,
            has_gaussian_policy(model),
            "Gaussian policy (SAC, PPO, A2C); use SB3DeterministicHost for TD3 or DDPG",
        )
        self.squashed = bool(model.policy.squash_output)

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
        """SB3's log-density of each candidate ``(b, C, d)`` under its row's policy, ``(b, C)``."""
        import torch

        b, c, d = candidates.shape
        obs = np.repeat(np.asarray(states), c, axis=0)
        x = candidates.reshape(b * c, d)
        if self.squashed:
            x = np.clip(2.0 * (x - self.low) / (self.high - self.low) - 1.0, -1.0, 1.0)  # scale(a)
        with torch.no_grad():
            dist = self._distribution(obs)
            like = dist.distribution.mean
            log_p = dist.log_prob(torch.as_tensor(x, dtype=like.dtype, device=like.device))
        out = log_p.cpu().numpy().astype(np.float64).reshape(b, c)
        if self.squashed:  # the density of a = unscale(tanh u), not of scale(a)
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
        """One draw per row (as ``predict(deterministic=False)``, from ``rng``)."""
        return np.asarray(self.sample(observations, None, 1, rng))[:, 0]


class SB3DeterministicHost(_SB3BoxHost):
    """SB3 TD3 or DDPG on a ``Box`` action space: its action ``μ(s)``, with a truncated
    Gaussian proposal of std ``host_std·(high − low)`` as its density.

    Parameters
    ----------
    model : stable_baselines3.TD3 or DDPG
    host_std : float, default 0.1
        ``> 0``, the proposal's scale as a fraction of each coordinate's range.
    """

    def __init__(self, model: Any, host_std: float = DEFAULT_HOST_STD) -> None:
        super().__init__(model)
        _check_policy(model, hasattr(model.policy, "actor"), "policy.actor (TD3, DDPG)")
        self.proposal = GaussianProposalHost(model.action_space, host_std)

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        return self.act(observations)  # deterministic: the proposal's centre

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> np.ndarray:
        return self.proposal.log_weight(states, host_actions, candidates)

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        return self.proposal.sample(states, host_actions, n, rng)
