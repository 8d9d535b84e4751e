"""Committed overrides, the episode clock and the scale-free gate: limits and properties."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delight_gym.de.commitment import (
    DEFAULT_DURATIONS,
    Commitment,
    check_durations,
    held_in_gate,
    option_rule,
    option_surprisal,
)
from delight_gym.de.rule import (
    delight_rule,
    draw_acting_uniforms,
    sample_acting_on_explore_rows,
    surprisal,
)
from delight_gym.de.scale import (
    episode_epsilon,
    range_value_scale,
    scale_free_gate_price,
    spread_value_scale,
    update_value_range,
)

LAM, CAP = 0.1, 10.0


def _random_inputs(seed: int, n: int, a: int, greedy: bool = False):
    rng = np.random.default_rng(seed)
    if greedy:
        host = np.eye(a)[rng.integers(0, a, size=n)]
    else:
        logits = rng.normal(scale=rng.uniform(0.1, 8.0), size=(n, a))
        host = np.exp(logits - logits.max(axis=1, keepdims=True))
        host[rng.random((n, a)) < 0.1] = 0.0  # some actions the host never takes
        host[np.arange(n), logits.argmax(axis=1)] = 1.0
        host /= host.sum(axis=1, keepdims=True)
    ei = rng.exponential(0.05, size=(n, a)) * (rng.random((n, a)) < 0.7)
    eps = rng.random(n)
    return host, ei, eps


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 6),
    a=st.integers(1, 7),
    lam=st.sampled_from([0.0, 0.01, 0.1, 1.0, np.inf]),
    greedy=st.booleans(),
)
def test_duration_one_is_exactly_the_rule(seed, n, a, lam, greedy):
    host, ei, eps = _random_inputs(seed, n, a, greedy)
    od = option_rule(host, ei, eps, durations=(1,), gate_price=lam, surprisal_cap=CAP)
    d = delight_rule(host, ei, eps, gate_price=lam, surprisal_cap=CAP)
    np.testing.assert_array_equal(od.probs, d.probs)
    np.testing.assert_array_equal(od.override[..., 0], d.override)
    np.testing.assert_array_equal(od.delight[..., 0], d.delight)
    np.testing.assert_array_equal(od.surprisal[..., 0], d.surprisal)
    np.testing.assert_array_equal(od.gate[..., 0], d.gate)
    np.testing.assert_array_equal(od.gate_empty, d.gate_empty)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 5), a=st.integers(1, 6))
def test_duration_one_commitment_acts_as_the_rule(seed, n, a):
    """Same uniforms, same actions as the rule's lazy draw, and nothing is ever held."""
    host, ei, _ = _random_inputs(seed, n, a)
    c = Commitment(n, durations=(1,))
    rng_c, rng_r = np.random.default_rng(seed), np.random.default_rng(seed)
    for eps in (1.0, 0.5, 0.2):
        out = c.decide(host, ei, eps, rng_c)
        ref = sample_acting_on_explore_rows(
            draw_acting_uniforms(rng_r, (n,)),
            eps,
            lambda rows, eps=eps: delight_rule(host[rows], ei[rows], eps),
            host_probs=host,
        )
        np.testing.assert_array_equal(out.actions, ref.actions)
        np.testing.assert_array_equal(out.explored, ref.explored)
        assert not out.held.any() and not c.remaining.any()


