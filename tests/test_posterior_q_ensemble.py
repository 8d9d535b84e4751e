"""ContinuousQEnsemble against independent references: per-head ``nn.Sequential`` networks (the
forward pass, the TD step with per-head Adam and Polyak targets), brute-force EI over heads,
and closed-form TD fixed points on tiny deterministic problems."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from delight_gym.de.candidates import PosteriorArgmax
from delight_gym.posteriors.batched_mlp import BatchedMLP
from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble, ContinuousTransitions

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))]  # fmt: skip
DTYPES = [torch.float64, torch.float32]
TOL = {torch.float64: 1e-10, torch.float32: 1e-4}

OBS = spaces.Box(-np.inf, np.inf, (2, 3))  # flattened to 6 numbers
ACT = spaces.Box(np.array([-2.0, 0.0]), np.array([1.0, 3.0]), dtype=np.float64)  # asymmetric


def _ensemble(**kwargs: Any) -> ContinuousQEnsemble:
    options = {"num_heads": 4, "hidden_sizes": (16, 8), "seed": 0, **kwargs}
    return ContinuousQEnsemble(OBS, ACT, **options)


def _sequentials(net: BatchedMLP) -> list[nn.Sequential]:
    """One plain float64 ``nn.Sequential`` per model of ``net``, with its weights."""
    heads = []
    for k in range(net.num_models):
        layers: list[nn.Module] = []
        for w, b in zip(net.weights, net.biases, strict=True):
            lin = nn.Linear(w.shape[1], w.shape[2]).double()
            with torch.no_grad():
                lin.weight.copy_(w[k].T.double().cpu())
                lin.bias.copy_(b[k, 0].double().cpu())
            layers += [lin, nn.ReLU()]
        heads.append(nn.Sequential(*layers[:-1]))
    return heads


def _scaled_inputs(obs: np.ndarray, actions: np.ndarray) -> torch.Tensor:
    """``[s, (a − mid)/half]`` for ``(B, 2, 3)`` observations and ``(B, C, 2)`` actions."""
    mid, half = (ACT.high + ACT.low) / 2.0, (ACT.high - ACT.low) / 2.0
    b, c = actions.shape[:2]
    flat = np.broadcast_to(obs.reshape(b, 1, -1), (b, c, obs[0].size))
    return torch.from_numpy(np.concatenate([flat, (actions - mid) / half], -1))


def _reference_values(ens: ContinuousQEnsemble, obs: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """``(K, B, C)``: head by head, ``f_k(x) + β p_k(x)`` with plain networks."""
    x = _scaled_inputs(obs, actions)
    online, prior = _sequentials(ens.online), _sequentials(ens.prior)
    with torch.no_grad():
        return torch.stack(
            [(f(x) + ens.prior_scale * p(x))[..., 0] for f, p in zip(online, prior, strict=True)]
        ).numpy()


def _query(rng: np.random.Generator, b: int = 5, c: int = 7) -> tuple[np.ndarray, np.ndarray]:
    obs = rng.normal(size=(b, 2, 3))
    actions = rng.uniform(ACT.low, ACT.high, size=(b, c, 2))
    return obs, actions


def _batch(rng: np.random.Generator, n: int = 12, **fields: Any) -> ContinuousTransitions:
    values = {
        "observations": rng.normal(size=(n, 2, 3)),
        "actions": rng.uniform(ACT.low, ACT.high, size=(n, 2)),
        "rewards": rng.normal(size=n),
        "next_observations": rng.normal(size=(n, 2, 3)),
        "dones": (rng.random(n) < 0.3).astype(np.float64),
        "next_actions": rng.uniform(ACT.low, ACT.high, size=(n, 2)),
    }
    return ContinuousTransitions(**{**values, **fields})


def _numpy(t: torch.Tensor) -> np.ndarray:
    return t.double().cpu().numpy()


# ------------------------------------------------------------------ forward and queries
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_heads_equal_per_head_sequentials(device: str, dtype: torch.dtype) -> None:
    ens = _ensemble(device=device, dtype=dtype, prior_scale=2.5)
    obs, actions = _query(np.random.default_rng(1))
    want = _reference_values(ens, obs, actions)
    tol = TOL[dtype]
    got = ens.values(obs, actions)
    assert got.shape == (4, 5, 7) and got.dtype == dtype and got.device.type == device
    np.testing.assert_allclose(_numpy(got), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(_numpy(ens.mean(obs, actions)), want.mean(0), rtol=tol, atol=tol)
    for k in range(ens.num_heads):
        head = _numpy(ens.head_values(obs, actions, k))
        np.testing.assert_allclose(head, want[k], rtol=tol, atol=tol)
    heads = np.random.default_rng(9).integers(4, size=5)  # the draws sample_values makes
    sampled = _numpy(ens.sample_values(obs, actions, np.random.default_rng(9)))
    np.testing.assert_allclose(sampled, want[heads, np.arange(5)], rtol=tol, atol=tol)
    flat = _numpy(ens.values(obs.reshape(5, 6), torch.as_tensor(actions, device=device)))
    np.testing.assert_allclose(flat, want, rtol=tol, atol=tol)  # (B, obs_dim) rows, tensors


def test_prior_scale_zero_is_the_trainable_network_alone() -> None:
    ens = _ensemble(prior_scale=0.0, dtype=torch.float64)
    obs, actions = _query(np.random.default_rng(2))
    with torch.no_grad():
        f = [net(_scaled_inputs(obs, actions))[..., 0] for net in _sequentials(ens.online)]
    np.testing.assert_allclose(_numpy(ens.values(obs, actions)), torch.stack(f).numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_ei_equals_brute_force_over_heads(device: str) -> None:
    ens = _ensemble(device=device, dtype=torch.float64, prior_scale=5.0)
    obs, candidates = _query(np.random.default_rng(3))
    q = _numpy(ens.values(obs, candidates))
    baseline = np.random.default_rng(4).normal(size=5) + q.mean(0).mean(1)
    host = q[:, :, 0].mean(0)  # the default baseline: mean value of the host's candidate
    for base, arg in ((baseline, baseline), (host, None)):
        want = np.zeros((5, 7))
        for k in range(4):
            for b in range(5):
                for c in range(7):
                    want[b, c] += max(q[k, b, c] - base[b], 0.0) / 4
        got = _numpy(ens.expected_improvement(obs, candidates, arg))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert (got >= 0).all() and got[:, 0].max() > 0  # heads disagree: the host's EI is positive


def test_sample_head_is_uniform_over_heads() -> None:
    ens = _ensemble()
    rng = np.random.default_rng(5)
    counts = np.bincount([ens.sample_head(rng) for _ in range(4000)], minlength=4)
    assert counts.min() > 850  # 1000 expected per head; 4.9 std below


def test_queries_plug_into_the_candidate_rule_protocols() -> None:
    """``sample_values`` is :class:`PosteriorArgmax`'s, and ``expected_improvement`` with its
    default baseline is a :class:`CandidateEI` (the host's action first)."""
    ens = _ensemble(dtype=torch.float64)
    obs, candidates = _query(np.random.default_rng(14), b=3, c=4)
    proposals = PosteriorArgmax(ACT, ens.sample_values, n_random=8).propose(
        obs, candidates[:, 0], 5, np.random.default_rng(15)
    )
    assert proposals.shape == (3, 5, 2)
    assert ((proposals >= ACT.low) & (proposals <= ACT.high)).all()
    ei = _numpy(ens.expected_improvement(obs, candidates))
    host = _numpy(ens.mean(obs, candidates[:, :1]))[:, 0]
    np.testing.assert_allclose(ei, _numpy(ens.expected_improvement(obs, candidates, host)))


# ------------------------------------------------------------------ training
def _reference_step(
    ens: ContinuousQEnsemble,
    online: list[nn.Sequential],
    target: list[nn.Sequential],
    prior: list[nn.Sequential],
    optimizers: list[torch.optim.Adam],
    batch: ContinuousTransitions,
    masks: np.ndarray,
) -> None:
    """Head by head: ``y = r + γ(1 − d)(g_k(x') + β p_k(x'))``, one Adam step on
    ``mean_i m_ik (f_k(x_i) + β p_k(x_i) − y_i)² / 2``, then ``g_k ← (1 − τ) g_k + τ f_k``."""
    n = len(batch.rewards)
    x = _scaled_inputs(batch.observations, batch.actions[:, None])[:, 0]
    xn = _scaled_inputs(batch.next_observations, batch.next_actions[:, None])[:, 0]
    r, d = torch.from_numpy(batch.rewards), torch.from_numpy(batch.dones)
    beta = ens.prior_scale
    for k in range(ens.num_heads):
        with torch.no_grad():
            y = r + ens.gamma * (1 - d) * (target[k](xn) + beta * prior[k](xn))[:, 0]
            offset = beta * prior[k](x)[:, 0]
        loss = (torch.from_numpy(masks[:, k]) * 0.5 * (online[k](x)[:, 0] + offset - y) ** 2).sum()
        optimizers[k].zero_grad()
        (loss / n).backward()
        optimizers[k].step()
        with torch.no_grad():
            for t, p in zip(target[k].parameters(), online[k].parameters(), strict=True):
                t.mul_(1 - ens.tau).add_(ens.tau * p)


@pytest.mark.parametrize("with_masks", [False, True])
def test_update_equals_per_head_adam_and_polyak(with_masks: bool) -> None:
    ens = _ensemble(dtype=torch.float64, gamma=0.9, tau=0.3, learning_rate=0.01, prior_scale=2.0)
    online, prior = _sequentials(ens.online), _sequentials(ens.prior)
    target = _sequentials(ens.target)
    optimizers = [torch.optim.Adam(net.parameters(), lr=0.01) for net in online]
    rng = np.random.default_rng(6)
    for _ in range(3):
        masks = rng.integers(0, 2, size=(12, 4)).astype(np.float64) if with_masks else None
        batch = _batch(rng, masks=masks)
        ens.update(batch)
        ref_masks = np.ones((12, 4)) if masks is None else masks
        _reference_step(ens, online, target, prior, optimizers, batch, ref_masks)
    for batched, heads in ((ens.online, online), (ens.target, target)):
        for k, head in enumerate(_sequentials(batched)):
            for got, want in zip(head.parameters(), heads[k].parameters(), strict=True):
                np.testing.assert_allclose(got.detach(), want.detach(), rtol=1e-9, atol=1e-12)
    assert ens.num_updates == 3


def test_a_callable_policy_gives_the_same_step_as_its_actions() -> None:
    batch = _batch(np.random.default_rng(7))
    fixed, policy = _ensemble(dtype=torch.float64), _ensemble(dtype=torch.float64)
    seen = []

    def host(next_obs: torch.Tensor) -> torch.Tensor:
        seen.append(next_obs)
        assert not torch.is_grad_enabled()
        return torch.from_numpy(batch.next_actions)

    a = fixed.update(batch)
    b = policy.update(batch._replace(next_actions=host))
    assert seen[0].shape == (12, 6) and seen[0].dtype == torch.float64
    assert float(a.loss) == float(b.loss) and float(a.target_std) == float(b.target_std)
    query = _query(np.random.default_rng(0))
    np.testing.assert_array_equal(_numpy(fixed.values(*query)), _numpy(policy.values(*query)))


@pytest.mark.parametrize("with_masks", [False, True])
def test_an_unchecked_update_is_the_checked_one(with_masks: bool) -> None:
    """``_update`` (data checked where it came in) takes bitwise the same step."""
    checked, trusted = _ensemble(), _ensemble()
    rng = np.random.default_rng(8)
    for _ in range(3):
        masks = rng.integers(0, 2, size=(12, 4)).astype(np.float32) if with_masks else None
        batch = _batch(rng, masks=masks)
        a, b = checked.update(batch), trusted._update(batch)
        assert float(a.loss) == float(b.loss) and float(a.target_std) == float(b.target_std)
    for x, y in zip(checked.online.parameters(), trusted.online.parameters(), strict=True):
        np.testing.assert_array_equal(_numpy(x.detach()), _numpy(y.detach()))
    with pytest.raises(ValueError, match="rewards"):  # the magnitude guard stays
        trusted._update(_batch(rng)._replace(rewards=np.full(12, 1e30)))


def test_the_prior_never_changes_and_is_not_trained() -> None:
    ens = _ensemble(mask_prob=0.5)
    before = [p.clone() for p in ens.prior.parameters()]
    online = [p.clone() for p in ens.online.parameters()]
    rng = np.random.default_rng(8)
    for _ in range(20):
        ens.update(_batch(rng))
    for p, q in zip(ens.prior.parameters(), before, strict=True):
        assert torch.equal(p, q) and not p.requires_grad
    assert not any(torch.equal(p, q) for p, q in zip(ens.online.parameters(), online, strict=True))
    trained = {id(p) for group in ens.optimizer.param_groups for p in group["params"]}
    assert trained == {id(p) for p in ens.online.parameters()}


def test_a_masked_out_head_does_not_move() -> None:
    ens = _ensemble(dtype=torch.float64)
    masks = np.ones((12, 4))
    masks[:, 2] = 0.0
    before = [p[2].clone() for p in ens.online.parameters()]
    others = [p[[0, 1, 3]].clone() for p in ens.online.parameters()]
    ens.update(_batch(np.random.default_rng(9), masks=masks))
    for p, q, r in zip(ens.online.parameters(), before, others, strict=True):
        assert torch.equal(p[2], q) and not torch.equal(p[[0, 1, 3]], r)


def _fixed_batch(
    obs: np.ndarray, actions: np.ndarray, rewards: Any, next_obs: Any, dones: Any, next_act: Any
) -> ContinuousTransitions:
    return ContinuousTransitions(
        obs, actions, np.asarray(rewards, float), next_obs, np.asarray(dones, float), next_act
    )


def test_td_with_terminal_transitions_converges_to_the_rewards() -> None:
    """``dones = 1``: the TD target is ``r`` itself, so every head's ``Q(s_i, a_i) → r_i``."""
    rng = np.random.default_rng(10)
    obs, actions = _query(rng, b=8, c=1)
    rewards = rng.uniform(-1, 1, size=8)
    ens = _ensemble(num_heads=5, hidden_sizes=(32, 32), learning_rate=3e-3, prior_scale=1.0)
    batch = _fixed_batch(obs, actions[:, 0], rewards, obs, np.ones(8), actions[:, 0])
    for _ in range(500):
        ens.update(batch)
    q = _numpy(ens.values(obs, actions))[..., 0]  # (K, 8)
    np.testing.assert_allclose(q, np.broadcast_to(rewards, q.shape), atol=1e-3)


def test_td_bootstraps_through_a_two_step_chain() -> None:
    """``(s0, a0) → s1`` with reward 0, then ``(s1, a1)`` ends with reward 1: the fixed point is
    ``Q_k(s1, a1) = 1`` and ``Q_k(s0, a0) = γ`` for every head (bootstrapped from its own
    target)."""
    obs = np.zeros((2, 2, 3))
    obs[1] = 1.0
    act = np.array([[0.5, 2.0], [-1.0, 1.0]])
    ens = _ensemble(
        num_heads=5, hidden_sizes=(32, 32), gamma=0.8, tau=0.1, learning_rate=3e-3, seed=1
    )
    batch = _fixed_batch(obs, act, [0.0, 1.0], obs[[1, 1]], [0.0, 1.0], act[[1, 1]])
    for _ in range(500):
        ens.update(batch)
    q = _numpy(ens.values(obs, act[:, None]))[..., 0]
    np.testing.assert_allclose(q, np.broadcast_to([0.8, 1.0], q.shape), atol=1e-3)


def test_spread_stays_larger_at_unvisited_actions() -> None:
    """Trained at one action per state, the heads agree there and still disagree far away."""
    rng = np.random.default_rng(11)
    obs = rng.normal(size=(4, 2, 3))
    seen = np.tile([-0.5, 1.5], (4, 1))  # the middle of the action space
    ens = _ensemble(num_heads=8, hidden_sizes=(32, 32), learning_rate=3e-3, prior_scale=3.0)
    batch = _fixed_batch(obs, seen, np.full(4, 0.5), obs, np.ones(4), seen)
    far = np.array([[-2.0, 0.0], [1.0, 3.0], [-2.0, 3.0], [1.0, 0.0]])  # the corners
    spread_far_before = _numpy(ens.values(obs, np.tile(far, (4, 1, 1)))).std(0).mean()
    for _ in range(300):
        ens.update(batch)
    spread_seen = _numpy(ens.values(obs, seen[:, None])).std(0).mean()
    spread_far = _numpy(ens.values(obs, np.tile(far, (4, 1, 1)))).std(0).mean()
    assert spread_seen < 0.01 < 0.25 * spread_far_before < spread_far


# ------------------------------------------------------------------ seeds and devices
def _trained(seed: int, device: str = "cpu") -> np.ndarray:
    ens = _ensemble(seed=seed, mask_prob=0.5, device=device)
    rng = np.random.default_rng(12)
    for _ in range(5):
        ens.update(_batch(rng))
    return _numpy(ens.values(*_query(np.random.default_rng(13))))


def test_seeds_reproduce_and_differ() -> None:
    np.testing.assert_array_equal(_trained(3), _trained(3))
    assert not np.allclose(_trained(3), _trained(4))


@pytest.mark.parametrize("device", DEVICES)
def test_same_seed_same_ensemble_on_every_device(device: str) -> None:
    np.testing.assert_allclose(_trained(3, device), _trained(3), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("spaces_or_kwargs", "error", "name"),
    [
        ({"observation_space": spaces.Discrete(3)}, TypeError, "observation_space"),
        ({"action_space": spaces.Discrete(3)}, TypeError, "action_space"),
        ({"action_space": spaces.Box(-np.inf, np.inf, (2,))}, ValueError, "action_space"),
        ({"action_space": spaces.Box(-1.0, np.inf, (2,))}, ValueError, "action_space"),
        ({"action_space": spaces.Box(-1.0, 1.0, (2, 2))}, ValueError, "action_space"),
        (
            {"action_space": spaces.Box(np.zeros(2), np.array([1.0, 0.0]), dtype=np.float64)},
            ValueError,
            "high > low",
        ),
        ({"num_heads": 0}, ValueError, "num_heads"),
        ({"hidden_sizes": 8}, TypeError, "hidden_sizes"),
        ({"prior_scale": -1.0}, ValueError, "prior_scale"),
        ({"gamma": 1.5}, ValueError, "gamma"),
        ({"tau": 0.0}, ValueError, "tau"),
        ({"tau": 1.5}, ValueError, "tau"),
        ({"learning_rate": 0.0}, ValueError, "learning_rate"),
        ({"mask_prob": 0.0}, ValueError, "mask_prob"),
        ({"mask_prob": 1.5}, ValueError, "mask_prob"),
        ({"seed": -1}, ValueError, "seed"),
        ({"dtype": torch.float16}, TypeError, "dtype"),
        ({"device": "no-such-device"}, ValueError, "device"),
    ],
)
def test_bad_settings_name_themselves(spaces_or_kwargs: dict, error: type, name: str) -> None:
    args = {"observation_space": OBS, "action_space": ACT, "seed": 0, **spaces_or_kwargs}
    with pytest.raises(error, match=name):
        ContinuousQEnsemble(**args)


def _bad_queries() -> list[tuple[str, tuple, type, str]]:
    obs, actions = _query(np.random.default_rng(0))
    nan_obs, far = obs.copy(), actions.copy()
    nan_obs[1, 0, 2] = np.nan
    far[2, 3, 1] = 3.5  # above high = 3
    return [
        ("values", (obs[:, :1], actions), ValueError, "observations"),
        ("values", (nan_obs, actions), ValueError, "observations"),
        ("values", (np.full((5, 2, 3), 1e39), actions), ValueError, "observations .* float32"),
        ("values", (np.full((5, 2, 3), "a"), actions), TypeError, "observations"),
        ("values", (obs, actions[:, 0]), ValueError, "actions"),
        ("values", (obs, actions[:4]), ValueError, "actions"),
        ("values", (obs, far), ValueError, "actions .* bounds"),
        ("values", (obs, actions + 1j), TypeError, "actions"),
        ("expected_improvement", (obs, actions, np.zeros(4)), ValueError, "baseline"),
        ("expected_improvement", (obs, actions, np.full(5, np.inf)), ValueError, "baseline"),
        ("head_values", (obs, actions, 4), ValueError, "head"),
        ("head_values", (obs, actions, 1.0), TypeError, "head"),
        ("sample_values", (obs, actions, 0), TypeError, "rng"),
        ("sample_head", (np.random.RandomState(0),), TypeError, "rng"),
    ]


@pytest.mark.parametrize(("method", "args", "error", "name"), _bad_queries())
def test_bad_queries_name_their_argument(method: str, args: tuple, error: type, name: str) -> None:
    ens = _ensemble(dtype=torch.float32)
    with pytest.raises(error, match=name):
        getattr(ens, method)(*args)


def _bad_batches() -> list[tuple[Any, type, str]]:
    rng = np.random.default_rng(0)
    good = _batch(rng)
    outside = good.next_actions.copy()
    outside[0, 0] = -2.5
    return [
        (tuple(good), TypeError, "batch"),
        (good._replace(rewards=np.full(12, np.nan)), ValueError, "rewards"),
        (good._replace(rewards=np.zeros(11)), ValueError, "rewards"),
        (good._replace(dones=np.full(12, 0.5)), ValueError, "dones"),
        (good._replace(dones=np.full(12, 1 + 1e-12)), ValueError, "dones"),
        (good._replace(next_observations=good.next_observations[:3]), ValueError, "next_obs"),
        (good._replace(actions=good.actions[:, :1]), ValueError, "actions"),
        (good._replace(next_actions=outside), ValueError, "next_actions"),
        (good._replace(next_actions=lambda s: torch.zeros(len(s), 3)), ValueError, "next_actions"),
        (good._replace(masks=-np.ones((12, 4))), ValueError, "masks"),
        (good._replace(masks=np.ones((12, 3))), ValueError, "masks"),
    ]


@pytest.mark.parametrize(("batch", "error", "name"), _bad_batches())
def test_a_refused_batch_names_its_field_and_changes_nothing(
    batch: Any, error: type, name: str
) -> None:
    ens = _ensemble()
    before = [p.clone() for p in (*ens.online.parameters(), *ens.target.parameters())]
    with pytest.raises(error, match=name):
        ens.update(batch)
    after = [*ens.online.parameters(), *ens.target.parameters()]
    assert all(torch.equal(p, q) for p, q in zip(after, before, strict=True))
    assert ens.num_updates == 0
