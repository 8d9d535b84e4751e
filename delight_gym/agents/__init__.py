"""Agents: DE and the baselines the paper compares with, batched over seeds."""

from delight_gym.agents.bandits import (
    BANDIT_AGENTS,
    BernoulliAgent,
    DelightAgent,
    EpsilonGreedyAgent,
    GreedyAgent,
    ThompsonAgent,
    UCBAgent,
    make_bandit_agent,
)
from delight_gym.agents.dense import DENSE_BANDIT_AGENTS, make_dense_bandit_agent

__all__ = [
    "BANDIT_AGENTS",
    "DENSE_BANDIT_AGENTS",
    "BernoulliAgent",
    "DelightAgent",
    "EpsilonGreedyAgent",
    "GreedyAgent",
    "ThompsonAgent",
    "UCBAgent",
    "make_bandit_agent",
    "make_dense_bandit_agent",
]
