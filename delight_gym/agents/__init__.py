"""Agents: DE and the baselines the paper compares with, batched over seeds.

Re-exports :mod:`delight_gym.agents.bandits`; the torch-based MDP and contextual agents are
imported on first use of their names.
"""

from typing import TYPE_CHECKING

from delight_gym._lazy_import import lazy_getattr
from delight_gym.agents import bandits
from delight_gym.agents.bandits import *  # noqa: F403 - re-exported: bandits.__all__
from delight_gym.agents.dense import DENSE_BANDIT_AGENTS, make_dense_bandit_agent
from delight_gym.agents.seeding import SeedLike

if TYPE_CHECKING:  # the lazy names below, for type checkers
    from delight_gym.agents.contextual import CONTEXTUAL_AGENTS, make_contextual_agent
    from delight_gym.agents.mdp import MDP_AGENTS, make_mdp_agent

__all__ = [
    "CONTEXTUAL_AGENTS",
    "DENSE_BANDIT_AGENTS",
    "MDP_AGENTS",
    "SeedLike",
    "make_contextual_agent",
    "make_dense_bandit_agent",
    "make_mdp_agent",
]
__all__ += bandits.__all__

# The torch-based MDP and contextual agents, imported on first use (PEP 562).
__getattr__ = lazy_getattr(
    __name__,
    {
        **dict.fromkeys(("MDP_AGENTS", "make_mdp_agent"), f"{__name__}.mdp"),
        **dict.fromkeys(("CONTEXTUAL_AGENTS", "make_contextual_agent"), f"{__name__}.contextual"),
    },
)
