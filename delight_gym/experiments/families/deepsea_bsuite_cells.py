"""The bsuite DeepSea families' run function: a cell's seeds, one run each or one batched run.

:func:`run_bsuite_seeds` is what the runner calls for ``deepsea-bsuite``, ``bsuite-deep-sea``
and ``bsuite-deep-sea-stochastic`` (the latter two fix ``mapping_seed`` and ``deterministic``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from delight_gym.experiments.families.deepsea_bsuite import PER_SEED
from delight_gym.experiments.families.deepsea_bsuite_batched import run_bsuite_deep_sea_batched
from delight_gym.experiments.families.deepsea_bsuite_run import run_bsuite_deep_sea

__all__ = ["BsuiteCellResult", "run_bsuite_seeds"]


@dataclass
class BsuiteCellResult:
    """What :func:`run_bsuite_seeds` returns (the runner's cell protocol).

    Attributes
    ----------
    cumulative
        cumulative per-episode regret, ``(seeds, episodes)``; NaN after a run
        stopped (solved, or at its budget ``min(2**N + 100, episodes)``).
    seconds
        compute time.
    overrides
        DE's overridden decisions per seed (zeros without DE), ``(seeds,)``.
    solve_episode
        bsuite's solve episode per seed; for an unsolved run its budget,
        ``(seeds,)``.
    solved
        whether each seed's run was solved within its budget, ``(seeds,)``.
    """

    cumulative: Any
    seconds: float
    overrides: Any
    solve_episode: Any
    solved: Any


def run_bsuite_seeds(
    agent: str,
    horizon: int,
    seeds: int,
    *,
    seed: int,
    size: int,
    mapping_seed: int | None = None,
    deterministic: bool = True,
    device: str = PER_SEED,
    **agent_kwargs: Any,
) -> BsuiteCellResult:
    """The bsuite families' run function:
    :func:`~delight_gym.experiments.families.deepsea_bsuite_run.run_bsuite_deep_sea` for seeds
    ``seed, …, seed + seeds − 1`` (seed ``s`` plays ``mapping_seed = s`` unless
    ``mapping_seed`` is given), each for at most ``min(2**N + 100, horizon)`` episodes and
    stopped once solved (bsuite's rule). A ``device`` other than :data:`PER_SEED` runs
    the seeds as one batched run there
    (:func:`~delight_gym.experiments.families.deepsea_bsuite_batched.run_bsuite_deep_sea_batched`;
    only the :data:`~delight_gym.experiments.families.deepsea_bsuite.BATCHED_AGENTS`)."""
    options: dict[str, Any] = {
        "episodes": horizon,
        "mapping_seed": mapping_seed,
        "deterministic": deterministic,
        **agent_kwargs,
    }
    if device == PER_SEED:
        runs = [run_bsuite_deep_sea(agent, size, seed=seed + i, **options) for i in range(seeds)]
    else:
        runs = run_bsuite_deep_sea_batched(
            agent, size, seeds=seeds, seed=seed, device=device, **options
        )
    cumulative = np.full((seeds, horizon), np.nan)
    for i, run in enumerate(runs):
        cumulative[i, : run.episodes] = np.cumsum(run.regret)
    return BsuiteCellResult(
        cumulative,
        seconds=float(sum(run.seconds for run in runs)),
        overrides=np.array([run.overrides for run in runs], dtype=np.int64),
        solve_episode=np.array(
            [run.solve.episode if run.solve.solved else run.budget for run in runs],
            dtype=np.int64,
        ),
        solved=np.array([run.solve.solved for run in runs], dtype=bool),
    )
