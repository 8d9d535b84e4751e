"""The DeepSea families scored by bsuite's rule (beyond the paper): deep agents on DeepSea.

``deepsea-bsuite`` runs seed ``s`` on instance ``mapping_seed = s`` over an extended grid of
sizes; ``bsuite-deep-sea`` and ``bsuite-deep-sea-stochastic`` are bsuite's own ``deep_sea`` and
``deep_sea_stochastic`` sweeps (N = 10..50, ``mapping_seed`` 42), whose ``boot_dqn`` takes a
``device`` (:data:`DEVICE`: a cell's seeds in one batched run). Here: the agent records (with
the DE options each variant fixes) and the score report; the run function is
:func:`~delight_gym.experiments.deepsea_bsuite.run_bsuite_seeds`, imported when a cell runs.
Settings and logs: ``docs/reproduce/deepsea-bsuite.md`` and ``docs/reproduce/bsuite.md``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from delight_gym._checks import check_device, check_would_fit
from delight_gym.envs.deep_sea import check_deep_sea_size
from delight_gym.experiments.families.base import (
    DE_PARAMETERS,
    DELIGHT,
    GATE_PRICE,
    HALF_LIFE,
    PSRL,
    SURPRISAL_CAP,
    Agent,
    Family,
    Parameter,
    SweepOutcome,
)
from delight_gym.experiments.scores import BSUITE_EXPERIMENTS

__all__ = ["BSUITE_DEEP_SEA", "BSUITE_DEEP_SEA_STOCHASTIC", "DEEP_SEA_BSUITE"]

#: Transitions the deep agents keep in replay: bsuite's DQN and bootstrapped DQN ``buffer_size``.
BSUITE_REPLAY_SIZE = 10_000


def check_bsuite_size(value: Any, name: str) -> int:
    """``size`` of the bsuite families: what DeepSea accepts, with a replay of
    :data:`BSUITE_REPLAY_SIZE` transitions that fits in memory; a ``ValueError`` naming
    ``name`` otherwise."""
    n = check_deep_sea_size(value, name)
    check_would_fit(
        BSUITE_REPLAY_SIZE * 2 * n * n * 4,
        f"{name}={n} (the deep agents' replay of {BSUITE_REPLAY_SIZE} transitions, two N x N "
        "float32 observations each)",
    )
    return n


DQN_EGREEDY = Agent("dqn", "DQN, ε = 0.05 (SB3, bsuite's settings)", "#2ca02c")
BOOT_DQN = Agent("boot_dqn", "BootDQN + priors (K=10)", "#1f77b4")
_DE: dict[str, Any] = {"parameters": DE_PARAMETERS}  # the agents with every DE setting
BOOT_DQN_DE = Agent("boot_dqn_de", "BootDQN + DE (host: episode's head)", "#c51b7d", **_DE)
BOOT_DQN_DE_MEAN = Agent("boot_dqn_de_mean", "BootDQN + DE (host: ensemble mean)", "#17becf", **_DE)
BOOT_DQN_DE_COMMIT = Agent(
    "boot_dqn_de_commit", "BootDQN + DE + commit (beyond the paper)", "#9467bd", **_DE
)
DELIGHT_DQN = Agent("delight_dqn", "DelightDQN (ensemble posterior)", "#8c564b", **_DE)
# The DE variants (beyond the paper, dashed), each with its setting(s) chosen on seeds 100-104
# and fixed in its DE options (BOOT_DQN_DE_OPTIONS); a fixed setting is not a parameter.
BOOT_DQN_DE_SPREAD = Agent(
    "boot_dqn_de_spread", "BootDQN + DE, λ in units of the heads' spread", "#e377c2", "--",
    parameters=(HALF_LIFE, SURPRISAL_CAP),
)  # fmt: skip
BOOT_DQN_DE_AGREE = Agent(
    "boot_dqn_de_agree", "BootDQN + DE, gate closed where the heads agree", "#bcbd22", "--", **_DE
)
BOOT_DQN_DE_COMMIT_FAST = Agent(
    "boot_dqn_de_commit_fast", "BootDQN + DE + commit, shorter M", "#7f7f7f", "--",
    parameters=(GATE_PRICE, SURPRISAL_CAP),
)  # fmt: skip


#: ``boot_dqn_de_spread``'s ``λ``, in units of each state's spread of the heads' values.
SPREAD_GATE_PRICE = 2.0
#: ``boot_dqn_de_agree``'s ``agreement``: the gate is closed where this share of heads agree.
AGREEMENT = 0.9
#: ``boot_dqn_de_commit_fast``'s ``M`` of ``ε_t = M/(M + t)`` (episodes).
COMMIT_FAST_HALF_LIFE = 10.0
#: The DE options of the :class:`~delight_gym.sb3.BootstrappedDQN` agents (``None``: no DE);
#: the variants' settings were chosen on seeds 100-104 at N = 10 and 14.
BOOT_DQN_DE_OPTIONS: dict[str, dict[str, Any] | None] = {
    BOOT_DQN.name: None,
    BOOT_DQN_DE.name: {},
    BOOT_DQN_DE_MEAN.name: {"host": "mean"},
    BOOT_DQN_DE_COMMIT.name: {"commit": True},
    BOOT_DQN_DE_SPREAD.name: {"value_scale": "spread", "gate_price": SPREAD_GATE_PRICE},
    BOOT_DQN_DE_AGREE.name: {"agreement": AGREEMENT},
    BOOT_DQN_DE_COMMIT_FAST.name: {"commit": True, "half_life": COMMIT_FAST_HALF_LIFE},
}

#: The agents with a batched form, many seeds in one run
#: (:func:`~delight_gym.experiments.deepsea_bsuite.run_bsuite_deep_sea_batched`): bsuite's
#: BootDQN, as :class:`~delight_gym.agents.boot_dqn.SeedBatchedBootDQN` (which has no DE).
BATCHED_AGENTS = (BOOT_DQN.name,)
#: :data:`DEVICE`'s default: each seed runs alone (the SB3 agent, on the CPU).
PER_SEED = "none"


def check_batch_device(value: Any, name: str) -> str:
    """``device`` of the bsuite families' ``boot_dqn``: :data:`PER_SEED`, or a torch device
    torch can allocate on, as the concrete device (``"cuda"`` as ``"cuda:0"``, so that both
    name the same cells); a ``TypeError``/``ValueError`` naming ``name`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string (a torch device or {PER_SEED!r}), got {value!r}")
    if value == PER_SEED:
        return value
    return str(check_device(value, name))


#: ``boot_dqn``'s ``device`` in the bsuite families: a cell's seeds as one batched run there.
DEVICE = Parameter(
    "device",
    str,
    check_batch_device,
    default=PER_SEED,
    help="boot_dqn only: run each cell's seeds (--batch-size of them) as one batched "
    "SeedBatchedBootDQN on this torch device (cuda, cuda:1, cpu); the other agents run one "
    "seed at a time as without it (default %(default)s: boot_dqn too, on SB3's "
    "BootstrappedDQN)",
)


def bsuite_score_report(result: SweepOutcome) -> list[str]:
    """Each agent's bsuite score over the sweep's (size, seed) runs
    (:func:`~delight_gym.experiments.scores.deep_sea_score`)."""
    from delight_gym.experiments.scores import DeepSeaSolve, deep_sea_score

    runs: dict[str, list[tuple[int, DeepSeaSolve]]] = {}
    for row in result.rows:
        size = int(row["setting"]["size"])
        for done, episode in zip(row["solved"], row["solve_episode"], strict=True):
            solve = DeepSeaSolve(bool(done), int(episode), True)
            runs.setdefault(row["agent"], []).append((size, solve))
    lines = [
        f"  {agent}: {deep_sea_score(pairs):.2f} ({len(pairs)} runs)"
        for agent, pairs in runs.items()
    ]
    if lines:
        lines.insert(0, "bsuite score (fraction of runs solved within 2^N + 100 episodes):")
    return lines


#: The bsuite families' run function: each seed's run, or one batched run of the seeds.
_RUN_SEEDS = "delight_gym.experiments.deepsea_bsuite:run_bsuite_seeds"

_BSUITE_AGENTS = (
    DQN_EGREEDY,
    BOOT_DQN,
    BOOT_DQN_DE,
    BOOT_DQN_DE_MEAN,
    BOOT_DQN_DE_COMMIT,
    DELIGHT_DQN,
    PSRL,
    DELIGHT,
)
_BSUITE_VARIANTS = (BOOT_DQN_DE_SPREAD, BOOT_DQN_DE_AGREE, BOOT_DQN_DE_COMMIT_FAST)

#: Deep agents on bsuite's deterministic DeepSea (``mapping_seed`` = seed), bsuite's yardstick.
DEEP_SEA_BSUITE = Family(
    name="deepsea-bsuite",
    help="deep agents on DeepSea-v0 (mapping_seed = seed), scored by bsuite's rule",
    cell=_RUN_SEEDS,
    agents=(*_BSUITE_AGENTS, *_BSUITE_VARIANTS),
    instance=(
        Parameter(
            "size", int, check_bsuite_size, sweep=(10, 12, 14, 16, 20), symbol="N", help="sizes N"
        ),
    ),
    default_agents=tuple(a.name for a in _BSUITE_AGENTS),
    horizon=10_000,
    horizon_option="--episodes",
    time_label="episode",
    seeds=5,
    batch_size=1,
    title="DeepSea, bsuite's yardstick",
    report=bsuite_score_report,
)


#: bsuite's sizes N = 10, 12, …, 50 (``deep_sea/sweep.py``; a test reads the installed bsuite).
BSUITE_SIZES = BSUITE_EXPERIMENTS["deep_sea"].sizes
_BSUITE_SWEEP_AGENTS = (DQN_EGREEDY, BOOT_DQN, BOOT_DQN_DE, BOOT_DQN_DE_COMMIT_FAST)
_BSUITE_SIZE = dataclasses.replace(DEEP_SEA_BSUITE.instance[0], sweep=BSUITE_SIZES)
# The bsuite families' agents are deepsea-bsuite's, with boot_dqn taking DEVICE.
_BOOT_DQN_DEVICE = dataclasses.replace(BOOT_DQN, parameters=(DEVICE,))

#: bsuite's ``deep_sea`` experiment exactly: its 21 settings, one run each, its budget and score.
BSUITE_DEEP_SEA = dataclasses.replace(
    DEEP_SEA_BSUITE,
    name="bsuite-deep-sea",
    help="bsuite's deep_sea sweep (N = 10..50, mapping_seed 42), scored by bsuite's rule",
    fixed={"mapping_seed": BSUITE_EXPERIMENTS["deep_sea"].mapping_seed},
    agents=tuple(_BOOT_DQN_DEVICE if a is BOOT_DQN else a for a in DEEP_SEA_BSUITE.agents),
    instance=(_BSUITE_SIZE,),
    default_agents=tuple(a.name for a in _BSUITE_SWEEP_AGENTS),
    seeds=1,
    title="bsuite deep_sea",
)

#: bsuite's ``deep_sea_stochastic`` experiment exactly (its own solve rule).
BSUITE_DEEP_SEA_STOCHASTIC = dataclasses.replace(
    BSUITE_DEEP_SEA,
    name="bsuite-deep-sea-stochastic",
    help="bsuite's deep_sea_stochastic sweep (N = 10..50, mapping_seed 42), bsuite's rule",
    fixed={
        "mapping_seed": BSUITE_EXPERIMENTS["deep_sea_stochastic"].mapping_seed,
        "deterministic": False,
    },
    agents=tuple(a for a in BSUITE_DEEP_SEA.agents if a not in (PSRL, DELIGHT)),
    title="bsuite deep_sea_stochastic",
)
