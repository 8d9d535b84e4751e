"""Unit tests of the claim checks' own references (the checks run in test_theory_cli.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from delight_gym.posteriors.beta import beta_expected_improvement
from delight_gym.theory.claims import ClaimCheck, format_checks, knowledge_gradient


def test_knowledge_gradient_by_hand():
    # Arms Beta(2, 1) (mean 2/3, the host) and Beta(1, 1) (mean 1/2). Pulling arm 1: a success
    # (prob 1/2) makes its mean 2/3 = v (gain 0), a failure 1/3: KG = 0. Pulling arm 0: a
    # success raises v to 3/4 (prob 2/3, gain 1/12), a failure drops it to 1/2 but arm 1
    # keeps the max at 1/2 < v: KG = (2/3)(1/12) = 1/18.
    kg = knowledge_gradient(np.array([2.0, 1.0]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(kg, [1 / 18, 0.0], atol=1e-15)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=2, max_size=6),
)
def test_knowledge_gradient_never_exceeds_expected_improvement(counts):
    s = np.array([c[0] for c in counts], dtype=float)
    f = np.array([c[1] for c in counts], dtype=float)
    a, b = 1 + s, 1 + f
    kg = knowledge_gradient(a, b)
    ei = beta_expected_improvement(a, b, (a / (a + b)).max())
    assert np.all(kg <= ei + 1e-13)


def test_format_checks_one_verdict_line_per_claim():
    text = format_checks([ClaimCheck("c1", "w1", True, "m1"), ClaimCheck("c2", "w2", False, "m2")])
    lines = text.splitlines()
    assert lines[0] == "PASS  c1  [w1]" and lines[2] == "FAIL  c2  [w2]"
    assert lines[1].strip() == "m1"
