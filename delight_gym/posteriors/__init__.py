"""Every posterior of the package, each in its own module, and the
:class:`~delight_gym.de.posterior.ValuePosterior` protocol they speak (the Beta, linear and
tabular MDP posteriors through an adapter beside each). EI of one law: ``beta``, ``gaussian``,
``student_t``; values: ``linear``, ``tabular``, ``value`` (the wrapper's default), ``ensemble``,
``q_ensemble``; contextual and continuum bandits: ``linfull``, ``neural_linear``,
``bandit_ensemble``, ``rff``. The torch modules are imported on first use of their names.
"""

from delight_gym._lazy_import import lazy_getattr
from delight_gym.de.posterior import (
    BASELINES,
    PosteriorValues,
    ValuePosterior,
    adapt_posterior,
    evaluate_posterior,
    host_baseline,
)
from delight_gym.posteriors.adapters import PosteriorAdapter
from delight_gym.posteriors.beta import (
    BetaBernoulliAdapter,
    BetaBernoulliPosterior,
    beta_expected_improvement,
)
from delight_gym.posteriors.gaussian import (
    gaussian_expected_improvement,
    log_gaussian_expected_improvement,
)
from delight_gym.posteriors.value import TabularValuePosterior, default_posterior

__all__ = [
    "BASELINES",
    "BanditEnsemblePosterior",
    "BetaBernoulliAdapter",
    "BetaBernoulliPosterior",
    "ContinuousQEnsemble",
    "ContinuousTransitions",
    "EnsembleQPosterior",
    "LinFullPosterior",
    "LinearGaussianAdapter",
    "LinearGaussianPosterior",
    "NeuralLinearPosterior",
    "PosteriorAdapter",
    "PosteriorValues",
    "RFFPosterior",
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

#: The torch posteriors (and the Student-t EI, which needs SciPy), imported on first use.
_LAZY = {
    "ContinuousQEnsemble": "delight_gym.posteriors.q_ensemble",
    "ContinuousTransitions": "delight_gym.posteriors.q_ensemble",
    "BanditEnsemblePosterior": "delight_gym.posteriors.bandit_ensemble",
    "EnsembleQPosterior": "delight_gym.posteriors.ensemble",
    "LinFullPosterior": "delight_gym.posteriors.linfull",
    "LinearGaussianAdapter": "delight_gym.posteriors.linear",
    "LinearGaussianPosterior": "delight_gym.posteriors.linear",
    "NeuralLinearPosterior": "delight_gym.posteriors.neural_linear",
    "RFFPosterior": "delight_gym.posteriors.rff",
    "TabularMDPAdapter": "delight_gym.posteriors.tabular",
    "TabularMDPPosterior": "delight_gym.posteriors.tabular",
    "student_t_expected_improvement": "delight_gym.posteriors.student_t",
}

__getattr__ = lazy_getattr(__name__, _LAZY)
