"""The ``delight-gym`` command: reproduce the paper's figures, or run its agents on yours.

* ``delight-gym reproduce FIGURE [--quick] [--seeds N] [--out DIR] [--jobs N] ...`` redraws a
  figure of :data:`~delight_gym.experiments.specs.FIGURES` (or ``all``, ``theory``);
* ``delight-gym run FAMILY [settings] [--horizon T | --episodes E] [--agents a,b] ...`` runs
  every agent on every combination of one family's settings (built from
  :data:`delight_gym.experiments.families.FAMILIES`).

Both write ``summary.csv``, ``curves.csv`` and a figure into ``--out``, resume a killed run and
refuse to overwrite results of other settings (:mod:`delight_gym.experiments.results`); bad
arguments end with one line naming the option (exit status 2). Details: ``--help`` and the
documentation's "Results files, resume, Ray" page.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from delight_gym._checks import check_nonnegative_int, check_positive_int
from delight_gym._version import __version__
from delight_gym.cli_limits import cell_sizes, check_control, check_fits, check_ranges, curve_sizes
from delight_gym.de.options import DelightOptions
from delight_gym.experiments.families import DE_PARAMETERS, FAMILIES, Family, SettingError
from delight_gym.experiments.families.control import TASKS as CONTROL_TASKS
from delight_gym.experiments.results import (
    RUN_RECORD,
    OtherSettingsError,
    cell_path,
    claim_folder,
    format_summary,
    prepare_folder,
)
from delight_gym.experiments.specs import FIGURES, PAPER_FIGURES, ExperimentSpec, setting_grid

if TYPE_CHECKING:
    from delight_gym.experiments.runner import ExperimentResult

__all__ = ["FIGURE_NAMES", "build_parser", "main"]

T = TypeVar("T")

_DESCRIPTION = """\
Delight-gated exploration (DE): reproduce the paper's figures, or run its agents on your own
settings. Each command writes summary.csv (final regret, mean ± s.e. per agent and setting),
curves.csv (regret vs time) and a figure into --out, prints the summary table, and resumes a
killed run where it stopped when re-run with the same arguments."""

_EPILOG = """\
examples:
  delight-gym reproduce bernoulli-arms --quick      a figure of the paper, small (10 seeds)
  delight-gym reproduce all --out results           every figure at paper scale
  delight-gym run bernoulli --arms 1000 --seeds 100 --agents delight,thompson
  delight-gym run linear --dim 10,30 --noise 1      settings of your own
  delight-gym run deepsea --size 10 --episodes 1000

'delight-gym run FAMILY --help' lists a family's options, agents and defaults."""

#: What ``reproduce`` accepts: the figure specs' names
#: (:data:`~delight_gym.experiments.specs.FIGURES`), ``theory`` (the paper's claims as checks,
#: :mod:`delight_gym.theory`) and ``all`` (the paper's figures,
#: :data:`~delight_gym.experiments.specs.PAPER_FIGURES`).
FIGURE_NAMES = (*FIGURES, "theory", "all")


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
        items = [x.strip() for x in text.split(",")]
        if not all(items):  # "1,,2" is a typo, not the list [1, 2]
            raise argparse.ArgumentTypeError(f"{name}: empty item in {text!r}")
        try:
            return [cast(x) for x in items]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: cannot parse {text!r}") from None

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
    for name in ("seeds", "horizon", "episodes", "steps", "batch-size", "jobs")
}


def _add_execution_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace the results of other settings in --out (default: refuse; see "
        f"--out/{RUN_RECORD}); finished cells are kept and reused",
    )
    p.add_argument(
        "--jobs",
        type=_POSITIVE["jobs"],
        default=None,
        metavar="N",
        help="at most N processes computing at once, this one included (default: all cores; "
        "a tiny sweep runs in this process alone; 1: always in this process)",
    )
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local: this process or a pool of processes; ray: Ray tasks (pip install "
        "'delight-gym[ray]') (default %(default)s)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--no-plot", action="store_true", help="skip the figure")


