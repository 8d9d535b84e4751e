"""The ``delight-gym`` command.

``delight-gym reproduce FIGURE [--seeds N] [--quick] [--out DIR] [--jobs N] [--backend local|ray]``

runs one of the paper's figures (``bernoulli-arms``, ``bernoulli-curves``, ``bernoulli-tune``,
or ``all`` of them) at paper scale, or a small version with ``--quick``, and writes
``summary.csv``, ``curves.csv`` and ``FIGURE.{png,pdf}`` into ``--out`` (default
``results/FIGURE``; with ``all``, ``--out`` (default ``results``) gets one folder per figure and
a ``cells/`` folder they share).

``delight-gym run bernoulli --arms 10,100,1000 --horizon 1000 --seeds 100 \
    --agents delight,thompson,egreedy --out DIR``

runs every (agent, K) pair, then writes ``DIR/summary.csv``, ``DIR/curves.csv`` and
``DIR/regret_curves.{png,pdf}``.

Both commands run their cells (agent × setting × batch of at most ``--batch-size`` seeds) on
``--jobs`` processes (default: all cores; ``1``: in this process) or on Ray
(``--backend ray``), save each finished cell atomically under ``cells/``, so that a killed run
re-run with the same arguments resumes where it stopped, and print the summary table.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from delight_gym.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE, DEFAULT_SURPRISAL_CAP

if TYPE_CHECKING:
    from delight_gym.experiments.runner import ExperimentResult

__all__ = ["FIGURE_NAMES", "main"]

T = TypeVar("T")

BANDIT_AGENT_NAMES = ("delight", "thompson", "egreedy", "greedy", "ucb")
DEEP_SEA_AGENT_NAMES = ("delight", "psrl", "egreedy", "greedy")
#: Figures ``reproduce`` accepts (``all`` runs every experiment figure; ``theory`` runs the
#: paper's claims as checks, see :mod:`delight_gym.theory`).
FIGURE_NAMES = (
    "bernoulli-arms",
    "bernoulli-curves",
    "bernoulli-tune",
    "linear-dim",
    "linear-noise",
    "linear-tune",
    "deepsea-regret",
    "deepsea-curves",
    "theory",
    "all",
)


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


def _agent_list(valid: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [x.strip() for x in text.split(",") if x.strip()]
        bad = [n for n in names if n not in valid]
        if bad or not names:
            raise argparse.ArgumentTypeError(
                f"--agents: unknown {bad or text!r}; choose from {','.join(valid)}"
            )
        return names

    return parse


_agents = _agent_list(BANDIT_AGENT_NAMES)


def _figure(text: str) -> str:
    if text in FIGURE_NAMES:
        return text
    valid = ", ".join(FIGURE_NAMES)
    raise argparse.ArgumentTypeError(f"unknown figure {text!r}; choose from {valid}")


def _add_execution_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs", type=int, default=None, help="parallel workers (default: all cores; 1: no pool)"
    )
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local processes, or Ray tasks (pip install 'delight-gym[ray]')",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--no-plot", action="store_true", help="skip the figure")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="delight-gym", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    rep = sub.add_parser("reproduce", help="reproduce a figure of the paper")
    rep.add_argument(
        "figure", type=_figure, metavar="FIGURE", help=f"one of {', '.join(FIGURE_NAMES)}"
    )
    rep.add_argument("--quick", action="store_true", help="small version (about a minute)")
    rep.add_argument("--seeds", type=int, default=None, help="override the number of seeds")
    rep.add_argument("--horizon", type=int, default=None, help="override the horizon T")
    rep.add_argument("--seed", type=int, default=0, help="base seed (instance i: seed+i)")
    rep.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="seeds per cell (default 25); results are reproducible for a given batch size",
    )
    rep.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default results/FIGURE; for all: results, one folder per figure)",
    )
    _add_execution_options(rep)

    run = sub.add_parser("run", help="run agents on one environment family and settings")
    run_sub = run.add_subparsers(dest="family", required=True)
    bern = run_sub.add_parser("bernoulli", help="K-armed Bernoulli bandits, means ~ U(0,1)")
    bern.add_argument("--arms", type=_comma_list(int, "--arms"), default=[10, 100, 1000])
    bern.add_argument("--horizon", type=int, default=1000)
    bern.add_argument("--seeds", type=int, default=100, help="independent instances")
    bern.add_argument("--seed", type=int, default=0, help="base seed (instance i: seed+i)")
    bern.add_argument(
        "--batch-size",
        type=int,
        default=25,
        help="seeds per cell (default %(default)s); results reproducible for a given batch size",
    )
    bern.add_argument(
        "--agents", type=_agents, default=["delight", "thompson", "egreedy", "greedy"]
    )
    bern.add_argument("--half-life", type=float, default=DEFAULT_HALF_LIFE, help="M")
    bern.add_argument("--gate-price", type=float, default=DEFAULT_GATE_PRICE, help="lambda")
    bern.add_argument("--surprisal-cap", type=float, default=DEFAULT_SURPRISAL_CAP, help="L")
    bern.add_argument("--out", type=Path, default=Path("results/bernoulli"))
    _add_execution_options(bern)

    lin = run_sub.add_parser(
        "linear", help="linear-Gaussian bandits: φ(a) ~ N(0, I/D), θ* ~ N(0, I), noise σ"
    )
    lin.add_argument("--arms", type=_comma_list(int, "--arms"), default=[100])
    lin.add_argument("--dim", type=_comma_list(int, "--dim"), default=[10, 30])
    lin.add_argument("--noise", type=_comma_list(float, "--noise"), default=[1.0])
    lin.add_argument("--horizon", type=int, default=1000)
    lin.add_argument("--seeds", type=int, default=100, help="independent instances")
    lin.add_argument("--seed", type=int, default=0, help="base seed (instance i: seed+i)")
    lin.add_argument("--batch-size", type=int, default=25, help="seeds per cell")
    lin.add_argument("--agents", type=_agents, default=["delight", "thompson", "egreedy", "greedy"])
    lin.add_argument("--half-life", type=float, default=DEFAULT_HALF_LIFE, help="M")
    lin.add_argument("--gate-price", type=float, default=DEFAULT_GATE_PRICE, help="lambda")
    lin.add_argument("--surprisal-cap", type=float, default=DEFAULT_SURPRISAL_CAP, help="L")
    lin.add_argument("--out", type=Path, default=Path("results/linear"))
    _add_execution_options(lin)

    sea = run_sub.add_parser(
        "deepsea", help="DeepSea-v0 (bsuite's deep_sea), the agents' default priors"
    )
    sea.add_argument("--size", type=_comma_list(int, "--size"), default=[10], help="N")
    sea.add_argument("--episodes", type=int, default=1000)
    sea.add_argument("--seeds", type=int, default=30, help="independent instances")
    sea.add_argument("--seed", type=int, default=0, help="base seed (instance i: seed+i)")
    sea.add_argument(
        "--batch-size",
        type=int,
        default=30,
        help="seeds per cell (default %(default)s); results reproducible for a given batch size",
    )
    sea.add_argument(
        "--agents",
        type=_agent_list(DEEP_SEA_AGENT_NAMES),
        default=["delight", "psrl", "egreedy", "greedy"],
    )
    sea.add_argument("--half-life", type=float, default=DEFAULT_HALF_LIFE, help="M")
    sea.add_argument("--gate-price", type=float, default=DEFAULT_GATE_PRICE, help="lambda")
    sea.add_argument("--surprisal-cap", type=float, default=DEFAULT_SURPRISAL_CAP, help="L")
    sea.add_argument("--out", type=Path, default=Path("results/deepsea"))
    _add_execution_options(sea)
    return parser


def _check_common(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    for name in ("horizon", "seeds", "jobs", "batch_size"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.seed < 0:
        parser.error("--seed must be >= 0")


def _check_de_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Validate ``--half-life``, ``--gate-price`` and ``--surprisal-cap`` (the ``run`` commands)."""
    if not args.half_life > 0:
        parser.error("--half-life must be > 0")
    if not args.gate_price >= 0:
        parser.error("--gate-price must be >= 0")
    if not (args.surprisal_cap > 0 and np.isfinite(args.surprisal_cap)):
        parser.error("--surprisal-cap must be finite and > 0")


