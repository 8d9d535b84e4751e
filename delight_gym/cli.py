"""The ``delight-gym`` command.

``delight-gym run bernoulli --arms 10,100,1000 --horizon 1000 --seeds 100 \
    --agents delight,thompson,egreedy --out DIR``

runs every (agent, K) cell, saving each finished cell atomically under ``DIR/cells`` so that a
killed run re-run with the same arguments resumes where it stopped; then writes
``DIR/summary.csv``, ``DIR/curves.csv`` and ``DIR/regret_curves.{png,pdf}`` and prints the
summary table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from delight_gym.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE, DEFAULT_SURPRISAL_CAP

__all__ = ["main"]

T = TypeVar("T")

BANDIT_AGENT_NAMES = ("delight", "thompson", "egreedy", "greedy", "ucb")
DE_ONLY = ("gate_price", "surprisal_cap")


def _comma_list(cast: Callable[[str], T], name: str) -> Callable[[str], list[T]]:
    def parse(text: str) -> list[T]:
        try:
            values = [cast(x) for x in text.split(",") if x.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: cannot parse {text!r}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"{name}: empty list")
        return values

    return parse


def _agents(text: str) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    bad = [n for n in names if n not in BANDIT_AGENT_NAMES]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"--agents: unknown {bad or text!r}; choose from {','.join(BANDIT_AGENT_NAMES)}"
        )
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="delight-gym", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run agents on one environment family and settings")
    run_sub = run.add_subparsers(dest="family", required=True)
    bern = run_sub.add_parser("bernoulli", help="K-armed Bernoulli bandits, means ~ U(0,1)")
    bern.add_argument("--arms", type=_comma_list(int, "--arms"), default=[10, 100, 1000])
    bern.add_argument("--horizon", type=int, default=1000)
    bern.add_argument("--seeds", type=int, default=100, help="independent instances")
    bern.add_argument("--seed", type=int, default=0, help="base seed (instance i: seed+i)")
    bern.add_argument(
        "--agents", type=_agents, default=["delight", "thompson", "egreedy", "greedy"]
    )
    bern.add_argument("--half-life", type=float, default=DEFAULT_HALF_LIFE, help="M")
    bern.add_argument("--gate-price", type=float, default=DEFAULT_GATE_PRICE, help="lambda")
    bern.add_argument("--surprisal-cap", type=float, default=DEFAULT_SURPRISAL_CAP, help="L")
    bern.add_argument("--out", type=Path, default=Path("results/bernoulli"))
    bern.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    bern.add_argument("--no-plot", action="store_true", help="skip the figure")
    return parser


def _agent_kwargs(agent: str, args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if agent in ("delight", "egreedy"):
        kwargs["half_life"] = args.half_life
    if agent == "delight":
        kwargs["gate_price"] = args.gate_price
        kwargs["surprisal_cap"] = args.surprisal_cap
    return kwargs


def run_bernoulli_command(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from delight_gym.experiments.bandit import run_bernoulli
    from delight_gym.experiments.results import (
        cell_key,
        curves_frame,
        load_cell,
        plot_curves,
        save_cell,
        summary_frame,
        write_tables,
    )

    out: Path = args.out
    cells = [(agent, k) for k in args.arms for agent in args.agents]
    rows: list[dict[str, Any]] = []
    with tqdm(
        total=len(cells) * args.horizon,
        desc="bernoulli",
        unit="round",
        disable=args.no_progress,
        file=sys.stderr,
    ) as bar:
        for agent, k in cells:
            kwargs = _agent_kwargs(agent, args)
            spec = {
                "experiment": "bernoulli",
                "agent": agent,
                "arms": k,
                "horizon": args.horizon,
                "seeds": args.seeds,
                "seed": args.seed,
                **kwargs,
            }
            key = cell_key(spec)
            bar.set_postfix_str(f"{agent} K={k}")
            cached = load_cell(out, key)
            if cached is None:
                result = run_bernoulli(
                    agent,
                    k,
                    args.horizon,
                    args.seeds,
                    seed=args.seed,
                    callback=bar.update,
                    **kwargs,
                )
                arrays = {"cumulative": result.cumulative, "overrides": result.overrides}
                meta = {**spec, "seconds": result.seconds}
                save_cell(out, key, arrays, meta)
            else:
                arrays, meta = cached
                bar.update(args.horizon)
            rows.append(
                {
                    "experiment": "bernoulli",
                    "agent": agent,
                    "arms": k,
                    "horizon": args.horizon,
                    "seconds": meta["seconds"],
                    "cumulative": arrays["cumulative"],
                    "final_regret": arrays["cumulative"][:, -1],
                }
            )
    summary = summary_frame(rows, ["arms"])
    curves = curves_frame(rows, ["arms"])
    write_tables(out, summary, curves)
    if not args.no_plot:
        plot_curves(curves, "arms", out / "regret_curves", title="Bernoulli bandits")
    with np.printoptions(precision=2):
        print(summary.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print(f"\nwrote {out / 'summary.csv'} and {out / 'curves.csv'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``delight-gym`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run" and args.family == "bernoulli":
        for name in ("horizon", "seeds"):
            if getattr(args, name) < 1:
                parser.error(f"--{name} must be >= 1")
        if any(k < 1 for k in args.arms):
            parser.error("--arms must all be >= 1")
        if args.seed < 0:
            parser.error("--seed must be >= 0")
        if not args.half_life > 0:
            parser.error("--half-life must be > 0")
        if not args.gate_price >= 0:
            parser.error("--gate-price must be >= 0")
        if not (args.surprisal_cap > 0 and np.isfinite(args.surprisal_cap)):
            parser.error("--surprisal-cap must be finite and > 0")
        return run_bernoulli_command(args)
    parser.error("unknown command")  # pragma: no cover - argparse enforces choices
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
