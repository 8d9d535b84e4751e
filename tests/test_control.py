"""The continuous-control sweep: its summary table and one tiny run per agent."""

from __future__ import annotations

import numpy as np
import pytest

from delight_gym.experiments.control import AGENTS, main, run_control, summary_table


def _run(agent, seed, returns, flag):
    return {
        "task": "mountain-car",
        "agent": agent,
        "seed": seed,
        "steps": 10,
        "first_flag_step": flag,
        "eval_returns": returns,
        "seconds": 1.0,
    }


def test_summary_counts_solved_seeds_and_flags():
    runs = [
        _run("sac", 0, [95.0, 93.0], 4000),
        _run("sac", 1, [-0.1, -0.2], None),
        _run("sac", 2, [92.0], 8000),
        _run("td3", 0, [-1.0], None),
    ]
    table = summary_table(runs, "mountain-car").set_index("agent")
    assert table.loc["sac", "solved"] == 2 and table.loc["sac", "seeds"] == 3
    assert table.loc["sac", "steps_to_flag_median"] == 6000
    finals = np.array([94.0, -0.15, 92.0])
    assert table.loc["sac", "return_mean"] == pytest.approx(finals.mean())
    assert table.loc["sac", "return_se"] == pytest.approx(finals.std(ddof=1) / np.sqrt(3))
    assert np.isnan(table.loc["td3", "steps_to_flag_median"])


@pytest.mark.parametrize("agent", AGENTS)
def test_each_agent_runs(agent):
    run = run_control("mountain-car", agent, 0, steps=120, episodes=1)
    assert run["agent"] == agent and len(run["eval_returns"]) == 1
    assert np.isfinite(run["eval_returns"]).all()


def test_resume_skips_saved_runs(tmp_path, capsys):
    argv = [
        "pendulum",
        "--agents",
        "sac",
        "--seeds",
        "1",
        "--steps",
        "110",
        "--episodes",
        "1",
        "--out",
        str(tmp_path),
    ]
    main(argv)
    saved = tmp_path / "pendulum" / "steps110" / "sac-seed0.json"
    before = saved.stat().st_mtime_ns
    main(argv)
    assert saved.stat().st_mtime_ns == before
    assert (tmp_path / "pendulum" / "steps110" / "summary.csv").exists()
    with pytest.raises(ValueError, match="task"):
        run_control("cartpole", "sac", 0)
