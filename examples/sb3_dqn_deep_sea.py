"""Stable-Baselines3 DQN on DeepSea-v0: SB3's ε-greedy versus DelightDQN (DE exploration).

Both agents are the same DQN (same network, optimiser, replay buffer, target network and seed);
only the exploration differs:

* ``dqn-egreedy``: SB3's own ε-greedy (ε from 1 to 0.05 over the first
  ``exploration_fraction`` of training, uniform random actions before ``learning_starts``);
* ``delight-dqn``: :class:`delight_gym.sb3.DelightDQN` — the host is the greedy Q-network,
  the posterior the default tabular Gaussian value posterior, DE's defaults ``M = 100``,
  ``λ = 0.1``, ``L = 10``.

For each seed the DeepSea instance is ``mapping_seed = seed``. Printed per agent: how many seeds
found the treasure, the episodes until it was first found (median over seeds; seeds that never
found it count as ``> episodes``) and the cumulative regret after the last episode (mean ± s.e.
over seeds), regret being ``Σ_episodes (optimal return − return)`` (DeepSea is deterministic,
so returns are exact). ``--smoke`` runs a tiny version in seconds.

Run: ``python examples/sb3_dqn_deep_sea.py [--size 10] [--episodes 1000] [--seeds 5]``.

Measured once with the defaults (CPU): ``dqn-egreedy`` found the treasure in
2/5 seeds (episodes 35 and 469), regret 890.0 ± 86.1; ``delight-dqn`` in 1/5 (episode 419),
regret 932.0 ± 59.9. See ``docs/sb3.md`` for why DE does not help a greedy DQN host here.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import DQN

import delight_gym  # noqa: F401 - registers DeepSea-v0
from delight_gym.sb3 import DelightDQN

AGENTS = ("dqn-egreedy", "delight-dqn")


@dataclass
class Args:
    size: int = 10
    episodes: int = 1000
    seeds: int = 5
    exploration_fraction: float = 0.1
    smoke: bool = False


class EpisodeRecorder(gym.Wrapper):
    """Records each episode's return and optimal return."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.returns: list[float] = []
        self.optimal: list[float] = []
        self._ret = 0.0

    def reset(self, **kwargs):
        self._ret = 0.0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._ret += float(reward)
        if terminated or truncated:
            self.returns.append(self._ret)
            self.optimal.append(float(info["optimal_return"]))
        return obs, reward, terminated, truncated, info


def run(agent: str, size: int, episodes: int, seed: int, exploration_fraction: float):
    """Train one agent for ``episodes`` episodes; return (first treasure episode or None,
    final cumulative regret)."""
    env = EpisodeRecorder(gym.make("DeepSea-v0", size=size, mapping_seed=seed))
    common = dict(
        learning_rate=1e-3,
        buffer_size=50_000,
        learning_starts=100,
        batch_size=64,
        train_freq=4,
        target_update_interval=500,
        policy_kwargs={"net_arch": [64, 64]},
        seed=seed,
        device="cpu",
    )
    if agent == "dqn-egreedy":
        model = DQN("MlpPolicy", env, exploration_fraction=exploration_fraction, **common)
    else:
        model = DelightDQN("MlpPolicy", env, **common)
    model.learn(total_timesteps=episodes * size)
    returns = np.asarray(env.returns[:episodes])
    regret = float(np.sum(np.asarray(env.optimal[:episodes]) - returns))
    found = np.flatnonzero(returns > 0.5)
    return (int(found[0]) + 1 if found.size else None), regret


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=Args.size, help="N (default %(default)s)")
    parser.add_argument(
        "--episodes",
        type=int,
        default=Args.episodes,
        help="training episodes per seed (default %(default)s)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=Args.seeds,
        help="seeds; seed s plays mapping_seed s (default %(default)s)",
    )
    parser.add_argument(
        "--exploration-fraction",
        type=float,
        default=Args.exploration_fraction,
        help="dqn-egreedy: fraction of training over which ε falls to 0.05 (default %(default)s)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="tiny run (seconds): N = 4, 30 episodes, 2 seeds"
    )
    ns = parser.parse_args(argv)
    args = Args(ns.size, ns.episodes, ns.seeds, ns.exploration_fraction, ns.smoke)
    if args.smoke:
        args.size, args.episodes, args.seeds = 4, 30, 2
    torch.set_num_threads(1)  # tiny networks: one thread is fastest (and fair to both agents)
    summary: dict[str, dict[str, float]] = {}
    print(f"DeepSea-v0 size {args.size}, {args.episodes} episodes, {args.seeds} seeds")
    header = f"{'agent':<13} {'found':>7} {'first treasure (median)':>24} {'final regret':>20}"
    print(header)
    print("-" * len(header))
    for agent in AGENTS:
        t0 = time.perf_counter()
        firsts, regrets = [], []
        for seed in range(args.seeds):
            first, regret = run(agent, args.size, args.episodes, seed, args.exploration_fraction)
            firsts.append(first)
            regrets.append(regret)
        found = [f for f in firsts if f is not None]
        censored = np.array([f if f is not None else np.inf for f in firsts], dtype=float)
        median = float(np.median(censored))
        median_txt = f"{median:.0f}" if np.isfinite(median) else f"> {args.episodes}"
        per_seed = ",".join(str(f) if f is not None else "-" for f in firsts)
        se = np.std(regrets, ddof=1) / np.sqrt(len(regrets)) if len(regrets) > 1 else None
        se_txt = "n/a" if se is None else f"{se:.1f}"  # one seed: no s.e.
        mean = float(np.mean(regrets))
        print(
            f"{agent:<13} {len(found):>3}/{args.seeds:<3} {median_txt:>24} "
            f"{mean:>11.1f} ± {se_txt:<6}  (first per seed: {per_seed}; "
            f"{time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
        summary[agent] = {"found": len(found), "median_first": median, "regret_mean": mean}
    return summary


if __name__ == "__main__":
    main()
