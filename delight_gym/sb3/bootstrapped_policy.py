"""The replay buffer (with bootstrap masks) and the policy of ``BootstrappedDQN``, and what the
SB3 front ends share: :func:`spawn_rng` and :func:`sb3_arguments`."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.preprocessing import get_action_dim, get_obs_shape
from stable_baselines3.common.type_aliases import Schedule
from stable_baselines3.common.vec_env import VecNormalize

from delight_gym._checks import check_positive_int, check_would_fit
from delight_gym.posteriors.arguments import check_fraction
from delight_gym.posteriors.ensemble import (
    DEFAULT_HIDDEN_SIZES,
    DEFAULT_NUM_HEADS,
    DEFAULT_PRIOR_SCALE,
    EnsembleQPosterior,
)
from delight_gym.posteriors.ensemble_inputs import one_hot_indices

__all__ = [
    "BootstrapReplayBuffer",
    "BootstrapReplayBufferSamples",
    "BootstrappedDQNPolicy",
    "sb3_arguments",
    "spawn_rng",
]


def spawn_rng(seed: int | None, stream: int) -> np.random.Generator:
    """Independent generator ``stream`` of ``seed`` (fresh entropy for ``None``)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


def sb3_arguments(sb3_class: type, given: dict[str, Any], **fixed: Any) -> dict[str, Any]:
    """The keyword arguments of ``sb3_class.__init__``: ``fixed``, the others from ``given``
    (a front end's ``locals()``: its parameters have SB3's names). A parameter of a newer SB3
    that the front end does not know keeps SB3's default."""
    names = inspect.signature(sb3_class).parameters
    return {name: given[name] for name in names if name in given and name not in fixed} | fixed


class BootstrapReplayBufferSamples(NamedTuple):
    """SB3's ``ReplayBufferSamples`` with the sampled transitions' bootstrap masks.

    Attributes
    ----------
    observations, actions, next_observations, dones, rewards, discounts :
        As in SB3's ``ReplayBufferSamples`` (``discounts`` unused, ``None``).
    masks : torch.Tensor or None
        bool ``(B, K)``: which heads train on each transition (``None`` without masking).
    observation_indices, next_observation_indices : torch.Tensor or None
        int64 ``(B,)``: each one-hot row's column (``-1``: all zero), when the buffer keeps
        them (:meth:`BootstrapReplayBuffer.keep_one_hot_codes`) and every sampled row is
        one-hot; else ``None``.
    """

    observations: torch.Tensor
    actions: torch.Tensor
    next_observations: torch.Tensor
    dones: torch.Tensor
    rewards: torch.Tensor
    discounts: torch.Tensor | None = None
    masks: torch.Tensor | None = None
    observation_indices: torch.Tensor | None = None
    next_observation_indices: torch.Tensor | None = None


