"""The paper's JAX code (``benchmarks/paper_jax.py``) and the benchmark that times us against it.

Skipped without JAX (``pip install -e ".[paper]"``). References: the acting law of the paper's
``select_delight`` against EI computed by numerical integration of the Beta posterior (scipy's
``quad``, not the ``betainc`` closed form the code uses) and the gate worked out from it;
Thompson sampling's choice probability for ``Beta(2, 1)`` vs ``Beta(1, 2)`` (``5/6``, by hand);
the first round's expected regret (closed form); and our agent's regret in distribution.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

jax = pytest.importorskip("jax")

from delight_gym.experiments.bandit import run_bernoulli  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("paper_jax", ROOT / "benchmarks" / "paper_jax.py")
assert _spec is not None and _spec.loader is not None
paper_jax = importlib.util.module_from_spec(_spec)
sys.modules["paper_jax"] = paper_jax  # dataclasses look their module up there
_spec.loader.exec_module(paper_jax)

DRAWS = 4000


def _actions(select, alphas, betas, t, config, draws=DRAWS):
    """``draws`` independent calls of ``select`` (one key each), as a numpy array of arms."""
    alphas = jax.numpy.asarray(alphas, jax.numpy.float32)
    betas = jax.numpy.asarray(betas, jax.numpy.float32)
    means = alphas / (alphas + betas)
    keys = jax.random.split(jax.random.key(0), draws)
    fn = jax.jit(jax.vmap(lambda k: select(means, alphas, betas, k, t, config)))
    return np.asarray(fn(keys))


def _ei_by_quadrature(a: float, b: float, v: float) -> float:
    """``E[(X − v)^+]`` for ``X ~ Beta(a, b)`` by numerical integration."""
    return integrate.quad(lambda x: (x - v) * stats.beta.pdf(x, a, b), v, 1.0)[0]


def _assert_frequencies(actions, probs, num_arms):
    counts = np.bincount(actions, minlength=num_arms)
    expected = DRAWS * np.asarray(probs)
    sd = np.sqrt(DRAWS * np.asarray(probs) * (1 - np.asarray(probs))) + 1e-9
    assert np.all(np.abs(counts - expected) <= 5 * sd + 0.5), (counts, expected)


def test_select_delight_acts_by_the_gate_on_quadrature_ei():
    # Arm 0 is greedy (mean 0.75); arms 1-2 pass the gate, arm 3 (a well-known bad arm) not.
    alphas, betas = [30.0, 1.0, 2.0, 1.0], [10.0, 1.0, 2.0, 40.0]
    config = paper_jax.PaperConfig(num_arms=4)
    v = alphas[0] / (alphas[0] + betas[0])
    delight = np.array(
        [0.0]
        + [10.0 * _ei_by_quadrature(a, b, v) for a, b in zip(alphas[1:], betas[1:], strict=True)]
    )
    gated = np.where(delight >= 0.1, delight, 0.0)
    assert gated[1] > 0 and gated[2] > 0 and gated[3] == 0  # the case is what it claims
    q = gated / gated.sum()
    # t = 0: ε = 1, every call overrides; t = 300: ε = 100 / 400, else the host's arm 0.
    _assert_frequencies(_actions(paper_jax.select_delight, alphas, betas, 0, config), q, 4)
    eps = 100.0 / 400.0
    mixed = eps * q + (1 - eps) * np.eye(4)[0]
    _assert_frequencies(_actions(paper_jax.select_delight, alphas, betas, 300, config), mixed, 4)


def test_select_delight_empty_gate_plays_the_host():
    # Every challenger's EI·L is far below λ: the override falls back to the host.
    alphas, betas = [90.0, 10.0, 5.0], [10.0, 90.0, 95.0]
    config = paper_jax.PaperConfig(num_arms=3)
    actions = _actions(paper_jax.select_delight, alphas, betas, 0, config, draws=500)
    assert np.all(actions == 0)


def test_select_thompson_probability_by_hand():
    # P(X > Y) for X ~ Beta(2, 1), Y ~ Beta(1, 2) is ∫∫_{x>y} 2x · 2(1 − y) = 5/6.
    config = paper_jax.PaperConfig(num_arms=2)
    actions = _actions(paper_jax.select_thompson, [2.0, 1.0], [1.0, 2.0], 0, config)
    _assert_frequencies(actions, [5 / 6, 1 / 6], 2)


def test_paper_run_regret_first_round_and_against_ours():
    k, horizon, seeds = 10, 100, 300
    run, compile_s = paper_jax.compile_run("delight", k, horizon, seeds)
    assert compile_s > 0
    regret = run()
    assert regret.shape == (seeds, horizon) and np.all(regret >= 0)
    # Round 0: ε_0 = 1 and every untried arm is in the gate, so the arm is uniform over the
    # K − 1 arms other than the host's arm 0: E[regret] = E[max of K U(0,1)] − 1/2.
    first = regret[:, 0]
    assert abs(first.mean() - (k / (k + 1) - 0.5)) < 5 * first.std(ddof=1) / np.sqrt(seeds)
    # Same algorithm as ours in distribution (different instances and random numbers).
    paper_final = regret.sum(axis=1)
    ours_final = run_bernoulli("delight", k, horizon, seeds).cumulative[:, -1]
    se = np.hypot(paper_final.std(ddof=1), ours_final.std(ddof=1)) / np.sqrt(seeds)
    assert abs(paper_final.mean() - ours_final.mean()) < 4 * se


def test_compile_run_rejects_unknown_agent():
    with pytest.raises(ValueError, match="agent"):
        paper_jax.compile_run("ucb", 3, 5, 2)


def test_benchmark_script_prints_a_row_per_cell():
    script = str(ROOT / "benchmarks" / "bench_vs_paper.py")
    args = ["--arms", "3", "--agents", "delight,thompson", "--seeds", "4", "--horizon", "10"]
    out = subprocess.run(
        [sys.executable, script, *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert "load average" in lines[0] and lines[-1].startswith("done")
    rows = [line.split() for line in lines[2:-1]]
    assert [row[:2] for row in rows] == [["delight", "3"], ["thompson", "3"]]
    for row in rows:  # compile s; paper s, cpu s; ours s, cpu s; ratio; 2 × "mean ± se"; z; load
        assert len(row) == 16 and row[7].endswith("x") and row[9] == row[12] == "±"
        assert float(row[7].rstrip("x")) > 0 and np.isfinite(float(row[14]))
        assert float(row[15]) >= 0
        assert all(float(x) >= 0 for x in row[2:7])
    assert "delight K=3" in lines[-1] and "thompson K=3" in lines[-1]
