"""bsuite's DeepSea score: hand-made flag sequences and a transcription of bsuite's analysis.

The transcription below follows ``bsuite/experiments/deep_sea/analysis.py`` (``find_solution``
and ``score``) and ``bsuite/utils/wrappers.py`` (``_logarithmic_logging`` and the rows the
``Logging`` wrapper writes) line by line, in pandas 2 (``Series.append`` → ``pd.concat``,
``inplace=True`` → reassignment; the logic is unchanged), so our pandas-free implementation
is checked against bsuite's own rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delight_gym.experiments.scores import (
    BSUITE_EXPERIMENTS,
    DEEP_SEA_STOCHASTIC_FIRST_EPISODE,
    DEEP_SEA_STOCHASTIC_THRESHOLD,
    DEEP_SEA_THRESHOLD,
    DeepSeaSolve,
    SolveTracker,
    bsuite_logged_episodes,
    deep_sea_episode_budget,
    deep_sea_passes,
    deep_sea_score,
    is_logged_episode,
    solve_episode,
)

# --------------------------------------------------------------------------------------------
# Transcription of bsuite 0.3.6 (logging wrapper + deep_sea analysis)
# --------------------------------------------------------------------------------------------


def _bsuite_logarithmic_logging(episode, ratios=None):
    if ratios is None:
        ratios = [1.0, 1.2, 1.4, 1.7, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    exponent = np.floor(np.log10(np.maximum(1, episode)))
    special_vals = [10**exponent * ratio for ratio in ratios]
    return any(episode == val for val in special_vals)


def _bsuite_log_rows(bad_flags, size):
    """The rows bsuite's ``Logging`` wrapper writes for one run (``log_by_step=False``)."""
    rows, total_bad = [], 0
    for i, bad in enumerate(bad_flags):
        episode = i + 1
        total_bad += int(bad)
        if _bsuite_logarithmic_logging(episode):
            rows.append({"episode": episode, "total_bad_episodes": total_bad, "size": size})
    return rows


def _bsuite_find_solution(df_in, sweep_vars=None, merge=True, thresh=0.9, num_episodes=10000):
    df = df_in.copy()
    df = df[df.episode <= num_episodes]
    if sweep_vars is None:
        sweep_vars = ["size"]
    elif "size" not in sweep_vars:
        sweep_vars = [*list(sweep_vars), "size"]
    df["avg_bad_episodes"] = df.total_bad_episodes / df.episode
    plt_df = df[df.avg_bad_episodes < thresh].groupby(sweep_vars)["episode"]
    plt_df = plt_df.min().reset_index()
    solved = plt_df.set_index(sweep_vars).episode
    unsolved_ids = set(df.set_index(sweep_vars).index) - set(solved.index)
    unsolved = df.groupby(sweep_vars)["episode"].max()[list(unsolved_ids)]
    plt_df = pd.concat([solved, unsolved]).to_frame()  # bsuite: solved.append(unsolved)
    plt_df = plt_df.rename(columns={0: "episode"})
    plt_df.loc[solved.index, "solved"] = True
    plt_df.loc[unsolved.index, "solved"] = False
    plt_df = plt_df.reset_index()
    finish_df = (df.groupby(sweep_vars)["episode"].max() >= num_episodes).reset_index()
    finish_df = finish_df.rename(columns={"episode": "finished"})
    plt_df = plt_df.merge(finish_df, on=sweep_vars)
    plt_df.loc[plt_df.solved.astype(bool), "finished"] = True
    if merge:
        plt_df = plt_df.merge(df, on=[*sweep_vars, "episode"])
    return plt_df


def _bsuite_stochastic_find_solution(df_in, sweep_vars=None, num_episodes=10000):
    # bsuite/experiments/deep_sea_stochastic/analysis.py
    df = df_in.copy()
    df = df[df.episode >= 100]
    return _bsuite_find_solution(df, sweep_vars, thresh=0.8, num_episodes=num_episodes)


def _bsuite_score(df, forgiveness=100.0, find_solution=_bsuite_find_solution):
    plt_df = find_solution(df)
    beat_dither = plt_df.solved.astype(bool) & (plt_df.episode < 2 ** plt_df["size"] + forgiveness)
    return np.mean(beat_dither)


