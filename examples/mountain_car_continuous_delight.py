"""SB3 SAC and TD3 vs DelightSAC and DelightTD3 on MountainCarContinuous-v0, where exploration
matters (−0.1·a² per step, +100 at the flag; 999-step episodes; a return near 0 means the car
stayed in the valley).

Every agent uses SB3's default hyperparameters (DelightTD3 without action noise: DE is its
exploration), the same seeds and the same evaluation: mean deterministic return over
``--episodes`` episodes (reset seeds 10**6, 10**6 + 1, ...), ± s.e. over seeds.

Run: ``python examples/mountain_car_continuous_delight.py [--steps N] [--seeds S] [--smoke]``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3 import SAC, TD3

from delight_gym.experiments.control import evaluate_returns
from delight_gym.sb3 import DelightSAC, DelightTD3

ENV_ID = "MountainCarContinuous-v0"
AGENTS: dict[str, Any] = {
    "sac": SAC,
    "delight-sac": DelightSAC,
    "td3": TD3,
    "delight-td3": DelightTD3,
}


@dataclass
class Args:
    steps: int = 20_000
    seeds: int = 3
    episodes: int = 5
    smoke: bool = False


def parse(argv: list[str] | None = None) -> Args:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=Args.steps, help="training steps per agent")
    p.add_argument("--seeds", type=int, default=Args.seeds, help="seeds 0..S-1 per agent")
    p.add_argument("--episodes", type=int, default=Args.episodes, help="evaluation episodes")
    p.add_argument("--smoke", action="store_true", help="a few hundred steps, one seed")
    args = Args(**vars(p.parse_args(argv)))
    if args.smoke:
        args.steps, args.seeds, args.episodes = 300, 1, 1
    return args


def evaluate(model: Any, episodes: int) -> float:
    """Mean deterministic return over ``episodes`` fresh episodes."""
    return float(np.mean(evaluate_returns(model, ENV_ID, episodes)))


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    print(
        f"{ENV_ID}: {args.steps} training steps, seeds 0-{args.seeds - 1}, "
        f"{args.episodes} evaluation episodes"
    )
    print(f"{'agent':<12} {'mean':>9} {'s.e.':>7}  per seed")
    overrides = []
    for name, cls in AGENTS.items():
        means = []
        for seed in range(args.seeds):
            net = {"net_arch": [32, 32]} if args.smoke else None  # SB3 writes into it
            model = cls("MlpPolicy", gym.make(ENV_ID), seed=seed, policy_kwargs=net)
            model.learn(args.steps)
            means.append(evaluate(model, args.episodes))
            if name.startswith("delight"):
                stats = model.delight_stats
                overrides.append(
                    f"{name} seed {seed}: DE overrode {stats.total_overridden} of "
                    f"{stats.total_steps} training steps"
                )
        values = np.array(means)
        se = f"{values.std(ddof=1) / np.sqrt(len(values)):7.2f}" if len(values) > 1 else "    n/a"
        print(f"{name:<12} {values.mean():9.2f} {se}  {' '.join(f'{v:.2f}' for v in values)}")
    print("\n".join(overrides))


if __name__ == "__main__":
    main()
