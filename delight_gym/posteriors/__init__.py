"""Every posterior of the package, each in its own module, and the protocol they speak.

* :mod:`~delight_gym.posteriors.base` — :class:`ValuePosterior` (mean, EI, update),
  :func:`host_baseline`, :func:`evaluate_posterior`, :func:`adapt_posterior`;
* :mod:`~delight_gym.posteriors.beta` — Beta–Bernoulli bandits, exact Beta EI (numpy/SciPy);
* :mod:`~delight_gym.posteriors.gaussian` — Gaussian EI and log EI (numpy, or torch for
  tensors);
* :mod:`~delight_gym.posteriors.value` — the tabular Gaussian value posterior (numpy), the
  wrapper's default;
* :mod:`~delight_gym.posteriors.linear` — Bayesian linear regression (torch);
* :mod:`~delight_gym.posteriors.tabular` — tabular MDPs, Dirichlet transitions (torch);
* :mod:`~delight_gym.posteriors.adapters` — the value-posterior adapters of the Beta, linear
  and tabular MDP posteriors;
* :mod:`~delight_gym.posteriors.ensemble` — Q-heads with randomized priors (torch), the
  default posterior of non-tabular Box spaces;
* :mod:`~delight_gym.posteriors.student_t` — Student-t EI (numpy/SciPy);
* :mod:`~delight_gym.posteriors.linfull`, :mod:`~delight_gym.posteriors.neural_linear`,
  :mod:`~delight_gym.posteriors.bandit_ensemble` — contextual-bandit posteriors (torch):
  Normal-Inverse-Gamma regression on inputs or on a network's features, and a bandit
  ensemble with randomized priors.

The torch modules (``linear``, ``tabular``, ``ensemble``, ``linfull``, ``neural_linear``,
``bandit_ensemble``) are imported on first use of their names.
"""

from delight_gym._lazy import lazy_getattr
from delight_gym.posteriors.adapters import (
    BetaBernoulliAdapter,
    LinearGaussianAdapter,
    PosteriorAdapter,
    TabularMDPAdapter,
)
from delight_gym.posteriors.base import (
    BASELINES,
    PosteriorValues,
    ValuePosterior,
    adapt_posterior,
    evaluate_posterior,
    host_baseline,
)
from delight_gym.posteriors.beta import BetaBernoulliPosterior, beta_expected_improvement
from delight_gym.posteriors.gaussian import (
    gaussian_expected_improvement,
    log_gaussian_expected_improvement,
)
from delight_gym.posteriors.student_t import student_t_expected_improvement
from delight_gym.posteriors.value import TabularValuePosterior, default_posterior

__all__ = [
    "BASELINES",
    "BetaBernoulliAdapter",
    "BetaBernoulliPosterior",
    "BanditEnsemblePosterior",
    "EnsembleQPosterior",
    "LinFullPosterior",
    "LinearGaussianAdapter",
    "LinearGaussianPosterior",
    "NeuralLinearPosterior",
    "PosteriorAdapter",
    "PosteriorValues",
    "TabularMDPAdapter",
    "TabularMDPPosterior",
    "TabularValuePosterior",
    "ValuePosterior",
    "adapt_posterior",
    "beta_expected_improvement",
    "default_posterior",
    "evaluate_posterior",
    "gaussian_expected_improvement",
    "host_baseline",
    "log_gaussian_expected_improvement",
    "student_t_expected_improvement",
]

#: The torch posteriors and their modules, imported on first use (PEP 562).
_LAZY = {
    "BanditEnsemblePosterior": "delight_gym.posteriors.bandit_ensemble",
    "EnsembleQPosterior": "delight_gym.posteriors.ensemble",
    "LinFullPosterior": "delight_gym.posteriors.linfull",
    "LinearGaussianPosterior": "delight_gym.posteriors.linear",
    "NeuralLinearPosterior": "delight_gym.posteriors.neural_linear",
    "TabularMDPPosterior": "delight_gym.posteriors.tabular",
}

__getattr__ = lazy_getattr(__name__, _LAZY)
