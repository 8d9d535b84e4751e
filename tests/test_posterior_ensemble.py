"""EnsembleQPosterior: exact ensemble EI, batched heads equal K separate MLPs, training, state."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gymnasium import spaces  # noqa: E402
from torch import nn  # noqa: E402

from delight_gym.de.posterior import ValuePosterior, evaluate_posterior  # noqa: E402
from delight_gym.posteriors.ensemble import (  # noqa: E402
    EnsembleQPosterior,
    Transitions,
    ensemble_expected_improvement,
)


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Small batched heads run fastest on one thread (and a shared machine stays usable)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
    ),
]


def _one_hot_batch(n: int, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    obs = np.zeros((n, *shape), dtype=np.float32)
    flat = obs.reshape(n, -1)
    flat[np.arange(n), rng.integers(flat.shape[1], size=n)] = 1.0
    return obs


# -- expected improvement ---------------------------------------------------------------------


def test_ensemble_ei_hand_value() -> None:
    # Heads 1 and 3 over a baseline of 2: (0 + 1)/2 = 0.5; the other action: (0 + 0)/2.
    q = np.array([[[1.0, 0.0]], [[3.0, 1.5]]])  # (K=2, n=1, A=2)
    ei = ensemble_expected_improvement(q, np.array([2.0]))
    np.testing.assert_allclose(ei, [[0.5, 0.0]])
    ei_t = ensemble_expected_improvement(
        torch.as_tensor(q), torch.tensor([2.0], dtype=torch.float64)
    )
    np.testing.assert_allclose(ei_t.numpy(), [[0.5, 0.0]])


@pytest.mark.parametrize("device", DEVICES)
def test_ei_equals_per_head_loop(device: str) -> None:
    post = EnsembleQPosterior(
        spaces.Box(-1, 1, (3,), np.float32), 4, num_heads=7, seed=1, device=device
    )
    obs = np.random.default_rng(0).uniform(-1, 1, (5, 3)).astype(np.float32)
    heads = post.head_values(obs)
    assert heads.shape == (7, 5, 4)
    base = np.random.default_rng(1).normal(0, 0.2, 5)
    expected = np.zeros((5, 4))
    for i in range(5):
        for a in range(4):
            expected[i, a] = np.mean([max(heads[k, i, a] - base[i], 0.0) for k in range(7)])
    np.testing.assert_allclose(post.expected_improvement(obs, base), expected, rtol=1e-12)
    for k in range(7):
        np.testing.assert_array_equal(post.q_values(obs, k), heads[k])
    np.testing.assert_allclose(post.mean(obs), heads.mean(axis=0), rtol=1e-12)
    # evaluate: host baseline sum_b pi(b) m(s, b), then the same EI, in one call.
    probs = np.random.default_rng(2).dirichlet(np.ones(4), 5)
    values = post.evaluate(obs, probs)
    m = heads.mean(axis=0)
    v = (probs * m).sum(axis=1)
    np.testing.assert_allclose(values.mean, m, rtol=1e-12)
    np.testing.assert_allclose(values.baseline, v, rtol=1e-12)
    np.testing.assert_allclose(
        values.expected_improvement, np.maximum(heads - v[None, :, None], 0).mean(0), rtol=1e-12
    )
    vmax = post.evaluate(obs, probs, baseline="max")
    np.testing.assert_allclose(vmax.baseline, m.max(axis=1), rtol=1e-12)
    # The protocol's evaluate_posterior goes through evaluate.
    assert isinstance(post, ValuePosterior)
    via = evaluate_posterior(post, obs, probs)
    np.testing.assert_allclose(via.expected_improvement, values.expected_improvement)


# -- batched heads = K separate MLPs -------------------------------------------------------------


def _separate_heads(
    post: EnsembleQPosterior, frozen_rows: slice | None = None
) -> list[nn.Sequential]:
    """K plain torch MLPs holding the posterior's trainable (or frozen) weights."""
    net = post.network
    k = net.num_heads
    out = []
    for head in range(k):
        layers: list[nn.Module] = []
        for i in range(net.num_layers):
            if frozen_rows is None:
                w, b = net.weights[i][head], net.biases[i][head]
            else:
                w = getattr(net, f"frozen_weights_{i}")[frozen_rows][head]
                b = getattr(net, f"frozen_biases_{i}")[frozen_rows][head]
            lin = nn.Linear(w.shape[0], w.shape[1])
            with torch.no_grad():
                lin.weight.copy_(w.T)
                lin.bias.copy_(b[0])
            layers += [lin, nn.ReLU()]
        out.append(nn.Sequential(*layers[:-1]).double())
    return out


