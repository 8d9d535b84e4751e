"""The ``bernoulli`` family: K-armed Bernoulli bandits, means ~ U(0, 1) per instance; its run
function is :func:`~delight_gym.experiments.bandit.run_bernoulli`."""

from __future__ import annotations

import dataclasses
from typing import Any

from delight_gym._checks import check_positive_int
from delight_gym.experiments.families.base import ARMS, BANDIT_AGENTS, Family

__all__ = ["BERNOULLI"]

#: The most arms a run can have: the lazy env (any ``K`` in memory) acts in ``Discrete(K)``,
#: whose actions are int64.
_MAX_ARMS = 2**63 - 1


def _check_bernoulli_arms(value: Any, name: str) -> int:
    """``--arms`` of ``bernoulli``: a positive int the int64 actions can hold (the lazy env's
    memory does not grow with ``K``)."""
    k = check_positive_int(value, name)
    if k > _MAX_ARMS:
        raise ValueError(f"{name} must be <= {_MAX_ARMS} (int64 actions), got {k}")
    return k


#: K-armed Bernoulli bandits, means ~ U(0, 1) per instance.
BERNOULLI = Family(
    name="bernoulli",
    help="K-armed Bernoulli bandits, means ~ U(0,1)",
    cell="delight_gym.experiments.bandit:run_bernoulli",
    agents=BANDIT_AGENTS,
    instance=(dataclasses.replace(ARMS, check=_check_bernoulli_arms),),
    default_agents=("delight", "thompson", "egreedy", "greedy"),
    # All 100 seeds in one batch (a few MB at K = 10^4): a step's array operations then serve
    # 100 seeds at once, 2.5x cheaper than four batches of 25.
    batch_size=100,
    title="Bernoulli bandits",
)
