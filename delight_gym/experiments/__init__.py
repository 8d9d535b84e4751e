"""The paper's experiments: specs as data, the sweep runner, results store and figures."""

from delight_gym.experiments.bandit import BanditResult, run_bernoulli
from delight_gym.experiments.runner import ExperimentResult, run_experiment
from delight_gym.experiments.specs import FIGURES, ExperimentSpec

__all__ = [
    "FIGURES",
    "BanditResult",
    "ExperimentResult",
    "ExperimentSpec",
    "run_bernoulli",
    "run_experiment",
]
