"""SeedBatchedBootDQN: one network for S seeds' heads equals S separate ensembles."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from delight_gym.agents.boot_dqn import SeedBatchedBootDQN, one_hot_states
from delight_gym.envs.deep_sea import DeepSeaVectorEnv
from delight_gym.posteriors.ensemble import EnsembleQNetwork, Transitions
from delight_gym.posteriors.ensemble_td import ensemble_td_loss


def _filled(num_seeds: int = 3, num_heads: int = 4, states: int = 20) -> SeedBatchedBootDQN:
    agent = SeedBatchedBootDQN(
        num_seeds, states, 2, num_heads=num_heads, hidden_sizes=(8, 8), batch_size=16,
        learning_starts=10**9, seed=3,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    for _ in range(50):
        terminated = rng.random(num_seeds) < 0.2
        agent.observe(
            rng.integers(states, size=num_seeds),
            rng.integers(2, size=num_seeds),
            rng.normal(size=num_seeds),
            np.where(terminated, -1, rng.integers(states, size=num_seeds)),
            terminated,
        )
    with torch.no_grad():  # trainable heads apart from their targets
        for w in agent.network.parameters():
            w.add_(0.1 * torch.randn(w.shape, generator=torch.Generator().manual_seed(1)))
    return agent


def _seed_network(agent: SeedBatchedBootDQN, s: int) -> EnsembleQNetwork:
    """Seed ``s``'s heads copied into an ordinary K-head ensemble (the reference)."""
    k, h = agent.num_heads, agent.num_seeds * agent.num_heads
    net = EnsembleQNetwork(
        spaces.Discrete(agent.network.input_dim), 2, num_heads=k, hidden_sizes=(8, 8)
    )
    heads = slice(s * k, (s + 1) * k)
    with torch.no_grad():
        for i in range(agent.network.num_layers):
            net.weights[i].copy_(agent.network.weights[i][heads])
            net.biases[i].copy_(agent.network.biases[i][heads])
            for kind in ("weights", "biases"):
                src = agent.network.get_buffer(f"frozen_{kind}_{i}")
                dst = net.get_buffer(f"frozen_{kind}_{i}")
                dst[:k].copy_(src[heads])
                dst[k:].copy_(src[h + s * k : h + (s + 1) * k])
    return net


def _transitions(rows: dict[str, torch.Tensor]) -> Transitions:
    return Transitions(
        rows["states"], rows["next"], rows["actions"], rows["rewards"], rows["terminated"], None
    )


def test_batched_td_loss_and_gradients_equal_separate_ensembles() -> None:
    agent = _filled()
    idx = agent.sample()
    names = ("states", "next", "actions", "rewards", "terminated")  # the replay's columns
    rows = {
        name: buf.gather(1, idx) for name, buf in zip(names, agent._replay.values(), strict=True)
    }
    agent.optimizer.zero_grad()
    per_head = {name: agent._per_head(value) for name, value in rows.items()}
    loss, _ = ensemble_td_loss(agent.network, _transitions(per_head), agent.gamma)
    loss.backward()
    total = 0.0
    k = agent.num_heads
    for s in range(agent.num_seeds):
        net = _seed_network(agent, s)
        # the shared-input path of an ordinary ensemble on seed s's batch (-1: terminal rows)
        seed_rows = {name: value[s] for name, value in rows.items()}
        ref, _ = ensemble_td_loss(net, _transitions(seed_rows), agent.gamma)
        ref.backward()
        total += float(ref.detach())
        for i in range(net.num_layers):
            got = agent.network.weights[i].grad[s * k : (s + 1) * k]
            torch.testing.assert_close(got, net.weights[i].grad, rtol=1e-5, atol=1e-7)
    assert float(loss) == pytest.approx(total, rel=1e-6)


def test_one_hot_states() -> None:
    obs = np.zeros((3, 2, 2), dtype=np.float32)
    obs[0, 1, 0] = 1
    obs[2, 0, 1] = 1
    np.testing.assert_array_equal(one_hot_states(obs), [2, -1, 1])
    obs[1, 0, 0] = 0.5
    with pytest.raises(ValueError, match="one-hot"):
        one_hot_states(obs)


def _play(episodes: int, size: int = 4, seeds: int = 2) -> np.ndarray:
    agent = SeedBatchedBootDQN(
        seeds, size * size, 2, num_heads=5, hidden_sizes=(32, 32), batch_size=32,
        learning_starts=32, seed=0,
    )  # fmt: skip
    return agent.play(DeepSeaVectorEnv(seeds, size=size), episodes, seed=0)


def test_seeds_reproduce() -> None:
    np.testing.assert_array_equal(_play(12), _play(12))


@pytest.mark.slow
def test_learns_deep_sea() -> None:
    """A small DeepSea's treasure, rare at first, is found often by the end (bsuite's BootDQN
    solves it)."""
    bad = _play(100)
    assert bad[:, :5].mean() > 0.5
    assert bad[:, -20:].mean() < 0.5


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="num_seeds"):
        SeedBatchedBootDQN(0, 4, 2)
    with pytest.raises(ValueError, match="gamma"):
        SeedBatchedBootDQN(1, 4, 2, gamma=1.5)
    agent = SeedBatchedBootDQN(2, 4, 2)
    with pytest.raises(ValueError, match="num_envs"):
        agent.play(DeepSeaVectorEnv(3, size=2), 1)
