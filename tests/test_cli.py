"""The ``delight-gym run`` commands: files, columns, resume, damaged cells and bad input.

Every run uses ``--jobs 1`` so that the cells run in this process and see the monkeypatched
``run_bernoulli``; the process pool and Ray backends are tested in ``test_runner.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from delight_gym import __version__, cli
from delight_gym.agents.bandits import make_bandit_agent
from delight_gym.agents.linear import make_linear_agent
from delight_gym.agents.mdp import make_mdp_agent
from delight_gym.experiments import bandit as bandit_runner
from delight_gym.experiments.deep_sea import run_deep_sea
from delight_gym.experiments.families import FAMILIES
from delight_gym.experiments.linear import run_linear
from delight_gym.experiments.results import DamagedCellWarning, save_cell
from delight_gym.theory.budget import linear_override_budget

ARGS = ["run", "bernoulli", "--arms", "5,20", "--horizon", "50", "--seeds", "4", "--jobs", "1"]


def test_run_writes_results_and_resumes_without_recomputing(tmp_path, monkeypatch, capsys):
    out = tmp_path / "res"
    argv = [*ARGS, "--agents", "delight,thompson", "--out", str(out), "--no-progress"]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "regret_mean" in printed and "delight" in printed
    summary = pd.read_csv(out / "summary.csv")
    curves = pd.read_csv(out / "curves.csv")
    assert list(summary.columns) == [
        "experiment",
        "agent",
        "arms",
        "horizon",
        "seeds",
        "regret_mean",
        "regret_se",
        "seconds",
    ]
    assert list(curves.columns) == ["experiment", "agent", "arms", "t", "regret_mean", "regret_se"]
    assert len(summary) == 4 and len(curves) == 4 * 50
    assert (out / "regret_curves.png").exists() and (out / "regret_curves.pdf").exists()
    # The summary equals a direct run with the same seeds.
    direct = bandit_runner.run_bernoulli("delight", 20, 50, 4, seed=0).cumulative[:, -1]
    row = summary[(summary.agent == "delight") & (summary.arms == 20)].iloc[0]
    assert row.regret_mean == pytest.approx(direct.mean())
    assert row.regret_se == pytest.approx(direct.std(ddof=1) / 2)

    assert "cells: 4 computed, 0 loaded" in printed

    # Re-running with the same arguments loads every cell and recomputes nothing.
    def boom(*args, **kwargs):
        raise AssertionError("a finished cell was recomputed")

    monkeypatch.setattr(bandit_runner, "run_bernoulli", boom)
    assert cli.main(argv) == 0
    assert "cells: 0 computed, 4 loaded" in capsys.readouterr().out
    again = pd.read_csv(out / "summary.csv")
    np.testing.assert_allclose(again.regret_mean, summary.regret_mean)


def test_interrupted_run_keeps_finished_cells(tmp_path, monkeypatch):
    out = tmp_path / "res"
    argv = [*ARGS, "--agents", "greedy,egreedy", "--out", str(out), "--no-progress", "--no-plot"]
    real = bandit_runner.run_bernoulli
    calls = []

    def dies_on_third(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(bandit_runner, "run_bernoulli", dies_on_third)
    assert cli.main(argv) == 130  # one line, no traceback (tests/test_bad_input_contextual.py)
    assert len(list((out / "cells").glob("*.npz"))) == 2
    assert not list((out / "cells").glob("*.tmp"))
    calls.clear()
    monkeypatch.setattr(
        bandit_runner, "run_bernoulli", lambda *a, **k: (calls.append(a), real(*a, **k))[1]
    )
    assert cli.main(argv) == 0
    assert len(calls) == 2  # only the two unfinished cells ran


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--gate-price", "-0.1"], "--gate-price"),
        (["--surprisal-cap", "0"], "--surprisal-cap"),
        (["--half-life", "0"], "--half-life"),
        (["--arms", "0"], "--arms"),
        (["--arms", "2.5"], "--arms"),
        (["--agents", "delight,psrl"], "--agents"),
        (["--seeds", "0"], "--seeds"),
        (["--jobs", "0"], "--jobs"),
        (["--batch-size", "0"], "--batch-size"),
        (["--backend", "spark"], "--backend"),
    ],
)
def test_bad_arguments_exit_with_a_message(extra, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli.main([*ARGS, "--out", str(tmp_path), *extra])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_run_linear_writes_results_and_the_budget_check(tmp_path, capsys):
    out = tmp_path / "lin"
    argv = ["run", "linear", "--arms", "8", "--dim", "2,3", "--noise", "1", "--horizon", "30"]
    argv += ["--seeds", "3", "--agents", "delight,thompson", "--out", str(out)]
    assert cli.main([*argv, "--jobs", "1", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns[:5]) == ["experiment", "agent", "arms", "dim", "noise"]
    assert len(summary) == 4 and (out / "regret_curves.png").exists()
    # The summary equals in-process runs of the same cells (one batch of 3 seeds, seed 0).
    for row in summary.itertuples():
        direct = run_linear(row.agent, 8, row.dim, 1.0, 30, 3, seed=0).cumulative[:, -1]
        assert row.regret_mean == pytest.approx(direct.mean(), rel=1e-12)
        assert row.regret_se == pytest.approx(direct.std(ddof=1) / math.sqrt(3), rel=1e-12)
    # One budget line per DE setting: the largest override count against the theory's bound.
    assert "selected-override rounds" in printed and "EXCEEDED" not in printed
    for dim in (2, 3):
        most = int(run_linear("delight", 8, dim, 1.0, 30, 3, seed=0).overrides.max())
        bound = linear_override_budget(dim, 30, 1.0)
        assert f"K=8 D={dim} σ=1: {most} <= {bound:.1f} OK" in printed


def test_run_deepsea_writes_results_with_success_columns(tmp_path, capsys):
    """``run deepsea`` runs every (agent, N), reports the success columns and checks input."""
    out = tmp_path / "sea"
    argv = ["run", "deepsea", "--size", "2,3", "--episodes", "20", "--seeds", "2"]
    argv += ["--agents", "delight,psrl", "--out", str(out), "--jobs", "1", "--no-progress"]
    assert cli.main(argv) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns[:3]) == ["experiment", "agent", "size"]
    assert list(summary.columns[-2:]) == ["found_fraction", "first_success_median"]
    assert len(summary) == 4 and (out / "regret_curves.png").exists()
    # The summary equals in-process runs of the same cells (one batch of 2 seeds, seed 0).
    for row in summary.itertuples():
        direct = run_deep_sea(row.size, 20, 2, row.agent, seed=0, progress=False)
        final = direct.cumulative(row.agent)[-1]
        first = direct.first_success[row.agent]
        assert row.regret_mean == pytest.approx(final.mean(), rel=1e-12)
        assert row.found_fraction == pytest.approx(np.mean(first >= 0))
        found = first[first >= 0] + 1  # 1-based episodes
        if found.size:
            assert row.first_success_median == pytest.approx(np.median(found))
        else:
            assert np.isnan(row.first_success_median)
    assert "found_fraction" in capsys.readouterr().out
    for bad, message in ((["--size", "0"], "--size"), (["--agents", "thompson"], "--agents")):
        with pytest.raises(SystemExit):
            cli.main(["run", "deepsea", *bad, "--out", str(tmp_path / "x")])
        assert message in capsys.readouterr().err


# -- the command refuses what the agents refuse, with their message --------------------------


def _agent_refusal(family: str, name: str, value: float) -> str | None:
    """The message with which the family's DE agent refuses ``name=value`` (None: accepted)."""
    build = {
        "bernoulli": lambda **kw: make_bandit_agent("delight", 1, 2, **kw),
        "linear": lambda **kw: make_linear_agent("delight", 1, 2, 2, noise=1.0, **kw),
        "deepsea": lambda **kw: make_mdp_agent("delight", 1, 4, 2, 2, **kw),
    }[family]
    try:
        build(**{name: value})
    except ValueError as exc:
        return str(exc)
    return None


