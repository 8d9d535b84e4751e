"""Cost per training step: DelightSAC / DelightTD3 against SAC / TD3 on Pendulum-v1, and
BootstrappedDQN against SB3's DQN on DeepSea N = 20 at bsuite's settings.

Process CPU time of ``learn`` over a window of environment steps (one gradient step each),
after a warm-up that fills the replay buffer; DE's clock is set to ``--clock`` first, so the
window sees ``ε_t = M/(M + t)`` of that point of a run. Runs alternate (SB3, DE, SB3, DE, ...)
on one torch thread; the load average is printed beside every figure.

DeepSea (``--deepsea-steps``): ``DQN`` and ``BootstrappedDQN`` (10 heads with randomized
priors) share bsuite's ``boot_dqn`` settings where both have the knob (Adam 1e-3, batch 128,
replay 10 000, learning from 128 transitions, one SGD step per env step, target update every
4, γ 0.99) and an MLP [64, 64]; ``DeepSea-v0`` with ``size=20, mapping_seed=0``. Target:
``BootstrappedDQN/DQN <= 1.15``.

    python benchmarks/bench_step_cost.py                # clock 0 and 10 000, 1 000 steps x 3
    python benchmarks/bench_step_cost.py --only deepsea # DeepSea only, 2 000 steps x 5
    python benchmarks/bench_step_cost.py --quick        # tiny, for the test suite
"""

from __future__ import annotations

import argparse
import os
import statistics
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
    deepsea_steps: int = 2000
    deepsea_repeats: int = 5
    only: str = "all"


#: bsuite's boot_dqn settings where SB3's DQN has the same knob (the network: [64, 64]).
BSUITE_COMMON = {
    "learning_rate": 1e-3,
    "buffer_size": 10_000,
    "learning_starts": 128,
    "batch_size": 128,
    "gamma": 0.99,
    "train_freq": 1,
    "gradient_steps": 1,
    "target_update_interval": 4,
    "policy_kwargs": {"net_arch": [64, 64]},
}
DEEPSEA_SIZE = 20


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


def _deepsea_model(name: str, seed: int):
    """A fresh ``DQN`` or ``BootstrappedDQN`` on DeepSea N = 20, past learning starts."""
    import gymnasium as gym
    from stable_baselines3 import DQN

    import delight_gym  # noqa: F401  (registers DeepSea-v0)
    from delight_gym.sb3.bootstrapped_dqn import BootstrappedDQN

    env = gym.make("DeepSea-v0", size=DEEPSEA_SIZE, mapping_seed=0)
    cls = DQN if name == "DQN" else BootstrappedDQN
    model = cls("MlpPolicy", env, seed=seed, device="cpu", **BSUITE_COMMON)
    model.learn(int(BSUITE_COMMON["learning_starts"]) + 100)
    return model


def deepsea(steps: int, repeats: int) -> float:
    """Print ``DQN``'s and ``BootstrappedDQN``'s CPU ms per env step on DeepSea N = 20
    (alternating runs) and return the ratio of the medians."""
    print(
        f"DeepSea N = {DEEPSEA_SIZE}, bsuite's settings, {steps} steps x {repeats}, CPU time, "
        "one torch thread"
    )
    costs: dict[str, list[float]] = {"DQN": [], "BootstrappedDQN": []}
    for r in range(repeats):
        for name in ("DQN", "BootstrappedDQN") if r % 2 == 0 else ("BootstrappedDQN", "DQN"):
            model = _deepsea_model(name, seed=r)
            cost = _time(model, steps, None)
            costs[name].append(cost)
            print(f"  {name:<15} {1e3 * cost:7.3f} ms/step  {_load()}")
    ratio = statistics.median(costs["BootstrappedDQN"]) / statistics.median(costs["DQN"])
    best = min(costs["BootstrappedDQN"]) / min(costs["DQN"])
    print(
        f"ratio BootstrappedDQN/DQN on DeepSea N={DEEPSEA_SIZE}: {ratio:.3f} (medians), "
        f"{best:.3f} (minima), target 1.15  {_load()}"
    )
    return ratio


def main(argv: list[str] | None = None) -> None:
    """Print each algorithm's CPU milliseconds per step and DE's ratio, with the load."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=Args.steps)
    parser.add_argument("--warmup", type=int, default=Args.warmup)
    parser.add_argument("--repeats", type=int, default=Args.repeats)
    parser.add_argument("--clocks", type=str, default="0,10000")
    parser.add_argument("--deepsea-steps", type=int, default=Args.deepsea_steps)
    parser.add_argument("--deepsea-repeats", type=int, default=Args.deepsea_repeats)
    parser.add_argument("--only", choices=("all", "pendulum", "deepsea"), default="all")
    parser.add_argument("--quick", action="store_true")
    ns = parser.parse_args(argv)
    args = Args(
        ns.steps,
        ns.warmup,
        ns.repeats,
        tuple(int(c) for c in ns.clocks.split(",")),
        deepsea_steps=ns.deepsea_steps,
        deepsea_repeats=ns.deepsea_repeats,
        only=ns.only,
    )
    if ns.quick:
        args = Args(
            steps=20,
            warmup=30,
            repeats=1,
            clocks=(0, 10_000),
            quick=True,
            deepsea_steps=20,
            deepsea_repeats=2,
            only=ns.only,
        )
    torch.set_num_threads(1)
    if args.only in ("all", "deepsea"):
        deepsea(args.deepsea_steps, args.deepsea_repeats)
    if args.only == "deepsea":
        return
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
            ratio = statistics.median(costs[de]) / statistics.median(costs[base])
            best = min(costs[de]) / min(costs[base])
            print(
                f"ratio {de}/{base} at t={clock} (eps_t={eps:.4f}): {ratio:.3f} (medians), "
                f"{best:.3f} (minima), target 1.2  {_load()}"
            )


if __name__ == "__main__":
    main()
