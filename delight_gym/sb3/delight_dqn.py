"""``DelightDQN``: Stable-Baselines3's DQN whose exploration is DE instead of ε-greedy.

The host is the DQN's online Q-network; the posterior is tabular for Discrete or one-hot
observations, else an :class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` trained from
SB3's replay buffer, or any ``posterior`` given. DE chooses every executed action, which is the
one stored; DQN is off-policy, so its Q-learning target is unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from stable_baselines3 import DQN
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.type_aliases import GymEnv, Schedule
from stable_baselines3.dqn.policies import DQNPolicy

from delight_gym.de.engine import unpack_vec_env_step
from delight_gym.de.engine_discrete import DiscreteDelightWrapper
from delight_gym.de.options import DelightOptions
from delight_gym.de.posterior import ValuePosterior
from delight_gym.posteriors.encoders import encoder_for_space
from delight_gym.posteriors.ensemble import EnsembleQPosterior
from delight_gym.sb3.base import DelightExplorerMixin, StoredTransition
from delight_gym.sb3.bootstrapped_policy import sb3_arguments
from delight_gym.sb3.hosts import SB3QHost

__all__ = ["DelightDQN"]


class DelightDQN(DelightExplorerMixin[DiscreteDelightWrapper], DQN):
    """DQN with Delight-gated exploration; DE's state is :attr:`delight`, a
    :class:`~delight_gym.de.engine_discrete.DiscreteDelightWrapper` saved with the model.

    Parameters
    ----------
    policy, env, learning_rate, buffer_size, learning_starts, batch_size, tau, gamma :
        As for :class:`stable_baselines3.DQN`, with its defaults (but no ``exploration_*``).
    train_freq, gradient_steps, replay_buffer_class, replay_buffer_kwargs, n_steps :
        As for DQN.
    optimize_memory_usage, target_update_interval, max_grad_norm, stats_window_size :
        As for DQN.
    tensorboard_log, policy_kwargs, verbose, device, _init_setup_model :
        As for DQN.
    seed : int, optional
        Seeds SB3 (as for DQN), DE's generator and the default ensemble posterior.
    delight : DelightOptions or dict, optional
        DE's options (:class:`~delight_gym.de.options.DelightOptions`; the clock counts steps).
    posterior : ValuePosterior, optional
        Default: tabular for a Discrete/one-hot observation space, else an ensemble.
    posterior_kwargs : dict, optional
        The default posterior's arguments (``gamma``, ``device``, ``seed``: this DQN's).
    host_temperature : float, optional
        ``None``: the host is greedy on the Q-network; ``τ > 0``: Boltzmann.
    lazy_gate : bool, default True
        Evaluate posterior and gate only where the ``ε`` coin chose the override (same actions).
    """

    def __init__(
        self,
        policy: str | type[DQNPolicy],
        env: GymEnv | str,
        learning_rate: float | Schedule = 1e-4,
        buffer_size: int = 1_000_000,
        learning_starts: int = 100,
        batch_size: int = 32,
        tau: float = 1.0,
        gamma: float = 0.99,
        train_freq: int | tuple[int, str] = 4,
        gradient_steps: int = 1,
        replay_buffer_class: type[ReplayBuffer] | None = None,
        replay_buffer_kwargs: dict[str, Any] | None = None,
        optimize_memory_usage: bool = False,
        n_steps: int = 1,
        target_update_interval: int = 10_000,
        max_grad_norm: float = 10,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: torch.device | str = "auto",
        _init_setup_model: bool = True,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        posterior: ValuePosterior | None = None,
        posterior_kwargs: dict[str, Any] | None = None,
        host_temperature: float | None = None,
        lazy_gate: bool = True,
    ) -> None:
        self._keep_delight_config(
            delight=delight,
            host_temperature=host_temperature,
            posterior=posterior,
            posterior_kwargs=posterior_kwargs,
            seed=seed,
            lazy_gate=lazy_gate,
        )
        super().__init__(
            **sb3_arguments(
                DQN,
                locals(),
                exploration_fraction=1.0,
                exploration_initial_eps=0.0,
                exploration_final_eps=0.0,
            )
        )

    def _make_delight(self) -> DiscreteDelightWrapper:
        cfg = self._delight_config
        tabular = encoder_for_space(self.observation_space) is not None
        return DiscreteDelightWrapper(
            SB3QHost(self, cfg["host_temperature"]),
            cfg["posterior"],
            delight=cfg["options"],
            seed=cfg["seed"],
            posterior_kwargs=self._posterior_kwargs(**({} if tabular else {"device": self.device})),
            lazy_gate=cfg["lazy_gate"],
        )

    @property
    def trains_posterior(self) -> bool:
        """Whether the posterior is an ensemble trained from the replay buffer (else it is fed
        every transition through ``observe``)."""
        return isinstance(self._de().posterior, EnsembleQPosterior)

    def _sample_action(
        self,
        learning_starts: int,
        action_noise: Any = None,
        n_envs: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        assert self._last_obs is not None, "self._last_obs was not set"
        actions, _ = self._de().predict(self._last_obs, deterministic=False)
        actions = np.asarray(actions, dtype=np.int64).reshape(n_envs)
        return actions, actions  # (executed, stored): the same action

    def _transition_stored(self, transition: StoredTransition) -> None:
        """Advance DE's clock (an ensemble trains from the buffer), or feed the posterior the
        transition with the true final observations."""
        dones, infos = transition.dones, transition.infos
        if self.trains_posterior:
            self._de().advance(len(dones), dones)
            return
        reward = (  # the posterior learns from the env's own rewards, not VecNormalize's
            self._vec_normalize_env.get_original_reward()
            if self._vec_normalize_env is not None
            else transition.rewards
        )
        next_obs, terminated, truncated = unpack_vec_env_step(
            transition.new_observations, dones, infos
        )
        obs = transition.observations
        self._de().observe(obs, transition.actions, reward, next_obs, terminated, truncated)

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """DQN's gradient steps, then as many TD steps of an ensemble posterior."""
        super().train(gradient_steps, batch_size)
        if not self.trains_posterior:
            return
        posterior = self._de().posterior
        assert isinstance(posterior, EnsembleQPosterior)
        for _ in range(gradient_steps):
            step = posterior.sgd_steps + 1
            self._ensemble_td_step(posterior, batch_size, step, posterior.target_update_period)
            posterior.sgd_steps = step
