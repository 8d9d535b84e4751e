"""The ``deepsea`` family: bsuite's deterministic DeepSea, the tabular agents' default priors;
its run function is :func:`~delight_gym.experiments.deep_sea.run_deep_sea_agent`."""

from __future__ import annotations

from delight_gym.envs.deep_sea import check_deep_sea_size
from delight_gym.experiments.families.base import DELIGHT, EGREEDY, GREEDY, PSRL, Family, Parameter

__all__ = ["DEEP_SEA"]

#: bsuite's deterministic DeepSea, the agents' default priors.
DEEP_SEA = Family(
    name="deepsea",
    help="DeepSea-v0 (bsuite's deep_sea), the agents' default priors",
    cell="delight_gym.experiments.deep_sea:run_deep_sea_agent",
    agents=(DELIGHT, PSRL, EGREEDY, GREEDY),
    instance=(
        Parameter("size", int, check_deep_sea_size, sweep=(10,), symbol="N", help="sizes N"),
    ),
    default_agents=("delight", "psrl", "egreedy", "greedy"),
    horizon_option="--episodes",
    time_label="episode",
    seeds=30,
    batch_size=30,
    title="DeepSea",
)
