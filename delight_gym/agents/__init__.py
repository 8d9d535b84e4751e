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

__all__ = [
    "BANDIT_AGENTS",
    "BernoulliAgent",
    "DelightAgent",
    "EpsilonGreedyAgent",
    "GreedyAgent",
    "ThompsonAgent",
    "UCBAgent",
    "make_bandit_agent",
]
