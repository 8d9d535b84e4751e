"""Agents: DE and the baselines the paper compares with, batched over seeds.

The torch-based tabular MDP agents (``agents.mdp``) are imported on first use of their names.
"""

from delight_gym._lazy import lazy_getattr
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

# The torch-based MDP agents, imported on first use (PEP 562).
__getattr__ = lazy_getattr(
    __name__, dict.fromkeys(("MDP_AGENTS", "make_mdp_agent"), f"{__name__}.mdp")
)
