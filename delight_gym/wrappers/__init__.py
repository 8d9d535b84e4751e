"""Delight-gated exploration around any host policy, and its Stable-Baselines3 integration.

* :class:`DelightExplorationWrapper` — DE around a callable, an SB3 PPO/A2C or an SB3 DQN, with
  SB3's ``predict`` signature (:mod:`~delight_gym.wrappers.exploration`);
* host adapters (:mod:`~delight_gym.wrappers.hosts`); the posterior protocol, the default
  tabular value posterior and the posterior adapters live in :mod:`delight_gym.posteriors`
  (re-exported here);
* :class:`DelightDQN` — SB3 DQN trained with DE instead of ε-greedy
  (:mod:`~delight_gym.wrappers.dqn`), and :class:`BootstrappedDQN` — bsuite's bootstrapped DQN
  with randomized priors, optionally with DE on top
  (:mod:`~delight_gym.wrappers.bootstrapped_dqn`); both imported on first use since they
  import SB3;
* :class:`DelightStats` — the one accumulator of DE's statistics for SB3's logger
  (:mod:`~delight_gym.wrappers.logging`).

Why PPO/A2C get no DE training mode is explained in :mod:`delight_gym.wrappers.dqn` and
``docs/sb3.md``.
"""

from delight_gym.posteriors.adapters import (
    BetaBernoulliAdapter,
    LinearGaussianAdapter,
    TabularMDPAdapter,
)
from delight_gym.posteriors.base import BASELINES, ValuePosterior
from delight_gym.posteriors.value import TabularValuePosterior, default_posterior
from delight_gym.wrappers.exploration import DelightExplorationWrapper
from delight_gym.wrappers.hosts import CallableHost, Host, SB3PolicyHost, SB3QHost, make_host
from delight_gym.wrappers.logging import DelightStats

__all__ = [
    "BASELINES",
    "BetaBernoulliAdapter",
    "BootstrappedDQN",
    "CallableHost",
    "DelightDQN",
    "DelightExplorationWrapper",
    "DelightStats",
    "Host",
    "LinearGaussianAdapter",
    "SB3PolicyHost",
    "SB3QHost",
    "TabularMDPAdapter",
    "TabularValuePosterior",
    "ValuePosterior",
    "default_posterior",
    "make_host",
]


def __getattr__(name: str) -> object:
    """Import :class:`DelightDQN` and :class:`BootstrappedDQN` (and with them
    Stable-Baselines3) on first use (PEP 562)."""
    if name == "DelightDQN":
        from delight_gym.wrappers.dqn import DelightDQN

        return DelightDQN
    if name == "BootstrappedDQN":
        from delight_gym.wrappers.bootstrapped_dqn import BootstrappedDQN

        return BootstrappedDQN
    raise AttributeError(f"module 'delight_gym.wrappers' has no attribute {name!r}")
