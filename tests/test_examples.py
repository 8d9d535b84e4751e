"""Every script in ``examples/`` runs in its ``--smoke`` mode and prints what it promises.

The four scripts are started together (they are independent processes) and each one's table is
parsed: every agent row is present with numbers in range, not just a zero exit code.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = (
    "bandit_quickstart.py",
    "deep_sea_agents.py",
    "sb3_dqn_deep_sea.py",
    "ppo_wrapped_eval.py",
)


@pytest.fixture(scope="module")
def outputs() -> dict[str, str]:
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(EXAMPLES / name), "--smoke"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in SCRIPTS
    }
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{name} failed:\n{stderr}"
        out[name] = stdout
    return out


def test_every_example_is_covered() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(SCRIPTS)


def test_bandit_quickstart(outputs: dict[str, str]) -> None:
    m = re.search(
        r"T=100: pseudo-regret ([\d.]+), (\d+) overrides", outputs["bandit_quickstart.py"]
    )
    assert m is not None
    # Per-round pseudo-regret is below 1, and DE overrides at least once while ε is large.
    assert 0.0 <= float(m.group(1)) < 100.0 and int(m.group(2)) >= 1


def _rows(text: str, agents: tuple[str, ...], seeds: int) -> dict[str, tuple[int, float]]:
    rows = {}
    for agent in agents:
        m = re.search(
            rf"^{re.escape(agent)}\s+(\d+)/{seeds}\s+(?:\d+|> \d+)\s+(-?[\d.]+) ± [\d.]+",
            text,
            re.MULTILINE,
        )
        assert m is not None, f"no row for {agent} in:\n{text}"
        rows[agent] = (int(m.group(1)), float(m.group(2)))
    return rows


@pytest.mark.parametrize(
    ("script", "agents"),
    [
        ("deep_sea_agents.py", ("psrl", "delight", "egreedy")),
        ("sb3_dqn_deep_sea.py", ("dqn-egreedy", "delight-dqn")),
    ],
)
def test_deep_sea_tables(outputs: dict[str, str], script: str, agents: tuple[str, ...]) -> None:
    rows = _rows(outputs[script], agents, seeds=2)
    for found, regret in rows.values():
        assert 0 <= found <= 2
        # Smoke: size 4, 20 or 30 episodes; each episode's regret lies in [0, 0.99 + 0.01].
        assert -1e-9 <= regret <= 30.0


def test_ppo_wrapped_eval(outputs: dict[str, str]) -> None:
    text = outputs["ppo_wrapped_eval.py"]
    for policy in ("ppo-deterministic", "ppo-sampled", "ppo+delight"):
        m = re.search(rf"^{re.escape(policy)}\s+(\d+)\s+(-?[\d.]+)$", text, re.MULTILINE)
        assert m is not None, f"no row for {policy} in:\n{text}"
        assert 0 <= int(m.group(1)) <= 20
    m = re.search(r"DE overrode (\d+) of (\d+) evaluation steps", text)
    assert m is not None and int(m.group(2)) == 20 * 4 and int(m.group(1)) <= 80