@pytest.mark.parametrize("one_hot", [False, True])
def test_batched_heads_equal_separate_mlps(one_hot: bool) -> None:
    k, beta, gamma = 3, 2.5, 0.9
    if one_hot:
        space = spaces.Box(0, 1, (3, 4), np.float32)
    else:
        space = spaces.Box(-2, 2, (5,), np.float32)
    post = EnsembleQPosterior(
        space, 3, num_heads=k, hidden_sizes=(8, 6), prior_scale=beta, gamma=gamma, seed=3
    )
    assert post.network.encoding == ("one_hot" if one_hot else "dense")
    rng = np.random.default_rng(4)
    b = 16
    if one_hot:
        obs = _one_hot_batch(b, (3, 4), rng)
        nxt = _one_hot_batch(b, (3, 4), rng)
        nxt[0] = 0.0  # an all-zero row (DeepSea after its last step): bias only
        obs[1] = 0.0  # and one where the heads are trained (the look-up with a gradient)
        assert post.network.encode(nxt).dtype == torch.int64  # the row look-up is used
    else:
        obs = rng.uniform(-2, 2, (b, 5)).astype(np.float32)
        nxt = rng.uniform(-2, 2, (b, 5)).astype(np.float32)
    # Make the targets differ from the trainable heads, as after some training.
    with torch.no_grad():
        for i in range(post.network.num_layers):
            getattr(post.network, f"frozen_weights_{i}")[:k] += 0.05
    trainable = _separate_heads(post)
    targets = _separate_heads(post, slice(0, k))
    priors = _separate_heads(post, slice(k, 2 * k))
    x = torch.as_tensor(obs.reshape(b, -1), dtype=torch.float64)
    xn = torch.as_tensor(nxt.reshape(b, -1), dtype=torch.float64)
    ref = torch.stack([trainable[h](x) + beta * priors[h](x) for h in range(k)])
    np.testing.assert_allclose(post.head_values(obs), ref.detach().numpy(), rtol=1e-5, atol=1e-6)

    # One Adam step of every head on one batch = K separate Adam steps on K separate losses.
    actions = rng.integers(3, size=b)
    rewards = rng.normal(size=b)
    terminated = rng.random(b) < 0.3
    masks = rng.random((b, k)) < 0.6
    optimizers = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in trainable]
    for h in range(k):
        with torch.no_grad():
            y = (
                torch.as_tensor(rewards)
                + gamma
                * torch.as_tensor(1.0 - terminated)
                * (targets[h](xn) + beta * priors[h](xn)).max(dim=1).values
            )
        q = trainable[h](x) + beta * priors[h](x).detach()
        q_sa = q[torch.arange(b), torch.as_tensor(actions)]
        loss = (0.5 * (q_sa - y) ** 2 * torch.as_tensor(masks[:, h], dtype=torch.float64)).mean()
        optimizers[h].zero_grad()
        loss.backward()
        optimizers[h].step()
    post.td_step(Transitions(obs, nxt, actions, rewards, terminated, masks))
    after = torch.stack([trainable[h](x) + beta * priors[h](x) for h in range(k)])
    np.testing.assert_allclose(post.head_values(obs), after.detach().numpy(), rtol=1e-5, atol=1e-6)
    for h in range(k):
        for i, lin in enumerate(trainable[h][::2]):
            np.testing.assert_allclose(
                post.network.weights[i][h].detach().numpy(),
                lin.weight.detach().numpy().T,
                rtol=1e-5,
                atol=1e-7,
            )


# -- training ------------------------------------------------------------------------------------