# The families whose DE agent ``_agent_refusal`` builds (deepsea-bsuite's deep agents are
# checked in its own tests).
@pytest.mark.parametrize("family", ["bernoulli", "linear", "deepsea"])
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("half_life", math.inf),
        ("half_life", 0.0),
        ("half_life", math.nan),
        ("gate_price", math.inf),
        ("gate_price", -0.1),
        ("gate_price", 0.0),
        ("surprisal_cap", math.inf),
        ("surprisal_cap", -1.0),
    ],
)
def test_the_command_accepts_exactly_what_the_agents_accept(family, name, value, tmp_path, capsys):
    option = "--" + name.replace("_", "-")
    size = {"bernoulli": ["--arms", "3"], "linear": ["--arms", "3", "--dim", "2"]}
    size["deepsea"] = ["--size", "2"]
    steps = "--episodes" if family == "deepsea" else "--horizon"
    argv = ["run", family, *size[family], steps, "3", "--seeds", "1", "--agents", "delight"]
    argv += [option, str(value), "--out", str(tmp_path), "--jobs", "1", "--no-progress"]
    refusal = _agent_refusal(family, name, value)
    if refusal is None:
        assert cli.main([*argv, "--no-plot"]) == 0
        assert (tmp_path / "summary.csv").exists()
    else:
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert f"error: {option}: {refusal}\n" in err  # the agents' own message
        assert not (tmp_path / "cells").exists()  # refused before anything ran


