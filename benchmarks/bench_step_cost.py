"""Cost per training step: DelightSAC / DelightTD3 against SAC / TD3 on Pendulum-v1, and
BootstrappedDQN against SB3's DQN on DeepSea N = 20 at bsuite's settings.

Process CPU time of ``learn`` over windows of environment steps (one gradient step each),
after a warm-up that fills the replay buffer. Both models of a pair are built first and their
windows alternate in one process (SB3, DE, DE, SB3, ...), so a drift of the machine's speed
hits both; the ratio of each pair of windows is taken and their median printed, with the
load average beside every figure. DE's clock is set to ``t`` before each window, so it sees
``ε_t = M/(M + t)`` of that point of a run; the run average weighs the measured ratios over a
default-length run (Pendulum: 20 000 steps), linearly between the clocks measured.

DeepSea (``--deepsea-steps``): ``DQN`` and ``BootstrappedDQN`` (10 heads with randomized
priors) share bsuite's ``boot_dqn`` settings where both have the knob (Adam 1e-3, batch 128,
replay 10 000, learning from 128 transitions, one SGD step per env step, target update every
4, γ 0.99) and an MLP [64, 64]; ``DeepSea-v0`` with ``size=20, mapping_seed=0``. Target:
``BootstrappedDQN/DQN <= 1.15``.

    python benchmarks/bench_step_cost.py                # Pendulum at 5 clocks, and DeepSea
    python benchmarks/bench_step_cost.py --only deepsea # DeepSea only, 8 windows of 250
    python benchmarks/bench_step_cost.py --quick        # tiny, for the test suite
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass

import torch
from bench_deep_agents import COMMON, HIDDEN  # this folder is on sys.path when run


@dataclass
class Args:
    """The benchmark's settings."""

    steps: int = 200
    warmup: int = 300
    repeats: int = 4
    clocks: tuple[int, ...] = (0, 300, 1000, 3000, 10_000)
    quick: bool = False
    deepsea_steps: int = 250
    deepsea_repeats: int = 8
    only: str = "all"


#: bsuite's boot_dqn settings where SB3's DQN has the same knob, and its [64, 64] network.
BSUITE_COMMON = {**COMMON, "policy_kwargs": {"net_arch": list(HIDDEN)}}
DEEPSEA_SIZE = 20
#: Pendulum's training steps in the control family (``delight-gym run pendulum``).
PENDULUM_STEPS = 20_000


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


def paired(models: dict, steps: int, repeats: int, clock: int | None, label: str) -> list[float]:
    """Alternate ``repeats`` windows of ``steps`` of the two ``models`` (SB3's first, DE's
    second; the order flips every pair), print each window, and return DE/SB3 per pair."""
    base, de = models
    ratios = []
    for r in range(repeats):
        cost = {}
        for name in (base, de) if r % 2 == 0 else (de, base):
            cost[name] = _time(models[name], steps, clock if name == de else None)
            print(f"  {name:<15} {label} {1e3 * cost[name]:7.3f} ms/step  {_load()}")
        ratios.append(cost[de] / cost[base])
    return ratios


def _summary(pair: str, where: str, ratios: list[float], target: float) -> str:
    return (
        f"ratio {pair}{where}: {statistics.median(ratios):.3f} (median of {len(ratios)} paired "
        f"windows), {min(ratios):.3f} (least), target {target}  {_load()}"
    )


def deepsea(steps: int, repeats: int) -> float:
    """Print ``DQN``'s and ``BootstrappedDQN``'s CPU ms per env step on DeepSea N = 20 in
    paired windows and return the median ratio."""
    print(
        f"DeepSea N = {DEEPSEA_SIZE}, bsuite's settings, {repeats} paired windows of {steps} "
        "steps, CPU time, one torch thread"
    )
    models = {name: _deepsea_model(name, seed=0) for name in ("DQN", "BootstrappedDQN")}
    ratios = paired(models, steps, repeats, None, "")
    print(_summary("BootstrappedDQN/DQN", f" on DeepSea N={DEEPSEA_SIZE}", ratios, 1.15))
    return statistics.median(ratios)


def run_average(clocks: tuple[int, ...], ratios: list[float], horizon: int) -> float:
    """The mean over ``t`` in ``[0, horizon)`` of the ratio, linear between the measured
    ``clocks`` and held beyond the last (trapezoids on the measured points)."""
    ts = [*clocks, horizon] if clocks[-1] < horizon else list(clocks)
    rs = [*ratios, ratios[-1]] if clocks[-1] < horizon else list(ratios)
    pieces = zip(ts, ts[1:], rs, rs[1:], strict=False)
    area = sum((t1 - t0) * (r0 + r1) / 2 for t0, t1, r0, r1 in pieces)
    return area / (ts[-1] - ts[0])


class _HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The description as written, and each option's default."""


def main(argv: list[str] | None = None) -> None:
    """Print each algorithm's CPU milliseconds per step and DE's ratio, with the load."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=_HelpFormatter
    )
    add = parser.add_argument
    add("--steps", type=int, default=Args.steps, help="Pendulum steps per timed window")
    add("--warmup", type=int, default=Args.warmup, help="steps that fill the replay first")
    add("--repeats", type=int, default=Args.repeats, help="paired windows at each clock")
    clocks = ",".join(map(str, Args.clocks))
    add("--clocks", type=str, default=clocks, help="DE's clocks t, comma-separated")
    add("--deepsea-steps", type=int, default=Args.deepsea_steps, help="DeepSea steps per window")
    add("--deepsea-repeats", type=int, default=Args.deepsea_repeats, help="DeepSea window pairs")
    add("--only", choices=("all", "pendulum", "deepsea"), default="all", help="which pairs")
    add("--quick", action="store_true", help="tiny sizes (the test suite's smoke run)")
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
            repeats=2,
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
    print(
        f"Pendulum-v1, {args.repeats} paired windows of {args.steps} steps at each clock, "
        "CPU time, one torch thread"
    )
    for base, de in (("SAC", "DelightSAC"), ("TD3", "DelightTD3")):
        models = {name: _model(name, args.warmup, seed=0) for name in (base, de)}
        medians = []
        for clock in args.clocks:
            eps = 100.0 / (100.0 + clock)
            ratios = paired(models, args.steps, args.repeats, clock, f"t={clock:<6}")
            medians.append(statistics.median(ratios))
            print(_summary(f"{de}/{base}", f" at t={clock} (eps_t={eps:.4f})", ratios, 1.2))
        mean = run_average(args.clocks, medians, PENDULUM_STEPS)
        print(
            f"run average {de}/{base} over {PENDULUM_STEPS} steps: {mean:.3f} (the medians, "
            f"linear between t = {', '.join(map(str, args.clocks))}), target 1.2  {_load()}"
        )


if __name__ == "__main__":
    main()
