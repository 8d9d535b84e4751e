"""``DelightExplorationWrapper``: Delight-gated exploration around any host policy.

One public class for every action space: constructing it builds
:class:`~delight_gym.de.engine_discrete.DiscreteDelightWrapper` on ``Discrete`` actions
(Algorithm 1) or :class:`~delight_gym.de.engine_box.ContinuousDelightWrapper` on ``Box``
actions (the same gate on a candidate set), both instances of this class. Guide:
``docs/sb3.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymnasium import spaces

from delight_gym.de.engine import DelightEngine
from delight_gym.de.engine_box import ContinuousDelightWrapper
from delight_gym.de.engine_discrete import DiscreteDelightWrapper
from delight_gym.de.hosts import host_action_space
from delight_gym.de.options import DelightOptions

__all__ = ["ContinuousDelightWrapper", "DelightExplorationWrapper", "DiscreteDelightWrapper"]

#: The keywords only one engine takes, and the action space it is for.
_DISCRETE_ONLY = ("host_temperature", "lazy_gate")
_BOX_ONLY = ("n_host", "n_posterior", "host_std", "host_log_density")


class DelightExplorationWrapper(DelightEngine):
    """Delight-gated exploration around a host policy, with SB3's ``predict`` signature.

    Builds a :class:`DiscreteDelightWrapper` on ``Discrete`` actions, a
    :class:`ContinuousDelightWrapper` on ``Box`` actions.

    Other Parameters
    ----------------
    host : callable or stable_baselines3 model or host adapter
        ``Discrete``: observations → probabilities ``(n, A)``, or an SB3 PPO, A2C or DQN;
        ``Box``: observations → actions ``(n, d)``, or an SB3 SAC, TD3, DDPG, PPO or A2C.
    posterior, posterior_kwargs : ValuePosterior, dict, optional
        The posterior (default: the engine's) or the default posterior's arguments.
    delight, seed : DelightOptions or dict, int, optional
        DE's options and the seed of its generator.
    start_step : int, optional
        Where ``t`` starts (default: an SB3 host's ``num_timesteps``).
    observation_space, action_space : gymnasium.Space, optional
        Required for a callable host.
    host_temperature, lazy_gate : float, bool, optional
        :class:`DiscreteDelightWrapper`'s only.
    n_host, n_posterior, host_std, host_log_density : int, int, float, callable, optional
        :class:`ContinuousDelightWrapper`'s only.

    Raises
    ------
    TypeError
        A keyword of the other engine, or no action space for a callable host.
    ValueError
        An action space neither ``Discrete`` nor ``Box``.
    """

    def __new__(
        cls,
        host: Any = None,
        posterior: Any = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        observation_space: Any = None,
        action_space: Any = None,
        posterior_kwargs: dict[str, Any] | None = None,
        start_step: int | None = None,
        host_temperature: float | None = None,
        lazy_gate: bool | None = None,
        n_host: int | None = None,
        n_posterior: int | None = None,
        host_std: float | None = None,
        host_log_density: Callable[[Any, Any], Any] | None = None,
    ) -> Any:
        if cls is not DelightExplorationWrapper:  # unpickling an engine
            return super().__new__(cls)
        space = host_action_space(host, action_space)
        common: dict[str, Any] = {
            "delight": delight,
            "seed": seed,
            "observation_space": observation_space,
            "action_space": action_space,
            "posterior_kwargs": posterior_kwargs,
            "start_step": start_step,
        }
        extra: dict[str, Any] = {
            "host_temperature": host_temperature,
            "lazy_gate": lazy_gate,
            "n_host": n_host,
            "n_posterior": n_posterior,
            "host_std": host_std,
            "host_log_density": host_log_density,
        }
        if isinstance(space, spaces.Box):
            engine, foreign = ContinuousDelightWrapper, _DISCRETE_ONLY
        elif isinstance(space, spaces.Discrete) or space is None:
            engine, foreign = DiscreteDelightWrapper, _BOX_ONLY  # type: ignore[assignment]
        else:
            raise ValueError(f"action_space must be Discrete or Box, got {space!r}")
        for name in foreign:
            if extra[name] is not None:
                raise TypeError(f"{name} does not apply to {space!r} actions")
        # None: the engine's own default (n_host=8, lazy_gate=False, ...)
        own = {k: v for k, v in extra.items() if k not in foreign and v is not None}
        return engine(host, posterior, **common, **own)


DelightExplorationWrapper.register(DiscreteDelightWrapper)
DelightExplorationWrapper.register(ContinuousDelightWrapper)
