"""The ``delight-gym`` command.

``delight-gym reproduce FIGURE [--quick] [--seeds N] [--horizon T] [--seed S] [--batch-size B]
[--out DIR] [--jobs N] [--backend local|ray] [--no-progress] [--no-plot]``

runs one of the paper's figures — ``bernoulli-arms``, ``bernoulli-curves``, ``bernoulli-tune``,
``linear-dim``, ``linear-noise``, ``linear-tune``, ``deepsea-regret``, ``deepsea-curves``, or
``all`` of them — at paper scale, or a small version with ``--quick``, and writes
``summary.csv``, ``curves.csv`` and ``FIGURE.{png,pdf}`` into ``--out`` (default
``results/FIGURE``; with ``all``, ``--out`` (default ``results``) gets one folder per figure and
a ``cells/`` folder they share). ``delight-gym reproduce theory [--quick] [--seed S]`` runs the
paper's structural claims as checks instead (one PASS/FAIL line each; exit status 1 if one
fails) and writes ``claims.csv``, ``reservoir.csv`` and ``reservoir_rates.{png,pdf}``.

``delight-gym run FAMILY [settings] [--horizon T | --episodes E] [--agents a,b] [--seeds N]
[--seed S] [--batch-size B] [--half-life M] [--gate-price λ] [--surprisal-cap L] [--out DIR]
[--jobs N] [--backend local|ray] [--no-progress] [--no-plot]``

runs every agent on every combination of the settings of one experiment family
(:data:`delight_gym.experiments.families.FAMILIES`, from whose records this command is built):

* ``run bernoulli --arms 10,100,1000``: K-armed Bernoulli bandits;
* ``run linear --arms 100 --dim 10,30 --noise 1``: linear-Gaussian bandits (then prints DE's
  selected-override rounds against the paper's budget);
* ``run deepsea --size 10 --episodes 1000``: bsuite's DeepSea;

and writes ``DIR/summary.csv``, ``DIR/curves.csv`` and ``DIR/regret_curves.{png,pdf}``
(default ``DIR``: ``results/FAMILY``).

Both commands run their cells (agent × setting × batch of at most ``--batch-size`` seeds) on
``--jobs`` processes (default: all cores; ``1``: in this process) or on Ray
(``--backend ray``), save each finished cell atomically under ``cells/``, so that a killed run
re-run with the same arguments resumes where it stopped (a damaged cell file is recomputed
with a warning), and print the summary table. Bad arguments — a setting the agents would refuse
(checked with the agents' own checks), an ``--out`` folder that cannot be written — end the
command with one line naming the option and exit status 2, before anything runs.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from delight_gym._checks import check_nonnegative_int, check_positive_int
from delight_gym.experiments.families import FAMILIES, Family, SettingError

if TYPE_CHECKING:
    from delight_gym.experiments.runner import ExperimentResult
    from delight_gym.experiments.specs import ExperimentSpec

__all__ = ["FIGURE_NAMES", "build_parser", "main"]

T = TypeVar("T")

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
    "deepsea-bsuite",
    "theory",
    "all",
)


def _checked(check: Callable[[object, str], T], option: str) -> Callable[[str], T]:
    """An argparse ``type``: parse an integer and check it with ``check`` under ``option``'s
    name (a ``_checks`` function)."""

    def parse(text: str) -> T:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"cannot parse {text!r} as an integer") from None
        try:
            return check(value, option)
        except ValueError as exc:  # "--seeds must be >= 1, got 0": argparse names the option
            raise argparse.ArgumentTypeError(str(exc).removeprefix(option).strip()) from None

    return parse


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


def _figure(text: str) -> str:
    if text in FIGURE_NAMES:
        return text
    valid = ", ".join(FIGURE_NAMES)
    raise argparse.ArgumentTypeError(f"unknown figure {text!r}; choose from {valid}")


_POSITIVE = {
    name: _checked(check_positive_int, f"--{name}")
    for name in ("seeds", "horizon", "episodes", "batch-size", "jobs")
}
_SEED = _checked(check_nonnegative_int, "--seed")


def _add_execution_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs",
        type=_POSITIVE["jobs"],
        default=None,
        help="parallel workers (default: all cores; 1: no pool)",
    )
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local processes, or Ray tasks (pip install 'delight-gym[ray]')",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--no-plot", action="store_true", help="skip the figure")


def _add_sweep_options(p: argparse.ArgumentParser, family: Family | None) -> None:
    """``--horizon`` (or ``--episodes``), ``--seeds``, ``--seed`` and ``--batch-size``: with the
    family's defaults (``run``), or none, keeping each figure's own (``reproduce``)."""
    steps = family.horizon_option if family is not None else "--horizon"
    name = steps.removeprefix("--")
    default = "(default %(default)s)" if family is not None else "(default: the figure's)"
    p.add_argument(
        steps,
        dest="horizon",
        metavar=name.upper(),
        type=_POSITIVE[name],
        default=family.horizon if family is not None else None,
        help=f"{'episodes' if name == 'episodes' else 'rounds T'} {default}",
    )
    p.add_argument(
        "--seeds",
        type=_POSITIVE["seeds"],
        default=family.seeds if family is not None else None,
        help=f"independent instances {default}",
    )
    p.add_argument("--seed", type=_SEED, default=0, help="base seed (instance i: seed+i)")
    p.add_argument(
        "--batch-size",
        type=_POSITIVE["batch-size"],
        default=family.batch_size if family is not None else None,
        help=f"seeds per cell {default}; results are reproducible for a given batch size",
    )


def _add_family_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], family: Family
) -> None:
    """``delight-gym run FAMILY``, built from the family's record."""
    p = sub.add_parser(family.name, help=family.help, description=family.help)
    p.set_defaults(parser=p)
    for param in family.instance:
        p.add_argument(
            param.option,
            type=_comma_list(param.kind, param.option),
            default=list(param.sweep),
            help=f"{param.help}, comma-separated (default {','.join(map(str, param.sweep))})",
        )
    _add_sweep_options(p, family)
    p.add_argument(
        "--agents",
        type=_agent_list(family.agent_names),
        default=list(family.default_agents),
        help=f"comma-separated, from {','.join(family.agent_names)} "
        f"(default {','.join(family.default_agents)})",
    )
    for param in family.agent_parameters:
        p.add_argument(param.option, type=param.kind, default=param.default, help=param.help)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results") / family.name,
        help="output folder (default %(default)s)",
    )
    _add_execution_options(p)


