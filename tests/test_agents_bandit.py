"""Bernoulli agents against the slow, per-seed reference of the paper's algorithm.

Two layers: the dense agents (every arm, every step) must choose exactly the reference's arms
when the random draws are shared; the fast agents (untried arms as one block) must equal the
dense ones exactly where no untried-arm relabelling can occur (greedy, UCB1) and in
distribution everywhere, and match the independent reference at paper scale (slow).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from delight_gym.agents.bandits import BANDIT_AGENTS, DelightAgent, make_bandit_agent
from delight_gym.agents.dense import DenseDelightAgent, make_dense_bandit_agent
from delight_gym.de.rule import delight_rule, epsilon_schedule, sample_acting
from delight_gym.envs.bandits import BernoulliBanditVectorEnv
from delight_gym.experiments.bandit import AGENT_SEED_SALT, run_bernoulli
from delight_gym.posteriors.beta import beta_expected_improvement
from tests.paper_reference import run_reference

AGENTS = sorted(BANDIT_AGENTS)


def shared_draws(seed):
    """The batched agents' generator, replayed for the reference (same order of draws)."""
    rng = np.random.default_rng([seed, AGENT_SEED_SALT])

    def draw(kind, alphas, betas):
        if kind == "u":
            return rng.random(alphas.shape[0])
        if kind == "int":
            return rng.integers(alphas.shape[1], size=alphas.shape[0])
        return rng.beta(alphas, betas)

    return draw


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("num_arms", [5, 60])
def test_dense_agent_equals_reference_when_draws_are_shared(agent, num_arms):
    seeds, horizon, seed = 6, 250, 11
    result = run_bernoulli(agent, num_arms, horizon, seeds, seed=seed, dense=True)
    env = BernoulliBanditVectorEnv(seeds, num_arms=num_arms)
    env.reset(seed=seed)

    def reward_fn(actions):
        return env.step(actions)[1]

    actions, regret = run_reference(agent, env.means, horizon, shared_draws(seed), reward_fn)
    np.testing.assert_array_equal(result.actions, actions)
    np.testing.assert_allclose(result.regret, regret, atol=1e-15)


def test_pruned_and_dense_delight_choose_the_same_arms():
    runs = [
        run_bernoulli("delight", 200, 400, 8, seed=5, dense=True, prune=prune).actions
        for prune in (True, False)
    ]
    np.testing.assert_array_equal(*runs)


def test_pruning_never_drops_a_gated_arm():
    """Every arm skipped by the second-moment bound has true delight below λ."""
    agent = DenseDelightAgent(16, 40, seed=3, prune=True)
    dense = DenseDelightAgent(16, 40, seed=3, prune=False)
    env = BernoulliBanditVectorEnv(16, num_arms=40)
    env.reset(seed=3)
    for _ in range(200):
        means = agent.posterior.mean()
        v = means.max(axis=1)
        fast = agent.expected_improvement(means, v)
        exact = dense.expected_improvement(means, v)
        computed = fast > 0
        np.testing.assert_allclose(fast[computed], exact[computed], rtol=1e-12)
        assert np.all(agent.surprisal_cap * exact[~computed] < agent.gate_price)
        a = agent.act()
        r = env.step(a)[1]
        agent.update(a, r)
        dense.update(a, r)


def independent_reference(agent, num_arms, horizon, seeds, seed):
    """The paper's algorithm with its own instances, rewards and random numbers."""
    rng = np.random.default_rng([seed, 999])
    means = rng.uniform(size=(seeds, num_arms))

    def reward_fn(actions):
        return (rng.random(seeds) < means[np.arange(seeds), actions]).astype(float)

    def draw(kind, alphas, betas):
        if kind == "u":
            return rng.random(seeds)
        if kind == "int":
            return rng.integers(num_arms, size=seeds)
        return rng.beta(alphas, betas)

    _, regret = run_reference(agent, means, horizon, draw, reward_fn)
    return regret.sum(axis=1)


def assert_same_mean(a, b, z_max=4.0):
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    z = abs(a.mean() - b.mean()) / se
    assert z < z_max, f"means {a.mean():.2f} vs {b.mean():.2f}, z = {z:.2f}"


@pytest.mark.parametrize("agent", ["delight", "thompson", "egreedy"])
@pytest.mark.parametrize("num_arms", [10, 100])
def test_regret_matches_independent_reference_in_distribution(agent, num_arms):
    seeds, horizon = 40, 300
    ours = run_bernoulli(agent, num_arms, horizon, seeds, seed=123).cumulative[:, -1]
    ref = independent_reference(agent, num_arms, horizon, seeds, seed=456)
    assert_same_mean(ours, ref)


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["delight", "thompson", "egreedy"])
@pytest.mark.parametrize("num_arms", [10, 100, 1000])
def test_paper_scale_regret_matches_reference(agent, num_arms):
    """Issue #2 item 7 at paper scale: T = 1000, 100 seeds, within ~3 standard errors."""
    ours = run_bernoulli(agent, num_arms, 1000, 100, seed=0).cumulative[:, -1]
    ref = independent_reference(agent, num_arms, 1000, 100, seed=7)
    se_ours, se_ref = ours.std(ddof=1) / 10, ref.std(ddof=1) / 10
    print(
        f"\n{agent} K={num_arms}: delight_gym {ours.mean():.1f} ± {se_ours:.1f}, "
        f"paper reference {ref.mean():.1f} ± {se_ref:.1f}"
    )
    assert_same_mean(ours, ref, z_max=3.5)


