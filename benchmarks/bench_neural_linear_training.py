"""NeuralLinear's network training with written-out gradients against autograd, in one run.

Run: ``python benchmarks/bench_neural_linear_training.py [--rounds 300] [--seeds 50]
[--delta 0.5] [--seed 100] [--repeats 1] [--horizon 80000] [--threads 1] [--smoke]``

Plays one wheel cell of ``thompson-neurallinear`` (``run_wheel``, ``--rounds`` × ``--seeds``)
with each training path (the posterior's private ``_autograd`` flag), alternating, ``--repeats``
times each, and prints per path the wall and CPU seconds, the CPU time inside
``NeuralLinearPosterior.train`` per SGD step, the ratios autograd / written-out (cell and
training), whether the actions agree, and the load average. It then estimates a
``--horizon``-round run of as many seeds on one core from the written-out path's CPU times:
SGD steps × time per step, rounds × the rest of a round (the cell's time outside training,
its small refits included), and every retraining's refit of the regression on all data so far,
timed at two data sizes and taken linear in the data.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from delight_gym.experiments.contextual import run_wheel
from delight_gym.posteriors.neural_linear import NeuralLinearPosterior


def _time_training() -> tuple[dict[str, float], Callable[[], None]]:
    """Wrap ``NeuralLinearPosterior.train`` to add its CPU seconds and steps to a dict; returns
    the dict and a function that removes the wrapper."""
    spent = {"seconds": 0.0, "steps": 0.0}
    train = NeuralLinearPosterior.train

    def timed(self: NeuralLinearPosterior) -> None:
        start = time.process_time()
        train(self)
        spent["seconds"] += time.process_time() - start
        spent["steps"] += self.train_steps

    NeuralLinearPosterior.train = timed  # type: ignore[method-assign]

    def restore() -> None:
        NeuralLinearPosterior.train = train  # type: ignore[method-assign]

    return spent, restore


def run_cell(args: argparse.Namespace, autograd: bool) -> dict[str, Any]:
    """One wheel cell with one training path: seconds, CPU seconds, training, actions."""
    NeuralLinearPosterior._autograd = autograd
    spent, restore = _time_training()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        result = run_wheel(
            "thompson-neurallinear", args.delta, args.rounds, args.seeds, seed=args.seed
        )
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
    finally:
        restore()
        NeuralLinearPosterior._autograd = False
    return {
        "wall": wall,
        "cpu": cpu,
        "train": spent["seconds"],
        "steps": spent["steps"],
        "actions": result.actions,
    }


def refit_seconds(seeds: int, size: int, seed: int) -> float:
    """CPU seconds of one retraining's refit (features of all ``size`` data, then the
    regression) for ``seeds`` rows of the wheel's NeuralLinear posterior, its feature buffer
    already touched by an earlier refit (as in a run, where it grows by doubling)."""
    gens = [torch.Generator().manual_seed(seed + i) for i in range(seeds)]
    post = NeuralLinearPosterior(seeds, 5, 2, generators=gens)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(size):
        x = torch.rand(seeds, 2, generator=gen, dtype=torch.float64)
        post.data.add(x, torch.randint(5, (seeds,), generator=gen), x.sum(-1))
    post._refit()
    start = time.process_time()
    post._refit()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--delta", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--horizon", type=int, default=80_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="60 rounds, 3 seeds")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rounds, args.seeds = 60, 3
    torch.set_num_threads(args.threads)
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(args.repeats):
        for autograd in (False, True):
            runs[autograd].append(run_cell(args, autograd))
    best = {k: min(v, key=lambda r: r["cpu"]) for k, v in runs.items()}
    fast, slow = best[False], best[True]
    same = all(np.array_equal(r["actions"], fast["actions"]) for v in runs.values() for r in v)
    print(
        f"thompson-neurallinear wheel delta={args.delta}: {args.rounds} rounds x {args.seeds} "
        f"seeds, seed {args.seed}, {args.threads} thread(s), best of {args.repeats}"
    )
    for name, r in (("written-out", fast), ("autograd", slow)):
        per_step = 1e3 * r["train"] / max(r["steps"], 1)
        print(
            f"  {name:12s} wall {r['wall']:7.2f} s  cpu {r['cpu']:7.2f} s  training "
            f"{r['train']:7.2f} s cpu ({per_step:.2f} ms/step, {r['steps']:.0f} steps)"
        )
    ratio_cell, ratio_train = slow["cpu"] / fast["cpu"], slow["train"] / fast["train"]
    print(f"  ratio autograd / written-out: cell {ratio_cell:.2f}x, training {ratio_train:.2f}x")
    print(f"  same actions: {same}")
    print("  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))

    # Estimate of a --horizon run on one core, from the written-out path's CPU times.
    post = NeuralLinearPosterior(1, 5, 2, generators=[torch.Generator()])
    retrainings = args.horizon // post.train_every
    steps = retrainings * post.train_steps
    per_step = fast["train"] / max(fast["steps"], 1)
    per_step_autograd = slow["train"] / max(slow["steps"], 1)
    rest = (fast["cpu"] - fast["train"]) / args.rounds
    small, large = (100, 400) if args.smoke else (2_000, 8_000)
    r_small = refit_seconds(args.seeds, small, args.seed)
    r_large = refit_seconds(args.seeds, large, args.seed)
    slope = max(r_large - r_small, 0.0) / (large - small)
    base = r_small - slope * small
    sizes = post.train_every * np.arange(1, retrainings + 1)
    refits = float(np.sum(base + slope * sizes))
    training = steps * per_step
    total = training + args.horizon * rest + refits
    print(f"estimate for {args.horizon} rounds x {args.seeds} seeds on one core (cpu):")
    print(f"  training {steps} steps x {1e3 * per_step:.2f} ms = {training / 60:.1f} min")
    print(f"  rest {1e3 * rest:.2f} ms/round x {args.horizon} = {args.horizon * rest / 60:.1f} min")
    print(
        f"  refits {r_small:.3f} s at {small} data, {r_large:.3f} s at {large}: "
        f"{retrainings} refits = {refits / 60:.1f} min"
    )
    with_autograd = total + steps * (per_step_autograd - per_step)
    print(f"  total {total / 60:.1f} min (with autograd's training {with_autograd / 60:.1f} min)")
    return {"ratio_cell": ratio_cell, "ratio_training": ratio_train, "estimate_s": total}


if __name__ == "__main__":
    main()
