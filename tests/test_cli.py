"""The ``delight-gym run bernoulli`` command: files, columns, resume and bad input.

Every run uses ``--jobs 1`` so that the cells run in this process and see the monkeypatched
``run_bernoulli``; the process pool and Ray backends are tested in ``test_runner.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from delight_gym import cli
from delight_gym.experiments import bandit as bandit_runner

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
    with pytest.raises(KeyboardInterrupt):
        cli.main(argv)
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
    assert "selected-override rounds" in printed and "EXCEEDED" not in printed
    assert printed.count(" OK") == 2


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
    # Regret per episode is at most 1 + the move costs (N·0.01/N) and never below 0.
    assert ((summary.regret_mean >= 0) & (summary.regret_mean <= 20 * 1.01)).all()
    assert "found_fraction" in capsys.readouterr().out
    for bad, message in ((["--size", "0"], "--size"), (["--agents", "thompson"], "--agents")):
        with pytest.raises(SystemExit):
            cli.main(["run", "deepsea", *bad, "--out", str(tmp_path / "x")])
        assert message in capsys.readouterr().err
