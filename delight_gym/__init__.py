"""delight_gym: Delight-gated exploration (DE) for Gymnasium and Stable-Baselines3.

Importing the package registers its environments with Gymnasium
(``gym.make("BernoulliBandit-v0")``; ``gym.make("delight_gym:BernoulliBandit-v0")`` imports
and registers in one step).
"""

from delight_gym.agents.bandits import (
    BANDIT_AGENTS,
    DelightAgent,
    EpsilonGreedyAgent,
    GreedyAgent,
    ThompsonAgent,
    UCBAgent,
    make_bandit_agent,
)
from delight_gym.envs import ENV_IDS, BernoulliBanditEnv, BernoulliBanditVectorEnv, register_envs
from delight_gym.experiments.bandit import BanditResult, run_bernoulli
from delight_gym.posteriors.beta import BetaBernoulliPosterior, beta_expected_improvement
from delight_gym.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    DelightDecision,
    delight_rule,
    epsilon_schedule,
    sample_acting,
    surprisal,
)

__version__ = "0.1.0"

__all__ = [
    "BANDIT_AGENTS",
    "DEFAULT_GATE_PRICE",
    "DEFAULT_HALF_LIFE",
    "DEFAULT_SURPRISAL_CAP",
    "ENV_IDS",
    "BanditResult",
    "BernoulliBanditEnv",
    "BernoulliBanditVectorEnv",
    "BetaBernoulliPosterior",
    "DelightAgent",
    "DelightDecision",
    "EpsilonGreedyAgent",
    "GreedyAgent",
    "ThompsonAgent",
    "UCBAgent",
    "__version__",
    "beta_expected_improvement",
    "delight_rule",
    "epsilon_schedule",
    "make_bandit_agent",
    "register_envs",
    "run_bernoulli",
    "sample_acting",
    "surprisal",
]

register_envs()
