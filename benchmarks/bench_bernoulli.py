"""Throughput of the batched Bernoulli agents, and DE's pruned EI against the dense reference.

Run: ``python benchmarks/bench_bernoulli.py [--arms 10,1000] [--seeds 100] [--horizon 1000]``

Prints seed·steps per second for every agent and K, and for DE the ratio of the pruned
fast path (EI only where an arm can pass the gate) to the dense reference (EI of every arm
at every step), both timed in this same run on the same instances. The two paths choose
identical arms; the script checks that too.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from delight_gym.experiments.bandit import run_bernoulli


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", default="10,100,1000")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--agents", default="delight,thompson,egreedy,greedy,ucb")
    args = parser.parse_args()
    arms = [int(x) for x in args.arms.split(",")]
    agents = args.agents.split(",")
    work = args.seeds * args.horizon
    print(f"seeds={args.seeds} horizon={args.horizon}")
    print(f"{'agent':<16}{'K':>7}{'seconds':>10}{'seed·steps/s':>15}")
    for k in arms:
        for agent in agents:
            start = time.perf_counter()
            fast = run_bernoulli(agent, k, args.horizon, args.seeds, seed=0)
            seconds = time.perf_counter() - start
            print(f"{agent:<16}{k:>7}{seconds:>10.2f}{work / seconds:>15,.0f}")
            if agent == "delight":
                start = time.perf_counter()
                dense = run_bernoulli(agent, k, args.horizon, args.seeds, seed=0, prune=False)
                dense_s = time.perf_counter() - start
                same = np.array_equal(fast.actions, dense.actions)
                print(
                    f"{'delight(dense)':<16}{k:>7}{dense_s:>10.2f}{work / dense_s:>15,.0f}"
                    f"   pruned/dense speed-up {dense_s / seconds:.1f}x, same actions: {same}"
                )


if __name__ == "__main__":
    main()
