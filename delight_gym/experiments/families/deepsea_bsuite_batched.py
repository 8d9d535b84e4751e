"""Many seeds of bsuite's BootDQN on one DeepSea size in one batched run, on any torch device.

:func:`run_bsuite_deep_sea_batched` plays seeds ``seed, …, seed + S − 1`` of ``boot_dqn`` at
once with :class:`~delight_gym.agents.boot_dqn.SeedBatchedBootDQN` (the ``S × K`` heads in one
network) on a :class:`~delight_gym.envs.deep_sea.DeepSeaVectorEnv`, and returns one
:class:`~delight_gym.experiments.families.deepsea_bsuite_run.BsuiteRun` per seed, recorded and
stopped by bsuite's rule exactly as
:func:`~delight_gym.experiments.families.deepsea_bsuite_run.run_bsuite_deep_sea` records one.
It is the same agent (bsuite's settings, the SB3 :class:`~delight_gym.sb3.BootstrappedDQN`'s
defaults) with other random draws, so its runs equal the per-seed runs in distribution, not
seed by seed.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from delight_gym._checks import check_device, check_nonnegative_int, check_positive_int
from delight_gym.experiments.families.deepsea_bsuite import BATCHED_AGENTS
from delight_gym.experiments.families.deepsea_bsuite_run import BsuitePlan, BsuiteRun

__all__ = ["run_bsuite_deep_sea_batched"]


def run_bsuite_deep_sea_batched(
    agent: str,
    size: int,
    *,
    seeds: int,
    seed: int,
    device: Any = "cpu",
    episodes: int | None = None,
    early_stop: bool = True,
    mapping_seed: int | None = None,
    deterministic: bool = True,
) -> list[BsuiteRun]:
    """Run seeds ``seed, …, seed + seeds − 1`` of ``agent`` on DeepSea of size ``N`` at once.

    All seeds step together until each is solved (``early_stop``) or at its budget; each
    seed's record stops where its own run stops, as
    :func:`~delight_gym.experiments.families.deepsea_bsuite_run.run_bsuite_deep_sea`'s would.
    Seed ``s``'s numbers depend on ``seed`` and ``seeds`` (one generator draws for the batch),
    not on the other seeds' episodes.

    Parameters
    ----------
    agent : str
        One of :data:`~delight_gym.experiments.families.deepsea_bsuite.BATCHED_AGENTS`.
    size : int
        ``N``.
    seeds, seed : int
        How many seeds, and the first (sub-env ``i`` is reset with seed ``seed + i``; the
        agent's generator is seeded with ``seed``).
    device : str or torch.device, default "cpu"
        Where the heads and the replay live.
    episodes, early_stop, mapping_seed, deterministic
        As for
        :func:`~delight_gym.experiments.families.deepsea_bsuite_run.run_bsuite_deep_sea`
        (seed ``s`` plays ``mapping_seed = s`` unless ``mapping_seed`` is given).

    Returns
    -------
    list of BsuiteRun
        One per seed, in seed order; each run's ``seconds`` is its share of the batch's time.
    """
    from delight_gym.agents.boot_dqn import SeedBatchedBootDQN
    from delight_gym.envs.deep_sea import DeepSeaVectorEnv

    if agent not in BATCHED_AGENTS:
        raise ValueError(
            f"agent {agent!r} has no batched form (only {list(BATCHED_AGENTS)}): run it one "
            "seed at a time (device 'none')"
        )
    count = check_positive_int(seeds, "seeds")
    first = check_nonnegative_int(seed, "seed")
    plans = [
        BsuitePlan.checked(
            agent,
            size,
            seed=first + i,
            episodes=episodes,
            early_stop=early_stop,
            mapping_seed=mapping_seed,
            deterministic=deterministic,
        )
        for i in range(count)
    ]
    dev = check_device(device, "device")
    n = plans[0].size
    start = time.perf_counter()
    envs = DeepSeaVectorEnv(
        count, size=n, deterministic=deterministic, mapping_seed=[p.mapping_seed for p in plans]
    )
    model = SeedBatchedBootDQN(count, n * n, 2, seed=first, device=dev)
    records = [p.solve_state() for p in plans]
    going = np.ones(count, dtype=bool)

    def record(terminated: np.ndarray, truncated: np.ndarray, infos: dict) -> bool:
        for i in np.flatnonzero(terminated & going).tolist():
            going[i] = records[i].final_episode(infos["final_info"], i)
        return bool(going.any())

    model.run_online(envs, record, seed=first)
    share = (time.perf_counter() - start) / count
    return [p.result(r, share) for p, r in zip(plans, records, strict=True)]
