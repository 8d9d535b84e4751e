"""bsuite's DeepSea experiments, reported as bsuite reports them: runs, scores and the figure.

From the output folders of ``delight-gym run bsuite-deep-sea`` (or ``-stochastic``):
:func:`runs_table` (one row per run), :func:`scores_table` (each agent's bsuite score) and
:func:`plot_solve_scaling` (bsuite's scaling plot)::

    python -m delight_gym.experiments.bsuite_report deep_sea results/bsuite/* --out docs/results
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from delight_gym.experiments.results import parse_solve_episodes
from delight_gym.experiments.scores import BSUITE_EXPERIMENTS, DeepSeaSolve, deep_sea_score

__all__ = ["main", "plot_solve_scaling", "runs_table", "scores_table"]

RUN_COLUMNS = ["agent", "size", "seed", "solve_episode", "episodes_run"]


def runs_table(summaries: Iterable[tuple[pd.DataFrame, int]]) -> pd.DataFrame:
    """One row per run of the bsuite families' ``summary.csv`` tables.

    Parameters
    ----------
    summaries : iterable of (pandas.DataFrame, int)
        ``summary.csv`` tables (columns ``agent``, ``size``, ``solve_episodes``), each with the
        first seed of its sweep (``--seed``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RUN_COLUMNS`, sorted by agent, size and seed; ``solve_episode`` is
        ``<NA>`` for an unsolved run, ``episodes_run`` the episodes it played.
    """
    rows = []
    for summary, first_seed in summaries:
        missing = {"agent", "size", "solve_episodes"} - set(summary.columns)
        if missing:
            raise ValueError(f"summaries: a table lacks the columns {sorted(missing)}")
        for _, row in summary.iterrows():
            episodes, solved = parse_solve_episodes(str(row["solve_episodes"]))
            seeds = range(int(first_seed), int(first_seed) + len(episodes))
            for seed, episode, done in zip(seeds, episodes, solved, strict=True):
                solve = int(episode) if done else None
                rows.append((str(row["agent"]), int(row["size"]), seed, solve, int(episode)))
    table = pd.DataFrame(rows, columns=RUN_COLUMNS)
    table["solve_episode"] = table["solve_episode"].astype("Int64")
    return table.sort_values(["agent", "size", "seed"], ignore_index=True)


def scores_table(runs: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """Each agent's bsuite score (the fraction of its runs solved before ``2**N + 100``);
    ``runs_complete``: a run at every size of bsuite's sweep (else ``sizes_missing``)."""
    if experiment not in BSUITE_EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(BSUITE_EXPERIMENTS)}")
    sizes = BSUITE_EXPERIMENTS[experiment].sizes
    out = []
    for agent, group in runs.groupby("agent", sort=True):
        solved = group["solve_episode"].notna().to_numpy()
        solves = [
            (int(n), DeepSeaSolve(bool(done), int(e), True))
            for n, e, done in zip(group["size"], group["episodes_run"], solved, strict=True)
        ]
        missing = sorted(set(sizes) - set(group["size"]))
        out.append(
            {
                "agent": agent,
                "experiment": experiment,
                "score": deep_sea_score(solves),
                "runs": len(solves),
                "runs_complete": not missing,
                "sizes_missing": " ".join(map(str, missing)),
            }
        )
    return pd.DataFrame(out)


def plot_solve_scaling(runs: pd.DataFrame, path: Path, *, title: str = "") -> None:
    """bsuite's scaling plot, saved as ``path`` (.png/.pdf): each run's solve episode against
    ``N`` (log scale; unsolved: a cross at the episodes it played) and the ``2^N`` line."""
    from delight_gym.plotting import new_figure, save_figure

    fig, axes = new_figure(figsize=(6.0, 4.0), layout="constrained")
    ax = axes[0, 0]
    n = np.arange(int(runs["size"].min()), int(runs["size"].max()) + 1)
    ax.plot(n, 2.0**n, "k--", alpha=0.4, label="$2^N$ (dithering)")
    for i, (agent, group) in enumerate(runs.groupby("agent", sort=True)):
        colour = f"C{i}"
        solved = group[group["solve_episode"].notna()]
        unsolved = group[group["solve_episode"].isna()]
        episodes = solved["solve_episode"].astype(float)
        # zorder: the solves above the crosses, so that a solve at the budget shows
        ax.scatter(solved["size"], episodes, color=colour, label=agent, zorder=3)
        ax.scatter(unsolved["size"], unsolved["episodes_run"], color=colour, marker="x")
    ax.set_yscale("log")
    ax.set_xlabel("size N")
    ax.set_ylabel("solve episode (x: unsolved after)")
    ax.set_ylim(top=2e4)
    ax.set_title(title)
    ax.legend(fontsize=8)
    save_figure(fig, path)


def main(argv: Sequence[str] | None = None) -> None:
    """Write ``bsuite-<experiment>-summary.csv``, update ``bsuite-scores.csv`` and draw
    ``bsuite-<experiment>.png`` in ``--out``; print the scores as bsuite's summary does."""
    parser = argparse.ArgumentParser(prog="python -m delight_gym.experiments.bsuite_report")
    parser.add_argument("experiment", choices=sorted(BSUITE_EXPERIMENTS))
    parser.add_argument("runs", nargs="+", type=Path, help="output folders of the runs")
    parser.add_argument("--out", type=Path, default=Path("."), help="output folder")
    args = parser.parse_args(argv)
    runs = runs_table(
        (pd.read_csv(p / "summary.csv"), json.loads((p / "run.json").read_text())["seed"])
        for p in args.runs
    )
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / f"bsuite-{args.experiment}-summary.csv", index=False)
    scores = scores_table(runs, args.experiment)
    path = args.out / "bsuite-scores.csv"
    if path.exists():
        old = pd.read_csv(path)
        scores = pd.concat([old[old["experiment"] != args.experiment], scores], ignore_index=True)
    scores = scores.sort_values(["experiment", "agent"], ignore_index=True)
    scores.to_csv(path, index=False)
    plot_solve_scaling(runs, args.out / f"bsuite-{args.experiment}", title=args.experiment)
    for row in scores[scores["experiment"] == args.experiment].itertuples():
        note = "" if row.runs_complete else f"  (incomplete: sizes {row.sizes_missing} not run)"
        print(f"{row.experiment:<22}{row.agent:<26}{row.score:.2f}{note}")


if __name__ == "__main__":  # pragma: no cover
    main()
