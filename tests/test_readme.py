"""The README works as written: its two commands, and its Python examples checked for content.

Every ``python`` block runs (``<!-- fragment -->`` before a block would exempt it; the README
has none), and what each program computes is checked against an independent reference: the
quickstart's regret is a pseudo-regret, the rule's acting distribution is recomputed by hand,
and the wrapper's decision is recomputed from the host's probabilities and the posterior's
expected improvement with the paper's formulas written out here, not with the package's rule.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.test_docs import ROOT, code_blocks, python_programs, run_program

README = ROOT / "README.md"
PROGRAMS = python_programs([README])


def test_readme_opens_with_the_two_commands():
    blocks = code_blocks(README)
    first, second = blocks[0], blocks[1]
    assert first.lang == second.lang == "bash"
    assert "delight-gym reproduce all --quick" in first.code
    assert first.code.startswith("pip install ")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert second.code.strip() == ci.strip(), "the README's test command must be .ci/run's"


def test_readme_references_stay_inside_the_repository():
    text = README.read_text(encoding="utf-8")
    assert "shared/" not in text and "DESIGN" not in text
    for target in ("docs/index.md", "docs/sb3.md", "LICENSE", "CITATION.cff", "CHANGELOG.md"):
        assert f"({target})" in text
        assert (ROOT / target).exists(), target


def test_readme_has_the_three_programs():
    assert len(PROGRAMS) == 3


def _program(marker: str) -> list:
    (program,) = [p for p in PROGRAMS if any(marker in b.code for b in p)]
    return program


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


def test_quickstart_regret_is_a_pseudo_regret(in_tmp):
    ns = run_program(_program("DelightAgent"))
    regret = np.asarray(ns["regret"])
    assert regret.shape == (64,)
    assert np.all(np.isfinite(regret)) and np.all(regret >= 0.0)
    # Pseudo-regret per pull is at most the best mean, so at most 1000 over T = 1000 pulls,
    # and a learning agent at K = 100 is far below uniform play (about T / 2 = 500).
    assert np.all(regret <= 1000.0)
    assert regret.mean() < 250.0


def _acting_distribution(host, ei, epsilon, gate_price=0.1, cap=10.0):
    """The paper's Algorithm 1, written out for one decision (rows of ``host``)."""
    host = np.atleast_2d(host)
    ei = np.atleast_2d(ei)
    neg_log = -np.log(host)
    surprisal = np.minimum(np.maximum(neg_log - neg_log.min(axis=1, keepdims=True), 0.0), cap)
    delight = ei * surprisal
    gate = (delight >= gate_price) & (delight > 0)
    override = np.where(gate, delight, 0.0)
    totals = override.sum(axis=1, keepdims=True)
    q = np.where(totals > 0, override / np.where(totals > 0, totals, 1.0), host)
    return (1 - epsilon) * host + epsilon * q, gate


def test_rule_example_gives_the_hand_computed_distribution(in_tmp):
    ns = run_program(_program("delight_rule("))
    d = ns["d"]
    expected, gate = _acting_distribution(ns["host_probs"], ns["expected_improvement"], 0.5)
    np.testing.assert_allclose(d.probs, expected, rtol=1e-12)
    np.testing.assert_allclose(d.probs, [[0.45, 0.025, 0.525]], rtol=1e-12)
    np.testing.assert_array_equal(d.gate, gate)
    actions, explored = ns["actions"], ns["explored"]
    assert actions.shape == (1,) and explored.shape == (1,)
    assert 0 <= int(actions[0]) < 3
    if explored[0]:  # an exploring draw comes from q: here all of q's mass is on action 2
        assert int(actions[0]) == 2


def test_wrapper_example_acts_by_the_rule(in_tmp):
    ns = run_program(_program("DelightExplorationWrapper"))
    agent, info, action = ns["agent"], ns["agent"].last_info, int(np.asarray(ns["action"]))
    host = np.asarray(info["host_probs"])
    np.testing.assert_allclose(host, [0.95, 0.05])  # the example's host, as the wrapper saw it
    ei = np.asarray(info["expected_improvement"])
    assert np.all(ei >= 0.0) and np.all(np.isfinite(ei))
    # ε after three observed transitions: M / (M + t) with M = 100.
    assert info["epsilon"] == pytest.approx(100 / 103)
    expected, gate = _acting_distribution(host, ei, info["epsilon"])
    np.testing.assert_allclose(info["acting_probs"], expected[0], rtol=1e-9, atol=1e-12)
    assert int(info["gate_size"]) == int(gate.sum())
    # The executed action is one the acting distribution allows; an override is in the gate.
    assert expected[0, action] > 0
    if info["overridden"]:
        assert gate[0, action]
    # deterministic=True is the host's own choice (action 0), whatever the posterior says.
    deterministic, _ = agent.predict(ns["obs"], deterministic=True)
    assert int(np.asarray(deterministic)) == 0
