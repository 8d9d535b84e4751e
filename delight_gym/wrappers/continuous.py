"""``ContinuousDelightWrapper``: Delight-gated exploration around a policy on ``Box`` actions.

The wrapper is DE's candidate-set engine
(:class:`~delight_gym.de.engine_box.ContinuousDelightExplorer`) around a user-given host:
an SB3 SAC, PPO, A2C, TD3 or DDPG, a callable, or a host adapter
(:func:`~delight_gym.wrappers.box_hosts.make_box_host` picks it). Each ``predict`` is one
candidate-set DE decision per observation row: the host's action, and with probability
``ε_t = M/(M + t)`` a candidate set of the host's action, host draws and posterior proposals,
gated with the paper's rule. ``deterministic=True`` is the host's own action (SB3's contract).
A guide: ``docs/sb3.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from delight_gym.de.engine_box import DEFAULT_CANDIDATES, ContinuousDelightExplorer
from delight_gym.de.options import DelightOptions
from delight_gym.wrappers.box_hosts import make_box_host

__all__ = ["DEFAULT_CANDIDATES", "ContinuousDelightWrapper"]


class ContinuousDelightWrapper(ContinuousDelightExplorer):
    """Candidate-set DE around a host policy on a 1-D ``Box``, with SB3's ``predict`` signature.

    Parameters
    ----------
    host : stable_baselines3 model or callable or BoxHost
        SB3 SAC, PPO, A2C (own density), TD3, DDPG (a stated proposal), a callable
        ``observations (n, ...) -> actions (n, d)`` (pass the spaces) or a ``box_hosts`` adapter.
    observation_space, action_space : gymnasium.Space, optional
        For a callable host.
    host_std, host_log_density :
        See :func:`~delight_gym.wrappers.box_hosts.make_box_host`.
    posterior, delight, seed, n_host, n_posterior, posterior_kwargs, start_step :
        As for :class:`~delight_gym.de.engine_box.ContinuousDelightExplorer` (default
        posterior: a ``ContinuousQEnsemble``; ``delight.baseline`` must be ``"host"``).

    Attributes
    ----------
    delight, host, posterior, t, rng, stats, last_info :
        As for :class:`~delight_gym.de.engine_box.ContinuousDelightExplorer`.
    """

    def __init__(
        self,
        host: Any,
        posterior: Any = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        observation_space: Any = None,
        action_space: Any = None,
        n_host: int = DEFAULT_CANDIDATES,
        n_posterior: int = DEFAULT_CANDIDATES,
        host_std: float | None = None,
        host_log_density: Callable[[Any, Any], Any] | None = None,
        posterior_kwargs: dict[str, Any] | None = None,
        start_step: int | None = None,
    ) -> None:
        super().__init__(
            make_box_host(
                host,
                observation_space=observation_space,
                action_space=action_space,
                host_std=host_std,
                host_log_density=host_log_density,
            ),
            posterior,
            delight=delight,
            seed=seed,
            n_host=n_host,
            n_posterior=n_posterior,
            posterior_kwargs=posterior_kwargs,
            start_step=start_step,
        )
