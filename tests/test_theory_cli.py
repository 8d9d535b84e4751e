"""``delight-gym reproduce theory``: the claim table, the files, and the exit status."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from matplotlib.image import imread

from delight_gym import cli, plotting
from delight_gym.theory import report
from delight_gym.theory.claims import QUICK_HORIZONS, RATE_AGENT_NAMES, ClaimCheck
from delight_gym.theory.reservoir import RATE_AGENTS, simulate_reservoir


def test_reproduce_theory_quick_passes_and_writes_table_and_figure(tmp_path, capsys, monkeypatch):
    out = tmp_path / "theory"
    saved = []

    def capture(fig, stem):
        saved.append(fig)
        return plotting.save_figure(fig, stem)

    monkeypatch.setattr(report, "save_figure", capture)
    assert cli.main(["reproduce", "theory", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    with (out / "claims.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    # One PASS line per claim, each followed by its measured numbers.
    assert len(rows) >= 15 and all(r["verdict"] == "PASS" for r in rows)
    verdict_lines = [line for line in printed.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(verdict_lines) == len(rows)
    assert f"{len(rows)}/{len(rows)} claims PASS" in printed
    for claim in ("Pandora", "knowledge gradient", "v_off", "reservoir regret slope, α=2"):
        assert any(claim in r["claim"] for r in rows), claim
    with (out / "reservoir.csv").open() as fh:
        rates = list(csv.DictReader(fh))
    assert {r["alpha"] for r in rates} == {"1.0", "2.0"}
    assert {r["agent"] for r in rates} == set(RATE_AGENT_NAMES)
    assert sorted({int(r["horizon"]) for r in rates}) == sorted(QUICK_HORIZONS)
    # The table's numbers are the simulation's: recompute two of them directly (agent i at
    # horizon T uses the seeds (0, i, T, ·), 200 runs in the quick version).
    for i, agent in enumerate(RATE_AGENT_NAMES[:2]):
        t = min(QUICK_HORIZONS)
        cls, kwargs = RATE_AGENTS[agent]
        runs = simulate_reservoir(cls(200, 2.0, t, seed=[0, i, t, 0], **kwargs), seed=[0, i, t, 1])
        row = next(
            r for r in rates if (r["agent"], r["alpha"], int(r["horizon"])) == (agent, "2.0", t)
        )
        assert float(row["regret_mean"]) == pytest.approx(runs.mean(), rel=1e-12)
        assert float(row["regret_se"]) == pytest.approx(runs.std(ddof=1) / np.sqrt(200), rel=1e-12)
    # The figure draws exactly the table: one panel per α, one line per agent with its mean at
    # every horizon and its fitted slope in the legend, and the α/(α+1) reference line.
    (fig,) = saved
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == [
        "reservoir Beta(1, 1): α = 1",
        "reservoir Beta(1, 2): α = 2",
    ]
    for ax, alpha in zip(axes, ("1.0", "2.0"), strict=True):
        assert ax.get_xscale() == ax.get_yscale() == "log"
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        for container in ax.containers:
            label = container.get_label()
            assert label in legend
            agent = label.split(" (slope")[0]
            mine = [r for r in rates if r["agent"] == agent and r["alpha"] == alpha]
            line = container.lines[0]
            np.testing.assert_allclose(line.get_xdata(), [float(r["horizon"]) for r in mine])
            np.testing.assert_allclose(line.get_ydata(), [float(r["regret_mean"]) for r in mine])
            assert f"slope {float(mine[0]['slope_top']):.2f}" in label
        assert len(ax.containers) == len(RATE_AGENT_NAMES)
        predicted = float(alpha) / (float(alpha) + 1)
        assert f"slope α/(α+1) = {predicted:.2f}" in legend
        assert len(legend) == len(RATE_AGENT_NAMES) + 1
    # Both files are the whole figure: 130 dpi PNG of 2 × 4.6 by 3.8 inches, and a PDF.
    height, width = imread(out / "reservoir_rates.png").shape[:2]
    assert (width, height) == (round(2 * 4.6 * 130), round(3.8 * 130))
    assert (out / "reservoir_rates.pdf").read_bytes().startswith(b"%PDF")


def test_a_failing_claim_gives_a_nonzero_exit_status(tmp_path, monkeypatch, capsys):
    def fake_run_checks(quick: bool = False, seed: int = 0):
        return [
            ClaimCheck("a claim that holds", "here", True, "x = 1"),
            ClaimCheck("a claim that does not", "there", False, "y = 2"),
        ], []

    monkeypatch.setattr(report, "run_checks", fake_run_checks)
    code = cli.main(["reproduce", "theory", "--quick", "--no-plot", "--out", str(tmp_path)])
    assert code == 1
    printed = capsys.readouterr().out
    assert "FAIL  a claim that does not  [there]" in printed and "1/2 claims PASS" in printed


def test_theory_rejects_options_it_does_not_use(tmp_path):
    with pytest.raises(SystemExit):
        cli.main(["reproduce", "theory", "--seeds", "3", "--out", str(tmp_path)])
