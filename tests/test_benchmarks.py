"""The benchmark scripts run and their printed figures hold together (tiny sizes, on the CPU)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``benchmarks/<script>`` with ``args`` on one intra-op thread (on two busy cores
    torch's thread pool spins, 100x slower here) and return the finished process."""
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def test_check_cuda_script_self_check_passes():
    out = _run("check_cuda.py", "--device", "cpu", "--quick", "--repeats", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    # Every check of the three torch posteriors ran and passed (4 linear, 1 tabular, and 9 per
    # ensemble input: heads, mean, EI at init, after 1 and after 200 TD steps).
    assert "ALL PASS" in out.stdout and "FAIL" not in out.stdout
    # linear 4, tabular 1, two ensembles 9 each, LinFull 2, NeuralLinear and the bandit
    # ensemble 4 each (before and after the first retraining), SeedBatchedBootDQN 2
    assert out.stdout.count("  PASS  ") == 4 + 1 + 2 * 9 + 2 + 2 * 4 + 2
    for name in ("LinearGaussianPosterior", "TabularMDPPosterior", "EnsembleQPosterior"):
        assert name in out.stdout


def test_bench_contextual_smoke_times_both_and_rows_agree():
    out = _run("bench_contextual.py", "--smoke")
    assert out.returncode == 0, out.stdout + out.stderr
    # The per-seed loop plays the batched agent's actions (its rows are those agents).
    assert "same actions: True" in out.stdout
    assert "ratio" in out.stdout and "load average" in out.stdout


def test_wheel_anchor_row_is_the_agent_over_uniform(tmp_path):
    """The script's row is the mean cumulative regret of the same seeds that ``run_wheel``
    plays directly, divided by uniform's (the showdown's metric)."""
    from delight_gym.experiments.contextual import run_wheel

    out_csv = tmp_path / "anchor.csv"
    args = ["--agent", "thompson-linfull", "--delta", "0.5,0.9", "--horizon", "40"]
    out = _run("wheel_anchor.py", *args, "--seeds", "3", "--seed", "7", "--out", str(out_csv))
    assert out.returncode == 0, out.stdout + out.stderr
    import pandas as pd

    rows = pd.read_csv(out_csv)
    assert list(rows["delta"]) == [0.5, 0.9]
    for _, row in rows.iterrows():
        agent = run_wheel("thompson-linfull", row["delta"], 40, 3, seed=7).regret.sum(axis=1)
        uniform = run_wheel("uniform", row["delta"], 40, 3, seed=7).regret.sum(axis=1)
        assert row["regret_mean"] == round(float(agent.mean()), 1)
        assert abs(row["percent_of_uniform"] - 100 * agent.mean() / uniform.mean()) < 1e-3


def test_wheel_anchor_passes_neural_linear_settings(tmp_path):
    """The NeuralLinear settings on the command line reach the posterior: the row equals
    ``run_wheel`` with the same keywords (and differs from the defaults)."""
    import pandas as pd
    import torch

    from delight_gym.experiments.contextual import run_wheel

    out_csv = tmp_path / "anchor.csv"
    settings = ["--hidden-sizes", "8,8", "--train-every", "10", "--train-steps", "3"]
    settings += ["--a0", "3", "--b0", "3", "--network-dtype", "float32"]
    args = ["--delta", "0.5", "--horizon", "40", "--seeds", "2", "--out", str(out_csv)]
    out = _run("wheel_anchor.py", *args, *settings)
    assert out.returncode == 0, out.stdout + out.stderr
    row = pd.read_csv(out_csv).iloc[0]
    assert (row["hidden_sizes"], row["train_every"], row["a0"]) == ("8,8", 10, 3.0)
    kwargs = dict(hidden_sizes=(8, 8), train_every=10, train_steps=3, a0=3.0, b0=3.0)
    agent = run_wheel(
        "thompson-neurallinear", 0.5, 40, 2, network_dtype=torch.float32, **kwargs
    ).regret.sum(axis=1)
    assert row["regret_mean"] == round(float(agent.mean()), 1)
    default = run_wheel("thompson-neurallinear", 0.5, 40, 2).regret.sum(axis=1)
    assert row["regret_mean"] != round(float(default.mean()), 1)


def test_training_benchmark_smoke_times_both_paths():
    out = _run("bench_neural_linear_training.py", "--smoke")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "same actions: True" in out.stdout
    assert "ratio" in out.stdout and "load average" in out.stdout


def test_bench_candidates_smoke_scores_the_same_entries_at_every_k():
    out = _run("bench_candidates.py", "--smoke")
    assert out.returncode == 0, out.stdout + out.stderr
    # The posterior and the host are asked about the candidates only, whatever K.
    assert "at every K: True" in out.stdout and "candidates per row: 64" in out.stdout
    assert "ratio" in out.stdout and "load average" in out.stdout


def test_bench_step_cost_quick_prints_every_ratio_with_the_load():
    out = _run("bench_step_cost.py", "--quick")
    assert out.returncode == 0, out.stdout + out.stderr
    for pair in ("DelightSAC/SAC", "DelightTD3/TD3"):
        assert out.stdout.count(f"ratio {pair}") == 2  # clock 0 and 10 000
        assert out.stdout.count(f"run average {pair}") == 1
    assert out.stdout.count("ratio BootstrappedDQN/DQN on DeepSea N=20") == 1
    ratios = [line for line in out.stdout.splitlines() if line.startswith("ratio")]
    assert all("load average" in line for line in ratios)
