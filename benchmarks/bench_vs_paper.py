"""Our Bernoulli agents against the paper's own JAX code, timed in one process, same cells.

Run: ``pip install -e ".[paper]"`` (CPU JAX), then
``python benchmarks/bench_vs_paper.py [--arms 1000] [--agents delight] [--seeds 100]
[--horizon 1000] [--repeats 1]`` (the default, DE at K = 1000, takes 40-90 s; the paper's
Thompson sampling at K = 1000 takes minutes).

For every agent and K it compiles the paper's appendix algorithm (``benchmarks/paper_jax.py``:
``select_delight`` as printed, in a ``jit``-compiled ``vmap`` over seeds of a ``lax.scan`` over
rounds), reports the compile time apart, times the compiled run, then times ours
(:func:`delight_gym.experiments.bandit.run_bernoulli`, the fast batched agents) on the same
cell right after, and prints ``paper / ours`` of the wall times. Beside each wall time it
prints the process's CPU time (``cpu s``, ``time.process_time``: all threads; XLA runs the
paper's code on a thread pool, ours is mostly one thread), which a loaded machine disturbs
less, and the 1-minute load average after each row (``load``). With ``--repeats R`` each side
is timed R times and the fastest kept (the machine's load varies). The last line repeats the
ratios on one line with the load before and after.

Both sides' final cumulative pseudo-regret is printed as mean ± standard error over seeds with
``z = (ours − paper) / √(se_ours² + se_paper²)``: the two draw different instances and random
numbers, so they agree only in distribution, and ``|z|`` of about 2 or less says the same
algorithm was timed (the paper's code runs in ``float32``, ours in ``float64``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from delight_gym.experiments.bandit import run_bernoulli
from delight_gym.experiments.results import mean_se

sys.path.insert(0, str(Path(__file__).resolve().parent))
import paper_jax  # beside this script; needs the optional JAX


def final_mean_se(cumulative: np.ndarray) -> tuple[float, float]:
    """Mean and standard error over seeds of the final cumulative regret, ``(seeds, T)``."""
    mean, se = mean_se(cumulative)
    return float(mean[-1]), float(se[-1])


def fastest(fn, repeats: int) -> tuple[float, float, object]:
    """Run ``fn()`` ``repeats`` times; return the shortest wall time, the CPU time of that
    run and the last result."""
    best, cpu, result = float("inf"), float("nan"), None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return best, cpu, result


def load_now() -> float:
    """The 1-minute load average (NaN where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover - not available on this platform
        return float("nan")


def load_average() -> str:
    """The 1-minute load average and the number of cores, as text (Unix only)."""
    try:
        return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:  # pragma: no cover - not available on this platform
        return f"{os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", default="1000")
    parser.add_argument("--agents", default="delight")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    if args.seeds < 2 or args.horizon < 1 or args.repeats < 1:
        parser.error("--seeds must be >= 2, --horizon and --repeats >= 1")
    arms = [int(k) for k in args.arms.split(",")]
    agents = args.agents.split(",")
    for agent in agents:
        if agent not in paper_jax.AGENTS:
            parser.error(f"--agents: {agent!r} is not one of {sorted(paper_jax.AGENTS)}")

    run_bernoulli("delight", 10, 20, 2)  # warm-up: imports, scipy kernels
    jax_device = paper_jax.jax.devices()[0]
    print(
        f"seeds={args.seeds} horizon={args.horizon} repeats={args.repeats} "
        f"jax={paper_jax.jax.__version__} on {jax_device.platform}; {load_average()}"
    )
    print(
        f"{'agent':<9}{'K':>6}{'paper compile s':>16}{'paper s':>9}{'cpu s':>8}{'ours s':>8}"
        f"{'cpu s':>7}{'paper/ours':>11}   {'paper regret':>15}{'ours regret':>15}{'z':>6}"
        f"{'load':>6}"
    )
    load_before, ratios = load_average(), []
    for k in arms:
        for agent in agents:
            run, compile_s = paper_jax.compile_run(agent, k, args.horizon, args.seeds)
            paper_s, paper_cpu, paper_regret = fastest(run, args.repeats)
            ours_s, ours_cpu, ours_result = fastest(
                lambda agent=agent, k=k: run_bernoulli(agent, k, args.horizon, args.seeds),
                args.repeats,
            )
            p_mean, p_se = final_mean_se(np.cumsum(np.asarray(paper_regret), axis=1))
            o_mean, o_se = final_mean_se(ours_result.cumulative)  # type: ignore[attr-defined]
            z = (o_mean - p_mean) / np.hypot(o_se, p_se)
            print(
                f"{agent:<9}{k:>6}{compile_s:>16.2f}{paper_s:>9.2f}{paper_cpu:>8.1f}{ours_s:>8.2f}"
                f"{ours_cpu:>7.2f}{paper_s / ours_s:>10.1f}x   {p_mean:>7.1f} ± {p_se:<5.1f}"
                f"{o_mean:>7.1f} ± {o_se:<5.1f}{z:>6.2f}{load_now():>6.1f}",
                flush=True,
            )
            ratios.append(f"{agent} K={k} {paper_s / ours_s:.1f}x")
    print(
        f"done: paper/ours wall {', '.join(ratios)}; {load_before} before, {load_average()} after"
    )


if __name__ == "__main__":
    main()
