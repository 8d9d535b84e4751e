"""Posteriors that supply expected improvement to the DE rule.

``beta`` is numpy/scipy; ``linear`` and ``tabular`` are torch and are imported on first use of
their names.
"""

from delight_gym.posteriors.beta import BetaBernoulliPosterior, beta_expected_improvement

__all__ = [
    "BetaBernoulliPosterior",
    "LinearGaussianPosterior",
    "TabularMDPPosterior",
    "beta_expected_improvement",
    "gaussian_expected_improvement",
    "log_gaussian_expected_improvement",
]

_LINEAR = (
    "LinearGaussianPosterior",
    "gaussian_expected_improvement",
    "log_gaussian_expected_improvement",
)


_TABULAR = ("TabularMDPPosterior",)


def __getattr__(name: str) -> object:
    """Import the torch-based posteriors on first use (PEP 562)."""
    if name in _LINEAR:
        from delight_gym.posteriors import linear

        return getattr(linear, name)
    if name in _TABULAR:
        from delight_gym.posteriors import tabular

        return getattr(tabular, name)
    raise AttributeError(f"module 'delight_gym.posteriors' has no attribute {name!r}")