def build_parser() -> argparse.ArgumentParser:
    """The ``delight-gym`` argument parser (``run`` has one subcommand per family)."""
    parser = argparse.ArgumentParser(prog="delight-gym", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    rep = sub.add_parser("reproduce", help="reproduce a figure of the paper")
    rep.set_defaults(parser=rep)
    rep.add_argument(
        "figure", type=_figure, metavar="FIGURE", help=f"one of {', '.join(FIGURE_NAMES)}"
    )
    rep.add_argument("--quick", action="store_true", help="small version (about a minute)")
    _add_sweep_options(rep, None)
    rep.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default results/FIGURE; for all: results, one folder per figure)",
    )
    _add_execution_options(rep)

    run = sub.add_parser("run", help="run agents on one experiment family and settings")
    run_sub = run.add_subparsers(dest="family", required=True)
    for family in FAMILIES.values():
        _add_family_parser(run_sub, family)
    return parser


def _prepare_out(parser: argparse.ArgumentParser, folder: Path) -> None:
    """Create ``folder`` and check that it can be written to; otherwise end with one line
    naming ``--out`` (exit status 2, as argparse's errors; no usage, which is not the problem)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        parser.exit(2, f"{parser.prog}: error: --out: cannot write to {str(folder)!r}: {reason}\n")


def _report(result: ExperimentResult, out: Path, cache: Path, files: Sequence[Path]) -> None:
    from delight_gym.experiments.results import format_summary

    print(format_summary(result.summary))
    print(
        f"\ncells: {len(result.computed)} computed, {len(result.loaded)} loaded "
        f"({cache / 'cells'}); {result.seconds:.1f} s"
    )
    names = ["summary.csv", "curves.csv", *(p.name for p in files)]
    print(f"wrote {', '.join(str(out / n) for n in names)}")


def reproduce_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
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
    jobs: list[tuple[str, ExperimentSpec, Path, Path]] = []
    for name in names:
        spec = FIGURES[name].spec(quick=args.quick).replace(**changes)
        if args.figure == "all":
            cache = args.out if args.out is not None else Path("results")
            out = cache / name
        else:
            out = args.out if args.out is not None else Path("results") / name
            cache = out
        jobs.append((name, spec, out, cache))
    for out in dict.fromkeys(path for _, _, o, c in jobs for path in (o, c)):
        _prepare_out(parser, out)
    # One Ray session for every figure (started here unless Ray is already initialised).
    session = ray_session(args.jobs) if args.backend == "ray" else contextlib.nullcontext()
    with session:
        for i, (name, spec, out, cache) in enumerate(jobs):
            result = run_experiment(
                spec,
                out,
                jobs=args.jobs,
                backend=args.backend,
                progress=not args.no_progress,
                cache=cache,
            )
            figure = FIGURES[name]
            files = [] if args.no_plot else make_figure(figure, result.summary, result.curves, out)
            gap = "" if i == 0 else "\n"
            print(f"{gap}== {name}{' (quick)' if args.quick else ''} ==")
            _report(result, out, cache, files)
    return 0


def _run_spec(
    parser: argparse.ArgumentParser, family: Family, args: argparse.Namespace
) -> ExperimentSpec:
    """The ``run`` command's sweep: every combination of the instance options, each with the
    DE options; a setting the family refuses ends the command naming its option."""
    from delight_gym.experiments.specs import ExperimentSpec, setting_grid

    instances = setting_grid(**{p.name: getattr(args, p.name) for p in family.instance})
    tuning = {p.name: getattr(args, p.name) for p in family.agent_parameters}
    try:
        return ExperimentSpec.for_family(
            family,
            family.name,
            [{**instance, **tuning} for instance in instances],
            agents=tuple(args.agents),
            horizon=args.horizon,
            seeds=args.seeds,
            seed=args.seed,
            batch_size=args.batch_size,
        )
    except SettingError as exc:
        parser.error(f"{family.parameters[exc.key].option}: {exc}")


def run_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``delight-gym run FAMILY``: every agent on every setting; learning curves (one panel per
    setting) and the summary table, then the family's report if it has one."""
    from delight_gym.experiments.figures import plot_curves
    from delight_gym.experiments.runner import run_experiment

    family = FAMILIES[args.family]
    spec = _run_spec(parser, family, args)
    out: Path = args.out
    _prepare_out(parser, out)
    result = run_experiment(
        spec, out, jobs=args.jobs, backend=args.backend, progress=not args.no_progress
    )
    files: list[Path] = []
    if not args.no_plot:
        columns = list(family.instance_keys)
        panels = [
            " ".join(family.parameters[c].format(v) for c, v in zip(columns, row, strict=True))
            for row in result.curves[columns].itertuples(index=False)
        ]
        files = plot_curves(
            result.curves.assign(panel=panels),
            "panel",
            out / "regret_curves",
            title=family.title,
            xlabel=family.time_label,
            panel_label="",
        )
    _report(result, out, out, files)
    lines = family.report(result) if family.report is not None else []
    if lines:
        print("\n" + "\n".join(lines))
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
    _prepare_out(parser, out)
    checks, files = run_theory(out, quick=args.quick, seed=args.seed, plot=not args.no_plot)
    failed = sum(not c.passed for c in checks)
    print(f"== theory{' (quick)' if args.quick else ''} ==")
    print(format_checks(checks))
    print(f"\n{len(checks) - failed}/{len(checks)} claims PASS; wrote {', '.join(map(str, files))}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``delight-gym`` console script."""
    args = build_parser().parse_args(argv)
    parser: argparse.ArgumentParser = args.parser  # the subcommand's, for its usage line
    if args.command == "reproduce" and args.figure == "theory":
        return _reproduce_theory(parser, args)
    if args.command == "reproduce":
        return reproduce_command(parser, args)
    return run_command(parser, args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
