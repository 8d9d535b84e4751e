"""Host adapters: one interface over the policies that DE can wrap.

A host gives, for a batch of ``n`` observations, its action probabilities ``π(·|s)`` of shape
``(n, A)`` (:meth:`Host.probs`) and its own deterministic choice (:meth:`Host.act`).

* :class:`CallableHost` — any callable ``observations (n, ...) -> probabilities (n, A)``;
* :class:`SB3PolicyHost` — an SB3 PPO or A2C (categorical policy): ``π`` from its distribution;
* :class:`SB3QHost` — an SB3 DQN: greedy on its Q-values, or Boltzmann at a temperature.

An SB3 host's own choice is its policy's ``predict(obs, deterministic=True)``. :func:`make_host`
picks the adapter; Stable-Baselines3 is imported only when a model is given.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from delight_gym._checks import check_positive_float
from delight_gym.options import greedy_probs

__all__ = ["CallableHost", "Host", "SB3ModelHost", "SB3PolicyHost", "SB3QHost", "make_host"]


@runtime_checkable
class Host(Protocol):
    """A policy DE can wrap. ``observation_space`` / ``action_space`` may be ``None``."""

    observation_space: Any
    action_space: Any

    def probs(self, observations: np.ndarray) -> np.ndarray:
        """Action probabilities ``(n, A)`` for a batch of ``n`` observations."""
        ...

    def act(self, observations: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """The host's own deterministic actions ``(n,)`` (``probs`` are :meth:`probs`' output)."""
        ...


class CallableHost:
    """A callable ``observations (n, ...) -> probabilities (n, A)`` as a host.

    Its deterministic choice is the argmax of its probabilities (first maximal index).
    """

    def __init__(
        self,
        fn: Callable[[np.ndarray], Any],
        observation_space: Any = None,
        action_space: Any = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"host must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.observation_space = observation_space
        self.action_space = action_space

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


class SB3ModelHost:
    """An SB3 model as a host, discrete or ``Box`` (the model is not pickled with it): the
    base of this module's hosts and of :mod:`~delight_gym.wrappers.box_hosts`'."""

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

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["model"] = None
        return state


class _SB3Host(SB3ModelHost):
    """Shared parts of the Stable-Baselines3 hosts (the model is not pickled with them)."""

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
        actions, _ = self._model().policy.predict(observations, deterministic=True)
        return np.asarray(actions).reshape(len(probs))


class SB3PolicyHost(_SB3Host):
    """A Stable-Baselines3 PPO / A2C model (categorical actor-critic policy) as a host:
    ``π = model.policy.get_distribution(obs).distribution.probs``, its own choice the mode."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        if not hasattr(model.policy, "get_distribution"):
            raise TypeError(
                f"host {type(model).__name__} has no policy.get_distribution; use an "
                "actor-critic model (PPO, A2C) or a DQN"
            )

    def probs(self, observations: np.ndarray) -> np.ndarray:
        import torch

        policy = self._model().policy
        with torch.no_grad():
            dist = policy.get_distribution(self._obs_tensor(observations))
        return np.asarray(dist.distribution.probs.cpu().numpy(), dtype=np.float64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.model).__name__})"


class SB3QHost(_SB3Host):
    """A Stable-Baselines3 DQN as a host: greedy on its Q-values, or Boltzmann at ``temperature``.

    Parameters
    ----------
    model : stable_baselines3.DQN
        Any model whose ``policy.q_net`` maps observations to ``(n, A)`` Q-values.
    temperature : float, optional
        ``None`` (default): greedy host, ``π`` one-hot on the argmax (ties: the first maximal
        index, as ``torch.argmax`` and DQN's ``predict``). ``τ > 0``: Boltzmann,
        ``π = softmax(Q/τ)``; the deterministic choice stays the argmax.
    """

    def __init__(self, model: Any, temperature: float | None = None) -> None:
        super().__init__(model)
        if not hasattr(model.policy, "q_net"):
            raise TypeError(f"host {type(model).__name__} has no policy.q_net")
        self.temperature = (
            None if temperature is None else check_positive_float(temperature, "temperature")
        )

    def q_values(self, observations: np.ndarray) -> np.ndarray:
        """The Q-network's values, float64 ``(n, A)``."""
        import torch

        policy = self._model().policy
        with torch.no_grad():
            q = policy.q_net(self._obs_tensor(observations))
        return np.asarray(q.cpu().numpy(), dtype=np.float64)

    def probs(self, observations: np.ndarray) -> np.ndarray:
        q = self.q_values(observations)
        if self.temperature is None:
            return greedy_probs(q)
        z = (q - q.max(axis=1, keepdims=True)) / self.temperature
        e = np.exp(z)
        return np.asarray(e / e.sum(axis=1, keepdims=True))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.model).__name__}, temperature={self.temperature})"


def make_host(
    host: Any,
    *,
    temperature: float | None = None,
    observation_space: Any = None,
    action_space: Any = None,
) -> Host:
    """Wrap ``host`` in the adapter that fits it.

    Parameters
    ----------
    host : Host, stable_baselines3 model or callable
        An adapter (returned as is), an SB3 PPO/A2C (:class:`SB3PolicyHost`), an SB3 DQN
        (:class:`SB3QHost`) or a callable (:class:`CallableHost`).
    temperature : float, optional
        Only for DQN hosts (see :class:`SB3QHost`).
    observation_space, action_space : gymnasium.Space, optional
        For callable hosts (SB3 models carry their own).

    Raises
    ------
    TypeError
        For anything else, or a temperature for a non-DQN host.
    """
    base_class = sys.modules.get("stable_baselines3.common.base_class")
    is_model = base_class is not None and isinstance(host, base_class.BaseAlgorithm)
    if temperature is not None and not (is_model and hasattr(host.policy, "q_net")):
        raise TypeError("host_temperature applies only to DQN hosts (greedy vs Boltzmann)")
    if isinstance(host, (CallableHost, SB3PolicyHost, SB3QHost)):
        return host
    if is_model:
        if hasattr(host.policy, "q_net"):
            return SB3QHost(host, temperature)
        return SB3PolicyHost(host)
    if callable(host):
        return CallableHost(host, observation_space, action_space)
    raise TypeError(
        "host must be a callable returning action probabilities or a Stable-Baselines3 "
        f"PPO/A2C/DQN model, got {type(host).__name__}"
    )