def test_heads_agree_on_data_and_differ_off_it() -> None:
    """A fitted toy regression (γ = 0, every transition terminal: the TD target is the reward)."""
    post = EnsembleQPosterior(
        spaces.Box(-4, 4, (1,), np.float32),
        1,
        num_heads=8,
        hidden_sizes=(32, 32),
        gamma=0.0,
        batch_size=64,
        learning_starts=64,
        learning_rate=3e-3,
        seed=0,
    )
    rng = np.random.default_rng(0)

    def truth(x: np.ndarray) -> np.ndarray:
        return np.sin(2 * x)

    for _ in range(12):
        x = rng.uniform(-1, 1, (128, 1)).astype(np.float32)
        post.update(x, np.zeros(128, dtype=np.int64), truth(x[:, 0]), x, np.ones(128, bool))
    assert post.sgd_steps == 12 * 128
    seen = np.linspace(-0.9, 0.9, 50, dtype=np.float32)[:, None]
    unseen = np.linspace(3.0, 4.0, 50, dtype=np.float32)[:, None]
    spread_seen = post.head_values(seen)[:, :, 0].std(axis=0).mean()
    spread_unseen = post.head_values(unseen)[:, :, 0].std(axis=0).mean()
    fit = np.abs(post.mean(seen)[:, 0] - truth(seen[:, 0])).mean()
    assert fit < 0.05, fit
    assert spread_seen < 0.05, spread_seen
    assert spread_unseen > 10 * spread_seen, (spread_seen, spread_unseen)


def test_update_counts_learning_starts_sgd_period_and_target_updates() -> None:
    post = EnsembleQPosterior(
        spaces.Discrete(4),
        2,
        num_heads=2,
        hidden_sizes=(4,),
        batch_size=8,
        learning_starts=10,
        sgd_period=2,
        target_update_period=3,
        seed=0,
    )
    net = post.network

    def feed(n: int) -> None:
        s = np.arange(n) % 4
        post.update(s, s % 2, np.ones(n), (s + 1) % 4, np.zeros(n, bool))

    feed(9)
    assert post.sgd_steps == 0  # buffer below learning_starts
    feed(3)  # 12 transitions: due = 12 // 2 - 9 // 2 = 2
    assert post.sgd_steps == 2 and post.transitions == 12
    assert not torch.equal(net.weights[0], net.frozen_weights_0[:2])
    feed(2)  # third step: the targets are copied
    assert post.sgd_steps == 3
    assert torch.equal(net.weights[0], net.frozen_weights_0[:2])
    feed(2)
    assert not torch.equal(net.weights[0], net.frozen_weights_0[:2])


def test_the_three_callers_take_the_same_td_steps() -> None:
    """One TD step for every ensemble trainer: the posterior's ``td_step``, BootstrappedDQN's
    ``train`` (SB3's replay sample) and SeedBatchedBootDQN (one seed, its batch per head), on
    the same batch from the same heads with the same settings (no masks, targets copied every
    2 steps). The posterior and the SB3 algorithm run the same code: equal bit for bit. The
    seed-batched agent runs the generic path (no state tables) with its own unfused Adam: equal
    to float32 rounding."""
    import gymnasium as gym
    from stable_baselines3.common.logger import Logger

    from delight_gym.agents.boot_dqn import SeedBatchedBootDQN
    from delight_gym.sb3 import BootstrappedDQN
    from delight_gym.sb3.bootstrapped_dqn import BootstrapReplayBufferSamples

    b, k, steps = 24, 3, 4
    settings = {"gamma": 0.9, "learning_rate": 1e-2, "batch_size": b}
    model = BootstrappedDQN(
        "MlpPolicy", gym.make("DeepSea-v0", size=4, mapping_seed=0), num_heads=k,
        policy_kwargs={"net_arch": [8, 8]}, target_update_interval=2, seed=0, device="cpu",
        **settings,
    )  # fmt: skip
    space = model.observation_space
    post = EnsembleQPosterior(space, 2, num_heads=k, hidden_sizes=(8, 8), **settings)
    agent = SeedBatchedBootDQN(
        1, 16, 2, num_heads=k, hidden_sizes=(8, 8), buffer_size=b, learning_starts=10**9,
        target_update_period=2, **settings,
    )  # fmt: skip
    start = {name: v.clone() for name, v in model.ensemble.network.state_dict().items()}
    post.network.load_state_dict(start)
    agent.network.load_state_dict(start)

    rng = np.random.default_rng(7)
    states, actions = rng.integers(0, 16, b), rng.integers(0, 2, b)
    rewards = rng.normal(size=b).astype(np.float32)
    terminated = rng.random(b) < 0.25
    nxt = np.where(terminated, -1, rng.integers(0, 16, b))  # -1: the all-zero final row
    obs, next_obs = (np.vstack([np.eye(16), np.zeros((1, 16))])[i] for i in (states, nxt))
    obs, next_obs = (x.reshape(b, 4, 4).astype(np.float32) for x in (obs, next_obs))

    for i in range(b):  # the agent's replay holds the batch in order
        agent.observe(states[i : i + 1], actions[i : i + 1], rewards[i : i + 1],
                      nxt[i : i + 1], terminated[i : i + 1])  # fmt: skip
    sample = BootstrapReplayBufferSamples(
        *map(torch.as_tensor, (obs, actions[:, None], next_obs)),
        torch.as_tensor(terminated[:, None].astype(np.float32)),
        torch.as_tensor(rewards[:, None]),
    )
    model.replay_buffer.sample = lambda batch_size, env=None: sample  # type: ignore[method-assign]
    model.set_logger(Logger(folder=None, output_formats=[]))

    model.train(steps, b)
    for step in range(1, steps + 1):
        post.td_step(Transitions(obs, next_obs, actions, rewards, terminated))
        if step % 2 == 0:
            post.update_target()
        agent.td_step(torch.arange(b)[None])
    assert model._n_updates == agent.gradient_steps == steps
    sb3 = model.ensemble.network.state_dict()
    for name, value in post.network.state_dict().items():
        assert torch.equal(value, sb3[name]), name
        assert not torch.equal(value, start[name]), name  # trained (targets: copied)
        torch.testing.assert_close(agent.network.state_dict()[name], value, rtol=1e-5, atol=1e-6)


