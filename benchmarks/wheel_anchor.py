"""The wheel bandit at the Deep Bayesian Bandits Showdown's own size, on any device.

Run: ``python benchmarks/wheel_anchor.py --agent thompson-neurallinear --delta 0.5
--horizon 80000 --seeds 50 --device cuda --out wheel_anchor.csv [--reset-lr]
[--hidden-sizes 100,100 --train-every 20 --train-steps 20 --a0 3 --b0 3]``

Plays one agent on ``--seeds`` wheel instances at once (one network with a seed axis) and
``uniform`` on the same instances, and appends one row per δ to ``--out``: the agent's mean
cumulative regret, its standard error, and the showdown's metric, percent of uniform's
cumulative regret. The published NeuralLinear row (n = 80 000, 50 trials) is printed beside
it. A line of progress with the rounds per second is printed every ``--report-every`` rounds.
"""

from __future__ import annotations

import argparse
import csv
import inspect
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from delight_gym.experiments.contextual import run_wheel
from delight_gym.posteriors.neural_linear import NeuralLinearPosterior

# Amortized Bayesian Meta-Learning (Ravi & Beatson), Table 1, reprinting the showdown's
# NeuralLinear row: percent of uniform's cumulative regret, n = 80 000, 50 trials.
PUBLISHED_NEURALLINEAR = {0.5: 0.95, 0.7: 1.60, 0.9: 4.65, 0.95: 9.56, 0.99: 49.63}


#: NeuralLinear's own defaults (the options below start from them).
_NL = {k: p.default for k, p in inspect.signature(NeuralLinearPosterior).parameters.items()}


def _sizes(text: str) -> tuple[int, ...]:
    """``"100,100"`` → ``(100, 100)`` (positive integers)."""
    try:
        sizes = tuple(int(h) for h in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers like 100,100: {text!r}")
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="thompson-neurallinear")
    parser.add_argument("--delta", default="0.5", help="comma-separated radii δ")
    parser.add_argument("--horizon", type=int, default=80_000)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.01)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--reset-lr", action="store_true", help="NeuralLinear's reset_lr=True")
    hidden = ",".join(map(str, _NL["hidden_sizes"]))
    parser.add_argument(
        "--hidden-sizes",
        type=_sizes,
        default=tuple(_NL["hidden_sizes"]),
        help=f"NeuralLinear's hidden layers, comma-separated (default {hidden})",
    )
    parser.add_argument(
        "--train-every", type=int, default=_NL["train_every"], help="rounds between retrainings"
    )
    parser.add_argument(
        "--train-steps", type=int, default=_NL["train_steps"], help="minibatch steps each"
    )
    parser.add_argument("--a0", type=float, default=_NL["a0"], help="inverse-gamma prior shape")
    parser.add_argument("--b0", type=float, default=_NL["b0"], help="inverse-gamma prior scale")
    parser.add_argument(
        "--network-dtype",
        choices=("float32", "float64"),
        default=str(_NL["network_dtype"]).removeprefix("torch."),
    )
    parser.add_argument("--report-every", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=Path("wheel_anchor.csv"))
    args = parser.parse_args()
    kwargs: dict[str, Any] = {}
    if args.agent.endswith("neurallinear"):
        kwargs = dict(
            reset_lr=args.reset_lr,
            hidden_sizes=args.hidden_sizes,
            train_every=args.train_every,
            train_steps=args.train_steps,
            a0=args.a0,
            b0=args.b0,
            network_dtype=getattr(torch, args.network_dtype),
        )
    for delta in (float(d) for d in args.delta.split(",")):
        start = time.perf_counter()
        done = [0]

        def progress(
            n: int, start: float = start, done: list[int] = done, delta: float = delta
        ) -> None:
            done[0] += n
            if done[0] % args.report_every == 0:
                rate = done[0] / (time.perf_counter() - start)
                print(f"  δ={delta}: {done[0]} rounds, {rate:.0f} rounds/s", flush=True)

        common = dict(seed=args.seed, noise=args.noise)
        result = run_wheel(
            args.agent,
            delta,
            args.horizon,
            args.seeds,
            device=args.device,
            callback=progress,
            **common,
            **kwargs,
        )
        uniform = run_wheel("uniform", delta, args.horizon, args.seeds, **common)
        regret = result.regret.sum(axis=1)
        base = uniform.regret.sum(axis=1).mean()
        se = regret.std(ddof=1) / np.sqrt(regret.size) if regret.size > 1 else float("nan")
        row = {
            "agent": args.agent,
            "reset_lr": args.reset_lr,
            "hidden_sizes": ",".join(map(str, args.hidden_sizes)),
            "train_every": args.train_every,
            "train_steps": args.train_steps,
            "a0": args.a0,
            "b0": args.b0,
            "network_dtype": args.network_dtype,
            "delta": delta,
            "noise": args.noise,
            "horizon": args.horizon,
            "seeds": args.seeds,
            "seed": args.seed,
            "device": str(args.device),
            "regret_mean": round(float(regret.mean()), 1),
            "regret_se": round(float(se), 1),
            "uniform_mean": round(float(base), 1),
            "percent_of_uniform": round(100 * float(regret.mean()) / base, 3),
            "percent_se": round(100 * float(se) / base, 3),
            "seconds": round(result.seconds, 1),
        }
        new = not args.out.exists()
        with args.out.open("a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)
        published = PUBLISHED_NEURALLINEAR.get(delta)
        print(
            f"{args.agent} δ={delta}: {row['percent_of_uniform']:.2f} ± "
            f"{row['percent_se']:.2f} % of uniform ({args.seeds} seeds, {result.seconds:.0f} s"
            f" on {args.device}); published NeuralLinear {published}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    torch.set_num_threads(1)
    sys.exit(main())
