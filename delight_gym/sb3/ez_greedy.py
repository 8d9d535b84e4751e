"""``EZGreedyDQN``: Stable-Baselines3's DQN with temporally-extended ε-greedy (εz-greedy).

From "Temporally-Extended ε-Greedy Exploration" (Dabney, Ostrovski & Barreto, ICLR 2021):
where ε-greedy takes one uniform random action, εz-greedy repeats one for ``n ~ zeta(μ)``
steps, ``P(n) ∝ n^{−μ}``; the ε coin is tossed only when no repeat runs. ``ε`` is SB3's linear
schedule (``exploration_*``), and 1 before ``learning_starts``. Each env of a VecEnv has its
own repeat, ended by the end of its episode.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
from stable_baselines3 import DQN
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.noise import ActionNoise
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback, Schedule
from stable_baselines3.dqn.policies import DQNPolicy

from delight_gym._checks import check_positive_float, check_positive_int, check_seed
from delight_gym.sb3.bootstrapped_policy import sb3_arguments

__all__ = ["DEFAULT_EZ_MAX_DURATION", "DEFAULT_EZ_MU", "EZGreedyDQN", "zeta_durations"]

#: The paper's defaults: exponent ``μ = 2`` and durations capped at 10 000 steps.
DEFAULT_EZ_MU = 2.0
DEFAULT_EZ_MAX_DURATION = 10_000


def _check_zeta(mu: float, max_duration: int | None, prefix: str = "") -> tuple[float, int | None]:
    mu = check_positive_float(mu, f"{prefix}mu")
    if max_duration is None:
        if mu <= 1.0:  # the uncapped law needs a finite normaliser
            raise ValueError(f"{prefix}mu must be > 1 without {prefix}max_duration, got {mu}")
        return mu, None
    return mu, check_positive_int(max_duration, f"{prefix}max_duration")


@functools.lru_cache(maxsize=16)
def _zeta_cdf(mu: float, max_duration: int) -> np.ndarray:
    """The CDF of ``zeta(μ)`` truncated to ``1..max_duration``."""
    pmf = np.arange(1, max_duration + 1, dtype=np.float64) ** -mu
    cdf = np.cumsum(pmf)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    cdf.setflags(write=False)
    return cdf


def zeta_durations(
    rng: np.random.Generator,
    size: int | tuple[int, ...],
    mu: float = DEFAULT_EZ_MU,
    max_duration: int | None = DEFAULT_EZ_MAX_DURATION,
) -> np.ndarray:
    """int64 durations ``n ≥ 1`` of shape ``size``, drawn from ``rng`` with ``P(n) ∝ n^{−μ}``.

    Parameters
    ----------
    mu : float, default 2.0
        ``μ > 0`` (``μ > 1`` when uncapped, so that the law is a distribution).
    max_duration : int or None, default 10 000
        The cap (the law is renormalised on ``1..max_duration``); ``None``: the zeta law itself
        (``scipy.stats.zipf(μ)``).
    """
    return _draw_zeta(rng, size, *_check_zeta(mu, max_duration))


def _draw_zeta(
    rng: np.random.Generator, size: int | tuple[int, ...], mu: float, max_duration: int | None
) -> np.ndarray:
    if max_duration is None:
        return np.asarray(rng.zipf(mu, size=size), dtype=np.int64)
    # Inverse CDF: the first n whose CDF exceeds u.
    u = rng.random(size)
    return np.searchsorted(_zeta_cdf(mu, max_duration), u, side="right").astype(np.int64) + 1


class EZGreedyDQN(DQN):
    """DQN acting by εz-greedy.

    Parameters
    ----------
    policy, env, learning_rate, buffer_size, learning_starts, batch_size, tau, gamma :
        As for :class:`stable_baselines3.DQN`, with its defaults.
    train_freq, gradient_steps, replay_buffer_class, replay_buffer_kwargs, n_steps :
        As for DQN.
    optimize_memory_usage, target_update_interval, exploration_fraction :
        As for DQN; ``exploration_*`` set the ε of εz-greedy.
    exploration_initial_eps, exploration_final_eps, max_grad_norm, stats_window_size :
        As for DQN.
    tensorboard_log, policy_kwargs, verbose, seed, device, _init_setup_model :
        As for DQN; ``seed`` also seeds :attr:`ez_rng`.
    ez_mu : float, default 2.0
        The zeta exponent ``μ`` of the durations (``μ → ∞``: ε-greedy).
    ez_max_duration : int or None, default 10 000
        The durations' cap (the paper's); ``None``: uncapped.

    Attributes
    ----------
    ez_rng : numpy.random.Generator
        Draws the ε coins, random actions and durations (saved with the model).
    ez_action, ez_remaining : numpy.ndarray
        int64 ``(n_envs,)``: each env's held action and the steps it is still held for after
        the last one taken (0: the next step is a fresh decision).
    """

    def __init__(
        self,
        policy: str | type[DQNPolicy],
        env: GymEnv | str | None,
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
        exploration_fraction: float = 0.1,
        exploration_initial_eps: float = 1.0,
        exploration_final_eps: float = 0.05,
        max_grad_norm: float = 10,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: torch.device | str = "auto",
        _init_setup_model: bool = True,
        *,
        ez_mu: float = DEFAULT_EZ_MU,
        ez_max_duration: int | None = DEFAULT_EZ_MAX_DURATION,
    ) -> None:
        self.ez_mu, self.ez_max_duration = _check_zeta(ez_mu, ez_max_duration, "ez_")
        self.ez_rng = np.random.default_rng(check_seed(seed))
        self.ez_action = np.zeros(0, dtype=np.int64)
        self.ez_remaining = np.zeros(0, dtype=np.int64)
        super().__init__(**sb3_arguments(DQN, locals()))

    def ez_epsilon(self, learning_starts: int) -> float:
        """The ε of the next decision: 1 before ``learning_starts``, else SB3's schedule at the
        current progress (what DQN's ``exploration_rate`` holds after each step)."""
        if self.num_timesteps < learning_starts:
            return 1.0
        return float(self.exploration_schedule(self._current_progress_remaining))

    def _ez_reset(self, n_envs: int) -> None:
        self.ez_action = np.zeros(n_envs, dtype=np.int64)
        self.ez_remaining = np.zeros(n_envs, dtype=np.int64)

    def _sample_action(
        self,
        learning_starts: int,
        action_noise: ActionNoise | None = None,
        n_envs: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The held action where a repeat runs, else a fresh εz-greedy decision (also stored)."""
        if self.ez_remaining.shape != (n_envs,):  # the first call (or a new env count)
            self._ez_reset(n_envs)
        assert self._last_obs is not None, "self._last_obs was not set"
        held = self.ez_remaining > 0
        free = np.flatnonzero(~held)
        explore = np.zeros(n_envs, dtype=bool)
        if free.size:
            # Fixed draws per fresh decision: the coin, then (if it explores) action and duration.
            coins = self.ez_rng.random(free.size) < self.ez_epsilon(learning_starts)
            rows = free[coins]
            explore[rows] = True
            if rows.size:
                n_actions = int(self.action_space.n)  # type: ignore[attr-defined]
                self.ez_action[rows] = self.ez_rng.integers(0, n_actions, size=rows.size)
                durations = _draw_zeta(self.ez_rng, rows.size, self.ez_mu, self.ez_max_duration)
                self.ez_remaining[rows] = durations - 1
        greedy_rows = np.flatnonzero(~held & ~explore)
        actions = self.ez_action.copy()
        if greedy_rows.size:
            greedy, _ = self.policy.predict(self._last_obs, deterministic=True)
            actions[greedy_rows] = np.asarray(greedy, dtype=np.int64).reshape(n_envs)[greedy_rows]
        self.ez_remaining[held] -= 1  # a held step uses up one repeat
        return actions, actions.copy()

    def _store_transition(
        self,
        replay_buffer: ReplayBuffer,
        buffer_action: np.ndarray,
        new_obs: np.ndarray | dict[str, np.ndarray],
        reward: np.ndarray,
        dones: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        # A finished episode ends its env's repeat.
        super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
        done = np.asarray(dones, dtype=bool).reshape(-1)
        if self.ez_remaining.shape == done.shape:
            self.ez_remaining[done] = 0

    def _setup_learn(
        self,
        total_timesteps: int,
        callback: MaybeCallback = None,
        reset_num_timesteps: bool = True,
        tb_log_name: str = "run",
        progress_bar: bool = False,
    ) -> tuple[int, BaseCallback]:
        # Where SB3 resets the envs the repeats end; with reset_num_timesteps=False they go on.
        envs_reset = reset_num_timesteps or self._last_obs is None
        out = super()._setup_learn(
            total_timesteps, callback, reset_num_timesteps, tb_log_name, progress_bar
        )
        if envs_reset:
            self._ez_reset(self.n_envs)
        return out
