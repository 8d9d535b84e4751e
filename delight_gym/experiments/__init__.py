"""The paper's experiments: family records, specs as data, the sweep runner, results store and
figures."""

from delight_gym.experiments.bandit import BanditResult, run_bernoulli
from delight_gym.experiments.families import FAMILIES, Family
from delight_gym.experiments.runner import ExperimentResult, run_experiment
from delight_gym.experiments.specs import FIGURES, ExperimentSpec

__all__ = [
    "FAMILIES",
    "FIGURES",
    "BanditResult",
    "ExperimentResult",
    "ExperimentSpec",
    "Family",
    "run_bernoulli",
    "run_experiment",
]
