"""Host adapters: one interface over the policies that DE can wrap.

A host (:class:`~delight_gym.de.engine.Host`) gives, for a batch of ``n`` observations, its
action probabilities ``π(·|s)`` of shape ``(n, A)`` and its own deterministic choice.

* :class:`CallableHost` — any callable ``observations (n, ...) -> probabilities (n, A)``;
* :class:`~delight_gym.sb3.hosts.SB3PolicyHost` — an SB3 PPO or A2C (categorical policy);
* :class:`~delight_gym.sb3.hosts.SB3QHost` — an SB3 DQN: greedy or Boltzmann on its Q-values.

The SB3 adapters live in :mod:`delight_gym.sb3.hosts` (the SB3 algorithms use them too) and are
re-exported here. :func:`make_host` picks the adapter; SB3 is imported only when a model is given.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from delight_gym.de.engine import Host
from delight_gym.sb3.hosts import SB3ModelHost, SB3PolicyHost, SB3QHost

__all__ = ["CallableHost", "Host", "SB3ModelHost", "SB3PolicyHost", "SB3QHost", "make_host"]


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