# -- crashes: an --out that cannot be written, a damaged cell file --------------------------


@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_an_out_folder_that_cannot_be_written_is_one_line_naming_out(where, tmp_path):
    if where == "proc" and not sys.platform.startswith("linux"):
        pytest.skip("needs /proc")
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    out = blocker / "x" if where == "under_a_file" else "/proc/forbidden/x"
    proc = subprocess.run(
        [sys.executable, "-m", "delight_gym.cli", *ARGS, "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # no traceback, no usage
    assert lines[0].startswith("delight-gym run bernoulli: error: --out: cannot write to ")
    assert str(out) in lines[0] and proc.stdout == ""


def test_a_damaged_cell_is_recomputed_with_a_warning(tmp_path, capsys):
    """A truncated cell file (full disk, partial copy) or one with arrays of the wrong shape is
    recomputed with a warning naming it; the results equal those of an undamaged run."""
    out = tmp_path / "res"
    argv = [*ARGS, "--agents", "delight,thompson", "--out", str(out), "--no-progress"]
    assert cli.main([*argv, "--no-plot"]) == 0
    capsys.readouterr()
    clean = pd.read_csv(out / "summary.csv").drop(columns="seconds")
    clean_curves = pd.read_csv(out / "curves.csv")
    cells = sorted((out / "cells").glob("*.npz"))
    assert len(cells) == 4
    truncated, reshaped, emptied = cells[0], cells[1], cells[2]
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    emptied.write_bytes(b"")
    save_cell(out, reshaped.stem, {"cumulative": np.zeros((1, 1)), "overrides": np.zeros(1)}, {})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli.main([*argv, "--no-plot"]) == 0
    damaged = [str(w.message) for w in caught if issubclass(w.category, DamagedCellWarning)]
    assert len(damaged) == 3
    for path in (truncated, reshaped, emptied):
        assert sum(str(path) in message for message in damaged) == 1
    assert any("BadZipFile" in m for m in damaged if str(truncated) in m)
    assert "cells: 3 computed, 1 loaded" in capsys.readouterr().out
    pd.testing.assert_frame_equal(pd.read_csv(out / "summary.csv").drop(columns="seconds"), clean)
    pd.testing.assert_frame_equal(pd.read_csv(out / "curves.csv"), clean_curves)
    # The recomputed files are whole again: a third run loads everything.
    with warnings.catch_warnings():
        warnings.simplefilter("error", DamagedCellWarning)
        assert cli.main([*argv, "--no-plot"]) == 0
    assert "cells: 0 computed, 4 loaded" in capsys.readouterr().out


# -- what a new user reads: --version, --help, and an --out that holds other settings ------


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"delight-gym {__version__}\n"


def _commands(parser: argparse.ArgumentParser, name: str = "delight-gym"):
    """``(name, parser)`` of the command and every subcommand, recursively."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for sub, subparser in action.choices.items():
                assert helps.get(sub), f"{name} {sub} has no help line"
                yield from _commands(subparser, f"{name} {sub}")


def test_every_option_of_every_command_has_help_with_its_default_and_choices():
    """Walk the parser: every option of every subcommand has a help text that states its
    default (flags excepted) and lists its choices; ``--agents`` lists the family's agents;
    every command has a description."""
    commands = dict(_commands(cli.build_parser()))
    assert {"delight-gym", "delight-gym reproduce", "delight-gym run"} <= set(commands)
    assert {f"delight-gym run {f}" for f in FAMILIES} <= set(commands)
    assert "The ``delight-gym`` command." not in commands["delight-gym"].format_help()
    for name, parser in commands.items():
        assert parser.description, name
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
                continue
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help, f"{label} has no help"
            text = formatter._expand_help(action)
            flag = action.nargs == 0  # --quick, --no-plot, --version: no value, no default
            if action.option_strings and not flag:
                assert "default" in text, f"{label}: help states no default: {text!r}"
            for choice in action.choices or ():
                assert str(choice) in text, f"{label}: help does not list {choice!r}"
    for family in FAMILIES.values():
        parser = commands[f"delight-gym run {family.name}"]
        (agents,) = [a for a in parser._actions if "--agents" in a.option_strings]
        text = parser._get_formatter()._expand_help(agents)
        assert all(agent in text for agent in family.agent_names), text


def test_other_settings_into_the_same_out_are_refused_and_the_same_resume(tmp_path, capsys):
    out = tmp_path / "res"
    argv = [*ARGS, "--agents", "delight", "--out", str(out), "--no-progress", "--no-plot"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    record = json.loads((out / "run.json").read_text())
    assert record["agents"] == ["delight"] and record["seeds"] == 4
    assert [s["arms"] for s in record["settings"]] == [5, 20]
    tables = {n: (out / n).read_bytes() for n in ("summary.csv", "curves.csv", "run.json")}
    cells = sorted(p.name for p in (out / "cells").glob("*.npz"))

    # Other settings: refused before anything runs, one line naming what differs.
    for extra, differs in (
        (["--arms", "7"], "(arms 5,20 → 7)"),
        (["--seeds", "3"], "seeds 4 → 3"),
        (["--agents", "delight,greedy"], "agents delight → delight,greedy"),
        (["--gate-price", "0.2"], "gate_price 0.1 → 0.2"),
    ):
        with pytest.raises(SystemExit) as exc:
            cli.main([*argv, *extra])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert "error: --out:" in err and "other settings" in err and differs in err, err
        assert "--overwrite" in err
        assert {n: (out / n).read_bytes() for n in tables} == tables
        assert sorted(p.name for p in (out / "cells").glob("*.npz")) == cells

    # The same settings resume (options that do not change the numbers may differ).
    assert cli.main([*argv, "--jobs", "2"]) == 0
    assert "cells: 0 computed, 2 loaded" in capsys.readouterr().out
    # --overwrite replaces the tables; the cells of the old settings stay and are reused.
    assert cli.main([*argv, "--arms", "7", "--overwrite"]) == 0
    assert "cells: 1 computed, 0 loaded" in capsys.readouterr().out
    assert list(pd.read_csv(out / "summary.csv").arms) == [7]
    assert [s["arms"] for s in json.loads((out / "run.json").read_text())["settings"]] == [7]
    assert cli.main([*argv, "--overwrite"]) == 0
    assert "cells: 0 computed, 2 loaded" in capsys.readouterr().out
    assert (out / "summary.csv").read_bytes() == tables["summary.csv"]


def test_reproduce_into_an_out_of_other_settings_is_refused(tmp_path, capsys):
    argv = ["reproduce", "bernoulli-arms", "--quick", "--seeds", "2", "--horizon", "10"]
    argv += ["--jobs", "1", "--no-progress", "--no-plot", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    with pytest.raises(SystemExit) as exc:
        cli.main([*argv, "--seeds", "3"])
    assert exc.value.code == 2
    assert "seeds 2 → 3" in capsys.readouterr().err


def test_run_records_are_the_results_modules_and_the_command_only_words_them(tmp_path):
    """``claim_folder`` keeps a folder's settings without any command line; the command turns
    its refusal into the one-line error above."""
    from delight_gym.experiments.results import RUN_RECORD, OtherSettingsError, claim_folder
    from delight_gym.experiments.specs import ExperimentSpec

    family = FAMILIES["bernoulli"]
    spec = ExperimentSpec.for_family(family, "b", [{"arms": 5}], horizon=3, seeds=2)
    claim_folder(tmp_path, spec)
    claim_folder(tmp_path, spec)  # the same settings resume
    written = (tmp_path / RUN_RECORD).read_text()
    other = spec.replace(settings=({"arms": 7},))
    with pytest.raises(OtherSettingsError) as exc:
        claim_folder(tmp_path, other)
    assert exc.value.differences == ["arms 5 → 7"] and exc.value.folder == tmp_path
    assert (tmp_path / RUN_RECORD).read_text() == written
    claim_folder(tmp_path, other, overwrite=True)
    assert json.loads((tmp_path / RUN_RECORD).read_text())["settings"] == [{"arms": 7}]


def test_figure_names_come_from_the_figure_specs():
    from delight_gym.experiments.specs import FIGURES, PAPER_FIGURES

    assert cli.FIGURE_NAMES == (*FIGURES, "theory", "all")
    beyond = {"deepsea-bsuite", "wheel", "neural-width", "continuum"}
    beyond |= {"mountain-car-continuous", "pendulum", "mountain-car"}
    assert PAPER_FIGURES == tuple(n for n in FIGURES if n not in beyond)
    assert len(PAPER_FIGURES) == 8


# -- sizes that cannot fit: refused while the arguments are read ------------------------------


def test_neural_width_refuses_arms_that_cannot_fit_with_exit_2_and_no_traceback(tmp_path):
    command = [sys.executable, "-m", "delight_gym.cli", "run", "neural-width"]
    command += ["--arms", "1000000000", "--out", str(tmp_path / "out")]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "error: --arms: arms=1000000000" in proc.stderr and "would need" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()  # refused before anything was written


@pytest.mark.parametrize(
    ("family", "option", "value"),
    [
        ("neural-width", "--arms", "10,1000000000"),
        ("bernoulli", "--arms", str(10**20)),  # more than the int64 actions hold
        ("linear", "--arms", str(10**11)),
        ("linear", "--dim", str(10**7)),  # one seed's D x D posterior
        ("continuum", "--dim", str(10**9)),
        ("deepsea", "--size", str(10**9)),
    ],
)
def test_sizes_that_cannot_fit_are_refused_naming_the_option(
    family, option, value, tmp_path, capsys
):
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", family, option, value, "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: {option}: " in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_the_size_checks_accept_the_default_sweeps_and_keep_to_the_agents_defaults():
    import inspect

    from delight_gym.agents.continuum import ContinuumAgent

    for family in FAMILIES.values():
        for param in family.instance:
            for value in param.sweep:
                assert param.check(value, param.name) == value
    defaults = inspect.signature(ContinuumAgent).parameters
    # The continuum --dim check's lower bound counts these defaults' float64 rows.
    assert (defaults["num_features"].default, defaults["num_candidates"].default) == (256, 64)


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--horizon", "100000000000"], "--horizon x --batch-size"),
        (["--seeds", "100000000000"], "--horizon x --seeds"),
    ],
)
def test_run_refuses_horizons_and_seeds_that_cannot_fit(extra, named, tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["run", "wheel", *extra, "--out", str(tmp_path / "out")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "would need" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