@pytest.mark.parametrize("agent", AGENTS)
def test_same_seed_same_actions_and_different_seed_differs(agent):
    def actions(seed):
        a = make_bandit_agent(agent, 4, 30, seed=seed)
        rewards_rng = np.random.default_rng(0)
        out = []
        for _ in range(150):
            act = a.act()
            a.update(act, (rewards_rng.random(4) < 0.3).astype(float))
            out.append(act)
        return np.array(out)

    np.testing.assert_array_equal(actions(1), actions(1))
    if agent not in ("greedy", "ucb"):  # deterministic agents do not use their generator
        assert not np.array_equal(actions(1), actions(2))


def test_delight_last_info_is_consistent():
    agent = DelightAgent(32, 50, seed=0)
    rng = np.random.default_rng(1)
    for _ in range(50):
        a = agent.act()
        info = agent.last_info
        explored = info["explored"]
        assert np.all(info["gate_size"][~explored] == -1)  # gate only evaluated on explore
        assert np.all(info["gate_size"][info["overridden"]] > 0)
        assert np.all(info["gate_empty"][explored] == (info["gate_size"][explored] == 0))
        assert np.all(info["overridden"] <= explored)
        agent.update(a, (rng.random(32) < 0.5).astype(float))


@pytest.mark.parametrize("agent", ["greedy", "ucb"])
@pytest.mark.parametrize("num_arms", [3, 40, 500])
def test_fast_agent_equals_dense_where_no_relabelling_occurs(agent, num_arms):
    """Greedy and UCB1 only ever open the lowest-index untried arm: identical arms."""
    fast = run_bernoulli(agent, num_arms, 300, 8, seed=2)
    dense = run_bernoulli(agent, num_arms, 300, 8, seed=2, dense=True)
    np.testing.assert_array_equal(fast.actions, dense.actions)


@pytest.mark.parametrize("agent", ["delight", "thompson", "egreedy"])
@pytest.mark.parametrize("num_arms", [5, 300])
def test_fast_agent_matches_dense_in_distribution(agent, num_arms):
    fast = run_bernoulli(agent, num_arms, 300, 60, seed=0).cumulative[:, -1]
    dense = run_bernoulli(agent, num_arms, 300, 60, seed=500, dense=True).cumulative[:, -1]
    assert_same_mean(fast, dense)


def test_fast_delight_gate_matches_dense_gate():
    """Same posterior state ⇒ the block decision's gate size equals the dense gate size."""
    fast = DelightAgent(20, 30, seed=4)
    dense = DenseDelightAgent(20, 30, seed=4, prune=False)
    env = BernoulliBanditVectorEnv(20, num_arms=30)
    env.reset(seed=4)
    checked = 0
    for _ in range(120):
        a = fast.act()
        dense.act()
        explored = fast.last_info["explored"]
        # Both agents drew the same u1 (same generator, same order): same rows explore.
        np.testing.assert_array_equal(explored, dense.last_info["explored"])
        np.testing.assert_array_equal(
            fast.last_info["gate_size"][explored], dense.last_info["gate_size"][explored]
        )
        checked += explored.sum()
        r = env.step(a)[1]
        fast.update(a, r)
        dense.update(a, r)
    assert checked > 100


def test_make_bandit_agent_rejects_bad_input():
    with pytest.raises(ValueError, match="agent"):
        make_bandit_agent("nope", 2, 3)
    with pytest.raises(ValueError, match="num_arms"):
        make_bandit_agent("delight", 2, 0)
    with pytest.raises(TypeError, match="num_arms"):
        make_bandit_agent("delight", 2, 2.5)
    with pytest.raises(ValueError, match="gate_price"):
        make_bandit_agent("delight", 2, 3, gate_price=-1)
    with pytest.raises(ValueError, match="surprisal_cap"):
        make_bandit_agent("delight", 2, 3, surprisal_cap=0)
    with pytest.raises(ValueError, match="half_life"):
        make_bandit_agent("egreedy", 2, 3, half_life=0)
    with pytest.raises(TypeError, match="gate_price"):
        make_bandit_agent("thompson", 2, 3, gate_price=0.1)
    with pytest.raises(TypeError, match="prunes"):
        make_dense_bandit_agent("delight", 2, 3, prunes=False)
    with pytest.raises(ValueError, match="prior_beta"):
        make_dense_bandit_agent("greedy", 2, 3, prior_beta=0.0)
    agent = make_bandit_agent("greedy", 2, 3)
    with pytest.raises(ValueError, match="actions"):
        agent.update(np.array([0, 3]), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="next untried arm"):
        agent.update(np.array([0, 2]), np.array([1.0, 0.0]))  # arm 2 skips untried arm 0
    with pytest.raises(ValueError, match="rewards"):
        agent.update(np.array([0, 0]), np.array([np.nan, 0.0]))


