"""The ``deepsea`` family: bsuite's deterministic DeepSea, the tabular agents' default priors.

Its cell runs :func:`~delight_gym.experiments.deep_sea.run_deep_sea` for one agent (imported
when the cell runs) and returns its curves and per-seed counts as a :class:`DeepSeaCellResult`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from delight_gym.envs.deep_sea import check_deep_sea_size
from delight_gym.experiments.families.base import DELIGHT, EGREEDY, GREEDY, PSRL, Family, Parameter

__all__ = ["DEEP_SEA", "DeepSeaCellResult", "deep_sea_cell"]


@dataclass
class DeepSeaCellResult:
    """What :func:`deep_sea_cell` returns (the runner's cell protocol).

    Attributes
    ----------
    cumulative
        cumulative per-episode regret, ``(seeds, episodes)``.
    seconds
        compute time.
    overrides
        DE's override counts per seed (zeros for the other agents), ``(seeds,)``.
    first_success
        1-based episode of each seed's first treasure, 0 if never, ``(seeds,)``.
    """

    cumulative: Any
    seconds: float
    overrides: Any
    first_success: Any


def deep_sea_cell(
    agent: str, horizon: int, seeds: int, *, seed: int, size: int, **agent_kwargs: Any
) -> DeepSeaCellResult:
    """Cell of the DeepSea family: :func:`~delight_gym.experiments.deep_sea.run_deep_sea` for one
    agent, ``horizon`` episodes (deterministic DeepSea, the agents' default priors, CPU)."""
    from delight_gym.experiments import deep_sea

    result = deep_sea.run_deep_sea(
        size, horizon, seeds, agent, seed=seed, progress=False, **agent_kwargs
    )
    return DeepSeaCellResult(
        cumulative=result.cumulative(agent).T,
        seconds=result.seconds[agent],
        overrides=result.overrides[agent],
        first_success=result.first_success[agent] + 1,
    )


#: bsuite's deterministic DeepSea, the agents' default priors.
DEEP_SEA = Family(
    name="deepsea",
    help="DeepSea-v0 (bsuite's deep_sea), the agents' default priors",
    cell=deep_sea_cell,
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
