"""The ensemble's per-state tables (priors and targets read, not recomputed) against the generic
path: the same posterior with its tables switched off, on the same batches."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch
from gymnasium import spaces

from delight_gym.posteriors.ensemble import EnsembleQPosterior, Transitions, one_hot_indices
from delight_gym.posteriors.ensemble_tabular import TABLE_MAX_STATES
from delight_gym.posteriors.ensemble_td import ensemble_td_loss


def _pair(space, hidden=(16, 16), **kwargs):
    fast = EnsembleQPosterior(space, 2, seed=3, num_heads=5, hidden_sizes=hidden, **kwargs)
    plain = copy.deepcopy(fast)
    plain.network.tables = None
    assert fast.network.tables is not None
    return fast, plain


def _batch(rng, space, b=64) -> Transitions:
    if isinstance(space, spaces.Discrete):
        obs, nxt = rng.integers(0, space.n, b), rng.integers(0, space.n, b)
    else:  # one-hot rows of a 5 x 5 grid, some all-zero (DeepSea's final observation)
        obs = np.zeros((b, 5, 5), dtype=np.float32)
        nxt = np.zeros((b, 5, 5), dtype=np.float32)
        obs.reshape(b, 25)[np.arange(b), rng.integers(0, 25, b)] = 1.0
        idx = rng.integers(0, 25, b)
        keep = rng.random(b) < 0.8
        nxt.reshape(b, 25)[np.arange(b)[keep], idx[keep]] = 1.0
    actions, rewards, terminated = rng.integers(0, 2, b), rng.normal(size=b), rng.random(b) < 0.2
    return Transitions(obs, nxt, actions, rewards, terminated)


SPACES = [spaces.Discrete(40), spaces.Box(0.0, 1.0, (5, 5), dtype=np.float32)]


@pytest.mark.parametrize("space", SPACES, ids=["discrete", "one_hot"])
def test_td_steps_equal_the_generic_path(space):
    """Loss, target std, trained weights and head values agree to 1e-6 over 12 TD steps with a
    target update every 4 (the target table is refreshed there)."""
    fast, plain = _pair(space, target_update_period=4)
    rng = np.random.default_rng(0)
    for step in range(12):
        batch = _batch(rng, space)
        a, b = fast.td_step(batch), plain.td_step(batch)
        torch.testing.assert_close(a.loss, b.loss, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(a.target_std, b.target_std, rtol=1e-6, atol=1e-6)
        if step % 4 == 3:
            fast.update_target()
            plain.update_target()
    for p, q in zip(fast.network.parameters(), plain.network.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-6)
    obs = _batch(rng, space)[0]
    np.testing.assert_allclose(fast.head_values(obs), plain.head_values(obs), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("space", SPACES, ids=["discrete", "one_hot"])
@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "masked"])
@pytest.mark.parametrize("hidden", [(16, 16), (8,), ()], ids=["two", "one", "none"])
def test_gradients_without_autograd_equal_autograd(space, masked, hidden):
    """The tables' hand-written backward pass (distinct states only, the first layer written
    row by row, the last layer transposed) against autograd's on the generic path, parameter by
    parameter, with two, one or no hidden layers."""
    fast, plain = _pair(space, hidden)
    rng = np.random.default_rng(1)
    batch = _batch(rng, space)
    if masked:
        batch = batch._replace(masks=(rng.random((64, 5)) < 0.5).astype(np.float32))
    checked = fast.network.check_transitions(batch)
    tables = fast.network.tables_for(checked.observations)
    assert tables is not None
    loss, std = tables.td_gradients(fast.network.trainable_layers(), checked, 0.9)
    checked = plain.network.check_transitions(batch)
    ref_loss, ref_std = ensemble_td_loss(plain.network, checked, 0.9)
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss.detach(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(std, ref_std, rtol=1e-6, atol=1e-7)
    for p, q in zip(fast.network.parameters(), plain.network.parameters(), strict=True):
        assert p.grad is not None and q.grad is not None
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("space", SPACES, ids=["discrete", "one_hot"])
def test_many_td_steps_equal_the_generic_path(space):
    """300 masked TD steps with a target update every 4: the weights and Adam's moments stay
    within 1e-6 of the generic path's (the rounding of the two paths' sums does not grow)."""
    fast, plain = _pair(space, target_update_period=4)
    rng = np.random.default_rng(2)
    for step in range(300):
        batch = _batch(rng, space, b=32)
        batch = batch._replace(masks=(rng.random((32, 5)) < 0.5).astype(np.float32))
        fast.td_step(batch)
        plain.td_step(batch)
        if step % 4 == 3:
            fast.update_target()
            plain.update_target()
    for p, q in zip(fast.network.parameters(), plain.network.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-6)
        for key in ("exp_avg", "exp_avg_sq"):
            a, b = fast.optimizer.state[p][key], plain.optimizer.state[q][key]
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-9)


def test_gradients_replace_what_the_caller_left_in_grad():
    """What the caller left in ``.grad`` between two steps (a backward pass of its own, an
    in-place change) is replaced, as the generic path's ``zero_grad`` does (batches of 6 leave
    most first-layer rows without a gradient)."""
    space = SPACES[1]
    fast, plain = _pair(space)
    rng = np.random.default_rng(3)
    for change in ("backward", "in_place", None):
        batch = _batch(rng, space, b=6)
        fast.td_step(batch)
        plain.td_step(batch)
        extra = _batch(rng, space)
        for post in (fast, plain):
            if change == "backward":
                checked = post.network.check_transitions(extra)
                ensemble_td_loss(post.network, checked, 0.9)[0].backward()
            elif change == "in_place":
                for p in post.network.parameters():
                    p.grad.add_(1.0)
        batch = _batch(rng, space, b=6)
        fast.td_step(batch)
        plain.td_step(batch)
        for p, q in zip(fast.network.parameters(), plain.network.parameters(), strict=True):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-8)
            torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-6)


def test_bootstrapped_dqn_acts_and_learns_as_on_the_generic_path():
    """BootstrappedDQN on DeepSea (one-hot rows, all-zero final observations, bootstrap masks)
    with and without the tables: the same 600 actions, heads within 1e-6."""
    import gymnasium as gym

    from delight_gym.sb3 import BootstrappedDQN

    models = []
    for tables in (True, False):
        model = BootstrappedDQN(
            "MlpPolicy",
            gym.make("DeepSea-v0", size=8, mapping_seed=0),
            num_heads=4,
            policy_kwargs={"net_arch": [16, 16]},
            mask_prob=0.5,
            seed=0,
            learning_starts=64,
            batch_size=32,
            device="cpu",
        )
        if not tables:
            model.ensemble.network.tables = None
        model.learn(600)
        models.append(model)
    fast, plain = models
    assert fast.ensemble.network.tables is not None
    np.testing.assert_array_equal(
        fast.replay_buffer.actions[:600], plain.replay_buffer.actions[:600]
    )
    for p, q in zip(
        fast.ensemble.network.parameters(), plain.ensemble.network.parameters(), strict=True
    ):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-6)


def test_one_hot_indices_numpy_and_torch_agree_on_awkward_rows():
    """The numpy path (the row's maximum must be its only nonzero entry) against the torch
    path (a count of nonzero entries), on rows that are and are not one-hot."""
    rows = np.array(
        [
            [0, 0, 1, 0],
            [0, 0, 0, 0],
            [-0.0, 0, 0, 1],
            [-0.0, 0, 0, 0],
        ],
        dtype=np.float32,
    )
    from_torch = one_hot_indices(torch.from_numpy(rows))
    assert from_torch is not None
    np.testing.assert_array_equal(one_hot_indices(rows), [2, -1, 3, -1])
    np.testing.assert_array_equal(from_torch.numpy(), [2, -1, 3, -1])
    for bad in (
        [0, 1, 1, 0],
        [0, 2, 0, 0],
        [0.5, 0, 0, 0],
        [-1, 0, 1, 0],
        [np.nan, 0, 0, 0],
        [np.inf, 0, 0, 0],
        [0, 0, -1, 0],
        [1, 1e-30, 0, 0],
    ):
        block = np.vstack([rows, np.array([bad], dtype=np.float32)])
        assert one_hot_indices(block) is None, bad
        assert one_hot_indices(torch.from_numpy(block)) is None, bad
    empty = one_hot_indices(np.zeros((0, 3), np.float32))
    assert empty is not None and empty.shape == (0,)


def test_an_empty_batch_steps_as_on_the_generic_path():
    fast, plain = _pair(SPACES[0])
    empty = Transitions(
        np.zeros(0, int), np.zeros(0, int), np.zeros(0, int), np.zeros(0), np.zeros(0)
    )
    a, b = fast.td_step(empty), plain.td_step(empty)
    torch.testing.assert_close(a.loss, b.loss, equal_nan=True)
    torch.testing.assert_close(a.target_std, b.target_std)


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