def _add_sweep_options(p: argparse.ArgumentParser, family: Family | None) -> None:
    """``--horizon`` (or ``--episodes``), ``--seeds``, ``--seed`` and ``--batch-size``: with the
    family's defaults (``run``), or none, keeping each figure's own (``reproduce``)."""
    if family is None:
        steps, default = "--horizon", "(default: the figure's)"
        what = "rounds T per run (episodes for the DeepSea figures)"
    else:
        steps, default = family.horizon_option, "(default %(default)s)"
        per_run = {"--episodes": "episodes per run", "--steps": "training steps per run"}
        what = per_run.get(steps, "rounds T per run")

    def sized(flag: str, attr: str, metavar: str, text: str) -> None:
        p.add_argument(
            flag,
            dest=attr,
            metavar=metavar,
            type=_POSITIVE[flag.removeprefix("--")],
            default=getattr(family, attr) if family is not None else None,
            help=text.format(default=default),
        )

    sized(steps, "horizon", "E" if steps == "--episodes" else "T", what + " {default}")
    sized("--seeds", "seeds", "N", "independent instances per agent and setting {default}")
    p.add_argument(
        "--seed",
        type=_checked(check_nonnegative_int, "--seed"),
        default=0,
        metavar="S",
        help="base seed: instance i is seeded S+i (default %(default)s)",
    )
    sized(
        "--batch-size",
        "batch_size",
        "B",
        "seeds per cell {default}; results are reproducible for a given batch size",
    )


def _add_family_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], family: Family
) -> None:
    """``delight-gym run FAMILY``, built from the family's record."""
    p = sub.add_parser(
        family.name,
        help=family.help,
        description=f"{family.help}. Runs every agent on every combination of the settings "
        "(comma-separated lists sweep) and writes summary.csv, curves.csv and "
        "regret_curves.{png,pdf} into --out.",
    )
    p.set_defaults(parser=p)
    for param in family.instance:
        short = param.short
        p.add_argument(
            param.option,
            type=_comma_list(param.kind, param.option),
            default=list(param.sweep),
            metavar=f"{short}[,{short}...]",
            help=f"{param.help}, comma-separated (default {','.join(map(str, param.sweep))})",
        )
    _add_sweep_options(p, family)
    p.add_argument(
        "--agents",
        type=_agent_list(family.agent_names),
        default=list(family.default_agents),
        metavar="A[,A...]",
        help=f"agents, comma-separated, from {', '.join(family.agent_names)} "
        f"(default {','.join(family.default_agents)})",
    )
    for param in family.agent_parameters:
        p.add_argument(
            param.option,
            type=param.kind,
            default=param.default,
            metavar=param.short,
            help=param.help,
        )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("results") / family.name,
        metavar="DIR",
        help="output folder (default %(default)s)",
    )
    _add_execution_options(p)


def build_parser() -> argparse.ArgumentParser:
    """The ``delight-gym`` argument parser (``run`` has one subcommand per family)."""
    parser = argparse.ArgumentParser(
        prog="delight-gym",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rep = sub.add_parser(
        "reproduce",
        help="reproduce a figure of the paper (data and plot)",
        description="Reproduce a figure of the paper: run its sweep (paper scale, or small with "
        "--quick), write summary.csv, curves.csv and FIGURE.{png,pdf} into --out and print the "
        "summary table. 'theory' checks the paper's propositions instead.",
    )
    rep.set_defaults(parser=rep)
    rep.add_argument(
        "figure", type=_figure, metavar="FIGURE", help=f"one of {', '.join(FIGURE_NAMES)}"
    )
    rep.add_argument(
        "--quick", action="store_true", help="a small version (10 seeds, fewer settings)"
    )
    _add_sweep_options(rep, None)
    rep.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="output folder (default results/FIGURE; for all: results, one folder per figure)",
    )
    _add_execution_options(rep)

    run = sub.add_parser(
        "run",
        help="run agents on one experiment family with your settings",
        description="Run agents on one experiment family with your own settings.",
    )
    run_sub = run.add_subparsers(dest="family", required=True, metavar="FAMILY")
    for family in FAMILIES.values():
        _add_family_parser(run_sub, family)
    return parser


def _prepare_out(parser: argparse.ArgumentParser, folder: Path) -> None:
    """Create ``folder``; if it cannot be written, end with one line naming ``--out`` (exit
    status 2, no usage: that is not the problem)."""
    try:
        prepare_folder(folder)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        parser.exit(2, f"{parser.prog}: error: --out: cannot write to {str(folder)!r}: {reason}\n")


