"""The control families: one seed's run, its checkpoints, the summary and the command."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from delight_gym.experiments.control import AGENTS, make_agent, run_control
from delight_gym.experiments.families import FAMILIES
from delight_gym.experiments.families.control import CONTINUOUS_AGENTS, DISCRETE_AGENTS, TASKS
from delight_gym.experiments.results import summary_frame
from delight_gym.experiments.runner import run_experiment
from delight_gym.experiments.specs import ExperimentSpec

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"

#: ``python -m delight_gym.experiments.control``'s ``run_control(task, agent, 0, steps=300,
#: episodes=2)`` before the control experiments became families (commit 6305842): the mean of
#: its two evaluation returns. No run reached the flag.
OLD_RUN_CONTROL = {
    ("mountain-car-continuous", "sac"): (-0.016346397305586888 + -0.016321975239321794) / 2,
    ("mountain-car-continuous", "td3_de"): (-0.0010721408199234623 + -0.0011057493276773302) / 2,
    ("pendulum", "td3"): (-1684.1352922699093 + -1703.1751241053546) / 2,
}


def _row(agent, returns, flags):
    returns = np.asarray(returns, dtype=float)
    return {
        "experiment": "x",
        "agent": agent,
        "horizon": 10,
        "seconds": 1.0,
        "final_regret": (returns > 90).astype(float),
        "eval_return": returns,
        "first_flag": np.asarray(flags),
        "solved": returns > 90,
    }


def test_summary_counts_solved_seeds_and_flags():
    rows = [_row("sac", [94.0, -0.15, 92.0], [4000, 0, 8000]), _row("td3", [-1.0], [0])]
    table = summary_frame(rows, [], metric="solved").set_index("agent")
    assert table.loc["sac", "solved"] == 2 and table.loc["sac", "seeds"] == 3
    assert table.loc["sac", "solved_mean"] == pytest.approx(2 / 3)
    assert table.loc["sac", "steps_to_flag_median"] == 6000
    finals = np.array([94.0, -0.15, 92.0])
    assert table.loc["sac", "return_mean"] == pytest.approx(finals.mean())
    assert table.loc["sac", "return_se"] == pytest.approx(finals.std(ddof=1) / np.sqrt(3))
    assert np.isnan(table.loc["td3", "steps_to_flag_median"])


@pytest.mark.parametrize("task", ["mountain-car-continuous", "pendulum"])
def test_the_family_reproduces_the_old_tool_and_its_tables(task, tmp_path):
    """Through the runner, with checkpoints every 100 steps, a 300-step run gives the old
    tool's final return exactly (the checkpoint evaluations change nothing); the committed
    table's columns are all in ``summary.csv``; a rerun loads every cell."""
    agents = tuple(a for t, a in OLD_RUN_CONTROL if t == task)
    family = FAMILIES[task]
    spec = ExperimentSpec.for_family(
        family, task, [{"eval_every": 100, "eval_episodes": 2}], agents=agents, horizon=300
    ).replace(seeds=1, batch_size=1)
    result = run_experiment(spec, tmp_path, jobs=1, progress=False)
    summary = result.summary.set_index("agent")
    for agent in agents:
        assert summary.loc[agent, "return_mean"] == OLD_RUN_CONTROL[task, agent]
        assert summary.loc[agent, "solved"] == 0
        assert np.isnan(summary.loc[agent, "steps_to_flag_median"])
    committed = pd.read_csv(RESULTS / f"{task}.csv")
    assert set(committed.columns) <= set(result.summary.columns)
    assert result.curves["t"].tolist() == [100, 200, 300] * len(agents)
    assert set(result.curves.columns) >= {"t", "solved_mean", "solved_se"}
    again = run_experiment(spec, tmp_path, jobs=1, progress=False)
    assert again.computed == [] and len(again.loaded) == len(agents)


@pytest.mark.parametrize("agent", AGENTS)
def test_each_agent_runs(agent):
    if agent == "dqn_ez":
        pytest.importorskip("delight_gym.sb3.ez_greedy")
    if agent.endswith("_pink"):
        pytest.importorskip("pink")
    task = "pendulum" if agent in CONTINUOUS_AGENTS else "mountain-car"
    result = run_control(
        agent=agent, horizon=40, seeds=1, seed=0, task=task, eval_every=20, eval_episodes=1
    )
    assert result.t.tolist() == [20, 40]
    assert result.cumulative.shape == (1, 2) and result.eval_return.shape == (1,)
    assert np.isfinite(result.returns).all()


def test_pink_agents_use_pink_noise_seeded_by_the_run():
    pink = pytest.importorskip("pink")
    import gymnasium as gym

    env = gym.make("MountainCarContinuous-v0")
    sac = make_agent("sac_pink", env, 3)
    assert isinstance(sac.actor.action_dist, pink.PinkNoiseDist)
    td3 = make_agent("td3_pink", env, 3)
    assert isinstance(td3.action_noise, pink.PinkActionNoise)
    np.testing.assert_array_equal(td3.action_noise(), make_agent("td3_pink", env, 3).action_noise())


def test_a_missing_ez_greedy_module_is_a_clear_import_error(monkeypatch):
    import gymnasium as gym

    monkeypatch.setitem(sys.modules, "delight_gym.sb3.ez_greedy", None)
    with pytest.raises(ImportError, match=r"dqn_ez needs delight_gym\.sb3\.ez_greedy"):
        make_agent("dqn_ez", gym.make("MountainCar-v0"), 0)


def test_families_and_tasks_agree():
    assert set(FAMILIES["mountain-car"].agent_names) == set(DISCRETE_AGENTS)
    for name in TASKS:
        family = FAMILIES[name]
        assert family.horizon == TASKS[name]["steps"] and family.fixed == {"task": name}
    with pytest.raises(ValueError, match="agent must be one of"):
        make_agent("ppo", None, 0)


def test_the_command_runs_a_control_family(tmp_path, capsys):
    from delight_gym import cli

    out = tmp_path / "pendulum"
    argv = ["run", "pendulum", "--agents", "sac", "--steps", "40", "--seeds", "1"]
    argv += ["--eval-every", "20", "--eval-episodes", "1", "--no-plot", "--out", str(out)]
    assert cli.main(argv) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert {"solved", "steps_to_flag_median", "return_mean", "return_se"} <= set(summary.columns)
    assert pd.read_csv(out / "curves.csv")["t"].tolist() == [20, 40]
    assert "sac" in capsys.readouterr().out
