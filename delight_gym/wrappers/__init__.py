"""Delight-gated exploration around any host policy: :class:`DelightExplorationWrapper`.

* :class:`DelightExplorationWrapper` — DE around a callable, an SB3 PPO/A2C or an SB3 DQN, with
  SB3's ``predict`` signature (:mod:`~delight_gym.wrappers.exploration`);
* host adapters (:mod:`~delight_gym.wrappers.hosts`);
* :class:`DelightOptions` — DE's options, taken as ``delight=`` here and by the SB3
  algorithms (:mod:`~delight_gym.wrappers.options`);
* :class:`DelightStats` — the one accumulator of DE's statistics
  (:mod:`~delight_gym.wrappers.stats`);
* the posterior protocol, the default tabular value posterior and the posterior adapters of
  :mod:`delight_gym.posteriors`, re-exported here.

The SB3 algorithms trained with DE (``DelightDQN``, ``BootstrappedDQN``) live in
:mod:`delight_gym.sb3`; importing them from here still works until the next release, with a
``DeprecationWarning``.
"""

from delight_gym._lazy import lazy_getattr
from delight_gym.posteriors.adapters import (
    BetaBernoulliAdapter,
    LinearGaussianAdapter,
    TabularMDPAdapter,
)
from delight_gym.posteriors.base import BASELINES, ValuePosterior
from delight_gym.posteriors.value import TabularValuePosterior, default_posterior
from delight_gym.wrappers.exploration import DelightExplorationWrapper
from delight_gym.wrappers.hosts import CallableHost, Host, SB3PolicyHost, SB3QHost, make_host
from delight_gym.wrappers.options import DelightOptions
from delight_gym.wrappers.stats import DelightStats

__all__ = [
    "BASELINES",
    "BetaBernoulliAdapter",
    "CallableHost",
    "DelightExplorationWrapper",
    "DelightOptions",
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


#: Moved to :mod:`delight_gym.sb3` (each access warns until the next release).
__getattr__ = lazy_getattr(
    __name__,
    {
        "DelightDQN": "delight_gym.sb3.delight_dqn",
        "BootstrappedDQN": "delight_gym.sb3.bootstrapped_dqn",
    },
    moved=True,
)