def _claim_out(
    parser: argparse.ArgumentParser, out: Path, spec: ExperimentSpec, overwrite: bool
) -> None:
    """Record ``spec``'s settings in ``out``; a folder holding other settings' results ends the
    command naming the differences (exit status 2), unless ``overwrite``."""
    try:
        claim_folder(out, spec, overwrite=overwrite)
    except OtherSettingsError as exc:
        parser.exit(
            2,
            f"{parser.prog}: error: --out: {exc}; choose another --out to keep both, or pass "
            "--overwrite to replace its tables and figure (finished cells are kept)\n",
        )


def _report(result: ExperimentResult, out: Path, cache: Path, files: Sequence[Path]) -> None:
    print(format_summary(result.summary))
    print(
        f"\ncells: {len(result.computed)} computed, {len(result.loaded)} loaded "
        f"({cache / 'cells'}); {result.seconds:.1f} s"
    )
    names = ["summary.csv", "curves.csv", *(p.name for p in files)]
    print(f"wrote {', '.join(str(out / n) for n in names)}")
    report = result.spec.family.report  # the family's own lines (wheel: the showdown's metric)
    lines = report(result) if report is not None else []
    if lines:
        print("\n" + "\n".join(lines))


def reproduce_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``delight-gym reproduce FIGURE``: run, plot and print one figure or ``all``."""
    from delight_gym.experiments.figures import make_figure
    from delight_gym.experiments.runner import ray_session, run_experiment
    from delight_gym.plotting import FigureProcess

    names = list(PAPER_FIGURES) if args.figure == "all" else [args.figure]
    fields = ("seeds", "horizon", "batch_size", "seed")
    changes = {f: getattr(args, f) for f in fields if getattr(args, f) is not None}
    jobs: list[tuple[str, ExperimentSpec, Path, Path]] = []
    for name in names:
        spec = FIGURES[name].spec(quick=args.quick).replace(**changes)
        if args.figure == "all":  # one cache for every figure, each figure in its folder
            cache = args.out or Path("results")
            out = cache / name
        else:
            out = cache = args.out or Path("results") / name
        check_fits(parser, curve_sizes(spec.horizon, min(spec.seeds, spec.batch_size), spec.seeds))
        jobs.append((name, spec, out, cache))
    for out in dict.fromkeys(path for _, _, o, c in jobs for path in (o, c)):
        _prepare_out(parser, out)
    for _, spec, out, _ in jobs:
        _claim_out(parser, out, spec, args.overwrite)
    args.sweeps = [(spec, cache) for _, spec, _, cache in jobs]
    # One Ray session for every figure (started here unless Ray is already initialised).
    session = ray_session(args.jobs) if args.backend == "ray" else contextlib.nullcontext()
    drawing = FigureProcess([make_figure.__module__], enabled=not args.no_plot)
    with session, drawing:
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
            files = (
                []
                if args.no_plot
                else drawing.draw(make_figure, figure, result.summary, result.curves, out)
            )
            gap = "" if i == 0 else "\n"
            print(f"{gap}== {name}{' (quick)' if args.quick else ''} ==")
            _report(result, out, cache, files)
    return 0


def _run_spec(
    parser: argparse.ArgumentParser, family: Family, args: argparse.Namespace
) -> ExperimentSpec:
    """The ``run`` command's sweep: every combination of the instance options, each with the
    DE options; a setting the family refuses ends the command naming its option."""
    instances = setting_grid(**{p.name: getattr(args, p.name) for p in family.instance})
    tuning = {p.name: getattr(args, p.name) for p in family.agent_parameters}
    try:
        spec = ExperimentSpec.for_family(
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
    for param in family.agent_parameters:  # DE's settings as DE checks them (normal floats)
        if param.name in (p.name for p in DE_PARAMETERS):
            try:
                DelightOptions(**{param.name: tuning[param.name]})
            except (TypeError, ValueError) as exc:
                parser.error(f"{param.option}: {exc}")
    # after the family's own checks (which name the option), the cells' ranges and sizes
    for instance in instances:
        check_ranges(parser, family, args, instance)
        check_fits(parser, cell_sizes(family, args, instance))
    if family.name in CONTROL_TASKS:
        check_control(parser, args)
    return spec


def run_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``delight-gym run FAMILY``: every agent on every setting; learning curves (one panel per
    setting) and the summary table, then the family's report if it has one."""
    from delight_gym.plotting import FigureProcess

    family = FAMILIES[args.family]
    spec = _run_spec(parser, family, args)
    out: Path = args.out
    _prepare_out(parser, out)
    _claim_out(parser, out, spec, args.overwrite)
    args.sweeps = [(spec, out)]
    files: list[Path] = []
    # The figure process starts before this one imports the figures' module (and pandas with
    # it), so that its own imports overlap these.
    figures_module = "delight_gym.experiments.figures"
    with FigureProcess([figures_module], enabled=not args.no_plot) as drawing:
        from delight_gym.experiments.figures import family_curve_options, plot_curves
        from delight_gym.experiments.runner import run_experiment

        result = run_experiment(
            spec, out, jobs=args.jobs, backend=args.backend, progress=not args.no_progress
        )
        if not args.no_plot:
            columns = list(family.instance_keys)
            panels = [
                " ".join(family.parameters[c].format(v) for c, v in zip(columns, row, strict=True))
                for row in result.curves[columns].itertuples(index=False)
            ]
            files = drawing.draw(
                plot_curves,
                result.curves.assign(panel=panels),
                "panel",
                out / "regret_curves",
                title=family.title,
                panel_label="",
                **family_curve_options(family),
            )
    _report(result, out, out, files)
    return 0


