"""Committed overrides, the episode clock and the spread scale inside the engines.

The limits the design must meet: durations ``(1,)`` is the paper's per-step rule exactly;
``λ = ∞`` gives the host; zero EI never overrides; a committed action is played for exactly
its duration and an episode's end releases it; EI divided by the posterior's spread makes the
gate invariant to the reward scale.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from delight_gym import DelightExplorationWrapper

OBS = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
ACT = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)


class MockBoxPosterior:
    """Heads ``Q_k(s, a) = scale·(k - K/2)·a``: a spread that grows with ``|a|``, EI exact for
    the heads (``v`` the heads' mean at the host's action, column 0)."""

    def __init__(self, scale: float = 1.0, heads: int = 4) -> None:
        self.scale, self.heads = scale, heads

    def values(self, states, candidates):
        a = np.asarray(candidates, dtype=np.float64)[..., 0]  # (b, C)
        k = np.arange(self.heads, dtype=np.float64)[:, None, None] - self.heads / 2
        return self.scale * (k * a[None] + a[None] ** 2)

    def expected_improvement(self, states, candidates):
        q = self.values(states, candidates)
        v = q[:, :, :1].mean(axis=0)  # (b, 1)
        return np.maximum(q - v[None], 0.0).mean(axis=0)

    def sample_values(self, states, actions, rng):
        return self.values(states, actions)[int(rng.integers(self.heads))]


def host(obs):
    return np.zeros((len(obs), 1))


def _wrapper(posterior, **delight):
    return DelightExplorationWrapper(
        host,
        posterior,
        observation_space=OBS,
        action_space=ACT,
        seed=3,
        delight=delight,
        host_std=0.3,
    )


def _actions(wrapper, steps=60, n=3, done_every=None):
    rng = np.random.default_rng(0)
    out, held = [], []
    for t in range(steps):
        obs = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
        a, _ = wrapper.predict(obs)
        out.append(a.copy())
        held.append(np.asarray(wrapper.last_info.get("held", np.zeros(n, bool))).copy())
        done = None if done_every is None else np.full(n, (t + 1) % done_every == 0)
        wrapper.advance(n, done)
    return np.stack(out), np.stack(held)


def test_durations_of_one_step_is_the_paper_rule_exactly():
    plain, _ = _actions(_wrapper(MockBoxPosterior()))
    one, held = _actions(_wrapper(MockBoxPosterior(), durations=(1,)))
    np.testing.assert_array_equal(plain, one)
    assert not held.any()


def test_a_committed_action_is_held_for_its_duration():
    w = _wrapper(MockBoxPosterior(), durations=(1, 5))
    acts, held = _actions(w, steps=80)
    assert held.any(), "the mock posterior's EI opens the gate: some overrides must be held"
    for row in range(acts.shape[1]):
        t = 0
        while t < len(acts):
            if held[t, row]:  # a hold began at t - 1: the action repeats up to 4 more steps
                start = t - 1
                run = 0
                while t < len(acts) and held[t, row]:
                    np.testing.assert_array_equal(acts[t, row], acts[start, row])
                    run += 1
                    t += 1
                assert run <= 4
            t += 1


def test_an_episode_end_releases_the_hold():
    w = _wrapper(MockBoxPosterior(), durations=(1, 64))
    _, held = _actions(w, steps=60, done_every=3)
    # a hold started at step t can last only until the episode ends (every 3 steps)
    for t in range(len(held)):
        if t % 3 == 0:
            assert not held[t].any()


def test_an_infinite_price_or_zero_ei_gives_the_host():
    for w in (
        _wrapper(MockBoxPosterior(), durations=(1, 4), gate_price=float("inf")),
        _wrapper(MockBoxPosterior(scale=0.0), durations=(1, 4)),
    ):
        _, held = _actions(w)
        assert not held.any()
        # the host's action is its draw: never an override
        assert not np.asarray(w.stats.total_overridden)


def test_the_spread_scale_makes_the_gate_invariant_to_the_reward_scale():
    small, _ = _actions(_wrapper(MockBoxPosterior(0.01), durations=(1, 4), value_scale="spread"))
    large, _ = _actions(_wrapper(MockBoxPosterior(100.0), durations=(1, 4), value_scale="spread"))
    np.testing.assert_array_equal(small, large)
    plain_small, _ = _actions(_wrapper(MockBoxPosterior(0.01), durations=(1, 4)))
    plain_large, _ = _actions(_wrapper(MockBoxPosterior(100.0), durations=(1, 4)))
    assert not np.array_equal(plain_small, plain_large)  # without it λ is in reward units


def test_the_episode_clock_counts_finished_episodes():
    w = _wrapper(MockBoxPosterior(), clock="episode", half_life=2.0)
    assert w.epsilon == 1.0
    w.advance(3, [True, False, True])
    assert (w.t, w.episodes, w.clock) == (3, 2, 2)
    assert w.epsilon == pytest.approx(2.0 / 4.0)
    with pytest.raises(ValueError, match="done must hold 3"):
        w.advance(3, [True])


def test_the_discrete_engine_holds_options():
    from delight_gym.posteriors.value import TabularValuePosterior

    def probs(obs):
        return np.tile([0.98, 0.01, 0.01], (len(obs), 1))

    def run(**delight):
        w = DelightExplorationWrapper(
            probs,
            TabularValuePosterior(4, 3, prior_std=1.0),
            observation_space=spaces.Discrete(4),
            action_space=spaces.Discrete(3),
            seed=0,
            delight=delight,
        )
        acts, held = [], []
        for t in range(40):
            obs = np.array([t % 4, (t + 1) % 4])
            a, _ = w.predict(obs)
            acts.append(a)
            held.append(np.asarray(w.last_info.get("held", np.zeros(2, bool))))
            w.advance(2)
        return np.stack(acts), np.stack(held), w

    acts, held, _ = run(durations=(1, 8))
    assert held.any()
    for t in range(1, len(acts)):
        np.testing.assert_array_equal(acts[t][held[t]], acts[t - 1][held[t]])
    _, never_held, w = run(durations=(1, 8), gate_price=float("inf"))
    assert not never_held.any() and w.stats.total_overridden == 0  # plays its own draw
