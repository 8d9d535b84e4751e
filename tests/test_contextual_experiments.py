"""The contextual runner, its families (``wheel``, ``neural-width``), figure and metric.

References: uniform play's expected per-round regret on the wheel in closed form; the regret a
run records recomputed by replaying its actions on single envs; batches against the same
seeds run apart; the showdown's metric on a hand-made summary.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from delight_gym import cli
from delight_gym.agents.contextual import CONTEXTUAL_AGENTS
from delight_gym.envs import NeuralBanditEnv, WheelBanditEnv
from delight_gym.experiments.contextual import relative_to_uniform, run_neural, run_wheel
from delight_gym.experiments.families import FAMILIES, NEURAL_WIDTH, WHEEL
from delight_gym.experiments.specs import FIGURES


def test_uniform_play_on_the_wheel_has_its_closed_form_regret() -> None:
    # Outside the radius (probability 1 - δ²) the best mean is 50 and the arms' average is
    # (50 + 3·1 + 1.2)/5; inside, 1.2 against (4·1 + 1.2)/5.
    delta = 0.6
    outside = 50 - (50 + 3 + 1.2) / 5
    inside = 1.2 - (4 + 1.2) / 5
    expected = (1 - delta**2) * outside + delta**2 * inside
    result = run_wheel("uniform", delta, 500, 8, seed=100)
    per_round = result.regret.ravel()
    se = per_round.std() / math.sqrt(per_round.size)
    assert abs(per_round.mean() - expected) < 5 * se
    np.testing.assert_array_equal(result.overrides, 0)


@pytest.mark.parametrize("agent", ["uniform", "thompson-linfull", "delight-linfull"])
def test_wheel_regret_is_the_replayed_actions_pseudo_regret(agent: str) -> None:
    result = run_wheel(agent, 0.5, 40, 3, seed=7)
    assert result.regret.shape == result.actions.shape == (3, 40)
    for i in range(3):
        env = WheelBanditEnv(delta=0.5)
        env.reset(seed=7 + i)
        for t in range(40):
            _, _, _, _, info = env.step(int(result.actions[i, t]))
            assert info["regret"] == result.regret[i, t]
            env.reset()


def test_neural_regret_is_the_replayed_actions_pseudo_regret() -> None:
    result = run_neural("greedy-linfull", 6, "cosine", 30, 2, seed=3, dim=4, context_dim=2)
    for i in range(2):
        env = NeuralBanditEnv(num_arms=6, dim=4, context_dim=2, reward="cosine")
        env.reset(seed=3 + i)
        for t in range(30):
            _, _, _, _, info = env.step(int(result.actions[i, t]))
            assert info["regret"] == result.regret[i, t]
            env.reset()


@pytest.mark.parametrize("agent", ["uniform", "egreedy", "thompson-linfull"])
def test_a_batch_equals_its_seeds_run_apart(agent: str) -> None:
    together = run_wheel(agent, 0.7, 25, 4, seed=10)
    first = run_wheel(agent, 0.7, 25, 2, seed=10)
    second = run_wheel(agent, 0.7, 25, 2, seed=12)
    np.testing.assert_array_equal(together.actions, np.vstack([first.actions, second.actions]))
    np.testing.assert_array_equal(together.regret, np.vstack([first.regret, second.regret]))


def test_de_overrides_are_counted_and_shut_by_an_infinite_price() -> None:
    de = run_wheel("delight-linfull", 0.5, 60, 3, seed=100, gate_price=0.0)
    shut = run_wheel("delight-linfull", 0.5, 60, 3, seed=100, gate_price=math.inf)
    assert de.overrides.shape == (3,) and 0 < de.overrides.sum() and de.overrides.max() <= 60
    np.testing.assert_array_equal(shut.overrides, 0)


def test_relative_to_uniform_divides_by_the_baseline_of_the_same_setting() -> None:
    summary = pd.DataFrame(
        {
            "agent": ["uniform", "a", "uniform", "a", "b"],
            "delta": [0.5, 0.5, 0.9, 0.9, 0.7],
            "regret_mean": [200.0, 50.0, 40.0, 10.0, 3.0],
            "regret_se": [4.0, 5.0, 2.0, 1.0, 1.0],
        }
    )
    table = relative_to_uniform(summary, ["delta"])
    got = {(r.agent, r.delta): (r.relative_regret, r.relative_se) for r in table.itertuples()}
    assert got == {
        ("uniform", 0.5): (1.0, 0.02),
        ("a", 0.5): (0.25, 0.025),
        ("uniform", 0.9): (1.0, 0.05),
        ("a", 0.9): (0.25, 0.025),
    }  # b's setting has no uniform row: dropped


def test_families_name_every_contextual_agent_and_the_env_keywords() -> None:
    for family in (WHEEL, NEURAL_WIDTH):
        assert FAMILIES[family.name] is family
        assert set(family.agent_names) == set(CONTEXTUAL_AGENTS)
        for agent in family.agents:
            names = {p.name for p in agent.parameters}
            nl = {"nl_settings"} if agent.name.endswith("-neurallinear") else set()
            if agent.name.startswith("delight-"):
                assert names == {"half_life", "gate_price", "surprisal_cap", *nl}
            elif agent.name == "egreedy":
                assert names == {"half_life"}
            else:
                assert names == nl
    assert WHEEL.instance_keys == ("delta", "noise")
    assert NEURAL_WIDTH.instance_keys == ("arms", "reward", "dim", "context_dim", "noise")
    with pytest.raises(ValueError, match="reward must be one of"):
        NEURAL_WIDTH.check_setting(
            {"arms": 3, "reward": "linear", "dim": 2, "context_dim": 0, "noise": 0.1}
        )
    with pytest.raises(ValueError, match="delta must lie in"):
        WHEEL.check_setting({"delta": 1.5, "noise": 0.01})


def test_nl_settings_name_the_neural_linear_keywords(tmp_path) -> None:
    """``--nl-settings paper`` (the wheel's default; ``example`` elsewhere) runs NeuralLinear
    with the named keywords (the same regret as ``run_wheel`` given them directly), reaches
    only the NeuralLinear agents, and a name not in the table is refused naming the option."""
    from delight_gym.posteriors.neural_linear import NEURAL_LINEAR_SETTINGS

    paper = NEURAL_LINEAR_SETTINGS["paper"]
    assert paper["hidden_sizes"] == (100, 100) and paper["train_every"] == 20
    assert NEURAL_LINEAR_SETTINGS["example"] == {}
    assert WHEEL.restrict("thompson-neurallinear", {"delta": 0.5, "noise": 0.01}) == {
        "delta": 0.5,
        "noise": 0.01,
        "nl_settings": "paper",
    }
    width = {"arms": 3, "reward": "cosine", "dim": 2, "context_dim": 0, "noise": 0.1}
    assert NEURAL_WIDTH.restrict("greedy-neurallinear", width)["nl_settings"] == "example"
    assert "nl_settings" not in WHEEL.restrict("thompson-linfull", {"delta": 0.5, "noise": 0.01})
    argv = ["run", "wheel", "--delta", "0.5", "--agents", "thompson-neurallinear"]
    argv += ["--horizon", "45", "--seeds", "2", "--out", str(tmp_path), "--jobs", "1"]
    assert cli.main([*argv, "--nl-settings", "paper", "--no-progress", "--no-plot"]) == 0
    summary = pd.read_csv(tmp_path / "summary.csv")
    direct = run_wheel("thompson-neurallinear", 0.5, 45, 2, **paper).regret.sum(axis=1)
    default = run_wheel("thompson-neurallinear", 0.5, 45, 2).regret.sum(axis=1)
    assert summary["regret_mean"].iloc[0] == pytest.approx(direct.mean(), rel=1e-12)
    assert direct.mean() != pytest.approx(default.mean(), rel=1e-6)
    with pytest.raises(ValueError, match=r"nl_settings must be one of \['example', 'paper'\]"):
        WHEEL.check_setting({"delta": 0.5, "noise": 0.01, "nl_settings": "papr"})


def test_figure_specs_hold_the_grids() -> None:
    wheel = FIGURES["wheel"]
    assert [s["delta"] for s in wheel.full.settings] == [0.5, 0.7, 0.9, 0.95, 0.99]
    assert (wheel.full.horizon, wheel.full.seeds) == (2000, 20)
    width = FIGURES["neural-width"].full
    assert {(s["arms"], s["reward"]) for s in width.settings} == {
        (k, r) for k in (10, 100, 1000, 10_000) for r in ("quadratic", "cosine")
    }
    assert set(width.agents) == set(CONTEXTUAL_AGENTS)


def test_run_wheel_command_writes_tables_and_reports_the_showdown_metric(tmp_path, capsys):
    argv = ["run", "wheel", "--delta", "0.5,0.95", "--agents", "uniform,thompson-linfull"]
    argv += ["--horizon", "20", "--seeds", "2", "--out", str(tmp_path), "--jobs", "1"]
    assert cli.main([*argv, "--no-progress", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "relative to uniform" in out and "δ=0.95 σ=0.01 uniform: 1.0000" in out
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert list(summary.columns[:8]) == [
        "experiment",
        "agent",
        "delta",
        "noise",
        "horizon",
        "seeds",
        "regret_mean",
        "regret_se",
    ]
    assert sorted(set(summary["delta"])) == [0.5, 0.95]


def test_run_neural_width_command_takes_the_reward_names(tmp_path, capsys):
    argv = ["run", "neural-width", "--arms", "3,5", "--reward", "quadratic,cosine", "--dim", "2"]
    argv += ["--agents", "uniform", "--horizon", "10", "--seeds", "2", "--out", str(tmp_path)]
    assert cli.main([*argv, "--jobs", "1", "--no-progress", "--no-plot"]) == 0
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(zip(summary["arms"], summary["reward"], strict=True)) == {
        (3, "quadratic"),
        (5, "quadratic"),
        (3, "cosine"),
        (5, "cosine"),
    }
    with pytest.raises(SystemExit):
        cli.main(["run", "neural-width", "--reward", "linear", "--out", str(tmp_path / "x")])
    assert "--reward" in capsys.readouterr().err


def test_plot_regret_panels_draws_ratios_and_panels(tmp_path: Path) -> None:
    from delight_gym.experiments.figures import plot_regret_panels

    rows = []
    for reward in ("quadratic", "cosine"):
        for arms in (10, 100):
            for agent, regret in (("uniform", 100.0), ("thompson-linfull", 20.0 * arms**0.1)):
                rows.append(
                    {
                        "experiment": "x",
                        "agent": agent,
                        "arms": arms,
                        "reward": reward,
                        "horizon": 50,
                        "seeds": 2,
                        "regret_mean": regret,
                        "regret_se": 1.0,
                        "seconds": 0.1,
                    }
                )
    summary = pd.DataFrame(rows)
    paths = plot_regret_panels(
        summary, None, tmp_path / "fig", panel="reward", relative_to="uniform", log_y=True
    )
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size for p in paths)


@pytest.mark.slow
@pytest.mark.parametrize("figure", ["wheel", "neural-width"])
def test_reproduce_quick_writes_the_summary_and_the_figure(figure: str, tmp_path: Path, capsys):
    argv = ["reproduce", figure, "--quick", "--out", str(tmp_path), "--jobs", "2", "--no-progress"]
    assert cli.main(argv) == 0
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary["agent"]) == set(CONTEXTUAL_AGENTS)
    assert (tmp_path / f"{figure}.png").stat().st_size > 0
    if figure == "wheel":
        assert "relative to uniform" in capsys.readouterr().out
