"""Bootstrapped DQN with randomized priors for many seeds at once, in plain torch.

:class:`SeedBatchedBootDQN` runs ``S`` independent copies of bsuite's ``boot_dqn`` ("Randomized
Prior Functions for Deep Reinforcement Learning", Osband, Aslanides & Cassirer) on a vector env
of ``S`` seeds with one-hot observations, such as
:class:`~delight_gym.envs.deep_sea.DeepSeaVectorEnv`. The ``S × K`` heads are one
:class:`~delight_gym.posteriors.ensemble_network.EnsembleQNetwork`, so one batched TD step
serves every seed. For a single env use :class:`~delight_gym.sb3.BootstrappedDQN`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from delight_gym._checks import (
    check_device,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_probability,
)
from delight_gym.agents.seeding import torch_seed
from delight_gym.posteriors.boot_dqn_defaults import BOOT_DQN_DEFAULTS, check_replay_options
from delight_gym.posteriors.ensemble_inputs import Transitions, one_hot_indices
from delight_gym.posteriors.ensemble_network import EnsembleQNetwork
from delight_gym.posteriors.ensemble_td import ensemble_td_step

__all__ = ["SeedBatchedBootDQN", "one_hot_states"]

#: The replay's columns (named as the fields of ``Transitions``) and their dtypes.
_REPLAY = {
    "observations": torch.int64,
    "next_observations": torch.int64,
    "actions": torch.int64,
    "rewards": torch.float32,
    "terminated": torch.float32,
}


def one_hot_states(observations: Any) -> np.ndarray:
    """Row indices of one-hot observations: ``(S, *shape)`` → int64 ``(S,)``, ``-1`` where a
    row is all zero (DeepSea's terminal observation); ``ValueError`` for any other row."""
    x = np.asarray(observations)
    idx = one_hot_indices(x.reshape(x.shape[0], -1))
    if idx is None:
        raise ValueError("observations must be one-hot (or all-zero) rows")
    return np.asarray(idx)


class SeedBatchedBootDQN:
    """bsuite's bootstrapped DQN with randomized priors for ``S`` seeds, batched.

    Parameters
    ----------
    num_seeds, num_states, num_actions : int
        ``S`` independent agents (one per sub-env), the one-hot observation's size (DeepSea:
        ``N²``) and ``A``.
    num_heads, hidden_sizes, prior_scale, learning_rate, gamma :
        ``K`` heads per seed and their MLPs and prior scale; Adam's step size; the discount.
    batch_size, buffer_size, learning_starts, target_update_period :
        Per seed: transitions in each gradient step; replay capacity; transitions before the
        first gradient step (``>= 0``); gradient steps between target copies.
    seed : int, default 0
        Seeds the weights, replay samples and heads (one CPU generator: CPU and GPU runs agree).
    device : str or torch.device, optional
        Where the heads and the replay live (default: CPU).
    """

    def __init__(
        self,
        num_seeds: int,
        num_states: int,
        num_actions: int,
        *,
        num_heads: int = BOOT_DQN_DEFAULTS.num_heads,
        hidden_sizes: Sequence[int] = BOOT_DQN_DEFAULTS.hidden_sizes,
        prior_scale: float = BOOT_DQN_DEFAULTS.prior_scale,
        learning_rate: float = BOOT_DQN_DEFAULTS.learning_rate,
        batch_size: int = BOOT_DQN_DEFAULTS.batch_size,
        buffer_size: int = BOOT_DQN_DEFAULTS.buffer_size,
        learning_starts: int = BOOT_DQN_DEFAULTS.learning_starts,
        target_update_period: int = BOOT_DQN_DEFAULTS.target_update_period,
        gamma: float = BOOT_DQN_DEFAULTS.gamma,
        seed: int = 0,
        device: Any = None,
    ) -> None:
        self.num_seeds = check_positive_int(num_seeds, "num_seeds")
        self.num_heads = check_positive_int(num_heads, "num_heads")
        self.batch_size, self.buffer_size, self.learning_starts = check_replay_options(
            batch_size, buffer_size, learning_starts
        )
        self.target_update_period = check_positive_int(target_update_period, "target_update_period")
        self.gamma = check_probability(gamma, "gamma")
        check_positive_float(learning_rate, "learning_rate")
        seed = check_nonnegative_int(seed, "seed")
        self.generator = torch.Generator().manual_seed(torch_seed(seed))
        dev = check_device(device)
        self.network = EnsembleQNetwork(
            spaces.Discrete(check_positive_int(num_states, "num_states")),
            num_actions,
            num_heads=self.num_seeds * self.num_heads,
            hidden_sizes=hidden_sizes,
            prior_scale=prior_scale,
            generator=self.generator,
        ).to(dev)
        self.num_actions = self.network.num_actions  # checked by the network
        self.device = dev
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=float(learning_rate))
        s, cap = self.num_seeds, self.buffer_size
        self._replay = {k: torch.zeros(s, cap, dtype=t, device=dev) for k, t in _REPLAY.items()}
        self.stored = 0  # transitions per seed so far (all seeds step together)
        self.gradient_steps = 0
        self.active_head = torch.zeros(s, dtype=torch.int64)
        self.new_episode(np.ones(s, dtype=bool))

    def new_episode(self, mask: Any) -> None:
        """Draw a new head, uniformly, for every seed where ``mask`` (bool ``(S,)``) is true."""
        mask = torch.as_tensor(np.asarray(mask, dtype=bool))
        draw = torch.randint(self.num_heads, (self.num_seeds,), generator=self.generator)
        self.active_head = torch.where(mask, draw, self.active_head)

    def _per_head(self, x: torch.Tensor) -> torch.Tensor:
        """``(S, ...)`` → ``(S·K, ...)``: each seed's rows once per head."""
        return x.repeat_interleave(self.num_heads, dim=0)

    @torch.no_grad()
    def head_values(self, states: Any) -> torch.Tensor:
        """Every head's ``Q(s, ·)`` at each seed's state: int64 ``(S,)`` → ``(S, K, A)``."""
        x = torch.as_tensor(states, dtype=torch.int64).to(self.device)
        q = self.network(self._per_head(x[:, None]))  # (S·K, 1, A)
        return q.reshape(self.num_seeds, self.num_heads, self.num_actions)

    def act(self, states: Any) -> np.ndarray:
        """Greedy actions of each seed's active head (lowest index on ties): int64 ``(S,)``."""
        q = self.head_values(states)
        rows = torch.arange(self.num_seeds, device=q.device)
        return q[rows, self.active_head.to(q.device)].argmax(dim=-1).cpu().numpy()

    def observe(
        self, states: Any, actions: Any, rewards: Any, next_states: Any, terminated: Any
    ) -> None:
        """Store one transition per seed (``next_states`` ``-1`` where terminal), then one
        gradient step once ``learning_starts`` are stored."""
        i = self.stored % self.buffer_size  # a ring buffer, the same slot for every seed
        step = (states, next_states, actions, rewards, terminated)
        for (key, dtype), value in zip(_REPLAY.items(), step, strict=True):
            self._replay[key][:, i] = torch.as_tensor(value, dtype=dtype).to(self.device)
        self.stored += 1
        if self.stored >= max(self.learning_starts, 1):  # a sample needs one stored step
            self.td_step()

    def sample(self) -> torch.Tensor:
        """Replay indices, ``(S, batch_size)``, uniform over each seed's stored transitions."""
        size = min(self.stored, self.buffer_size)
        idx = torch.randint(size, (self.num_seeds, self.batch_size), generator=self.generator)
        return idx.to(self.device)

    def replay_batch(self, idx: torch.Tensor) -> Transitions:
        """The transitions at replay indices ``idx`` ``(S, B)``, one ``(S·K, B)`` batch per head."""
        rows = {k: self._per_head(buffer.gather(1, idx)) for k, buffer in self._replay.items()}
        return Transitions(**rows, masks=None)

    def td_step(self, idx: torch.Tensor | None = None) -> torch.Tensor:
        """One Adam step of every head on its seed's replay sample ``idx`` (default
        :meth:`sample`), targets copied every ``target_update_period`` steps; the loss before
        it. One Adam over all heads takes the steps separate Adams would."""
        batch = self.replay_batch(self.sample() if idx is None else idx)
        stats = ensemble_td_step(self.network, self.optimizer, batch, self.gamma)
        self.gradient_steps += 1
        if self.gradient_steps % self.target_update_period == 0:
            self.network.update_target()
        return stats.loss

    def run_online(
        self,
        env: Any,
        on_step: Callable[[np.ndarray, np.ndarray, dict[str, Any]], bool],
        *,
        seed: int | None = None,
    ) -> None:
        """Act, step, learn and draw new heads on a vector env of ``S`` sub-envs (one-hot
        observations, same-step autoreset) until ``on_step(terminated, truncated, infos)``,
        called after each step is learned from, returns False; ``seed`` goes to ``env.reset``."""
        obs, _ = env.reset(seed=seed)
        states = one_hot_states(obs)
        going = True
        while going:
            actions = self.act(states)
            obs, rewards, terminated, truncated, infos = env.step(actions)
            terminated, truncated = np.asarray(terminated), np.asarray(truncated)
            next_states = one_hot_states(obs)  # where an episode ended: the next one's start
            after = np.where(terminated, -1, next_states)  # -1: terminal, not bootstrapped from
            self.observe(states, actions, rewards, after, terminated)
            going = on_step(terminated, truncated, infos)
            ended = terminated | truncated
            if ended.any():
                self.new_episode(ended)
            states = next_states

    def play(self, env: Any, episodes: int, *, seed: int | None = None) -> np.ndarray:
        """Play ``episodes`` episodes per seed as :meth:`run_online` on an env whose ``infos``
        carry ``bad_episode`` (DeepSea's), learning online; returns the flags, bool
        ``(S, episodes)``."""
        episodes = check_positive_int(episodes, "episodes")
        if env.num_envs != self.num_seeds:
            raise ValueError(f"env must have num_envs == {self.num_seeds}, got {env.num_envs}")
        bad = np.zeros((self.num_seeds, episodes), dtype=bool)
        done_count = np.zeros(self.num_seeds, dtype=np.int64)

        def record(terminated: np.ndarray, truncated: np.ndarray, infos: dict) -> bool:
            for i in np.flatnonzero(terminated | truncated):
                if done_count[i] < episodes:
                    bad[i, done_count[i]] = bool(infos["bad_episode"][i])
                done_count[i] += 1
            return bool(done_count.min() < episodes)

        self.run_online(env, record, seed=seed)
        return bad