def _reproduce_theory(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``delight-gym reproduce theory``: the paper's claims as checks, one PASS/FAIL line each,
    written into ``--out``; exit status 1 if any fails."""
    sized = ("seeds", "horizon", "batch_size", "jobs")
    given = {name: getattr(args, name) is not None for name in sized}
    given.update(backend=args.backend != "local", overwrite=args.overwrite)
    unused = [f"--{name.replace('_', '-')}" for name, on in given.items() if on]
    if unused:
        parser.error(f"reproduce theory does not take {', '.join(unused)}")
    from delight_gym.theory.claims import format_checks
    from delight_gym.theory.report import run_theory

    out = args.out if args.out is not None else Path("results") / "theory"
    _prepare_out(parser, out)
    checks, files = run_theory(out, quick=args.quick, seed=args.seed, plot=not args.no_plot)
    failed = sum(not c.passed for c in checks)
    print(f"== theory{' (quick)' if args.quick else ''} ==")
    print(format_checks(checks))
    print(f"\n{len(checks) - failed}/{len(checks)} claims PASS; wrote {', '.join(map(str, files))}")
    return 1 if failed else 0


def _interrupted(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """After Ctrl-C: one line saying how many cells are saved and that the same command
    resumes from them; exit status 130 (128 + SIGINT), as a shell reports it."""
    sweeps: list[tuple[ExperimentSpec, Path]] = getattr(args, "sweeps", [])
    cells = [(cache, cell.key) for spec, cache in sweeps for cell in spec.cells()]
    saved = sum(cell_path(cache, key).exists() for cache, key in cells)
    if cells:
        where = ", ".join(dict.fromkeys(str(Path(cache) / "cells") for cache, _ in cells))
        what = (
            f"{saved} of {len(cells)} cells are saved in {where}; run the same command again "
            "to resume from them"
        )
    else:
        what = "nothing was saved"
    sys.stderr.write(f"\n{parser.prog}: interrupted; {what}\n")
    return 130


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``delight-gym`` console script (exit status 130 after Ctrl-C, with
    one line saying how many cells are saved: the same command resumes from them)."""
    args = build_parser().parse_args(argv)
    parser: argparse.ArgumentParser = args.parser  # the subcommand's, for its usage line
    try:
        if args.command == "reproduce" and args.figure == "theory":
            return _reproduce_theory(parser, args)
        if args.command == "reproduce":
            return reproduce_command(parser, args)
        return run_command(parser, args)
    except KeyboardInterrupt:
        return _interrupted(parser, args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