def test_option_surprisal_is_k_times_the_step_surprisal_capped():
    host, ei, eps = _random_inputs(3, 8, 5)
    od = option_rule(host, ei, eps, durations=DEFAULT_DURATIONS)
    per_step = surprisal(host, CAP)
    expected = np.minimum(per_step[..., None] * np.array(DEFAULT_DURATIONS), CAP)
    np.testing.assert_allclose(od.surprisal, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(od.surprisal[..., 0], per_step)
    np.testing.assert_array_equal(option_surprisal(host, DEFAULT_DURATIONS, CAP), expected)
    np.testing.assert_allclose(od.override.sum(axis=(-2, -1)), 1.0)
    np.testing.assert_allclose(od.probs.sum(axis=-1), 1.0)


def test_greedy_host_keeps_the_rules_action_law_and_spreads_durations_evenly():
    host, ei, eps = _random_inputs(4, 10, 6, greedy=True)
    od = option_rule(host, ei, eps)
    d = delight_rule(host, ei, eps)
    np.testing.assert_allclose(od.override.sum(axis=-1), d.override, atol=1e-12)
    np.testing.assert_allclose(od.probs, d.probs, atol=1e-12)
    open_rows = ~d.gate_empty
    q = od.override[open_rows]
    np.testing.assert_allclose(q, q[..., :1] * np.ones(len(DEFAULT_DURATIONS)), atol=1e-12)


def test_long_holds_of_a_mildly_surprising_action_can_clear_the_gate():
    host = np.array([[0.6, 0.4]])  # ℓ(1) = log 1.5 ≈ 0.405
    ei = np.array([[0.0, 0.05]])
    od = option_rule(host, ei, 1.0, durations=(1, 2, 4, 8))
    assert od.gate[0, 1].tolist() == [False, False, False, True]  # χ = 0.05·8·0.405 = 0.16
    assert od.override[0, 1, 3] == pytest.approx(1.0)


@pytest.mark.parametrize("greedy", [True, False])
def test_infinite_price_gives_the_host(greedy):
    host, ei, eps = _random_inputs(5, 7, 4, greedy)
    od = option_rule(host, ei * 1e6, eps, gate_price=np.inf)
    assert od.gate_empty.all()
    np.testing.assert_allclose(od.probs, host, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(od.probs, delight_rule(host, ei, eps, gate_price=np.inf).probs)
    c = Commitment(7, gate_price=np.inf)
    rng, rng_h = np.random.default_rng(0), np.random.default_rng(0)
    for _ in range(5):
        out = c.decide(host, ei * 1e6, 1.0, rng)
        ref = sample_acting_on_explore_rows(
            draw_acting_uniforms(rng_h, (7,)),
            0.0,
            lambda rows: delight_rule(host[rows], ei[rows], 0.0),
            host_probs=host,
        )
        np.testing.assert_array_equal(out.actions, ref.actions)
        assert not out.held.any() and (out.durations == 1).all()


def test_deterministic_host_and_zero_ei_never_override():
    host, _, _ = _random_inputs(6, 9, 5, greedy=True)
    ei = np.zeros_like(host)
    for lam in (0.0, 0.1):
        od = option_rule(host, ei, 1.0, gate_price=lam)
        assert od.gate_empty.all() and not od.gate.any()
        np.testing.assert_array_equal(od.probs, host)
    # EI only on the host's own action (surprisal 0): no override either.
    od = option_rule(host, host * 5.0, 1.0, gate_price=0.0)
    assert od.gate_empty.all()
    c = Commitment(9, gate_price=0.0)
    rng = np.random.default_rng(1)
    for _ in range(20):
        out = c.decide(host, ei, 1.0, rng)
        np.testing.assert_array_equal(out.actions, host.argmax(axis=1))
        assert not out.held.any()


@pytest.mark.parametrize("durations", [(1, 3), DEFAULT_DURATIONS, (1, 5, 17)])
def test_the_committed_action_is_held_exactly_k_steps(durations):
    n = 4
    host = np.tile([1.0, 0.0, 0.0], (n, 1))
    ei = np.tile([0.0, 0.5, 0.3], (n, 1))  # always gated
    c = Commitment(n, durations)
    rng = np.random.default_rng(7)
    history = [c.decide(host, ei, 0.5, rng) for _ in range(600)]
    seen = set()
    for i in range(n):
        t = 0
        while t < len(history):
            step = history[t]
            assert not step.held[i], "a fresh decision was expected"
            k = int(step.durations[i]) if step.explored[i] else 1
            if t + k >= len(history):
                break
            for j in range(1, k):
                assert history[t + j].held[i]
                assert history[t + j].actions[i] == step.actions[i]
            if step.explored[i]:
                assert step.actions[i] in (1, 2)
                seen.add(k)
            t += k
    assert seen == set(durations)


def test_recheck_releases_a_hold_that_left_the_gate():
    host = np.array([[1.0, 0.0]])
    c = Commitment(1, durations=(1, 64), recheck=True)
    rng = np.random.default_rng(0)
    out = c.decide(host, np.array([[0.0, 1.0]]), 1.0, rng, value_scale=1.0)
    while not (out.explored[0] and out.durations[0] == 64):
        out = c.decide(host, np.array([[0.0, 1.0]]), 1.0, rng)
    out = c.decide(host, np.array([[0.0, 1.0]]), 1.0, rng)
    assert out.held[0] and out.actions[0] == 1
    calls = []

    def ei_of(rows):
        calls.append(rows.copy())
        return np.zeros((len(rows), 2))

    out = c.decide(host, ei_of, 0.0, rng)
    assert out.released[0] and not out.held[0] and out.actions[0] == 0
    assert calls[0].tolist() == [0]
    # Without recheck the same hold would continue; an episode start ends it.
    c2 = Commitment(1, durations=(1, 64))
    c2.action[:], c2.remaining[:] = 1, 10
    assert c2.decide(host, ei_of, 0.0, rng).held[0]
    assert not c2.decide(host, ei_of, 0.0, rng, episode_start=[True]).held[0]


def test_held_in_gate_uses_the_remaining_hold():
    host = np.array([[0.6, 0.4], [0.6, 0.4]])
    ei = np.array([[0.0, 0.05], [0.0, 0.05]])
    keep = held_in_gate(host, ei, np.array([1, 1]), np.array([8, 1]), gate_price=0.1)
    assert keep.tolist() == [True, False]


def test_lazy_ei_is_evaluated_only_on_exploring_rows():
    host = np.tile([1.0, 0.0], (6, 1))
    rows_seen = []

    def ei_of(rows):
        rows_seen.append(rows.copy())
        return np.tile([0.0, 1.0], (len(rows), 1))

    out = Commitment(6).decide(host, ei_of, 0.5, np.random.default_rng(3))
    assert len(rows_seen) == (1 if out.rows.size else 0)
    if rows_seen:
        np.testing.assert_array_equal(rows_seen[0], out.rows)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    c=st.floats(1e-3, 1e3),
    lam=st.sampled_from([0.01, 0.1, 1.0]),
    how=st.sampled_from(["spread", "range"]),
)
def test_the_scale_free_gate_is_invariant_to_the_reward_scale(seed, c, lam, how):
    rng = np.random.default_rng(seed)
    host, ei, eps = _random_inputs(seed, 6, 5)
    means = rng.normal(size=(6, 5))
    returns = rng.normal(size=20)

    def scale(factor):
        if how == "spread":
            return spread_value_scale(means * factor)
        return range_value_scale(update_value_range(None, returns * factor))

    s1, sc = scale(1.0), scale(c)
    d1 = option_rule(host, ei, eps, gate_price=scale_free_gate_price(lam, s1))
    dc = option_rule(host, ei * c, eps, gate_price=scale_free_gate_price(lam, sc))
    ties = np.isclose(d1.delight, lam * s1, rtol=1e-9, atol=0)
    np.testing.assert_array_equal(d1.gate[~ties], dc.gate[~ties])
    if not ties.any():
        np.testing.assert_allclose(d1.override, dc.override, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(d1.probs, dc.probs, rtol=1e-9, atol=1e-15)


def test_value_scales_and_prices():
    assert range_value_scale(None) == 0.0
    r = update_value_range(None, [])
    assert r is None
    r = update_value_range(r, [0.0, 1.0])
    assert update_value_range(r, [0.5]) == (0.0, 1.0)
    assert range_value_scale(update_value_range(r, [-2.0])) == 3.0
    assert spread_value_scale(np.array([[0.0, 2.0], [1.0, 1.0]])) == pytest.approx(np.sqrt(0.5))
    assert scale_free_gate_price(0.1, 0.0) == 0.0
    assert scale_free_gate_price(np.inf, 0.0) == np.inf
    assert scale_free_gate_price(0.1, 20.0) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="values"):
        update_value_range(None, [np.nan])
    # Scale 0 prices nothing: every option with positive delight is in the gate.
    host, ei, eps = _random_inputs(8, 5, 4)
    od = option_rule(host, ei, eps, gate_price=scale_free_gate_price(0.1, 0.0))
    np.testing.assert_array_equal(od.gate, od.delight > 0)


def test_episode_clock():
    assert episode_epsilon(0) == 1.0
    assert episode_epsilon(100) == 0.5  # M = 100 episodes: ε halves
    assert episode_epsilon(steps=20_000, episode_length=200) == 0.5
    assert episode_epsilon(10, half_life=10) == 0.5
    np.testing.assert_allclose(
        episode_epsilon(steps=np.array([0, 1000]), episode_length=1000, half_life=1),
        [1.0, 0.5],
    )
    with pytest.raises(TypeError):
        episode_epsilon()
    with pytest.raises(TypeError):
        episode_epsilon(3, steps=4, episode_length=2)
    with pytest.raises(TypeError):
        episode_epsilon(steps=4)
    with pytest.raises(ValueError, match="episode_length"):
        episode_epsilon(steps=4, episode_length=0)


@pytest.mark.parametrize("bad", [(), (2, 4), (1, 1), (1, 4, 2), (1, 2.5), [[1, 2]]])
def test_durations_are_checked(bad):
    with pytest.raises(ValueError, match="durations"):
        check_durations(bad)


def test_bad_inputs_are_named():
    host = np.array([[0.5, 0.5]])
    with pytest.raises(ValueError, match="host_probs"):
        option_rule(np.array([[0.5, 0.6]]), np.zeros((1, 2)), 0.5)
    with pytest.raises(ValueError, match="expected_improvement"):
        option_rule(host, -np.ones((1, 2)), 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        option_rule(host, np.zeros((1, 2)), 1.5)
    with pytest.raises(ValueError, match="gate_price"):
        option_rule(host, np.zeros((1, 2)), 0.5, gate_price=-1.0)
    with pytest.raises(TypeError, match="recheck"):
        Commitment(2, recheck=1)


def test_commitment_pickles_with_its_holds():
    c = Commitment(3)
    host = np.tile([1.0, 0.0, 0.0], (3, 1))
    c.decide(host, np.tile([0.0, 1.0, 1.0], (3, 1)), 1.0, np.random.default_rng(0))
    back = pickle.loads(pickle.dumps(c))
    np.testing.assert_array_equal(back.action, c.action)
    np.testing.assert_array_equal(back.remaining, c.remaining)
    np.testing.assert_array_equal(back.durations, c.durations)
