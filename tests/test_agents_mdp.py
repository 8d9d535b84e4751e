"""Tabular MDP agents on a self-contained deterministic DeepSea and on hand-built posteriors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from delight_gym.agents.mdp import MDP_AGENTS, make_mdp_agent
from delight_gym.de.rule import epsilon_schedule
from tests.tabular_reference import dense_value_iteration

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
    ),
]


class TinyDeepSea:
    """Deterministic DeepSea (bsuite's rules), one random right/left mapping per row of a batch.

    State ``row·N + col``; "right" costs ``0.01/N``; right in the bottom-right cell pays 1.
    """

    def __init__(self, size, batch, seed=0):
        self.n = size
        self.right = np.random.default_rng(seed).integers(2, size=(batch, size, size))
        self.rows = np.arange(batch)

    def reset(self):
        self.row = np.zeros(len(self.rows), dtype=np.int64)
        self.col = np.zeros(len(self.rows), dtype=np.int64)
        return self.row * self.n + self.col

    def step(self, actions):
        n = self.n
        right = actions == self.right[self.rows, self.row, self.col]
        reward = np.where(right, -0.01 / n, 0.0)
        reward += right & (self.col == n - 1) & (self.row == n - 1)
        self.col = np.where(right, np.minimum(self.col + 1, n - 1), np.maximum(self.col - 1, 0))
        self.row = self.row + 1
        return self.row * n + self.col, reward


def play(agent, env, episodes, record=None):
    """Run episodes; returns the (episodes, batch) returns and the actions taken."""
    returns, actions_log = [], []
    for _ in range(episodes):
        agent.begin_episode()
        s = env.reset()
        ret = np.zeros(len(env.rows))
        for h in range(env.n):
            a = agent.act(torch.as_tensor(s), h)
            if record is not None:
                record(agent, s, h)
            nxt, r = env.step(a.cpu().numpy())
            agent.observe(torch.as_tensor(s), a, torch.as_tensor(r), torch.as_tensor(nxt), h)
            ret += r
            actions_log.append(a.cpu().numpy())
            s = nxt
        returns.append(ret)
    return np.array(returns), np.array(actions_log)


def new_agent(name, size, batch, seed=0, **kw):
    return make_mdp_agent(
        name, batch, size * size, 2, size, reward_range=(-0.01 / size, 1.0), seed=seed, **kw
    )


@pytest.mark.parametrize("device", DEVICES)
def test_psrl_converges_on_tiny_deep_sea(device):
    size, batch = 4, 8
    env = TinyDeepSea(size, batch, seed=1)
    returns, _ = play(new_agent("psrl", size, batch, seed=2, device=device), env, 120)
    optimal = 1.0 - 0.01
    # Every seed finds the treasure and then plays the optimal path nearly always.
    assert np.all((returns > 0.5).any(axis=0))
    late = returns[-30:]
    assert np.mean(np.isclose(late, optimal)) > 0.9


@pytest.mark.parametrize("name", MDP_AGENTS)
def test_same_seed_same_actions_and_rows_are_independent(name):
    size, episodes = 4, 6
    _, a1 = play(new_agent(name, size, 3, seed=7), TinyDeepSea(size, 3, seed=5), episodes)
    _, a2 = play(new_agent(name, size, 3, seed=7), TinyDeepSea(size, 3, seed=5), episodes)
    np.testing.assert_array_equal(a1, a2)
    # Row 0 of the batch of 3 behaves like a batch of 1 with the same seed and instance.
    single_env = TinyDeepSea(size, 1)
    single_env.right = TinyDeepSea(size, 3, seed=5).right[:1]
    _, a_one = play(new_agent(name, size, 1, seed=7), single_env, episodes)
    np.testing.assert_array_equal(a1[:, 0], a_one[:, 0])


def test_delight_q_post_is_the_from_scratch_posterior_mean_plan():
    size, batch = 5, 6
    agent = new_agent("delight", size, batch, seed=3)
    checked = []

    def record(ag, s, h):
        info = ag.last_info
        explored = info["explored"].numpy()
        if h == 0 or not explored.any():
            return
        # Independent dense plan of the current posterior mean, from its counts.
        post = ag.posterior
        ref = dense_value_iteration(post.mean_reward(), post.mean_transitions_dense(), size)[h]
        rows = np.nonzero(explored)[0]
        expected = ref[rows, s[rows]]
        got = info["q_post"][rows]
        assert torch.allclose(got, expected, atol=1e-12, rtol=0)
        q_plan = ag.q_plan[h][rows, s[rows]]
        host = torch.softmax(q_plan / 0.01, dim=-1)
        ei = torch.clamp(expected - (host * q_plan).sum(-1, keepdim=True), min=0.0)
        assert torch.allclose(info["expected_improvement"][rows], ei, atol=1e-12, rtol=0)
        checked.append(len(rows))

    # record() runs right after act(), before observe(): the posterior is the one act() used.
    play(agent, TinyDeepSea(size, batch, seed=4), 4, record=record)
    assert sum(checked) > 20


def _primed_delight(gate_price):
    """S = 2, H = 2, self-loop at state 1; host at state 1 slightly prefers action 0."""
    agent = make_mdp_agent(
        "delight", 4, 2, 2, 2, seed=0, half_life=1e15, gate_price=gate_price, transition_prior=0.01
    )
    post = agent.posterior
    one = torch.ones(4, dtype=torch.int64)
    for _ in range(100):  # (1, 0): reward 0.51 on average -> Beta(52, 50), mean 0.5098
        post.update(one, 0 * one, torch.full((4,), 0.51, dtype=torch.float64), one)
    agent.begin_episode()
    return agent, one


def test_delight_override_fires_when_online_evidence_beats_the_frozen_plan():
    agent, one = _primed_delight(gate_price=0.1)
    agent.act(one, 0)
    # Observe action 1 in state 1 paying 1: Q_post_1(1, 1) = 2/3 > V_plan_1(1).
    agent.observe(one, one, torch.ones(4, dtype=torch.float64), one, 0)
    actions = agent.act(one, 1)
    m0 = 52 / 102
    host1 = 1.0 / (1.0 + math.exp((m0 - 0.5) / 0.01))
    v_plan = (1 - host1) * m0 + host1 * 0.5
    info = agent.last_info
    assert bool(info["explored"].all())  # ε ≈ 1
    np.testing.assert_allclose(info["expected_improvement"][:, 1].numpy(), 2 / 3 - v_plan)
    # Delight (2/3 - V)·ℓ(1) = 0.159·0.98 ≥ λ = 0.1 and action 0 has no surprisal: q = δ_1.
    assert bool(info["overridden"].all())
    assert torch.equal(actions, one)
    assert torch.equal(agent.override_count, one)
    assert torch.equal(info["gate_size"], one)


def test_delight_gate_stays_shut_above_the_delight():
    agent, one = _primed_delight(gate_price=0.2)  # delight 0.156 < 0.2
    agent.act(one, 0)
    agent.observe(one, one, torch.ones(4, dtype=torch.float64), one, 0)
    agent.act(one, 1)
    assert not bool(agent.last_info["overridden"].any())
    assert int(agent.override_count.sum()) == 0


def test_delight_with_infinite_gate_price_is_the_greedy_host():
    size, batch = 4, 5
    _, a_de = play(
        new_agent("delight", size, batch, seed=1, gate_price=math.inf), TinyDeepSea(size, batch), 5
    )
    _, a_host = play(new_agent("greedy", size, batch, seed=1), TinyDeepSea(size, batch), 5)
    np.testing.assert_array_equal(a_de, a_host)


@pytest.mark.parametrize(("clock", "t_after_one_episode"), [("step", 3), ("episode", 1)])
def test_epsilon_clock(clock, t_after_one_episode):
    size = 3
    agent = new_agent("egreedy", size, 2, epsilon_clock=clock, half_life=10.0)
    env = TinyDeepSea(size, 2)
    play(agent, env, 1)
    agent.begin_episode()
    agent.act(torch.as_tensor(env.reset()), 0)
    assert agent.last_info["epsilon"] == pytest.approx(epsilon_schedule(t_after_one_episode, 10.0))


def test_egreedy_without_exploration_is_the_plan_argmax():
    size, batch = 4, 4
    agent = new_agent("egreedy", size, batch, half_life=1e-12)
    env = TinyDeepSea(size, batch)
    play(agent, env, 3)
    agent.begin_episode()
    s = torch.as_tensor(env.reset())
    a = agent.act(s, 0)
    assert torch.equal(a, torch.argmax(agent.posterior.plan_mean()[0][torch.arange(batch), s], -1))


def test_bad_input():
    with pytest.raises(ValueError, match="agent must be one of"):
        make_mdp_agent("ucb", 1, 4, 2, 2)
    with pytest.raises(ValueError, match="epsilon_clock"):
        make_mdp_agent("delight", 1, 4, 2, 2, epsilon_clock="round")
    with pytest.raises(ValueError, match="temperature"):
        make_mdp_agent("greedy", 1, 4, 2, 2, temperature=0.0)
    with pytest.raises(ValueError, match="gate_price"):
        make_mdp_agent("delight", 1, 4, 2, 2, gate_price=-1.0)
    agent = make_mdp_agent("delight", 2, 4, 2, 2)
    s = torch.tensor([0, 1])
    with pytest.raises(RuntimeError, match="begin_episode"):
        agent.act(s, 0)
    agent.begin_episode()
    with pytest.raises(ValueError, match="h must be the current step"):
        agent.act(s, 1)
    with pytest.raises(TypeError, match="h must be an integer"):
        agent.act(s, 0.0)
    with pytest.raises(ValueError, match="states"):
        agent.act(torch.tensor([0, 4]), 0)
    a = agent.act(s, 0)
    with pytest.raises(ValueError, match="next_states is required"):
        agent.observe(s, a, torch.zeros(2, dtype=torch.float64), None, 0)
    with pytest.raises(ValueError, match="rewards must lie in reward_range"):
        agent.observe(s, a, torch.tensor([0.0, 2.0]), s, 0)


def test_run_deep_sea_regret_and_first_success():
    from delight_gym.experiments.deep_sea import run_deep_sea

    size, episodes, seeds = 4, 25, 3
    result = run_deep_sea(size, episodes, seeds, ("greedy", "delight"), seed=2, progress=False)
    cost = 0.01 / size
    for name in ("greedy", "delight"):
        regret = result.regret[name]
        assert regret.shape == (episodes, seeds)
        # Deterministic DeepSea: an episode has zero regret iff it took the all-right path to
        # the treasure; otherwise it missed the +1 and regret = 1 - cost·(N - #rights) ≥ 0.99.
        success = regret < 1e-9
        assert np.all(success | (regret >= 1.0 - size * cost - 1e-12))
        first = np.where(success.any(axis=0), success.argmax(axis=0), -1)
        np.testing.assert_array_equal(result.first_success[name], first)
    with pytest.raises(ValueError, match="agents"):
        run_deep_sea(size, 1, 1, ("ucb",), progress=False)


@pytest.mark.slow
def test_agents_find_the_treasure_at_size_10():
    """Sanity at N = 10, 300 episodes, 10 seeds: the posterior-mean agents and PSRL all find it."""
    from delight_gym.experiments.deep_sea import run_deep_sea

    result = run_deep_sea(10, 300, 10, MDP_AGENTS, progress=False)
    for name in ("psrl", "delight", "greedy"):
        assert np.mean(result.first_success[name] >= 0) >= 0.9, name