def test_mask_prob_draws_masks() -> None:
    post = EnsembleQPosterior(spaces.Discrete(3), 2, num_heads=50, mask_prob=0.3, seed=0)
    post.update(
        np.zeros(40, np.int64),
        np.zeros(40, np.int64),
        np.zeros(40),
        np.ones(40, np.int64),
        np.zeros(40, bool),
    )
    masks = post.state_dict()["buffer"]["masks"][:40]
    assert masks.shape == (40, 50)
    assert abs(masks.float().mean().item() - 0.3) < 0.05  # 2000 draws: s.e. 0.01


@pytest.mark.parametrize("kind", ["one_hot", "dense", "index"])
def test_encode_is_the_same_for_numpy_and_torch_inputs(kind: str) -> None:
    """CPU tensors are checked through numpy; a bfloat16 tensor (no numpy dtype) in torch:
    the same encoding as the numpy batch, and the same errors."""
    rng = np.random.default_rng(0)
    if kind == "index":
        space: spaces.Space = spaces.Discrete(7, start=2)
        obs = rng.integers(2, 9, size=12)
    elif kind == "one_hot":
        space = spaces.Box(0, 1, (3, 4), np.float32)
        obs = _one_hot_batch(12, (3, 4), rng)
        obs[[0, 5]] = 0.0  # all-zero rows encode as -1
    else:
        space = spaces.Box(-2, 2, (5,), np.float32)
        obs = rng.uniform(-2, 2, (12, 5)).astype(np.float32)
    net = EnsembleQPosterior(space, 2, num_heads=2, seed=0).network
    expected = net.encode(obs)
    assert expected.dtype == (torch.float32 if kind == "dense" else torch.int64)
    if kind == "one_hot":
        assert expected[0] == -1 and expected[5] == -1
        assert torch.equal(expected[1:5], torch.as_tensor(obs[1:5].reshape(4, -1).argmax(1)))
    assert torch.equal(net.encode(torch.as_tensor(obs)), expected)
    low = torch.as_tensor(obs).to(torch.bfloat16)  # its values, rounded, in numpy
    assert torch.equal(net.encode(low), net.encode(low.to(torch.float64).numpy()))
    bad = np.full_like(obs, 50) if kind == "index" else obs.reshape(12, -1)[:, :-1]
    for value in (bad, torch.as_tensor(bad), torch.as_tensor(bad).to(torch.bfloat16)):
        with pytest.raises(ValueError, match="observations"):
            net.encode(value)


def test_discrete_observations_use_row_lookup() -> None:
    post = EnsembleQPosterior(spaces.Discrete(5, start=2), 3, num_heads=4, seed=0)
    enc = post.network.encode(np.array([2, 6]))
    assert enc.tolist() == [0, 4]
    # (n, 1) like SB3's replay buffer gives the same values.
    np.testing.assert_array_equal(post.head_values(np.array([[2], [6]])), post.head_values([2, 6]))
    with pytest.raises(ValueError, match="observations must lie in"):
        post.mean(np.array([7]))