def _report(result: ExperimentResult, out: Path, cache: Path, files: Sequence[Path]) -> None:
    from delight_gym.experiments.results import format_summary

    print(format_summary(result.summary))
    print(
        f"\ncells: {len(result.computed)} computed, {len(result.loaded)} loaded "
        f"({cache / 'cells'}); {result.seconds:.1f} s"
    )
    names = ["summary.csv", "curves.csv", *(p.name for p in files)]
    print(f"wrote {', '.join(str(out / n) for n in names)}")


def reproduce_command(args: argparse.Namespace) -> int:
    """``delight-gym reproduce FIGURE``: run, plot and print one figure or ``all``."""
    from delight_gym.experiments.figures import make_figure
    from delight_gym.experiments.runner import ray_session, run_experiment
    from delight_gym.experiments.specs import FIGURES

    names = list(FIGURES) if args.figure == "all" else [args.figure]
    changes = {
        field: value
        for field, value in (
            ("seeds", args.seeds),
            ("horizon", args.horizon),
            ("batch_size", args.batch_size),
            ("seed", args.seed),
        )
        if value is not None
    }
    # One Ray session for every figure (started here unless Ray is already initialised).
    session = ray_session(args.jobs) if args.backend == "ray" else contextlib.nullcontext()
    with session:
        for i, name in enumerate(names):
            figure = FIGURES[name]
            spec = figure.spec(quick=args.quick).replace(**changes)
            if args.figure == "all":
                cache = args.out if args.out is not None else Path("results")
                out = cache / name
            else:
                out = args.out if args.out is not None else Path("results") / name
                cache = out
            result = run_experiment(
                spec,
                out,
                jobs=args.jobs,
                backend=args.backend,
                progress=not args.no_progress,
                cache=cache,
            )
            files = [] if args.no_plot else make_figure(figure, result.summary, result.curves, out)
            print(f"{'' if i == 0 else chr(10)}== {name}{' (quick)' if args.quick else ''} ==")
            _report(result, out, cache, files)
    return 0


