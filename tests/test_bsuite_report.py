"""The bsuite report: runs and scores read back from summary tables, and the figure."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from delight_gym.experiments.bsuite_report import main, runs_table, scores_table


def _summary() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "agent": ["boot_dqn", "boot_dqn", "dqn"],
            "size": [10, 12, 10],
            "solve_episodes": ["90 1200", "4000", ">1124 >1124"],
        }
    )


def test_runs_table_one_row_per_run() -> None:
    runs = runs_table([(_summary(), 3)])
    assert runs.columns.tolist() == ["agent", "size", "seed", "solve_episode", "episodes_run"]
    boot = runs[runs.agent == "boot_dqn"]
    assert boot[["size", "seed", "episodes_run"]].values.tolist() == [
        [10, 3, 90],
        [10, 4, 1200],
        [12, 3, 4000],
    ]
    assert runs[runs.agent == "dqn"].solve_episode.isna().all()


def test_scores_follow_bsuites_pass_rule() -> None:
    runs = runs_table([(_summary(), 0)])
    scores = scores_table(runs, "deep_sea").set_index("agent")
    # N = 10 passes below 2^10 + 100 = 1124: 90 passes, 1200 does not; N = 12: 4000 < 4196.
    assert scores.loc["boot_dqn", "score"] == pytest.approx(2 / 3)
    assert scores.loc["dqn", "score"] == 0.0
    assert not scores.loc["dqn", "runs_complete"]
    assert scores.loc["dqn", "sizes_missing"].split()[0] == "12"
    with pytest.raises(ValueError, match="experiment"):
        scores_table(runs, "deep_sea_2")


def test_main_writes_tables_and_figure(tmp_path, capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    _summary().to_csv(run / "summary.csv", index=False)
    (run / "run.json").write_text(json.dumps({"seed": 0}))
    main(["deep_sea", str(run), "--out", str(tmp_path / "out")])
    main(["deep_sea_stochastic", str(run), "--out", str(tmp_path / "out")])
    scores = pd.read_csv(tmp_path / "out" / "bsuite-scores.csv")
    assert sorted(set(scores.experiment)) == ["deep_sea", "deep_sea_stochastic"]
    assert (tmp_path / "out" / "bsuite-deep_sea.png").stat().st_size > 0
    assert "deep_sea_stochastic" in capsys.readouterr().out