def _bsuite_run(bad_flags, size):
    """(solved, episode, finished) of one run by the transcription."""
    df = pd.DataFrame(_bsuite_log_rows(bad_flags, size))
    row = _bsuite_find_solution(df).iloc[0]
    return bool(row.solved), int(row.episode), bool(row.finished)


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


def test_logged_episodes_match_bsuite_float_rule():
    ours = bsuite_logged_episodes(25_000)
    ref = [e for e in range(1, 25_001) if _bsuite_logarithmic_logging(e)]
    np.testing.assert_array_equal(ours, ref)
    assert ours[:16].tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 17, 20, 25, 30]
    assert all(is_logged_episode(e) == (e in set(ref)) for e in range(0, 25_001))


def test_hand_made_sequences():
    # Never bad: solved at the first logged episode (fraction 0 < 0.9).
    assert solve_episode([False] * 3) == DeepSeaSolve(True, 1, True)
    # Always bad: unsolved, reported at the last logged episode (here 17 for 18 episodes).
    assert solve_episode([True] * 18) == DeepSeaSolve(False, 17, False)
    # 10 bad then good: at logged 12 the fraction is 10/12 = 0.833 < 0.9 → solved at 12.
    flags = [True] * 10 + [False] * 10
    assert solve_episode(flags) == DeepSeaSolve(True, 12, True)
    assert solve_episode(flags, logged="every") == DeepSeaSolve(True, 12, True)
    # With the stochastic experiment's 0.8: 10/12 is not < 0.8; at logged 14 it is 0.714 → 14.
    # Episode 13 (10/13 = 0.77) is not logged, so it does not count.
    assert solve_episode(flags, threshold=0.8) == DeepSeaSolve(True, 14, True)
    assert solve_episode(flags, threshold=0.8, logged="every") == DeepSeaSolve(True, 13, True)
    # Budget: an unsolved run that reaches num_episodes is "finished".
    assert solve_episode([True] * 12, num_episodes=10) == DeepSeaSolve(False, 10, True)
    # The solve must be strictly below the threshold: 9 bad of 10 is exactly 0.9.
    assert solve_episode([True] * 9 + [False], num_episodes=10) == DeepSeaSolve(False, 10, True)


def _stochastic(flags):
    rule = BSUITE_EXPERIMENTS["deep_sea_stochastic"]
    return solve_episode(flags, threshold=rule.threshold, first_episode=rule.first_episode)


def _bsuite_stochastic_run(flags, size):
    df = pd.DataFrame(_bsuite_log_rows(flags, size))
    row = _bsuite_stochastic_find_solution(df).iloc[0]
    return DeepSeaSolve(bool(row.solved), int(row.episode), bool(row.finished))


def test_stochastic_edge_cases():
    # Never bad: episodes before 100 do not count, so solved exactly at episode 100.
    flags = [False] * 150
    assert _stochastic(flags) == _bsuite_stochastic_run(flags, 10) == DeepSeaSolve(True, 100, True)
    # Never solved: reported at the last logged episode (≥ 100), not finished.
    flags = [True] * 450
    assert (
        _stochastic(flags) == _bsuite_stochastic_run(flags, 10) == DeepSeaSolve(False, 400, False)
    )
    # Solved after 2**N + 100 (N = 5: 132): at logged 170 the fraction is 140/170 = 0.82,
    # at 200 it is 0.70, so solved at 200, a solve that does not pass.
    flags = [True] * 140 + [False] * 100
    solve = _stochastic(flags)
    assert solve == _bsuite_stochastic_run(flags, 5) == DeepSeaSolve(True, 200, True)
    assert not deep_sea_passes(5, solve)
    # The deterministic rule would have counted episode 1 (0 bad of 1) as solved.
    assert solve_episode([False] + [True] * 200) == DeepSeaSolve(True, 1, True)
    assert _stochastic([False] + [True] * 200).solved is False


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=100, max_size=500), st.integers(2, 12))
def test_stochastic_matches_bsuite_transcription(flags, size):
    assert _stochastic(flags) == _bsuite_stochastic_run(flags, size)