def _run_sweep(
    args: argparse.Namespace,
    name: str,
    instances: Sequence[dict[str, Any]],
    horizon: int,
    curve_panel: Callable[[Any], Sequence[str]],
    title: str,
    xlabel: str = "t",
    **spec_fields: Any,
) -> ExperimentResult:
    """The shared body of the ``run`` commands: every agent on every instance setting with
    the DE options of ``args``; run (resumably), plot the learning curves (one panel per
    ``curve_panel(curves)`` value) and print the summary."""
    from delight_gym.experiments.figures import AGENT_COLORS, AGENT_LABELS, AGENT_LINESTYLES
    from delight_gym.experiments.results import plot_curves
    from delight_gym.experiments.runner import run_experiment
    from delight_gym.experiments.specs import ExperimentSpec

    de = {
        "half_life": args.half_life,
        "gate_price": args.gate_price,
        "surprisal_cap": args.surprisal_cap,
    }
    out: Path = args.out
    spec = ExperimentSpec(
        name=name,
        agents=tuple(args.agents),
        settings=tuple({**instance, **de} for instance in instances),
        horizon=horizon,
        seeds=args.seeds,
        seed=args.seed,
        batch_size=args.batch_size,
        **spec_fields,
    )
    result = run_experiment(
        spec, out, jobs=args.jobs, backend=args.backend, progress=not args.no_progress
    )
    files: list[Path] = []
    if not args.no_plot:
        curves = result.curves.assign(panel=curve_panel(result.curves))
        files = plot_curves(
            curves,
            "panel",
            out / "regret_curves",
            title=title,
            xlabel=xlabel,
            panel_label="",
            agent_labels=AGENT_LABELS,
            agent_colors=AGENT_COLORS,
            agent_linestyles=AGENT_LINESTYLES,
        )
    _report(result, out, out, files)
    return result


def run_bernoulli_command(args: argparse.Namespace) -> int:
    """``delight-gym run bernoulli``: every (agent, K) pair with the given parameters."""
    _run_sweep(
        args,
        "bernoulli",
        [{"arms": k} for k in dict.fromkeys(args.arms)],
        args.horizon,
        lambda curves: [f"K={k}" for k in curves["arms"]],
        "Bernoulli bandits",
        setting_columns=("arms",),
    )
    return 0


