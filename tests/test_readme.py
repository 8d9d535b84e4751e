"""The README's Python examples run as written (the ones that are complete programs)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
# Blocks that show an API with placeholder inputs (``host_probs``, ``rng``) are not programs.
PROGRAMS = [b for b in BLOCKS if "host_probs" not in b]


def test_readme_has_runnable_examples():
    assert len(PROGRAMS) >= 2


@pytest.mark.parametrize("block", PROGRAMS, ids=[f"block{i}" for i in range(len(PROGRAMS))])
def test_readme_example_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(block, str(README), "exec"), namespace)
    # Each program ends by computing what it shows: regret (bandit quickstart) or an action.
    if "regret" in namespace:
        regret = np.asarray(namespace["regret"])
        assert regret.shape == (64,) and np.all(np.isfinite(regret)) and np.all(regret >= 0)
    else:
        assert int(namespace["action"]) in (0, 1)
