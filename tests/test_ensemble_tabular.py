"""The ensemble's per-state tables (priors and targets read, not recomputed) against the generic
path: the same posterior with its tables switched off, on the same batches."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch
from gymnasium import spaces

from delight_gym.posteriors.ensemble import EnsembleQPosterior
from delight_gym.posteriors.ensemble_tabular import TABLE_MAX_STATES


def _pair(space, **kwargs):
    fast = EnsembleQPosterior(space, 2, seed=3, num_heads=5, hidden_sizes=(16, 16), **kwargs)
    plain = copy.deepcopy(fast)
    plain.network.tables = None
    assert fast.network.tables is not None
    return fast, plain


def _batch(rng, space, b=64):
    if isinstance(space, spaces.Discrete):
        obs, nxt = rng.integers(0, space.n, b), rng.integers(0, space.n, b)
    else:  # one-hot rows of a 5 x 5 grid, some all-zero (DeepSea's final observation)
        obs = np.zeros((b, 5, 5), dtype=np.float32)
        nxt = np.zeros((b, 5, 5), dtype=np.float32)
        obs.reshape(b, 25)[np.arange(b), rng.integers(0, 25, b)] = 1.0
        idx = rng.integers(0, 25, b)
        keep = rng.random(b) < 0.8
        nxt.reshape(b, 25)[np.arange(b)[keep], idx[keep]] = 1.0
    return obs, rng.integers(0, 2, b), rng.normal(size=b), nxt, rng.random(b) < 0.2


SPACES = [spaces.Discrete(40), spaces.Box(0.0, 1.0, (5, 5), dtype=np.float32)]


@pytest.mark.parametrize("space", SPACES, ids=["discrete", "one_hot"])
def test_td_steps_equal_the_generic_path(space):
    """Loss, target std, trained weights and head values agree to 1e-6 over 12 TD steps with a
    target update every 4 (the target table is refreshed there)."""
    fast, plain = _pair(space, target_update_period=4)
    rng = np.random.default_rng(0)
    for step in range(12):
        batch = _batch(rng, space)
        a, b = fast.td_step(*batch), plain.td_step(*batch)
        torch.testing.assert_close(a.loss, b.loss, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(a.target_std, b.target_std, rtol=1e-6, atol=1e-6)
        if step % 4 == 3:
            fast.update_target()
            plain.update_target()
    for p, q in zip(fast.network.parameters(), plain.network.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-6)
    obs = _batch(rng, space)[0]
    np.testing.assert_allclose(fast.head_values(obs), plain.head_values(obs), rtol=1e-6, atol=1e-6)


def test_tables_follow_loaded_weights_and_survive_pickling():
    space = SPACES[0]
    fast, _ = _pair(space)
    other = EnsembleQPosterior(space, 2, seed=9, num_heads=5, hidden_sizes=(16, 16))
    obs = np.arange(40)
    fast.head_values(obs)  # tables computed from seed 3's priors
    fast.network.load_state_dict(other.network.state_dict())
    np.testing.assert_allclose(fast.head_values(obs), other.head_values(obs), rtol=1e-6)
    clone = pickle.loads(pickle.dumps(fast))
    np.testing.assert_allclose(clone.head_values(obs), other.head_values(obs), rtol=1e-6)


def test_no_tables_for_dense_inputs_or_many_states():
    box = spaces.Box(-1.0, 1.0, (3,), dtype=np.float32)
    assert EnsembleQPosterior(box, 2, num_heads=2).network.tables is None
    many = spaces.Discrete(TABLE_MAX_STATES + 1)
    assert EnsembleQPosterior(many, 2, num_heads=2, hidden_sizes=(4,)).network.tables is None
