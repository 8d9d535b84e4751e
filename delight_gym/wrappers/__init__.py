"""Delight-gated exploration around any host policy: :class:`DelightExplorationWrapper`.

* :class:`DelightExplorationWrapper` — DE around a callable, an SB3 PPO/A2C or an SB3 DQN, with
  SB3's ``predict`` signature (:mod:`~delight_gym.wrappers.exploration`);
* :class:`ContinuousDelightWrapper` — on ``Box`` actions (:mod:`~delight_gym.wrappers.continuous`);
* host adapters (:mod:`~delight_gym.wrappers.hosts`, :mod:`~delight_gym.wrappers.box_hosts`;
  the SB3 ones from :mod:`delight_gym.sb3.hosts`);
* re-exported: :class:`DelightOptions` (:mod:`delight_gym.de.options`), :class:`DelightStats`
  (:mod:`delight_gym.de.stats`), the posterior protocol, the default tabular value posterior and
  the posterior adapters of :mod:`delight_gym.posteriors`.

The engine around the host: :mod:`delight_gym.de.engine`. SB3 algorithms: :mod:`delight_gym.sb3`.
"""

from delight_gym.de.options import DelightOptions
from delight_gym.de.posterior import BASELINES, ValuePosterior
from delight_gym.de.stats import DelightStats
from delight_gym.posteriors.adapters import (
    BetaBernoulliAdapter,
    LinearGaussianAdapter,
    TabularMDPAdapter,
)
from delight_gym.posteriors.value import TabularValuePosterior, default_posterior
from delight_gym.sb3.hosts import SB3DeterministicHost, SB3GaussianHost, SB3PolicyHost, SB3QHost
from delight_gym.wrappers.box_hosts import BoxHost, CallableBoxHost, make_box_host
from delight_gym.wrappers.continuous import ContinuousDelightWrapper
from delight_gym.wrappers.exploration import DelightExplorationWrapper
from delight_gym.wrappers.hosts import CallableHost, Host, make_host

__all__ = [
    "BASELINES",
    "BetaBernoulliAdapter",
    "BoxHost",
    "CallableBoxHost",
    "CallableHost",
    "ContinuousDelightWrapper",
    "DelightExplorationWrapper",
    "DelightOptions",
    "DelightStats",
    "Host",
    "LinearGaussianAdapter",
    "SB3DeterministicHost",
    "SB3GaussianHost",
    "SB3PolicyHost",
    "SB3QHost",
    "TabularMDPAdapter",
    "TabularValuePosterior",
    "ValuePosterior",
    "default_posterior",
    "make_box_host",
    "make_host",
]
