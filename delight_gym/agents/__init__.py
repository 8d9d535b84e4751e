"""Agents: DE and the baselines the paper compares with, batched over seeds.

The torch-based tabular MDP agents (``agents.mdp``) are imported on first use of their names.
"""

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
from delight_gym.agents.seeding import SeedLike

__all__ = [
    "BANDIT_AGENTS",
    "DENSE_BANDIT_AGENTS",
    "MDP_AGENTS",
    "BernoulliAgent",
    "DelightAgent",
    "EpsilonGreedyAgent",
    "GreedyAgent",
    "SeedLike",
    "ThompsonAgent",
    "UCBAgent",
    "make_bandit_agent",
    "make_dense_bandit_agent",
    "make_mdp_agent",
]

_MDP = ("MDP_AGENTS", "make_mdp_agent")


def __getattr__(name: str) -> object:
    """Import the torch-based MDP agents on first use (PEP 562)."""
    if name in _MDP:
        from delight_gym.agents import mdp

        return getattr(mdp, name)
    raise AttributeError(f"module 'delight_gym.agents' has no attribute {name!r}")
