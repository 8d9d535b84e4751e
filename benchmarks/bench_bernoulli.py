"""Throughput of the fast Bernoulli agents against the dense reference, measured in one run.

Run: ``python benchmarks/bench_bernoulli.py [--arms 10,1000,10000,1000000] [--seeds 100]``

For every agent and K it prints the fast path's seed·steps per second over the full horizon
(default T = 1000) and its peak traced memory, then times the dense reference agents
(:mod:`delight_gym.agents.dense`: every arm, every step; DE with ``prune=False``) on the same
instances and prints the speed ratio. The dense reference is slow at large K, so above
``--dense-full-max`` arms it runs a shorter horizon (``--dense-horizon``) and the fast path is
re-timed on that same horizon for the ratio. Above ``--dense-max`` arms the dense reference
is skipped (it needs ``seeds × K`` floats). Both paths' mean final regrets are printed so that
the fast path can be seen to agree with the reference (the tests check it statistically).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

from delight_gym.experiments.bandit import run_bernoulli


def timed(agent: str, k: int, horizon: int, seeds: int, **kwargs: object) -> tuple[float, float]:
    start = time.perf_counter()
    result = run_bernoulli(agent, k, horizon, seeds, seed=0, **kwargs)  # type: ignore[arg-type]
    return time.perf_counter() - start, float(result.cumulative[:, -1].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", default="10,1000,10000,1000000")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--agents", default="delight,thompson,egreedy,greedy,ucb")
    parser.add_argument("--dense-full-max", type=int, default=1000)
    parser.add_argument("--dense-horizon", type=int, default=100)
    parser.add_argument("--dense-max", type=int, default=10_000)
    args = parser.parse_args()
    run_bernoulli("delight", 10, 20, 2)  # warm-up: imports, scipy kernels
    print(f"seeds={args.seeds} horizon={args.horizon}")
    header = (
        f"{'agent':<10}{'K':>9}{'fast s':>8}{'seed·steps/s':>14}{'peak MB':>9}{'regret':>9}"
        f"   {'dense reference (same run)'}"
    )
    print(header)
    for k in [int(x) for x in args.arms.split(",")]:
        for agent in args.agents.split(","):
            tracemalloc.start()
            fast_s, fast_regret = timed(agent, k, args.horizon, args.seeds)
            peak = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            # tracemalloc slows numpy-heavy code; time again without it.
            fast_s, fast_regret = timed(agent, k, args.horizon, args.seeds)
            line = (
                f"{agent:<10}{k:>9}{fast_s:>8.2f}{args.seeds * args.horizon / fast_s:>14,.0f}"
                f"{peak:>9.1f}{fast_regret:>9.1f}   "
            )
            extra = {"prune": False} if agent == "delight" else {}
            if k > args.dense_max:
                line += "skipped (needs seeds·K memory)"
            elif k > args.dense_full_max:
                h = args.dense_horizon
                dense_s, dense_regret = timed(agent, k, h, args.seeds, dense=True, **extra)
                short_s, short_regret = timed(agent, k, h, args.seeds)
                line += (
                    f"T={h}: dense {dense_s:.2f}s vs fast {short_s:.2f}s = "
                    f"{dense_s / short_s:.1f}x; regret {dense_regret:.1f} vs {short_regret:.1f}"
                )
            else:
                dense_s, dense_regret = timed(
                    agent, k, args.horizon, args.seeds, dense=True, **extra
                )
                line += f"dense {dense_s:.2f}s = {dense_s / fast_s:.1f}x; regret {dense_regret:.1f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
