"""The command line's bad input, in a real subprocess: argparse's one-line error naming the
option (exit status 2), never a traceback, before anything runs (issue 47)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CASES = [
    # (arguments, the option the error must name)
    (["run", "mountain-car-continuous", "--steps", "0"], "--steps"),
    (["run", "pendulum", "--eval-episodes", "0"], "--eval-episodes"),
    (["run", "mountain-car", "--seed", "-1"], "--seed"),
    (["run", "pendulum", "--seeds", "0"], "--seeds"),
    (["run", "mountain-car", "--eval-every", "0"], "--eval-every"),
    (["run", "mountain-car-continuous", "--steps", "100000000000000"], "--horizon"),
    (["run", "pendulum", "--seeds", "1000000000"], "--seeds"),
    (["run", "mountain-car", "--eval-episodes", "10000000000"], "--eval-episodes"),
    (["run", "pendulum", "--eval-every", "1", "--steps", "1000000"], "--eval-episodes"),
    (["run", "pendulum", "--seed", "4294967296"], "--seed"),
    (["run", "mountain-car", "--seed", "4294967290", "--seeds", "10"], "--seed"),
    (["run", "continuum", "--dim", "8886114"], "--dim"),
    (["run", "continuum", "--dim", "8886114", "--seeds", "1"], "--dim"),
    (["run", "continuum", "--dim", "0"], "--dim"),
    (["run", "bernoulli", "--horizon", "0"], "--horizon"),
    (["run", "deepsea", "--episodes", "0"], "--episodes"),
    (["reproduce", "bernoulli-arms", "--horizon", "0"], "--horizon"),
    (["reproduce", "bernoulli-arms", "--seeds", "0"], "--seeds"),
    (["reproduce", "bernoulli-arms", "--seed", "-1"], "--seed"),
    (["reproduce", "bernoulli-arms", "--horizon", "100000000000"], "--horizon"),
    (["reproduce", "deepsea-regret", "--quick", "--horizon", "100000000000"], "--horizon"),
]


@pytest.mark.parametrize(("argv", "option"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_option_ends_in_argparse_error_naming_it(tmp_path, argv, option) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "delight_gym.cli", *argv, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert "error:" in last and option in last, out.stderr
    assert not (tmp_path / "o" / "summary.csv").exists()  # refused before anything ran