def run_linear_command(args: argparse.Namespace) -> int:
    """``delight-gym run linear``: every (agent, K, D, σ) combination."""
    from delight_gym.experiments.linear import linear_override_budget
    from delight_gym.experiments.specs import LINEAR_AGENT_PARAMETERS, LINEAR_CELL

    columns = ("arms", "dim", "noise")
    result = _run_sweep(
        args,
        "linear",
        [
            {"arms": k, "dim": d, "noise": sigma}
            for k in dict.fromkeys(args.arms)
            for d in dict.fromkeys(args.dim)
            for sigma in dict.fromkeys(args.noise)
        ],
        args.horizon,
        lambda curves: [
            f"K={k} D={d} σ={s:g}" for k, d, s in curves[list(columns)].itertuples(index=False)
        ],
        "Linear bandits",
        setting_columns=columns,
        cell=LINEAR_CELL,
        instance_keys=columns,
        agent_parameters=LINEAR_AGENT_PARAMETERS,
    )
    if "delight" in args.agents:
        print("\nselected-override rounds of DE (max over seeds) vs the paper's budget:")
        for row in result.rows:
            if row["agent"] != "delight":
                continue
            bound = linear_override_budget(
                int(row["dim"]),
                args.horizon,
                float(row["noise"]),
                gate_price=args.gate_price,
                surprisal_cap=args.surprisal_cap,
            )
            most = int(np.max(row["overrides"]))
            verdict = "OK" if most <= bound else "EXCEEDED"
            label = f"K={row['arms']} D={row['dim']} σ={row['noise']:g}"
            print(f"  {label}: {most} <= {bound:.1f} {verdict}")
    return 0


def run_deep_sea_command(args: argparse.Namespace) -> int:
    """``delight-gym run deepsea``: every (agent, N) pair, ``--episodes`` episodes each."""
    from delight_gym.experiments.specs import DEEP_SEA_AGENT_PARAMETERS, DEEP_SEA_CELL

    _run_sweep(
        args,
        "deepsea",
        [{"size": n} for n in dict.fromkeys(args.size)],
        args.episodes,
        lambda curves: [f"N={n}" for n in curves["size"]],
        "DeepSea",
        xlabel="episode",
        setting_columns=("size",),
        cell=DEEP_SEA_CELL,
        instance_keys=("size",),
        agent_parameters=DEEP_SEA_AGENT_PARAMETERS,
    )
    return 0


def _reproduce_theory(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``delight-gym reproduce theory [--quick] [--out DIR] [--seed S] [--no-plot]``: run the
    paper's structural claims as checks, print one PASS/FAIL line per claim, write
    ``claims.csv``, ``reservoir.csv`` and ``reservoir_rates.{png,pdf}`` into ``--out``
    (default ``results/theory``); exit status 1 if any claim fails."""
    unused = [
        f"--{name.replace('_', '-')}"
        for name in ("seeds", "horizon", "batch_size", "jobs")
        if getattr(args, name) is not None
    ]
    if args.backend != "local":
        unused.append("--backend")
    if unused:
        parser.error(f"reproduce theory does not take {', '.join(unused)}")
    from delight_gym.theory.checks import format_checks
    from delight_gym.theory.report import run_theory

    out = args.out if args.out is not None else Path("results") / "theory"
    checks, files = run_theory(out, quick=args.quick, seed=args.seed, plot=not args.no_plot)
    failed = sum(not c.passed for c in checks)
    print(f"== theory{' (quick)' if args.quick else ''} ==")
    print(format_checks(checks))
    print(f"\n{len(checks) - failed}/{len(checks)} claims PASS; wrote {', '.join(map(str, files))}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``delight-gym`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_common(parser, args)
    if args.command == "reproduce" and args.figure == "theory":
        return _reproduce_theory(parser, args)
    if args.command == "reproduce":
        return reproduce_command(args)
    if args.command == "run" and args.family == "bernoulli":
        if any(k < 1 for k in args.arms):
            parser.error("--arms must all be >= 1")
        _check_de_options(parser, args)
        return run_bernoulli_command(args)
    if args.command == "run" and args.family == "linear":
        if any(k < 1 for k in args.arms) or any(d < 1 for d in args.dim):
            parser.error("--arms and --dim must all be >= 1")
        if not all(s > 0 and np.isfinite(s) for s in args.noise):
            parser.error("--noise must all be finite and > 0")
        _check_de_options(parser, args)
        return run_linear_command(args)
    if args.command == "run" and args.family == "deepsea":
        if any(n < 1 for n in args.size):
            parser.error("--size must all be >= 1")
        if args.episodes < 1:
            parser.error("--episodes must be >= 1")
        _check_de_options(parser, args)
        return run_deep_sea_command(args)
    parser.error("unknown command")  # pragma: no cover - argparse enforces choices
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
