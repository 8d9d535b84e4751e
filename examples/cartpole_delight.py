"""SB3 DQN vs DelightDQN vs BootstrappedDQN on CartPole-v1, at RL-Zoo's tuned DQN settings.

Every agent trains ``--steps`` environment steps per seed (seeds ``0 .. --seeds - 1``, the
same for every agent), then plays ``--eval-episodes`` evaluation episodes with its own
deterministic choice (``predict(deterministic=True)``: DQN's greedy Q-network, DelightDQN's
greedy Q-network, BootstrappedDQN's greedy ensemble mean) on a separate environment reset with
seeds ``10**6, 10**6 + 1, ...``. Printed: one row per agent, the mean evaluation return over
seeds ± its standard error (s.e. of the per-seed means), and the per-seed means.

Settings (RL-Zoo, ``hyperparams/dqn.yml``, CartPole-v1): lr 2.3e-3, batch 64, buffer 100 000,
learning starts 1000, γ 0.99, target update every 10 steps, train every 256 steps with 128
gradient steps, ε 1 → 0.04 over 16% of training, ``net_arch [256, 256]``, 5e4 steps.

* ``dqn`` — SB3's DQN with exactly those settings;
* ``delight-dqn`` — :class:`~delight_gym.sb3.DelightDQN` with the same settings minus the
  ε-greedy ones: DE (paper defaults ``λ = 0.1``, ``L = 10``, ``M = 100``) with the default
  ensemble posterior (10 heads ``[64, 64]``, trained from the replay buffer);
* ``bootdqn`` — :class:`~delight_gym.sb3.BootstrappedDQN` (10 heads of ``[256, 256]`` with
  randomized priors, a head per episode) with the same learning rate, batch, buffer, γ and
  training schedule; its target heads are updated every 128 gradient steps, i.e. once per
  training burst, which is what DQN's "every 10 environment steps" amounts to when the
  gradient steps come 128 at a time every 256 steps.

``--smoke`` runs in seconds. ``examples/mountain_car_delight.py`` runs the same comparison on
MountainCar-v0. Results measured on this project's shared 2-core machine are in
``docs/sb3.md``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import DQN

import delight_gym  # noqa: F401 - registers the package's envs
from delight_gym.experiments.results import mean_se
from delight_gym.sb3 import BootstrappedDQN, DelightDQN

#: RL-Zoo's tuned DQN hyperparameters (rl-baselines3-zoo, hyperparams/dqn.yml).
ZOO: dict[str, dict[str, Any]] = {
    "CartPole-v1": {
        "learning_rate": 2.3e-3,
        "batch_size": 64,
        "buffer_size": 100_000,
        "learning_starts": 1000,
        "gamma": 0.99,
        "target_update_interval": 10,
        "train_freq": 256,
        "gradient_steps": 128,
        "exploration_fraction": 0.16,
        "exploration_final_eps": 0.04,
        "net_arch": [256, 256],
        "n_timesteps": 50_000,
    },
    "MountainCar-v0": {
        "learning_rate": 4e-3,
        "batch_size": 128,
        "buffer_size": 10_000,
        "learning_starts": 1000,
        "gamma": 0.98,
        "target_update_interval": 600,
        "train_freq": 16,
        "gradient_steps": 8,
        "exploration_fraction": 0.2,
        "exploration_final_eps": 0.07,
        "net_arch": [256, 256],
        "n_timesteps": 120_000,
    },
}
AGENTS = ("dqn", "delight-dqn", "bootdqn")
EVAL_SEED = 10**6


@dataclass
class Args:
    env: str = "CartPole-v1"
    steps: int = 50_000
    seeds: int = 3
    eval_episodes: int = 10
    agents: str = ",".join(AGENTS)
    smoke: bool = False


def make_agent(name: str, env: gym.Env, seed: int, zoo: dict[str, Any], steps: int) -> Any:
    """One agent with RL-Zoo's settings (see the module docstring)."""
    common = {
        k: zoo[k]
        for k in ("learning_rate", "batch_size", "buffer_size", "learning_starts", "gamma")
    }
    common.update(
        train_freq=zoo["train_freq"],
        gradient_steps=zoo["gradient_steps"],
        seed=seed,
        device="cpu",
    )
    common["learning_starts"] = min(common["learning_starts"], steps // 4)
    if name == "dqn":
        return DQN(
            "MlpPolicy",
            env,
            target_update_interval=zoo["target_update_interval"],
            exploration_fraction=zoo["exploration_fraction"],
            exploration_final_eps=zoo["exploration_final_eps"],
            policy_kwargs={"net_arch": zoo["net_arch"]},
            **common,
        )
    if name == "delight-dqn":
        return DelightDQN(
            "MlpPolicy",
            env,
            target_update_interval=zoo["target_update_interval"],
            policy_kwargs={"net_arch": zoo["net_arch"]},
            **common,
        )
    if name == "bootdqn":
        return BootstrappedDQN(
            "MlpPolicy",
            env,
            target_update_interval=max(zoo["gradient_steps"], 1),
            policy_kwargs={"net_arch": zoo["net_arch"]},
            **common,
        )
    raise ValueError(f"unknown agent {name!r}; known: {AGENTS}")


def evaluate(act: Callable[[np.ndarray], Any], env: gym.Env, episodes: int) -> np.ndarray:
    """Returns of ``episodes`` episodes of ``act(obs) -> action``, resets seeded from
    :data:`EVAL_SEED`."""
    returns = np.zeros(episodes)
    for e in range(episodes):
        obs, _ = env.reset(seed=EVAL_SEED + e)
        done = False
        while not done:
            obs, reward, term, trunc, _ = env.step(int(act(obs)))
            returns[e] += float(reward)
            done = term or trunc
    return returns


def main(argv: list[str] | None = None, default_env: str = "CartPole-v1") -> dict[str, np.ndarray]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--env", default=default_env, choices=sorted(ZOO), help="task (default %(default)s)"
    )
    parser.add_argument(
        "--steps", type=int, default=None, help="training steps per seed (default: RL-Zoo's)"
    )
    parser.add_argument(
        "--seeds", type=int, default=Args.seeds, help="seeds 0 .. N-1 (default %(default)s)"
    )
    parser.add_argument(
        "--eval-episodes",
        type=int,
        default=Args.eval_episodes,
        help="evaluation episodes per seed (default %(default)s)",
    )
    parser.add_argument(
        "--agents",
        default=Args.agents,
        help="comma-separated, from " + ", ".join(AGENTS) + " (default: all)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="tiny run (seconds): 300 steps, 1 seed"
    )
    ns = parser.parse_args(argv)
    zoo = ZOO[ns.env]
    args = Args(
        ns.env, ns.steps or zoo["n_timesteps"], ns.seeds, ns.eval_episodes, ns.agents, ns.smoke
    )
    if args.smoke:
        zoo = {**zoo, "train_freq": 16, "gradient_steps": 4, "net_arch": [32, 32]}
        args.steps, args.seeds, args.eval_episodes = 300, 1, 2
    torch.set_num_threads(1)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    per_seed: dict[str, np.ndarray] = {}
    for name in agents:
        means = np.zeros(args.seeds)
        start = time.perf_counter()
        for seed in range(args.seeds):
            model = make_agent(name, gym.make(args.env), seed, zoo, args.steps)
            model.learn(args.steps)
            eval_env = gym.make(args.env)
            returns = evaluate(
                lambda o, m=model: m.predict(o, deterministic=True)[0],
                eval_env,
                args.eval_episodes,
            )
            means[seed] = returns.mean()
            print(f"# {name} seed {seed}: {means[seed]:.1f}", flush=True)
        per_seed[name] = means
        print(f"# {name}: {time.perf_counter() - start:.0f} s", flush=True)
    print(
        f"{args.env}: {args.steps} training steps, seeds 0-{args.seeds - 1}, "
        f"{args.eval_episodes} evaluation episodes per seed (deterministic)"
    )
    print(f"{'agent':<12} {'return':>9} {'s.e.':>7}  per seed")
    for name, means in per_seed.items():
        mean, se = mean_se(means)
        se_txt = f"{float(se):.2f}" if len(means) > 1 else "n/a"  # one seed: no s.e.
        seeds = " ".join(f"{m:.1f}" for m in means)
        print(f"{name:<12} {float(mean):>9.2f} {se_txt:>7}  {seeds}")
    return per_seed


if __name__ == "__main__":
    main()
