"""The ``deepsea-bsuite`` family: runs scored by bsuite's rule, early stop, summary, figure, logs.

References are independent of the code under test: the solve episode is recomputed from a run's
per-episode bad flags with :func:`~delight_gym.experiments.scores.solve_episode` (tested against
a transcription of bsuite's ``analysis.py`` in ``tests/test_scores.py``), a full-budget run is
the reference of an early-stopped one, and override totals are compared with a counter that
sees every DE decision.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from delight_gym.experiments.deepsea_bsuite import (
    BSUITE_AGENTS,
    DE_VARIANTS,
    DEEP_AGENTS,
    DeepSeaSolveCallback,
    make_deep_agent,
    run_bsuite_deep_sea,
)
from delight_gym.experiments.families import DEEP_SEA_BSUITE, FAMILIES, bsuite_score_report
from delight_gym.experiments.families.deepsea_bsuite import (
    AGREEMENT,
    BOOT_DQN_DE_OPTIONS,
    COMMIT_FAST_HALF_LIFE,
    SPREAD_GATE_PRICE,
)
from delight_gym.experiments.results import parse_solve_episodes, summary_frame
from delight_gym.experiments.scores import (
    DeepSeaSolve,
    deep_sea_episode_budget,
    deep_sea_score,
    solve_episode,
)
from delight_gym.experiments.specs import FIGURES, ExperimentSpec, setting_grid

# Small runs: size 4 (budget 116), few episodes; every agent solves or fails within seconds.
SIZE = 4
EPISODES = 40


def _flags_reference(agent: str, seed: int, episodes: int) -> np.ndarray:
    """A run's bad flags over every episode of the budget (no early stop)."""
    run = run_bsuite_deep_sea(agent, SIZE, seed=seed, episodes=episodes, early_stop=False)
    assert run.episodes == episodes
    return run.bad


@pytest.mark.parametrize("agent", ["boot_dqn", "boot_dqn_de_commit", "dqn", "delight", "psrl"])
def test_early_stop_gives_the_full_runs_solve_episode(agent: str) -> None:
    full = run_bsuite_deep_sea(agent, SIZE, seed=3, episodes=EPISODES, early_stop=False)
    stopped = run_bsuite_deep_sea(agent, SIZE, seed=3, episodes=EPISODES)
    assert stopped.solve == full.solve == solve_episode(full.bad)
    # The early-stopped run is the full run cut at its solve episode.
    assert stopped.episodes == (full.solve.episode if full.solve.solved else EPISODES)
    np.testing.assert_array_equal(stopped.bad, full.bad[: stopped.episodes])
    np.testing.assert_allclose(stopped.regret, full.regret[: stopped.episodes])
    # Deterministic DeepSea: an episode is bad iff it missed the treasure (regret ~ 1).
    np.testing.assert_array_equal(full.bad, full.regret > 0.5)


def test_tiny_sweep_summary_matches_flags_recomputed_through_scores(tmp_path) -> None:
    from delight_gym.experiments.runner import run_experiment

    agents = ("boot_dqn_de", "dqn", "delight")
    spec = ExperimentSpec.for_family(
        DEEP_SEA_BSUITE,
        "tiny",
        setting_grid(size=(SIZE,)),
        agents=agents,
        seeds=2,
        horizon=EPISODES,
        seed=5,
    )
    result = run_experiment(spec, tmp_path, jobs=1, progress=False)
    summary = result.summary.set_index("agent")
    pairs_by_agent = {}
    for agent in agents:
        flags = [_flags_reference(agent, 5 + i, EPISODES) for i in range(2)]
        solves = [solve_episode(f) for f in flags]
        row = summary.loc[agent]
        episodes, solved = parse_solve_episodes(row["solve_episodes"])
        np.testing.assert_array_equal(solved, [s.solved for s in solves])
        budget = min(deep_sea_episode_budget(SIZE), EPISODES)
        expected = [s.episode if s.solved else budget for s in solves]
        np.testing.assert_array_equal(episodes, expected)
        assert row["solved_fraction"] == pytest.approx(np.mean([s.solved for s in solves]))
        median = np.median([s.episode if s.solved else np.inf for s in solves])
        assert row["solve_episode_median"] == median
        pairs_by_agent[agent] = [(SIZE, s) for s in solves]
        if agent == "dqn":
            assert row["overrides_total"] == 0
    # The report's score is bsuite's over the same runs.
    lines = bsuite_score_report(result)
    for agent, pairs in pairs_by_agent.items():
        assert f"  {agent}: {deep_sea_score(pairs):.2f} (2 runs)" in lines
    # The written summary.csv holds the same columns.
    written = pd.read_csv(tmp_path / "summary.csv")
    assert list(written["solve_episodes"]) == list(result.summary["solve_episodes"])


