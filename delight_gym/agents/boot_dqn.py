"""Bootstrapped DQN with randomized priors for many seeds at once, in plain torch.

:class:`SeedBatchedBootDQN` runs ``S`` independent copies of bsuite's ``boot_dqn`` (Osband,
Aslanides & Cassirer, *Randomized Prior Functions for Deep Reinforcement Learning*) on a
vector env of ``S`` seeds with tabular (state-index) observations, such as
:class:`~delight_gym.envs.deep_sea.DeepSeaVectorEnv`. The ``S × K`` heads are one
:class:`~delight_gym.posteriors.ensemble_network.EnsembleQNetwork`; seed ``s``'s heads, rows
``s·K … (s+1)·K − 1``, train on its own replay samples by the ensemble's TD step
(:func:`~delight_gym.posteriors.ensemble_td.ensemble_td_step`, one batch per head), so one
batched step serves every seed, on a CPU or a GPU. The SB3 algorithm
:class:`~delight_gym.sb3.BootstrappedDQN` is the one to use for a single env; this class is
the throughput path (one process, one device, many seeds).
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


def one_hot_states(observations: Any) -> np.ndarray:
    """Row indices of one-hot observations: ``(S, *shape)`` → int64 ``(S,)``, ``-1`` where a
    row is all zero (DeepSea's terminal observation).

    Raises
    ------
    ValueError
        If a row is not one-hot or all zero.
    """
    x = np.asarray(observations)
    idx = one_hot_indices(x.reshape(x.shape[0], -1))
    if idx is None:
        raise ValueError("observations must be one-hot (or all-zero) rows")
    return np.asarray(idx)


class SeedBatchedBootDQN:
    """bsuite's bootstrapped DQN with randomized priors for ``S`` seeds, batched.

    The defaults are :data:`~delight_gym.posteriors.boot_dqn_defaults.BOOT_DQN_DEFAULTS`.

    Parameters
    ----------
    num_seeds : int
        ``S``, independent agents (one per sub-env of the vector env).
    num_states : int
        Size of the tabular observation (DeepSea: ``N²``).
    num_actions : int
        ``A``.
    num_heads, hidden_sizes, prior_scale, learning_rate, gamma :
        ``K`` heads per seed and their MLPs and prior scale; Adam's step size; the discount.
    batch_size, buffer_size, learning_starts, target_update_period :
        Per seed: transitions in each gradient step; replay capacity; transitions before the
        first gradient step (``>= 0``); gradient steps between target copies.
    seed : int, default 0
        Seeds the initial weights, replay samples and heads drawn (one CPU generator: a CPU
        and a GPU run draw the same numbers).
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
        self.num_actions = check_positive_int(num_actions, "num_actions")
        self.batch_size, self.buffer_size, self.learning_starts = check_replay_options(
            batch_size, buffer_size, learning_starts
        )
        self.target_update_period = check_positive_int(target_update_period, "target_update_period")
        self.gamma = check_probability(gamma, "gamma")
        check_positive_float(learning_rate, "learning_rate")
        self.generator = torch.Generator()
        self.generator.manual_seed(torch_seed(check_nonnegative_int(seed, "seed")))
        dev = check_device(device)
        self.network = EnsembleQNetwork(
            spaces.Discrete(check_positive_int(num_states, "num_states")),
            num_actions,
            num_heads=self.num_seeds * self.num_heads,
            hidden_sizes=hidden_sizes,
            prior_scale=prior_scale,
            generator=self.generator,
        ).to(dev)
        self.device = dev
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=float(learning_rate))
        s, cap = self.num_seeds, self.buffer_size
        self._states = torch.zeros(s, cap, dtype=torch.int64, device=dev)
        self._next = torch.zeros(s, cap, dtype=torch.int64, device=dev)
        self._actions = torch.zeros(s, cap, dtype=torch.int64, device=dev)
        self._rewards = torch.zeros(s, cap, dtype=torch.float32, device=dev)
        self._terminated = torch.zeros(s, cap, dtype=torch.float32, device=dev)
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
        """``(S, ...)`` → ``(S·K, ...)``: each seed's rows for each of its heads."""
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
        """Store one transition per seed (``next_states`` ``-1`` where terminal) and take one
        gradient step once ``learning_starts`` transitions are stored."""
        i = self.stored % self.buffer_size
        dev = self.device
        self._states[:, i] = torch.as_tensor(states, dtype=torch.int64).to(dev)
        self._next[:, i] = torch.as_tensor(next_states, dtype=torch.int64).to(dev)
        self._actions[:, i] = torch.as_tensor(actions, dtype=torch.int64).to(dev)
        self._rewards[:, i] = torch.as_tensor(rewards, dtype=torch.float32).to(dev)
        self._terminated[:, i] = torch.as_tensor(terminated, dtype=torch.float32).to(dev)
        self.stored += 1
        if self.stored >= max(self.learning_starts, 1):
            self.td_step()

    def sample(self) -> torch.Tensor:
        """Replay indices, ``(S, batch_size)``, uniform over each seed's stored transitions."""
        size = min(self.stored, self.buffer_size)
        idx = torch.randint(size, (self.num_seeds, self.batch_size), generator=self.generator)
        return idx.to(self.device)

    def replay_batch(self, idx: torch.Tensor) -> Transitions:
        """The stored transitions at replay indices ``idx`` ``(S, B)``, one batch per head:
        ``(S·K, B)`` rows, no masks."""

        def rows(buffer: torch.Tensor) -> torch.Tensor:
            return self._per_head(buffer.gather(1, idx))

        return Transitions(
            observations=rows(self._states),
            next_observations=rows(self._next),
            actions=rows(self._actions),
            rewards=rows(self._rewards),
            terminated=rows(self._terminated),
            masks=None,
        )

    def td_step(self, idx: torch.Tensor | None = None) -> torch.Tensor:
        """One Adam step of every head on its seed's replay sample ``idx`` (default
        :meth:`sample`); the target networks are copied every ``target_update_period`` steps.
        Returns the loss before the step. The loss is the ensemble's (squared, no clipping),
        and one Adam over all heads takes the steps separate Adams would."""
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
        """Act, step, learn and draw new heads on a vector env of ``S`` sub-envs with tabular
        one-hot observations and same-step autoreset, until ``on_step`` returns False.

        Parameters
        ----------
        env : gymnasium.vector.VectorEnv
            ``num_envs == S``.
        on_step : callable
            ``on_step(terminated, truncated, infos) -> keep_going``, called after each step
            is learned from and before the ended episodes' new heads are drawn.
        seed : int, optional
            Passed to ``env.reset`` (sub-env ``i`` gets ``seed + i``).
        """
        obs, _ = env.reset(seed=seed)
        states = one_hot_states(obs)
        going = True
        while going:
            actions = self.act(states)
            obs, rewards, terminated, truncated, infos = env.step(actions)
            terminated, truncated = np.asarray(terminated), np.asarray(truncated)
            next_states = one_hot_states(obs)
            self.observe(
                states, actions, rewards, np.where(terminated, -1, next_states), terminated
            )
            going = on_step(terminated, truncated, infos)
            ended = terminated | truncated
            if ended.any():
                self.new_episode(ended)
            states = next_states

    def play(self, env: Any, episodes: int, *, seed: int | None = None) -> np.ndarray:
        """Play ``episodes`` episodes per seed on a vector env of ``S`` sub-envs with tabular
        one-hot observations and same-step autoreset (DeepSea's vector env), learning online.

        Parameters
        ----------
        env : gymnasium.vector.VectorEnv
            ``num_envs == S``; ``infos`` carry ``bad_episode`` (DeepSea's).
        episodes : int
            Episodes per seed (DeepSea's episodes all last ``N`` steps, so the seeds finish
            together).
        seed : int, optional
            Passed to ``env.reset`` (sub-env ``i`` gets ``seed + i``).

        Returns
        -------
        numpy.ndarray
            bool ``(S, episodes)``: each episode's ``bad_episode`` flag.
        """
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
