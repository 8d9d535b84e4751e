"""``delight-gym reproduce theory``: the claim table, the files, and the exit status."""

from __future__ import annotations

import csv

import pytest

from delight_gym import cli
from delight_gym.theory import report
from delight_gym.theory.checks import ClaimCheck


def test_reproduce_theory_quick_passes_and_writes_table_and_figure(tmp_path, capsys):
    out = tmp_path / "theory"
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
    assert {r["agent"] for r in rates} >= {"reservation", "delight ε=1"}
    assert (out / "reservoir_rates.png").stat().st_size > 0
    assert (out / "reservoir_rates.pdf").stat().st_size > 0


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