# -- device, seeding and state -------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_same_seed_same_posterior_on_every_device(device: str) -> None:
    space = spaces.Box(0, 1, (4, 4), np.float32)
    cpu = EnsembleQPosterior(space, 2, num_heads=5, seed=7)
    dev = EnsembleQPosterior(space, 2, num_heads=5, seed=7, device=device)
    assert dev.device.type == device
    obs = _one_hot_batch(6, (4, 4), np.random.default_rng(0))
    np.testing.assert_allclose(dev.head_values(obs), cpu.head_values(obs), rtol=1e-6, atol=1e-7)
    other = EnsembleQPosterior(space, 2, num_heads=5, seed=8)
    assert not np.allclose(other.head_values(obs), cpu.head_values(obs))


def _train(post: EnsembleQPosterior, steps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        s = rng.integers(6, size=4)
        post.update(
            s, rng.integers(2, size=4), rng.normal(size=4), (s + 1) % 6, rng.random(4) < 0.2
        )


@pytest.mark.parametrize("how", ["pickle", "state_dict"])
def test_state_round_trip_keeps_everything(how: str) -> None:
    kwargs = {
        "num_heads": 3,
        "hidden_sizes": (8,),
        "batch_size": 8,
        "learning_starts": 8,
        "mask_prob": 0.5,
    }
    post = EnsembleQPosterior(spaces.Discrete(6), 2, seed=0, **kwargs)
    _train(post, 10, seed=1)
    if how == "pickle":
        twin = pickle.loads(pickle.dumps(post))
    else:
        twin = EnsembleQPosterior(spaces.Discrete(6), 2, seed=99, **kwargs)
        twin.load_state_dict(copy.deepcopy(post.state_dict()))
    obs = np.arange(6)
    np.testing.assert_array_equal(twin.head_values(obs), post.head_values(obs))
    for name, buf in post.network.named_buffers():  # priors and targets
        assert torch.equal(buf, dict(twin.network.named_buffers())[name]), name
    assert torch.equal(twin.generator.get_state(), post.generator.get_state())
    assert (twin.transitions, twin.sgd_steps) == (post.transitions, post.sgd_steps)
    # Same future: same samples, masks and Adam moments give the same heads.
    _train(post, 5, seed=2)
    _train(twin, 5, seed=2)
    np.testing.assert_array_equal(twin.head_values(obs), post.head_values(obs))


def test_architecture_keywords_reach_the_network_with_its_defaults() -> None:
    """The posterior passes num_heads, hidden_sizes, prior_scale and encoding on to
    EnsembleQNetwork, whose defaults (bsuite-like) apply when they are left out."""
    unit_box = spaces.Box(0, 1, (4,), np.float32)
    net = EnsembleQPosterior(unit_box, 2, seed=0).network
    assert (net.num_heads, net.hidden_sizes, net.prior_scale) == (10, (64, 64), 3.0)
    assert net.encoding == "one_hot"  # "auto" on a [0, 1] Box
    net = EnsembleQPosterior(
        unit_box, 2, num_heads=3, hidden_sizes=[8], prior_scale=0.5, encoding="dense", seed=0
    ).network
    assert (net.num_heads, net.hidden_sizes, net.prior_scale) == (3, (8,), 0.5)
    assert net.encoding == "dense" and net.weights[0].shape == (3, 4, 8)


def test_the_three_front_ends_take_one_defaults_record_and_one_replay_rule() -> None:
    """SeedBatchedBootDQN, EnsembleQPosterior and BootstrappedDQN default to
    BOOT_DQN_DEFAULTS, and all accept learning_starts 0 (train from the first transition) and
    learning_starts beyond the buffer (never train in a short run), and refuse -1."""
    import inspect

    from delight_gym.agents.boot_dqn import SeedBatchedBootDQN
    from delight_gym.posteriors.boot_dqn_defaults import BOOT_DQN_DEFAULTS as D
    from delight_gym.sb3 import BootstrappedDQN

    def defaults(cls: type) -> dict[str, object]:
        sig = inspect.signature(cls.__init__)  # type: ignore[misc]
        return {n: p.default for n, p in sig.parameters.items()}

    common = ("learning_rate", "batch_size", "buffer_size", "learning_starts", "gamma")
    agent, post, sb3 = map(defaults, (SeedBatchedBootDQN, EnsembleQPosterior, BootstrappedDQN))
    for name in common:
        assert agent[name] == post[name] == sb3[name] == getattr(D, name), name
    assert agent["target_update_period"] == post["target_update_period"] == D.target_update_period
    assert sb3["target_update_interval"] == D.target_update_period
    assert agent["num_heads"] == sb3["num_heads"] == D.num_heads
    assert agent["prior_scale"] == sb3["prior_scale"] == D.prior_scale

    s = np.arange(6) % 4
    for starts, steps in ((0, 6), (1, 6), (100, 0)):
        p = EnsembleQPosterior(
            spaces.Discrete(4), 2, num_heads=2, hidden_sizes=(4,), batch_size=4,
            buffer_size=5, learning_starts=starts, seed=0,
        )  # fmt: skip
        for i in range(6):
            p.update(s[i : i + 1], s[i : i + 1] % 2, [1.0], (s[i : i + 1] + 1) % 4, [False])
        assert p.sgd_steps == steps, starts
        a = SeedBatchedBootDQN(1, 4, 2, num_heads=2, hidden_sizes=(4,), batch_size=4,
                               buffer_size=5, learning_starts=starts)  # fmt: skip
        for i in range(6):
            a.observe(s[i : i + 1], s[i : i + 1] % 2, [1.0], (s[i : i + 1] + 1) % 4, [0.0])
        assert a.gradient_steps == steps, starts
    for make in (
        lambda: EnsembleQPosterior(spaces.Discrete(4), 2, learning_starts=-1),
        lambda: SeedBatchedBootDQN(1, 4, 2, learning_starts=-1),
        lambda: BootstrappedDQN("MlpPolicy", "CartPole-v1", learning_starts=-1, device="cpu"),
    ):
        with pytest.raises(ValueError, match="learning_starts"):
            make()


# -- bad arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"num_heads": 0}, ValueError, "num_heads"),
        ({"num_heads": 2.5}, TypeError, "num_heads"),
        ({"hidden_sizes": "64"}, TypeError, "hidden_sizes"),
        ({"hidden_sizes": (64, 0)}, ValueError, "hidden_sizes"),
        ({"prior_scale": -1.0}, ValueError, "prior_scale"),
        ({"gamma": 1.5}, ValueError, "gamma"),
        ({"learning_rate": 0.0}, ValueError, "learning_rate"),
        ({"mask_prob": 0.0}, ValueError, "mask_prob"),
        ({"mask_prob": 1.5}, ValueError, "mask_prob"),
        ({"encoding": "sparse"}, ValueError, "encoding"),
        ({"encoding": "index"}, ValueError, "encoding"),
        ({"device": "nonsense"}, ValueError, "device"),
        ({"seed": "0"}, TypeError, "seed"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"num_head": 3}, TypeError, "num_head"),
        ({"generator": torch.Generator()}, TypeError, "generator"),
    ],
)
def test_bad_arguments_name_themselves(kwargs: dict, error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        EnsembleQPosterior(spaces.Box(-1, 1, (2,), np.float32), 2, **kwargs)


def test_bad_spaces_and_inputs() -> None:
    with pytest.raises(TypeError, match="observation_space"):
        EnsembleQPosterior(spaces.MultiBinary(3), 2)
    with pytest.raises(TypeError, match="action_space"):
        EnsembleQPosterior(spaces.Discrete(3), spaces.Box(0, 1, (2,)))
    post = EnsembleQPosterior(spaces.Box(-1, 1, (2,), np.float32), 2, num_heads=2, seed=0)
    with pytest.raises(ValueError, match="observations must have shape"):
        post.mean(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="baseline must have shape"):
        post.expected_improvement(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="baseline must be finite"):
        post.expected_improvement(np.zeros((1, 2)), np.array([np.nan]))
    with pytest.raises(ValueError, match="head must lie"):
        post.q_values(np.zeros((1, 2)), 2)
    with pytest.raises(ValueError, match="actions must"):
        post.update(
            np.zeros((1, 2)), np.array([2]), np.zeros(1), np.zeros((1, 2)), np.zeros(1, bool)
        )
    with pytest.raises(ValueError, match="rewards must"):
        post.update(
            np.zeros((1, 2)), np.array([1]), np.array([np.inf]), np.zeros((1, 2)), np.zeros(1, bool)
        )
    with pytest.raises(ValueError, match="baseline must be one of"):
        post.evaluate(np.zeros((1, 2)), np.array([[0.5, 0.5]]), baseline="min")
