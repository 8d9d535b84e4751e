"""``DelightExplorationWrapper``: Delight-gated exploration around any host policy.

The wrapper is DE's engine (:class:`~delight_gym.de.engine.DelightExplorer`) around a user-given
host: a callable returning probabilities, an SB3 PPO/A2C or DQN, or a host adapter
(:func:`~delight_gym.wrappers.hosts.make_host` picks it). Each ``predict`` is one DE decision
per observation row at ``ε_t = M/(M + t)``, ``t`` counting the transitions given to
``observe``. ``deterministic=True`` is the host's own choice (SB3's contract);
``deterministic=False`` is DE frozen at the current ``ε_t`` and posterior, or online DE under
SB3's ``evaluate_policy`` with :meth:`~DelightExplorationWrapper.evaluation_callback`. The
decision step by step, the default posteriors and the clock of a wrapped trained model:
``docs/sb3.md``.
"""

from __future__ import annotations

from typing import Any

from delight_gym.de.engine import DelightExplorer, observation_batch, unpack_vec_env_step
from delight_gym.de.options import DelightOptions
from delight_gym.de.posterior import BASELINES, ValuePosterior
from delight_gym.wrappers.hosts import make_host

__all__ = ["BASELINES", "DelightExplorationWrapper", "observation_batch", "unpack_vec_env_step"]


class DelightExplorationWrapper(DelightExplorer):
    """Delight-gated exploration around a host policy, with SB3's ``predict`` signature.

    Its state: the options in use ``delight``, ``host``, ``posterior``, the clock ``t``
    (``start_step`` plus the transitions observed), ``rng``, ``stats``
    (:class:`~delight_gym.de.stats.DelightStats`) and ``last_info`` (see
    :meth:`~delight_gym.de.engine.DelightExplorer.predict`).

    Parameters
    ----------
    host : callable or stable_baselines3 model or Host
        Observations ``(n, ...)`` → probabilities ``(n, A)``; an SB3 PPO, A2C or DQN; or a
        host adapter (:mod:`~delight_gym.wrappers.hosts`).
    host_temperature : float, optional
        DQN hosts: ``None`` greedy, ``τ > 0`` Boltzmann.
    observation_space, action_space : gymnasium.Space, optional
        Required for a callable host (SB3 models carry their own).
    posterior, delight, seed, posterior_kwargs, lazy_gate, start_step :
        As for :class:`~delight_gym.de.engine.DelightExplorer` (default posterior:
        :func:`~delight_gym.posteriors.value.default_posterior`; the clock counts steps).
    """

    def __init__(
        self,
        host: Any,
        posterior: ValuePosterior | None = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        host_temperature: float | None = None,
        observation_space: Any = None,
        action_space: Any = None,
        posterior_kwargs: dict[str, Any] | None = None,
        lazy_gate: bool = False,
        start_step: int | None = None,
    ) -> None:
        super().__init__(
            make_host(
                host,
                temperature=host_temperature,
                observation_space=observation_space,
                action_space=action_space,
            ),
            posterior,
            delight=delight,
            seed=seed,
            posterior_kwargs=posterior_kwargs,
            lazy_gate=lazy_gate,
            start_step=start_step,
        )

    def evaluation_callback(self, logger: Any = None) -> Any:
        """A ``callback`` for SB3's ``evaluate_policy`` that makes the evaluation online DE.

        ``evaluate_policy(wrapper, env, deterministic=False,
        callback=wrapper.evaluation_callback())`` feeds every evaluation transition to
        :meth:`observe` (the real final observation of finished episodes, ``terminated``
        without time-limit truncation), so the posterior learns and ``ε_t`` decays during the
        evaluation. Without it, evaluation is frozen DE (see the module docstring).

        Parameters
        ----------
        logger : stable_baselines3.common.logger.Logger, optional
            When given, :attr:`stats` is logged (:meth:`DelightStats.log
            <delight_gym.de.stats.DelightStats.log>`) and dumped at step ``t`` at the end
            of every evaluation episode.

        Returns
        -------
        callable
            ``callback(locals_, globals_)``, SB3's evaluation-callback signature.
        """

        def callback(locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
            i = int(locals_["i"])
            done = bool(locals_["done"])
            next_obs, terminated, truncated = unpack_vec_env_step(
                locals_["new_observations"][i : i + 1], [done], [locals_["info"]]
            )
            self.observe(
                locals_["observations"][i],
                locals_["actions"][i],
                locals_["reward"],
                next_obs[0],
                terminated[0],
                truncated[0],
            )
            if done and logger is not None and self.stats.log(logger):
                logger.dump(step=self.t)

        return callback
