"""Bootstrapped DQN's settings in one record, as bsuite's ``default_agent``: the defaults of
its three front ends (``SeedBatchedBootDQN``, ``EnsembleQPosterior``, ``BootstrappedDQN``),
whose replay settings :func:`check_replay_options` checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from delight_gym._checks import check_nonnegative_int, check_positive_int

__all__ = ["BOOT_DQN_DEFAULTS", "BootDQNDefaults", "ReplayOptions", "check_replay_options"]


@dataclass(frozen=True)
class BootDQNDefaults:
    """Every default of Bootstrapped DQN with randomized priors.

    Attributes
    ----------
    num_heads, hidden_sizes, prior_scale :
        ``K`` heads, each an MLP of ``hidden_sizes`` plus its frozen prior scaled by
        ``prior_scale``.
    learning_rate, batch_size, buffer_size, learning_starts :
        Adam's step size; transitions per gradient step; replay capacity; transitions seen
        before the first gradient step.
    sgd_period, target_update_period, gamma, mask_prob :
        Transitions per gradient step; gradient steps between target copies; the discount;
        a transition's probability of entering a head's bootstrap sample.
    """

    num_heads: int
    hidden_sizes: tuple[int, ...]
    prior_scale: float
    learning_rate: float
    batch_size: int
    buffer_size: int
    learning_starts: int
    sgd_period: int
    target_update_period: int
    gamma: float
    mask_prob: float


#: bsuite's JAX ``boot_dqn`` settings, except the heads: 10 heads of (64, 64) with prior
#: scale 3 here (bsuite JAX: 20 heads of (50, 50), scale 5; TF: scale 3 and ``mask_prob`` 0.5).
BOOT_DQN_DEFAULTS = BootDQNDefaults(
    num_heads=10,
    hidden_sizes=(64, 64),
    prior_scale=3.0,
    learning_rate=1e-3,
    batch_size=128,
    buffer_size=10_000,
    learning_starts=128,
    sgd_period=1,
    target_update_period=4,
    gamma=0.99,
    mask_prob=1.0,
)


class ReplayOptions(NamedTuple):
    """A replay's checked settings (:func:`check_replay_options`)."""

    batch_size: int
    buffer_size: int
    learning_starts: int


def check_replay_options(batch_size: Any, buffer_size: Any, learning_starts: Any) -> ReplayOptions:
    """``batch_size`` and ``buffer_size`` (``>= 1``) and ``learning_starts`` (``>= 0``,
    transitions seen before training), checked."""
    return ReplayOptions(
        check_positive_int(batch_size, "batch_size"),
        check_positive_int(buffer_size, "buffer_size"),
        check_nonnegative_int(learning_starts, "learning_starts"),
    )
