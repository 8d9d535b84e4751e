"""delight_gym: Delight-gated exploration (DE) for Gymnasium and Stable-Baselines3.

Importing the package registers its environments with Gymnasium
(``gym.make("BernoulliBandit-v0")``,
``gym.make("LinearBandit-v0")``, ``gym.make("DeepSea-v0")``,
``gym.make("DeepSeaStochastic-v0")``; ``gym.make("delight_gym:BernoulliBandit-v0")`` imports and
registers in one step). Only the environments (and so Gymnasium and numpy) and the DE rule are
imported with the package; every other public name (the agents, posteriors, runners, the
reservation index, the torch-based linear pieces and the wrapper) is imported on first use
(PEP 562), so ``import delight_gym`` — and the ``delight-gym`` command, whose modules live in the
package — imports neither torch, scipy, pandas nor matplotlib until it needs them.
"""

from typing import TYPE_CHECKING

from delight_gym._lazy_import import lazy_getattr
from delight_gym._version import __version__ as __version__
from delight_gym.de.rule import (
    DEFAULT_GATE_PRICE as DEFAULT_GATE_PRICE,
)
from delight_gym.de.rule import (
    DEFAULT_HALF_LIFE as DEFAULT_HALF_LIFE,
)
from delight_gym.de.rule import (
    DEFAULT_SURPRISAL_CAP as DEFAULT_SURPRISAL_CAP,
)
from delight_gym.de.rule import (
    DelightDecision as DelightDecision,
)
from delight_gym.de.rule import (
    delight_rule as delight_rule,
)
from delight_gym.de.rule import (
    epsilon_schedule as epsilon_schedule,
)
from delight_gym.de.rule import (
    sample_acting as sample_acting,
)
from delight_gym.de.rule import (
    surprisal as surprisal,
)
from delight_gym.envs import (
    ENV_IDS as ENV_IDS,
)
from delight_gym.envs import (
    BernoulliBanditEnv as BernoulliBanditEnv,
)
from delight_gym.envs import (
    BernoulliBanditVectorEnv as BernoulliBanditVectorEnv,
)
from delight_gym.envs import (
    ContinuumBanditEnv as ContinuumBanditEnv,
)
from delight_gym.envs import (
    ContinuumBanditVectorEnv as ContinuumBanditVectorEnv,
)
from delight_gym.envs import (
    DeepSeaEnv as DeepSeaEnv,
)
from delight_gym.envs import (
    DeepSeaVectorEnv as DeepSeaVectorEnv,
)
from delight_gym.envs import (
    LinearBanditEnv as LinearBanditEnv,
)
from delight_gym.envs import (
    LinearBanditVectorEnv as LinearBanditVectorEnv,
)
from delight_gym.envs import (
    deep_sea_expected_return as deep_sea_expected_return,
)
from delight_gym.envs import (
    deep_sea_optimal_return as deep_sea_optimal_return,
)
from delight_gym.envs import (
    register_envs as register_envs,
)

if TYPE_CHECKING:  # the lazy names below, for type checkers
    from delight_gym.agents.bandits import (
        BANDIT_AGENTS as BANDIT_AGENTS,
    )
    from delight_gym.agents.bandits import (
        DelightAgent as DelightAgent,
    )
    from delight_gym.agents.bandits import (
        EpsilonGreedyAgent as EpsilonGreedyAgent,
    )
    from delight_gym.agents.bandits import (
        GreedyAgent as GreedyAgent,
    )
    from delight_gym.agents.bandits import (
        ThompsonAgent as ThompsonAgent,
    )
    from delight_gym.agents.bandits import (
        UCBAgent as UCBAgent,
    )
    from delight_gym.agents.bandits import (
        make_bandit_agent as make_bandit_agent,
    )
    from delight_gym.agents.linear import (
        LINEAR_AGENTS as LINEAR_AGENTS,
    )
    from delight_gym.agents.linear import (
        make_linear_agent as make_linear_agent,
    )
    from delight_gym.de.hosts import make_host as make_host
    from delight_gym.de.options import DelightOptions as DelightOptions
    from delight_gym.de.stats import DelightStats as DelightStats
    from delight_gym.de.wrapper import (
        ContinuousDelightWrapper as ContinuousDelightWrapper,
    )
    from delight_gym.de.wrapper import (
        DelightExplorationWrapper as DelightExplorationWrapper,
    )
    from delight_gym.de.wrapper import (
        DiscreteDelightWrapper as DiscreteDelightWrapper,
    )
    from delight_gym.experiments.bandit import (
        BanditResult as BanditResult,
    )
    from delight_gym.experiments.bandit import (
        run_bernoulli as run_bernoulli,
    )
    from delight_gym.experiments.linear import run_linear as run_linear
    from delight_gym.posteriors.beta import (
        BetaBernoulliPosterior as BetaBernoulliPosterior,
    )
    from delight_gym.posteriors.beta import (
        beta_expected_improvement as beta_expected_improvement,
    )
    from delight_gym.posteriors.gaussian import (
        gaussian_expected_improvement as gaussian_expected_improvement,
    )
    from delight_gym.posteriors.linear import LinearGaussianPosterior as LinearGaussianPosterior
    from delight_gym.theory.reservation import reservation_index as reservation_index


#: The public names imported with the package.
_EAGER = (
    "DEFAULT_GATE_PRICE",
    "DEFAULT_HALF_LIFE",
    "DEFAULT_SURPRISAL_CAP",
    "ENV_IDS",
    "BernoulliBanditEnv",
    "BernoulliBanditVectorEnv",
    "ContinuumBanditEnv",
    "ContinuumBanditVectorEnv",
    "DeepSeaEnv",
    "DeepSeaVectorEnv",
    "DelightDecision",
    "LinearBanditEnv",
    "LinearBanditVectorEnv",
    "__version__",
    "deep_sea_expected_return",
    "deep_sea_optimal_return",
    "delight_rule",
    "epsilon_schedule",
    "register_envs",
    "sample_acting",
    "surprisal",
)

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

#: The public names: those imported with the package, then the lazy ones (derived from the table).
__all__ = sorted([*_EAGER, *_LAZY])

__getattr__ = lazy_getattr(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
