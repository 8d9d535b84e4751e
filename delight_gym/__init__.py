"""delight_gym: Delight-gated exploration (DE) for Gymnasium and Stable-Baselines3.

Importing the package registers its environments with Gymnasium (``gym.make("DeepSea-v0")``;
``gym.make("delight_gym:BernoulliBandit-v0")`` imports and registers in one step). Only the
environments and the DE rule are imported with the package; every other public name is
imported on first use (PEP 562), so ``import delight_gym`` (and the ``delight-gym`` command)
imports neither torch, scipy, pandas nor matplotlib until it needs them.
"""

from typing import TYPE_CHECKING

from delight_gym._lazy_import import lazy_getattr
from delight_gym._version import __version__
from delight_gym.de.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    DelightDecision,
    delight_rule,
    epsilon_schedule,
    sample_acting,
    surprisal,
)
from delight_gym.envs import (
    ENV_IDS,
    BernoulliBanditEnv,
    BernoulliBanditVectorEnv,
    ContinuumBanditEnv,
    ContinuumBanditVectorEnv,
    DeepSeaEnv,
    DeepSeaVectorEnv,
    LinearBanditEnv,
    LinearBanditVectorEnv,
    deep_sea_expected_return,
    deep_sea_optimal_return,
    register_envs,
)

if TYPE_CHECKING:  # the lazy names below, for type checkers
    from delight_gym.agents.bandits import (
        BANDIT_AGENTS,
        DelightAgent,
        EpsilonGreedyAgent,
        GreedyAgent,
        ThompsonAgent,
        UCBAgent,
        make_bandit_agent,
    )
    from delight_gym.agents.linear import LINEAR_AGENTS, make_linear_agent
    from delight_gym.de.hosts import make_host
    from delight_gym.de.options import DelightOptions
    from delight_gym.de.stats import DelightStats
    from delight_gym.de.wrapper import (
        ContinuousDelightWrapper,
        DelightExplorationWrapper,
        DiscreteDelightWrapper,
    )
    from delight_gym.experiments.bandit import BanditResult, run_bernoulli
    from delight_gym.experiments.linear import run_linear
    from delight_gym.posteriors.beta import BetaBernoulliPosterior, beta_expected_improvement
    from delight_gym.posteriors.gaussian import gaussian_expected_improvement
    from delight_gym.posteriors.linear import LinearGaussianPosterior
    from delight_gym.theory.reservation import reservation_index

register_envs()

#: The names imported on first use, and their modules.
_LAZY = {
    **dict.fromkeys(
        (
            "BANDIT_AGENTS",
            "DelightAgent",
            "EpsilonGreedyAgent",
            "GreedyAgent",
            "ThompsonAgent",
            "UCBAgent",
            "make_bandit_agent",
        ),
        "delight_gym.agents.bandits",
    ),
    "BanditResult": "delight_gym.experiments.bandit",
    "run_bernoulli": "delight_gym.experiments.bandit",
    "BetaBernoulliPosterior": "delight_gym.posteriors.beta",
    "beta_expected_improvement": "delight_gym.posteriors.beta",
    "reservation_index": "delight_gym.theory.reservation",
    "LINEAR_AGENTS": "delight_gym.agents.linear",
    "make_linear_agent": "delight_gym.agents.linear",
    "run_linear": "delight_gym.experiments.linear",
    "LinearGaussianPosterior": "delight_gym.posteriors.linear",
    **dict.fromkeys(
        ("DelightExplorationWrapper", "ContinuousDelightWrapper", "DiscreteDelightWrapper"),
        "delight_gym.de.wrapper",
    ),
    "DelightOptions": "delight_gym.de.options",
    "DelightStats": "delight_gym.de.stats",
    "make_host": "delight_gym.de.hosts",
    "gaussian_expected_improvement": "delight_gym.posteriors.gaussian",
}

#: The public names: those imported with the package and the lazy ones of ``_LAZY``.
__all__ = [
    "BANDIT_AGENTS",
    "DEFAULT_GATE_PRICE",
    "DEFAULT_HALF_LIFE",
    "DEFAULT_SURPRISAL_CAP",
    "ENV_IDS",
    "LINEAR_AGENTS",
    "BanditResult",
    "BernoulliBanditEnv",
    "BernoulliBanditVectorEnv",
    "BetaBernoulliPosterior",
    "ContinuousDelightWrapper",
    "ContinuumBanditEnv",
    "ContinuumBanditVectorEnv",
    "DeepSeaEnv",
    "DeepSeaVectorEnv",
    "DelightAgent",
    "DelightDecision",
    "DelightExplorationWrapper",
    "DelightOptions",
    "DelightStats",
    "DiscreteDelightWrapper",
    "EpsilonGreedyAgent",
    "GreedyAgent",
    "LinearBanditEnv",
    "LinearBanditVectorEnv",
    "LinearGaussianPosterior",
    "ThompsonAgent",
    "UCBAgent",
    "__version__",
    "beta_expected_improvement",
    "deep_sea_expected_return",
    "deep_sea_optimal_return",
    "delight_rule",
    "epsilon_schedule",
    "gaussian_expected_improvement",
    "make_bandit_agent",
    "make_host",
    "make_linear_agent",
    "register_envs",
    "reservation_index",
    "run_bernoulli",
    "run_linear",
    "sample_acting",
    "surprisal",
]

__getattr__ = lazy_getattr(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
