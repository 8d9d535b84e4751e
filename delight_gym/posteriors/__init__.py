"""Posteriors that supply expected improvement to the DE rule."""

from delight_gym.posteriors.beta import BetaBernoulliPosterior, beta_expected_improvement

__all__ = ["BetaBernoulliPosterior", "beta_expected_improvement"]