@pytest.mark.parametrize("prior", [(1.0, 1.0), (2.0, 1.0)])
def test_incremental_greedy_host_equals_full_argmax(prior):
    """The host's best arm, kept up to date arm by arm, equals a from-scratch argmax over the
    tried arms (lowest index on ties) after every update, fractional rewards and ties included."""
    rng = np.random.default_rng(7)
    agent = make_bandit_agent("greedy", 16, 12, seed=0, prior_alpha=prior[0], prior_beta=prior[1])
    for _ in range(400):
        # Any tried arm or the next untried one; rewards on a coarse grid so ties happen.
        arms = rng.integers(0, np.minimum(agent.n_tried + 1, 12))
        agent.update(arms, rng.integers(0, 3, size=16) / 2.0)
        means = agent.posterior.mean()
        tried = np.arange(agent.posterior.num_arms) < agent.n_tried[:, None]
        masked = np.where(tried, means, -np.inf)
        expected_best = np.argmax(masked, axis=1)
        host, baseline, fresh = agent._greedy()
        expect_fresh = (agent.untried > 0) & (agent.prior_mean > masked.max(axis=1))
        np.testing.assert_array_equal(fresh, expect_fresh)
        np.testing.assert_array_equal(host, np.where(expect_fresh, agent.n_tried, expected_best))
        np.testing.assert_array_equal(
            baseline, np.where(expect_fresh, agent.prior_mean, masked.max(axis=1))
        )


def plain_delight_actions(agent: DelightAgent) -> np.ndarray:
    """The arms ``agent.act()`` must play next, decided the plain way from its state: a full
    argmax for the host, the exact EI of every tried arm (no screening), the rule over all
    tried arms plus the untried block, and the agent's next two uniforms (a copy of its
    generator)."""
    post, n_tried, rows = agent.posterior, agent.n_tried, np.arange(agent.batch_size)
    width = max(int(n_tried.max()), 1)
    alpha, beta = post.alpha[:, :width], post.beta[:, :width]
    tried = np.arange(width) < n_tried[:, None]
    means = np.where(tried, alpha / (alpha + beta), -np.inf)
    best = np.argmax(means, axis=1)
    untried = agent.num_arms - n_tried
    fresh = (untried > 0) & (agent.prior_mean > means.max(axis=1))
    v = np.where(fresh, agent.prior_mean, means.max(axis=1))
    ei = np.zeros((agent.batch_size, width + 2))
    ei[:, :width] = beta_expected_improvement(alpha, beta, v[:, None])
    ei[:, width:] = beta_expected_improvement(agent.prior_alpha, agent.prior_beta, v)[:, None]
    multiplicity = np.concatenate(
        [tried, (untried > 0)[:, None], np.maximum(untried - 1, 0)[:, None]], axis=1
    ).astype(float)
    host = np.zeros_like(ei)
    host[rows, np.where(fresh, width, best)] = 1.0
    eps = epsilon_schedule(agent.t, agent.half_life)
    decision = delight_rule(
        host,
        ei,
        eps,
        gate_price=agent.gate_price,
        surprisal_cap=agent.surprisal_cap,
        multiplicity=multiplicity,
    )
    column, _ = sample_acting(decision, copy.deepcopy(agent.rng))
    return np.where(column < width, column, n_tried)


@pytest.mark.parametrize(
    ("num_arms", "settings"),
    [
        (4, {}),
        (60, {}),
        (500, {}),
        (3000, {}),
        (300, {"gate_price": 0.02}),
        (300, {"gate_price": 0.5, "half_life": 1000.0}),
        (300, {"gate_price": 0.0}),
        (200, {"prior_alpha": 2.0, "prior_beta": 3.0}),
        (150, {"prior_alpha": 0.5, "prior_beta": 1.5}),  # the density bound's path
    ],
)
def test_screened_delight_decides_as_the_plain_rule(num_arms, settings):
    """The fast DE agent (incremental greedy arm, per-arm Scarf reach, EI only where it can
    clear the gate) plays exactly the arms of the plain rule over every tried arm."""
    agent = DelightAgent(24, num_arms, seed=[9, 1], **settings)
    env = BernoulliBanditVectorEnv(24, num_arms=num_arms)
    env.reset(seed=9)
    overridden = 0
    for _ in range(300):
        expected = plain_delight_actions(agent)
        actions = agent.act()
        np.testing.assert_array_equal(actions, expected)
        overridden += int(agent.last_info["overridden"].sum())
        agent.update(actions, env.step(actions)[1])
    assert overridden > 50  # the override (not only the host) was exercised