class BootstrapReplayBuffer(ReplayBuffer):
    """SB3's replay buffer with bootstrap masks and its own random generators.

    Each slot holds a fixed mask drawn at construction: the transition stored there gets it,
    independently of its content, which is what a bootstrap needs.

    Parameters
    ----------
    buffer_size, observation_space, action_space, device, n_envs, handle_timeout_termination :
        As for :class:`stable_baselines3.common.buffers.ReplayBuffer`
        (``optimize_memory_usage`` is refused).
    num_heads : int, default 10
    mask_prob : float, default 1.0
        Each stored transition is in head ``k``'s bootstrap sample with this probability
        (masks are kept only when it is below 1).
    seed : int, optional
        Seed of the buffer's sample and mask generators (never numpy's global one).
    """

    # Class-level default: buffers pickled before the codes existed read None.
    one_hot_codes: np.ndarray | None = None

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        device: Any = "auto",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
        *,
        num_heads: int = DEFAULT_NUM_HEADS,
        mask_prob: float = 1.0,
        seed: int | None = None,
    ) -> None:
        if optimize_memory_usage:
            raise ValueError("optimize_memory_usage is not supported by BootstrapReplayBuffer")
        size = check_positive_int(buffer_size, "buffer_size")
        heads = check_positive_int(num_heads, "num_heads")
        mask = check_fraction(mask_prob, "mask_prob")
        masked = mask < 1
        obs_bytes = int(np.prod(get_obs_shape(observation_space)))  # type: ignore[arg-type]
        obs_bytes *= np.dtype(observation_space.dtype).itemsize
        # Per stored step of each env: observation and next one, int64 actions, float32 reward,
        # done and timeout flags, and the masks' bools.
        row = 2 * obs_bytes + 8 * get_action_dim(action_space) + 12 + (heads if masked else 0)
        what = f"buffer_size={size} with n_envs={n_envs}" + (
            f", num_heads={heads}" if masked else ""
        )
        check_would_fit(size * n_envs * row, what)
        super().__init__(
            buffer_size,
            observation_space,
            action_space,
            device=device,
            n_envs=n_envs,
            optimize_memory_usage=False,
            handle_timeout_termination=handle_timeout_termination,
        )
        self.num_heads = heads
        self.mask_prob = mask
        self.rng = spawn_rng(seed, 1)
        self.masks: np.ndarray | None = None
        if masked:
            shape = (self.buffer_size, self.n_envs, self.num_heads)
            self.masks = spawn_rng(seed, 2).random(shape) < self.mask_prob

    def keep_one_hot_codes(self) -> None:
        """From now on keep each stored observation's one-hot column, so that samples carry
        them and a look-up ensemble skips encoding its replay batches."""
        if self.one_hot_codes is None:
            self.one_hot_codes = np.full((self.buffer_size, self.n_envs, 2), -2, np.int64)

    def add(
        self,
        obs: np.ndarray,
        next_obs: np.ndarray,
        action: np.ndarray,
        reward: np.ndarray,
        done: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        pos = self.pos
        super().add(obs, next_obs, action, reward, done, infos)
        codes = self.one_hot_codes
        # codes[pos, env, 0 or 1]: the observation's / next one's column, -1 all zero, -2 not
        # one-hot; computed on the stored rows (the buffer's dtype), as sampling reads them
        if codes is not None:
            for j, rows in enumerate((self.observations[pos], self.next_observations[pos])):
                flat = rows.reshape(self.n_envs, -1).astype(np.float32, copy=False)
                idx = one_hot_indices(flat)
                codes[pos, :, j] = -2 if idx is None else idx

    def sample(  # type: ignore[override]
        self, batch_size: int, env: VecNormalize | None = None
    ) -> BootstrapReplayBufferSamples:
        """``batch_size`` transitions drawn with replacement by the buffer's own generator."""
        upper = self.buffer_size if self.full else self.pos
        if upper == 0:
            raise RuntimeError("the replay buffer is empty")
        return self._get_samples(self.rng.integers(0, upper, size=batch_size), env=env)

    def _get_samples(  # type: ignore[override]
        self, batch_inds: np.ndarray, env: VecNormalize | None = None
    ) -> BootstrapReplayBufferSamples:
        env_inds = self.rng.integers(0, self.n_envs, size=len(batch_inds))
        done = self.dones[batch_inds, env_inds] * (1 - self.timeouts[batch_inds, env_inds])
        data = (
            self._normalize_obs(self.observations[batch_inds, env_inds], env),
            self.actions[batch_inds, env_inds],
            self._normalize_obs(self.next_observations[batch_inds, env_inds], env),
            done.reshape(-1, 1),  # a time-limit truncation is not a terminal state
            self._normalize_reward(self.rewards[batch_inds, env_inds].reshape(-1, 1), env),
        )
        obs, actions, next_obs, dones, rewards = map(self.to_torch, data)
        masks = None if self.masks is None else self.to_torch(self.masks[batch_inds, env_inds])
        codes = self.one_hot_codes
        indices: list[Any] = [None, None]
        if codes is not None and env is None:  # normalised observations are not one-hot
            rows = codes[batch_inds, env_inds]  # (B, 2)
            if bool((rows >= -1).all()):  # a -2 anywhere: the ensemble encodes the rows
                indices = [self.to_torch(rows[:, 0]), self.to_torch(rows[:, 1])]
        return BootstrapReplayBufferSamples(
            obs, actions, next_obs, dones, rewards, None, masks, *indices
        )


class BootstrappedDQNPolicy(BasePolicy):
    """The SB3 policy of :class:`BootstrappedDQN`: an
    :class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` (``q_net`` its network,
    ``optimizer`` its Adam), greedy on the ensemble mean.

    Parameters
    ----------
    observation_space, action_space, lr_schedule :
        As for SB3 policies.
    net_arch : sequence of int, default (64, 64)
        Hidden layers of every head.
    num_heads : int, default 10
    prior_scale : float, default 3.0
    gamma : float, default 0.99
    encoding : str, default "auto"
        One of :data:`~delight_gym.posteriors.ensemble.ENCODINGS`.
    seed : int, optional
        Seed of the initial weights.
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Schedule,
        net_arch: Sequence[int] = DEFAULT_HIDDEN_SIZES,
        num_heads: int = DEFAULT_NUM_HEADS,
        prior_scale: float = DEFAULT_PRIOR_SCALE,
        gamma: float = 0.99,
        encoding: str = "auto",
        seed: int | None = None,
    ) -> None:
        super().__init__(observation_space, action_space)
        self.net_arch = tuple(net_arch)
        self.ensemble = EnsembleQPosterior(
            observation_space,
            action_space,
            num_heads=num_heads,
            hidden_sizes=net_arch,
            prior_scale=prior_scale,
            gamma=gamma,
            learning_rate=float(lr_schedule(1.0)),
            encoding=encoding,
            seed=seed,
        )
        self.q_net = self.ensemble.network
        self.optimizer = self.ensemble.optimizer

    def forward(self, obs: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        """Greedy actions on the ensemble mean, int64 ``(n,)``."""
        return self._predict(obs, deterministic)

    def _predict(self, observation: Any, deterministic: bool = True) -> torch.Tensor:
        return self.ensemble.head_values_tensor(observation).mean(dim=0).argmax(dim=1)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        net = self.ensemble.network
        data.update(
            net_arch=self.net_arch,
            num_heads=net.num_heads,
            prior_scale=net.prior_scale,
            gamma=self.ensemble.gamma,
            encoding=net.encoding,
            seed=self.ensemble.seed,
        )
        return data
