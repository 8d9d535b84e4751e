"""Cost per training step: DelightSAC / DelightTD3 against SAC / TD3 on Pendulum-v1.

Process CPU time of ``learn`` over a window of environment steps (one gradient step each),
after a warm-up that fills the replay buffer; DE's clock is set to ``--clock`` first, so the
window sees ``ε_t = M/(M + t)`` of that point of a run. Runs alternate (SB3, DE, SB3, DE, ...)
on one torch thread; the load average is printed beside every figure.

    python benchmarks/bench_step_cost.py                # clock 0 and 10 000, 1 000 steps x 3
    python benchmarks/bench_step_cost.py --quick        # tiny, for the test suite
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import torch


@dataclass
class Args:
    """The benchmark's settings."""

    steps: int = 1000
    warmup: int = 300
    repeats: int = 3
    clocks: tuple[int, ...] = (0, 10_000)
    quick: bool = False


def _load() -> str:
    return f"load average {os.getloadavg()[0]:.2f}"


def _model(name: str, warmup: int, seed: int):
    """A fresh model of ``name`` on Pendulum-v1, trained ``warmup`` steps."""
    import stable_baselines3 as sb3

    from delight_gym import sb3 as de_sb3

    cls = getattr(de_sb3, name) if name.startswith("Delight") else getattr(sb3, name)
    model = cls("MlpPolicy", "Pendulum-v1", seed=seed, learning_starts=min(100, warmup // 2))
    model.learn(warmup)
    return model


def _time(model, steps: int, clock: int | None) -> float:
    """CPU seconds per environment step of ``steps`` more steps (DE's clock set to ``clock``)."""
    if clock is not None:
        model.delight.t = clock
    start = time.process_time()
    model.learn(steps, reset_num_timesteps=False)
    return (time.process_time() - start) / steps


def main(argv: list[str] | None = None) -> None:
    """Print each algorithm's CPU milliseconds per step and DE's ratio, with the load."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=Args.steps)
    parser.add_argument("--warmup", type=int, default=Args.warmup)
    parser.add_argument("--repeats", type=int, default=Args.repeats)
    parser.add_argument("--clocks", type=str, default="0,10000")
    parser.add_argument("--quick", action="store_true")
    ns = parser.parse_args(argv)
    args = Args(ns.steps, ns.warmup, ns.repeats, tuple(int(c) for c in ns.clocks.split(",")))
    if ns.quick:
        args = Args(steps=20, warmup=30, repeats=1, clocks=(0, 10_000), quick=True)
    torch.set_num_threads(1)
    print(f"Pendulum-v1, {args.steps} steps x {args.repeats}, CPU time, one torch thread")
    for base, de in (("SAC", "DelightSAC"), ("TD3", "DelightTD3")):
        for clock in args.clocks:
            eps = 100.0 / (100.0 + clock)
            costs: dict[str, list[float]] = {base: [], de: []}
            for r in range(args.repeats):
                for name in (base, de) if r % 2 == 0 else (de, base):
                    model = _model(name, args.warmup, seed=r)
                    cost = _time(model, args.steps, clock if name == de else None)
                    costs[name].append(cost)
                    print(f"  {name:<11} t={clock:<6} {1e3 * cost:7.3f} ms/step  {_load()}")
            ratio = min(costs[de]) / min(costs[base])
            print(f"ratio {de}/{base} at t={clock} (eps_t={eps:.4f}): {ratio:.3f}  {_load()}")


if __name__ == "__main__":
    main()
