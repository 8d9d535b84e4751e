"""The paper's theory as tested code: reservation values, Pandora's boxes, the reservoir rate,
the linear selected-override budget and the structural claims of §4 as runnable checks
(``delight-gym reproduce theory``)."""

from delight_gym.theory.budget import linear_override_budget
from delight_gym.theory.reservation import (
    fresh_arm_threshold,
    horizon_price,
    horizon_threshold,
    partial_expectation,
    reservation_index,
    tail_probability,
    threshold_regret_bound,
)

__all__ = [
    "fresh_arm_threshold",
    "horizon_price",
    "horizon_threshold",
    "linear_override_budget",
    "partial_expectation",
    "reservation_index",
    "tail_probability",
    "threshold_regret_bound",
]