def test_deep_de_overrides_match_every_recorded_decision(monkeypatch) -> None:
    """The run's override total equals the sum of the overridden flags of every decision the
    agent recorded (counted by wrapping ``record``, across SB3's log dumps)."""
    from delight_gym.experiments import deepsea_bsuite as bsuite

    seen: list[int] = []
    original = bsuite.make_deep_agent

    def counting(*args, **kwargs):
        model = original(*args, **kwargs)
        record = model.delight_stats.record

        def spy(overridden, *rest, **kw):
            seen.append(int(np.sum(overridden)))
            return record(overridden, *rest, **kw)

        model.delight_stats.record = spy
        return model

    monkeypatch.setattr(bsuite, "make_deep_agent", counting)
    run = bsuite.run_bsuite_deep_sea("boot_dqn_de", SIZE, seed=1, episodes=30, early_stop=False)
    assert sum(seen) == run.overrides > 0


def test_sb3_logger_gets_the_deepsea_and_de_keys(tmp_path) -> None:
    from stable_baselines3.common.logger import configure

    from delight_gym.envs.deep_sea import DeepSeaEnv

    model = make_deep_agent("boot_dqn_de", DeepSeaEnv(size=SIZE, mapping_seed=0), seed=0)
    model.set_logger(configure(str(tmp_path), ["csv"]))
    callback = DeepSeaSolveCallback(20, early_stop=False)
    model.learn(total_timesteps=20 * SIZE, callback=callback, log_interval=1)
    log = pd.read_csv(tmp_path / "progress.csv")
    for key in (
        "deepsea/bad_episode",
        "deepsea/bad_fraction",
        "rollout/exploration_rate",
        "delight/override_rate",
    ):
        assert key in log.columns
    flags = np.array(callback.state.bad)
    # One row per episode (log_interval=1; the last one written as the callback stops the run):
    # the running bad fraction as bsuite counts it.
    assert len(log) == len(flags) == 20
    np.testing.assert_allclose(
        log["deepsea/bad_fraction"].to_numpy(), np.cumsum(flags) / np.arange(1, len(flags) + 1)
    )
    if callback.state.tracker.solved:
        assert log["deepsea/solve_episode"].dropna().iloc[-1] == callback.state.tracker.solved_at


def test_summary_solve_columns_closed_form() -> None:
    rows = [
        {
            "experiment": "x",
            "agent": "a",
            "size": 10,
            "horizon": 5,
            "seconds": 1.0,
            "final_regret": np.zeros(3),
            "overrides": np.array([1, 2, 3]),
            "solve_episode": np.array([20, 1124, 30]),
            "solved": np.array([True, False, True]),
        }
    ]
    row = summary_frame(rows, ["size"]).iloc[0]
    assert row["solved_fraction"] == pytest.approx(2 / 3)
    assert row["solve_episode_median"] == 30.0  # {20, 30, inf}
    assert row["solve_episodes"] == "20 >1124 30"
    assert row["overrides_total"] == 6
    episodes, solved = parse_solve_episodes(row["solve_episodes"])
    np.testing.assert_array_equal(episodes, [20, 1124, 30])
    np.testing.assert_array_equal(solved, [True, False, True])
    rows[0]["solved"] = np.array([True, False, False])
    assert summary_frame(rows, ["size"]).iloc[0]["solve_episode_median"] == np.inf


