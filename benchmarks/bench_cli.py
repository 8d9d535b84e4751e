"""What the command line costs on top of the compute: a small ``delight-gym run`` as a whole
process against the same seeds computed inside one Python process, measured in one run.

    python benchmarks/bench_cli.py [--arms 1000] [--horizon 1000] [--seeds 100]
        [--agent delight] [--repeats 3]

For each repeat, interleaved (so that a load change on a shared machine hits both sides):

* **in-process**: the cell function of every cell of the sweep
  (:func:`~delight_gym.experiments.bandit.run_bernoulli`, batches of the family's batch size,
  the seeds the command uses), called one after the other in this process, which has already
  imported everything: the compute alone;
* **whole process**: ``delight-gym run bernoulli --arms K --seeds N --agents A`` in a new
  Python process into an empty ``--out`` (nothing to resume), figure included, as a user runs it;
* ``--no-plot``: the same command without the figure (what the figure costs);
* ``delight-gym --help`` and ``delight-gym --version``.

Prints wall seconds (median over repeats) and the child processes' CPU seconds (user + system,
from ``getrusage``; on a shared machine wall time depends on the load, CPU time much less), the
1-minute load average measured after each (median), and on its last line the whole process's
extra time over the in-process compute (target: at most 1.0 s wall) and the ratio. It also
checks that the command's ``summary.csv`` holds exactly the in-process numbers (same seeds, same
results, whatever path ran them).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from delight_gym.experiments.families import BERNOULLI
from delight_gym.experiments.results import mean_se
from delight_gym.experiments.specs import ExperimentSpec

#: The console script's body: ``delight-gym ARGS`` without the shell wrapper of the install.
ENTRY = "import sys; from delight_gym.cli import main; sys.exit(main())"


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(args: Sequence[str]) -> tuple[float, float]:
    """Run ``delight-gym ARGS`` in a new process; ``(wall seconds, CPU seconds)``."""
    cpu = _child_cpu()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        print(f"delight-gym {' '.join(args)}: exit status {done.returncode}: {done.stderr[-300:]}")
    return wall, _child_cpu() - cpu


def in_process(spec: ExperimentSpec) -> tuple[float, float, np.ndarray]:
    """Compute every cell of ``spec`` in this process; ``(wall, CPU, final regrets (seeds,))``."""
    cpu = time.process_time()
    start = time.perf_counter()
    finals = [
        np.asarray(
            cell.family.cell(
                cell.agent, cell.horizon, cell.seeds, seed=cell.seed, **cell.setting
            ).cumulative
        )[:, -1]
        for cell in spec.cells()
    ]
    return time.perf_counter() - start, time.process_time() - cpu, np.concatenate(finals)


def record(
    times: dict[str, list[tuple[float, float]]],
    loads: dict[str, list[float]],
    name: str,
    timing: tuple[float, float],
) -> None:
    """Keep one ``(wall, CPU)`` timing of ``name`` and the load average right after it."""
    times.setdefault(name, []).append(timing)
    loads.setdefault(name, []).append(os.getloadavg()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", type=int, default=1000)
    parser.add_argument("--horizon", type=int, default=BERNOULLI.horizon)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--agent", default="delight")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    spec = ExperimentSpec.for_family(
        BERNOULLI,
        "bernoulli",
        [{"arms": args.arms}],
        agents=(args.agent,),
        horizon=args.horizon,
        seeds=args.seeds,
    )
    run_args = [
        "run",
        "bernoulli",
        "--arms",
        str(args.arms),
        "--horizon",
        str(args.horizon),
        "--seeds",
        str(args.seeds),
        "--agents",
        args.agent,
        "--no-progress",
    ]
    print(
        f"delight-gym {' '.join(run_args)}  ({len(spec.cells())} cells of at most "
        f"{spec.batch_size} seeds; {os.cpu_count()} cores)"
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    in_process(spec.replace(seeds=1, horizon=10))  # imports and first-call costs, not timed
    times: dict[str, list[tuple[float, float]]] = {}
    loads: dict[str, list[float]] = {}
    finals = np.empty(0)
    summary = pd.DataFrame()
    for _ in range(args.repeats):
        wall, cpu, finals = in_process(spec)
        record(times, loads, "in-process", (wall, cpu))
        with tempfile.TemporaryDirectory() as tmp:
            record(times, loads, "whole process", command([*run_args, "--out", f"{tmp}/a"]))
            summary = pd.read_csv(Path(tmp) / "a" / "summary.csv")
            no_plot = command([*run_args, "--no-plot", "--out", f"{tmp}/b"])
            record(times, loads, "whole, --no-plot", no_plot)
        record(times, loads, "--help", command(["--help"]))
        record(times, loads, "--version", command(["--version"]))
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    mean, se = mean_se(finals[:, None])
    same = np.array_equal(summary[["regret_mean", "regret_se"]].to_numpy()[0], [mean[0], se[0]])
    print(
        f"\n{'':18} {'wall s (median)':>16} {'CPU s (median)':>15} {'load':>5}   "
        "wall s of each repeat"
    )
    medians = {}
    for name, pairs in times.items():
        walls = [w for w, _ in pairs]
        medians[name] = (statistics.median(walls), statistics.median(c for _, c in pairs))
        each = " ".join(f"{w:.2f}" for w in walls)
        load = statistics.median(loads[name])
        print(f"{name:18} {medians[name][0]:16.2f} {medians[name][1]:15.2f} {load:5.1f}   {each}")
    whole, inner = medians["whole process"], medians["in-process"]
    print(
        f"\nwhole process - in-process: {whole[0] - inner[0]:.2f} s wall (target: at most "
        f"1.0 s), {whole[1] - inner[1]:.2f} s CPU; whole / in-process {whole[0] / inner[0]:.2f}x "
        f"wall; load average {statistics.median(loads['whole process']):.1f}"
    )
    print(f"--help: {medians['--help'][0]:.2f} s wall (target: under 1 s)")
    print(f"summary.csv equals the in-process numbers: {same}")


if __name__ == "__main__":
    main()