def test_constants_are_installed_bsuites():
    # Read from bsuite itself where it is installed, so the constants cannot drift.
    import inspect

    deep_sea = pytest.importorskip("bsuite.experiments.deep_sea.analysis")
    ds_sweep = pytest.importorskip("bsuite.experiments.deep_sea.sweep")
    st_sweep = pytest.importorskip("bsuite.experiments.deep_sea_stochastic.sweep")
    st_analysis = pytest.importorskip("bsuite.experiments.deep_sea_stochastic.analysis")
    assert inspect.signature(deep_sea.find_solution).parameters["thresh"].default == (
        DEEP_SEA_THRESHOLD
    )
    source = inspect.getsource(st_analysis.find_solution)
    assert f"thresh={DEEP_SEA_STOCHASTIC_THRESHOLD}" in source
    assert f"df.episode >= {DEEP_SEA_STOCHASTIC_FIRST_EPISODE}" in source
    for name, sweep in (("deep_sea", ds_sweep), ("deep_sea_stochastic", st_sweep)):
        rule = BSUITE_EXPERIMENTS[name]
        assert tuple(s["size"] for s in sweep.SETTINGS) == rule.sizes
        assert {s["mapping_seed"] for s in sweep.SETTINGS} == {rule.mapping_seed}
        assert sweep.NUM_EPISODES == rule.num_episodes


def test_passes_and_score():
    s = DeepSeaSolve(True, 120, True)
    assert deep_sea_passes(5, s)  # 120 < 32 + 100
    assert not deep_sea_passes(4, s)  # 120 ≥ 16 + 100
    assert not deep_sea_passes(20, DeepSeaSolve(False, 10_000, True))
    assert deep_sea_score({5: s, 4: s}) == 0.5
    assert deep_sea_score([(5, s), (5, s), (4, s)]) == pytest.approx(2 / 3)
    assert deep_sea_episode_budget(10) == 1124
    assert deep_sea_episode_budget(20) == 10_000


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.booleans(), min_size=1, max_size=400),
    st.integers(min_value=2, max_value=12),
    st.sampled_from([0.8, 0.9, 0.5]),
)
def test_matches_bsuite_transcription(flags, size, thresh):
    df = pd.DataFrame(_bsuite_log_rows(flags, size))
    row = _bsuite_find_solution(df, thresh=thresh, num_episodes=250).iloc[0]
    ours = solve_episode(flags, threshold=thresh, num_episodes=250)
    assert (ours.solved, ours.episode, ours.finished) == (
        bool(row.solved),
        int(row.episode),
        bool(row.finished),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(3, 9), st.integers(0, 2**32 - 1)), min_size=1, max_size=6))
def test_score_matches_bsuite_transcription(runs):
    # Several sizes, each one run with a random "learning" bad-flag sequence.
    rows, solves = [], []
    for size, seed in {s: seed for s, seed in runs}.items():
        rng = np.random.default_rng(seed)
        p_bad = np.clip(1.0 - np.arange(600) / rng.integers(50, 2000), 0.0, 1.0)
        flags = rng.random(600) < p_bad
        rows += _bsuite_log_rows(flags, size)
        solves.append((size, solve_episode(flags)))
    assert deep_sea_score(solves) == pytest.approx(_bsuite_score(pd.DataFrame(rows)))


def test_tracker_stops_early_with_the_same_answer():
    rng = np.random.default_rng(0)
    flags = rng.random(3000) < np.linspace(1.0, 0.0, 3000)
    tracker = SolveTracker()
    fed = 0
    for flag in flags:
        fed += 1
        if tracker.update(bool(flag)):
            break
    assert tracker.result() == solve_episode(flags)
    assert tracker.result().episode == fed  # stopped exactly at the solve episode
    assert _bsuite_run(flags, 10)[:2] == (True, fed)


def test_bad_input():
    with pytest.raises(ValueError, match="bad_flags"):
        solve_episode([])
    with pytest.raises(TypeError, match="bad_flags"):
        solve_episode([0, 1])
    with pytest.raises(ValueError, match="logged"):
        SolveTracker(logged="sometimes")
    with pytest.raises(ValueError, match="threshold"):
        SolveTracker(threshold=-0.1)
    with pytest.raises(ValueError, match="no logged episode"):
        SolveTracker().result()
    with pytest.raises(ValueError, match="solves"):
        deep_sea_score({})
    with pytest.raises(ValueError, match="first_episode"):
        SolveTracker(first_episode=0)