def test_family_and_figure_records() -> None:
    assert FAMILIES["deepsea-bsuite"] is DEEP_SEA_BSUITE
    assert set(DEEP_SEA_BSUITE.agent_names) == set(BSUITE_AGENTS)
    figure = FIGURES["deepsea-bsuite"]
    full, quick = figure.full, figure.quick
    assert [s["size"] for s in full.settings] == [10, 12, 14, 16, 20]
    assert full.seeds == 5 and full.seed == 0 and full.batch_size == 1
    assert full.horizon == 10_000  # bsuite's cap; each run's budget is min(2^N + 100, 10 000)
    # The DE variants are run on their own (each once, after its tuning), not in the default grid.
    assert set(full.agents) == set(BSUITE_AGENTS) - set(DE_VARIANTS)
    assert set(DE_VARIANTS) <= set(DEEP_AGENTS)
    assert [s["size"] for s in quick.settings] == [6, 8] and quick.seeds == 2


def test_variants_build_with_their_fixed_settings_and_refuse_to_take_them() -> None:
    from delight_gym.envs.deep_sea import DeepSeaEnv

    env = DeepSeaEnv(size=SIZE, mapping_seed=0)
    spread = make_deep_agent("boot_dqn_de_spread", env, seed=0, half_life=7.0)
    assert spread.delight.value_scale == "spread" and spread.delight.half_life == 7.0
    assert spread.delight.gate_price == SPREAD_GATE_PRICE
    agree = make_deep_agent("boot_dqn_de_agree", env, seed=0, gate_price=0.3)
    assert agree.delight.agreement == AGREEMENT and agree.delight.gate_price == 0.3
    fast = make_deep_agent("boot_dqn_de_commit_fast", env, seed=0)
    assert fast.delight.commit and fast.delight.half_life == COMMIT_FAST_HALF_LIFE
    with pytest.raises(TypeError, match="gate_price"):
        make_deep_agent("boot_dqn_de_spread", env, seed=0, gate_price=0.1)
    with pytest.raises(TypeError, match="half_life"):
        run_bsuite_deep_sea("boot_dqn_de_commit_fast", SIZE, seed=0, half_life=100.0)
    # Each takes from the command line exactly the DE settings it does not fix.
    for name in DE_VARIANTS:
        taken = {p.name for p in DEEP_SEA_BSUITE.agent(name).parameters}
        fixed = set(BOOT_DQN_DE_OPTIONS[name]) & {"half_life", "gate_price", "surprisal_cap"}
        assert taken == {"half_life", "gate_price", "surprisal_cap"} - fixed


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="agent"):
        run_bsuite_deep_sea("nope", SIZE, seed=0)
    with pytest.raises(ValueError, match="size"):
        run_bsuite_deep_sea("psrl", 0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        run_bsuite_deep_sea("psrl", SIZE, seed=-1)
    with pytest.raises(ValueError, match="episodes"):
        run_bsuite_deep_sea("psrl", SIZE, seed=0, episodes=0)
    with pytest.raises(TypeError, match="gate_price"):
        run_bsuite_deep_sea("psrl", SIZE, seed=0, gate_price=0.1)
    with pytest.raises(TypeError, match="half_life"):
        make_deep_agent("boot_dqn", None, seed=0, half_life=10.0)
    with pytest.raises(ValueError, match="agent"):
        make_deep_agent("psrl", None, seed=0)
    with pytest.raises(ValueError, match="text"):
        parse_solve_episodes("")


@pytest.mark.parametrize("agent", DEEP_AGENTS)
def test_every_deep_agent_runs_and_stops_at_its_budget(agent: str) -> None:
    run = run_bsuite_deep_sea(agent, SIZE, seed=0, episodes=6)
    assert 1 <= run.episodes <= 6 and run.budget == 6
    assert run.bad.shape == run.regret.shape == (run.episodes,)
    assert (run.overrides > 0) <= (agent != "dqn" and agent != "boot_dqn")
    if not run.solve.solved:
        assert run.episodes == 6


def test_figure_draws_from_a_summary(tmp_path) -> None:
    from delight_gym.experiments.figures import plot_bsuite_deep_sea

    summary = pd.DataFrame(
        {
            "agent": ["boot_dqn", "boot_dqn", "dqn", "dqn"],
            "size": [10, 12, 10, 12],
            "seeds": [3] * 4,
            "solve_episodes": ["30 40 >1124", "50 60 70", ">1124 >1124 >1124", ">4196 17 >4196"],
            "solve_episode_median": [40.0, 60.0, np.inf, np.inf],
        }
    )
    paths = plot_bsuite_deep_sea(summary, None, tmp_path / "fig", title="t\nmean ± 1 s.e. x")
    assert [p.suffix for p in paths] == [".png", ".pdf"]
    assert all(p.stat().st_size > 10_000 for p in paths)
    # The scores the bars show: boot_dqn passes 5 of 6 runs, dqn 1 of 6 (17 < 2^12 + 100).
    solves = {
        a: [
            (int(n), DeepSeaSolve(bool(s), int(e), True))
            for n, text in zip(g["size"], g["solve_episodes"], strict=True)
            for e, s in zip(*parse_solve_episodes(text), strict=True)
        ]
        for a, g in summary.groupby("agent")
    }
    assert deep_sea_score(solves["boot_dqn"]) == pytest.approx(5 / 6)
    assert deep_sea_score(solves["dqn"]) == pytest.approx(1 / 6)


def test_bsuite_families_use_bsuites_sweeps() -> None:
    from delight_gym.experiments.families import BSUITE_DEEP_SEA, BSUITE_DEEP_SEA_STOCHASTIC
    from delight_gym.experiments.scores import BSUITE_EXPERIMENTS

    for family, name in (
        (BSUITE_DEEP_SEA, "deep_sea"),
        (BSUITE_DEEP_SEA_STOCHASTIC, "deep_sea_stochastic"),
    ):
        rule = BSUITE_EXPERIMENTS[name]
        assert family.instance[0].sweep == rule.sizes
        assert family.horizon == rule.num_episodes
        assert family.seeds == 1


def test_stochastic_run_uses_bsuites_stochastic_rule() -> None:
    # Runs shorter than 100 episodes cannot be solved under deep_sea_stochastic's rule.
    from delight_gym.experiments.deepsea_bsuite import run_bsuite_deep_sea

    run = run_bsuite_deep_sea(
        "boot_dqn", 4, seed=0, mapping_seed=42, episodes=120, deterministic=False
    )
    assert run.solve == solve_episode(run.bad, threshold=0.8, first_episode=100)
    assert run.solve.episode >= 100
    with pytest.raises(ValueError, match="deterministic"):
        run_bsuite_deep_sea("psrl", 4, seed=0, episodes=5, deterministic=False)
    # A run too short for the rule to test any episode is refused, not left without a result.
    with pytest.raises(ValueError, match="episodes must be >= 100"):
        run_bsuite_deep_sea("boot_dqn", 4, seed=0, episodes=99, deterministic=False)


# -- the batched path (--device): SeedBatchedBootDQN, many seeds of one size in one run -----------

TINY_SIZES = (4, 5, 6)
TINY_EPISODES = 12


def _batched(seeds: int, seed: int, episodes: int, **kw):
    from delight_gym.experiments.deepsea_bsuite import run_bsuite_deep_sea_batched
    from delight_gym.experiments.runner import one_math_thread

    with one_math_thread():  # as the cell runs it
        return run_bsuite_deep_sea_batched(
            "boot_dqn", SIZE, seeds=seeds, seed=seed, episodes=episodes, device="cpu", **kw
        )


def test_batched_runs_are_seed_batched_boot_dqns_play_cut_by_bsuites_rule() -> None:
    """Without early stop, the batched run's flags are ``SeedBatchedBootDQN.play``'s on the same
    envs and seed (its own reference loop); with it, each seed's run is that cut at its own
    solve episode."""
    from delight_gym.agents.boot_dqn import SeedBatchedBootDQN
    from delight_gym.envs.deep_sea import DeepSeaVectorEnv
    from delight_gym.experiments.runner import one_math_thread

    episodes = 25
    full = _batched(3, 5, episodes, early_stop=False)
    with one_math_thread():
        agent = SeedBatchedBootDQN(3, SIZE * SIZE, 2, seed=5)
        flags = agent.play(DeepSeaVectorEnv(3, size=SIZE, mapping_seed=[5, 6, 7]), episodes, seed=5)
    np.testing.assert_array_equal(np.stack([run.bad for run in full]), flags)
    assert any(run.solve.solved for run in full)  # so that some runs below are cut early
    stopped = _batched(3, 5, episodes)
    for i, (run, whole) in enumerate(zip(stopped, full, strict=True)):
        assert (run.agent, run.size, run.seed, run.budget) == ("boot_dqn", SIZE, 5 + i, episodes)
        assert run.solve == whole.solve == solve_episode(whole.bad)
        assert run.episodes == (whole.solve.episode if whole.solve.solved else episodes)
        np.testing.assert_array_equal(run.bad, whole.bad[: run.episodes])
        np.testing.assert_allclose(run.regret, whole.regret[: run.episodes])
        np.testing.assert_array_equal(whole.bad, whole.regret > 0.5)
        assert run.overrides == 0


def test_batched_stochastic_run_uses_bsuites_stochastic_rule() -> None:
    (run,) = _batched(1, 0, 105, mapping_seed=42, deterministic=False)
    assert run.solve == solve_episode(run.bad, threshold=0.8, first_episode=100)
    assert run.episodes >= 100


def _tiny_spec(agents: tuple[str, ...], **device: str) -> ExperimentSpec:
    from delight_gym.experiments.families import BSUITE_DEEP_SEA

    return ExperimentSpec.for_family(
        BSUITE_DEEP_SEA,
        "tiny",
        setting_grid(size=TINY_SIZES, **{k: (v,) for k, v in device.items()}),
        agents=agents,
        seeds=2,
        batch_size=2,
        horizon=TINY_EPISODES,
    )


def test_batched_sweep_writes_the_per_seed_records_resumes_and_skips_saved_cells(
    tmp_path, monkeypatch
) -> None:
    """A sweep with ``device="cpu"`` writes the per-seed sweep's records (the same columns,
    read by the same report code); its ``boot_dqn`` cells are the batched runs' (keyed apart
    from the per-seed ones: other numbers), its other agents' cells are the per-seed ones (loaded,
    not recomputed); a sweep stopped by a failing cell keeps the cells before it and a rerun
    computes only the rest."""
    from delight_gym.experiments import deepsea_bsuite
    from delight_gym.experiments.bsuite_report import runs_table
    from delight_gym.experiments.runner import CellError, run_experiment

    agents = ("boot_dqn", "dqn")
    per_seed = run_experiment(_tiny_spec(agents), tmp_path / "a", jobs=1, progress=False)
    spec = _tiny_spec(agents, device="cpu")
    keys = {(c.agent, c.setting["size"]): c.key for c in spec.cells()}
    assert {c.key for c in _tiny_spec(agents).cells()} & set(keys.values()) == {
        keys["dqn", n] for n in TINY_SIZES
    }
    original = deepsea_bsuite.run_bsuite_deep_sea_batched

    def failing(agent, size, **kw):
        if size == TINY_SIZES[-1]:
            raise RuntimeError("interrupted")
        return original(agent, size, **kw)

    # the cell function looks the batched run up in its own module
    monkeypatch.setattr(deepsea_bsuite, "run_bsuite_deep_sea_batched", failing)
    with pytest.raises(CellError, match="interrupted"):
        run_experiment(spec, tmp_path / "b", cache=tmp_path / "a", jobs=1, progress=False)
    monkeypatch.setattr(deepsea_bsuite, "run_bsuite_deep_sea_batched", original)
    result = run_experiment(spec, tmp_path / "b", cache=tmp_path / "a", jobs=1, progress=False)
    assert result.computed == [keys["boot_dqn", TINY_SIZES[-1]]]
    assert len(result.loaded) == 2 * len(TINY_SIZES) - 1

    assert list(result.summary.columns) == list(per_seed.summary.columns)
    for row, before in zip(result.rows, per_seed.rows, strict=True):
        assert row["setting"]["size"] == before["setting"]["size"]
        assert row["cumulative"].shape == before["cumulative"].shape == (2, TINY_EPISODES)
        if row["agent"] == "dqn":  # run per seed, as without a device
            np.testing.assert_array_equal(row["cumulative"], before["cumulative"])
            continue
        runs = original(
            "boot_dqn", row["setting"]["size"], seeds=2, seed=0, episodes=TINY_EPISODES,
            mapping_seed=42, device="cpu",
        )  # fmt: skip
        np.testing.assert_array_equal(row["solved"], [r.solve.solved for r in runs])
        expected = [r.solve.episode if r.solve.solved else r.budget for r in runs]
        np.testing.assert_array_equal(row["solve_episode"], expected)
        for i, r in enumerate(runs):
            np.testing.assert_allclose(row["cumulative"][i, : r.episodes], np.cumsum(r.regret))
            assert np.isnan(row["cumulative"][i, r.episodes :]).all()
    written = pd.read_csv(tmp_path / "b" / "summary.csv")
    assert list(written["solve_episodes"]) == list(result.summary["solve_episodes"])
    runs = runs_table([(written, 0)])
    assert len(runs) == 2 * len(agents) * len(TINY_SIZES)
    assert list(runs.columns) == list(runs_table([(per_seed.summary, 0)]).columns)


def test_device_is_boot_dqns_in_the_bsuite_families_only() -> None:
    from delight_gym.experiments.families import BSUITE_DEEP_SEA, BSUITE_DEEP_SEA_STOCHASTIC
    from delight_gym.experiments.families.deepsea_bsuite import (
        BATCHED_AGENTS,
        DEVICE,
        PER_SEED,
    )

    assert BATCHED_AGENTS == ("boot_dqn",)
    for family in (BSUITE_DEEP_SEA, BSUITE_DEEP_SEA_STOCHASTIC):
        takes = [a.name for a in family.agents if DEVICE in a.parameters]
        assert takes == ["boot_dqn"]
        assert family.restrict("boot_dqn", {"size": 10})["device"] == PER_SEED
        assert "device" not in family.restrict("boot_dqn_de", {"size": 10, "device": "cpu"})
    assert all(DEVICE not in a.parameters for a in DEEP_SEA_BSUITE.agents)


def test_bad_devices_are_named(capsys) -> None:
    import torch

    from delight_gym import cli
    from delight_gym.experiments.families import BSUITE_DEEP_SEA
    from delight_gym.experiments.families.deepsea_bsuite import check_batch_device

    assert check_batch_device("cpu", "device") == "cpu"
    assert check_batch_device("none", "device") == "none"
    with pytest.raises(TypeError, match="device must be a string"):
        check_batch_device(0, "device")
    bad = ["gpu"] if torch.cuda.is_available() else ["gpu", "cuda"]
    for value in bad:
        with pytest.raises(SystemExit) as exit_:
            cli.main(["run", "bsuite-deep-sea", "--device", value, "--out", "unused"])
        assert exit_.value.code == 2
        assert f"--device: device {value!r} is not usable" in capsys.readouterr().err
    with pytest.raises(ValueError, match="agent 'dqn' has no batched form"):
        BSUITE_DEEP_SEA.cell_function()(
            agent="dqn",
            horizon=5,
            seeds=1,
            seed=0,
            size=SIZE,
            device="cpu",
            **BSUITE_DEEP_SEA.fixed,
        )
    with pytest.raises(ValueError, match="seeds"):
        _batched(0, 0, 5)
    with pytest.raises(ValueError, match="seed"):
        _batched(1, -1, 5)


def test_the_documented_command_runs_batched(tmp_path, capsys) -> None:
    from delight_gym import cli

    out = tmp_path / "run"
    argv = ["run", "bsuite-deep-sea", "--agents", "boot_dqn", "--device", "cpu", "--size", "4"]
    argv += ["--episodes", "8", "--seeds", "2", "--batch-size", "2", "--out", str(out)]
    assert cli.main([*argv, "--jobs", "1", "--no-plot", "--no-progress"]) == 0
    assert "cells: 1 computed" in capsys.readouterr().out
    summary = pd.read_csv(out / "summary.csv")
    assert summary[["agent", "size", "seeds"]].values.tolist() == [["boot_dqn", 4, 2]]
