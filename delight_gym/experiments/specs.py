"""The paper's experiments as data: one small spec per figure (bsuite-sweep style).

An :class:`ExperimentSpec` says *what* to run: a :class:`family
<delight_gym.experiments.families.base.Family>`, agents, settings (dicts such as
``{"arms": 100, "gate_price": 0.1}``, checked once, when the spec is built; an agent gets only
the parameters it takes), seeds, horizon and the tables' setting columns. The runner
(:mod:`delight_gym.experiments.runner`) executes its cells (``agent × setting × seed batch``).
Instance ``i`` is seeded ``seed + i`` whatever the batching; an agent's own draws are seeded
per batch, so results are reproducible for a given ``batch_size``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from delight_gym._checks import check_nonnegative_int, check_positive_int
from delight_gym._version import __version__
from delight_gym.de.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE
from delight_gym.experiments.families import (
    BERNOULLI,
    CONTINUUM,
    DEEP_SEA,
    DEEP_SEA_BSUITE,
    LINEAR,
    MOUNTAIN_CAR,
    MOUNTAIN_CAR_CONTINUOUS,
    NEURAL_WIDTH,
    PENDULUM,
    WHEEL,
    Family,
)

__all__ = [
    "FIGURES",
    "PAPER_FIGURES",
    "ExperimentSpec",
    "FigureSpec",
    "setting_grid",
    "tune_settings",
]


def cell_key(spec: Mapping[str, Any]) -> str:
    """A short stable hash of a JSON-serialisable cell specification."""
    blob = json.dumps(spec, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:20]


@dataclass(frozen=True)
class Cell:
    """One unit of work: an agent, its (restricted, completed) setting and one seed batch.

    Attributes
    ----------
    experiment, family, agent
        the spec's name (not part of the key); the family (its run function runs the cell);
        the agent's name.
    setting, horizon
        the run function's keywords besides ``seed`` (``arms``, the agent's parameters); rounds.
    batch, seeds, seed
        batch index ``j``, instances in it, its base seed ``spec.seed + j·batch_size``.
    """

    experiment: str
    family: Family
    agent: str
    setting: Mapping[str, Any]
    horizon: int
    batch: int
    seeds: int
    seed: int

    def key_spec(self) -> dict[str, Any]:
        """Everything that determines the cell's numbers (not the experiment name): with the
        package version, so that another release's cells (whose random streams may differ)
        are recomputed, the run function's ``module:function`` and the fixed keywords."""
        spec = {
            "version": __version__,
            "cell": self.family.cell_path,
            "agent": self.agent,
            "setting": dict(self.setting),
            "horizon": self.horizon,
            "seeds": self.seeds,
            "seed": self.seed,
        }
        if self.family.fixed:
            spec["fixed"] = dict(self.family.fixed)
        return spec

    @property
    def key(self) -> str:
        """Stable hash of :meth:`key_spec`; the cell's file is ``cells/<key>.npz``."""
        return cell_key(self.key_spec())

    def label(self) -> str:
        """Short human-readable name, e.g. ``delight K=100 M=10 λ=0.1 L=10 seeds 0-24``."""
        params = self.family.parameters
        parts = [params[k].format(v) for k, v in self.setting.items()]
        return " ".join([self.agent, *parts, f"seeds {self.seed}-{self.seed + self.seeds - 1}"])


@dataclass(frozen=True)
class ExperimentSpec:
    """A sweep: ``agents × settings × seed batches`` of one family, as data.

    Parameters
    ----------
    name, agents
        experiment name (the ``experiment`` column of the results); agent names.
    settings
        dicts of the family's instance keys (``arms``) and agent parameters (``half_life``),
        each checked with :meth:`Family.check_setting
        <delight_gym.experiments.families.base.Family.check_setting>`.
    setting_columns
        the setting keys that are columns of ``summary.csv`` and ``curves.csv`` (empty where
        an agent does not take the parameter).
    horizon, seeds, seed
        rounds per run; instances per (agent, setting); base seed (instance ``i``: ``seed + i``).
    batch_size, family
        at most this many seeds per cell; the experiment family (default Bernoulli bandits).

    Raises
    ------
    SettingError
        a setting value the family's parameter refuses (a ``ValueError`` whose
        ``key`` names the setting).
    """

    name: str
    agents: tuple[str, ...]
    settings: tuple[Mapping[str, Any], ...]
    setting_columns: tuple[str, ...]
    horizon: int = 1000
    seeds: int = 100
    seed: int = 0
    batch_size: int = 25
    family: Family = BERNOULLI
    _groups: tuple[tuple[str, Mapping[str, Any]], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.family, Family):
            raise TypeError(f"family must be a Family record, got {self.family!r}")
        set_(self, "agents", tuple(self.agents))
        set_(self, "setting_columns", tuple(self.setting_columns))
        set_(self, "horizon", check_positive_int(self.horizon, "horizon"))
        set_(self, "seeds", check_positive_int(self.seeds, "seeds"))
        set_(self, "seed", check_nonnegative_int(self.seed, "seed"))
        set_(self, "batch_size", check_positive_int(self.batch_size, "batch_size"))
        if not self.agents:
            raise ValueError("agents must not be empty")
        names = self.family.agent_names
        unknown = [a for a in self.agents if a not in names]
        if unknown:
            raise ValueError(f"agents: unknown {unknown}; choose from {list(names)}")
        if len(set(self.agents)) != len(self.agents):
            raise ValueError(f"agents must not repeat, got {list(self.agents)}")
        if not self.settings:
            raise ValueError("settings must not be empty")
        set_(self, "settings", tuple(self.family.check_setting(s) for s in self.settings))
        known = self.family.parameters
        bad_cols = [c for c in self.setting_columns if c not in known]
        if bad_cols:
            raise ValueError(f"setting_columns: unknown {bad_cols}; choose from {sorted(known)}")
        groups: list[tuple[str, Mapping[str, Any]]] = []
        rows: dict[tuple[Any, ...], Mapping[str, Any]] = {}
        for setting in self.settings:
            for agent in self.agents:
                pair = (agent, self.family.restrict(agent, setting))
                if pair in groups:
                    continue
                groups.append(pair)
                # Two settings that the tables would show as one row are refused.
                row = (agent, *(pair[1].get(c) for c in self.setting_columns))
                if row in rows:
                    raise ValueError(
                        f"settings {rows[row]} and {pair[1]} of agent {agent!r} differ only in "
                        f"keys that are not setting_columns {list(self.setting_columns)}"
                    )
                rows[row] = pair[1]
        set_(self, "_groups", tuple(groups))

    @classmethod
    def for_family(
        cls, family: Family, name: str, settings: Iterable[Mapping[str, Any]], **fields: Any
    ) -> ExperimentSpec:
        """A spec of ``family`` with its defaults (agents, instance keys as setting columns,
        horizon, seeds, batch size); ``fields`` override them."""
        defaults = {"agents": family.default_agents, "setting_columns": family.instance_keys}
        defaults.update({k: getattr(family, k) for k in ("horizon", "seeds", "batch_size")})
        return cls(name=name, settings=tuple(settings), family=family, **{**defaults, **fields})

    def replace(self, **changes: Any) -> ExperimentSpec:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def groups(self) -> list[tuple[str, dict[str, Any]]]:
        """The distinct (agent, restricted setting) pairs, settings outer, agents inner."""
        return [(agent, dict(setting)) for agent, setting in self._groups]

    def batches(self) -> list[tuple[int, int]]:
        """``(seeds, seed)`` of each seed batch: batch ``j`` covers ``[j·b, (j+1)·b)``."""
        b = self.batch_size
        return [
            (min(b, self.seeds - start), self.seed + start) for start in range(0, self.seeds, b)
        ]

    def cells(self) -> list[Cell]:
        """Every cell, grouped by (agent, setting) and in seed order within a group."""
        return [
            Cell(self.name, self.family, agent, setting, self.horizon, j, n, s)
            for agent, setting in self.groups()
            for j, (n, s) in enumerate(self.batches())
        ]


def setting_grid(**values: Iterable[Any]) -> tuple[dict[str, Any], ...]:
    """Every combination of the given values, the first key outermost; repeated values are
    dropped. ``setting_grid(arms=(100,), dim=(2, 5))`` is
    ``({"arms": 100, "dim": 2}, {"arms": 100, "dim": 5})``."""
    keys = list(values)
    lists = [list(dict.fromkeys(values[k])) for k in keys]
    return tuple(dict(zip(keys, combo, strict=True)) for combo in itertools.product(*lists))


def tune_settings(
    instances: Iterable[Mapping[str, Any]],
    half_lives: Iterable[float],
    gate_prices: Iterable[float],
) -> tuple[dict[str, Any], ...]:
    """For each instance setting: the ``M`` sweep at the default ``λ``, then the ``λ`` sweep at
    the default ``M`` (a setting already listed is not repeated)."""
    half_lives, gate_prices = tuple(half_lives), tuple(gate_prices)
    out: list[dict[str, Any]] = []
    for instance in instances:
        for m in half_lives:
            out.append({**instance, "half_life": float(m), "gate_price": DEFAULT_GATE_PRICE})
        for lam in gate_prices:
            s = {**instance, "half_life": DEFAULT_HALF_LIFE, "gate_price": float(lam)}
            if s not in out:
                out.append(s)
    return tuple(out)


@dataclass(frozen=True)
class FigureSpec:
    """A paper figure: the full experiment, its ``--quick`` variant and how to draw it.

    Attributes
    ----------
    name, title, paper
        figure name (``delight-gym reproduce NAME``) and title; one of the paper's figures
        (``reproduce all`` runs those; the others only by name).
    full, quick
        the paper-scale experiment and a small version (10 seeds, fewer settings).
    plot, plot_options
        name of the drawing function in :mod:`delight_gym.experiments.figures`, its keywords.
    """

    name: str
    title: str
    full: ExperimentSpec
    quick: ExperimentSpec
    plot: str
    plot_options: Mapping[str, Any] = field(default_factory=dict)
    paper: bool = True

    def spec(self, *, quick: bool = False) -> ExperimentSpec:
        return self.quick if quick else self.full


def _figure(
    name: str,
    family: Family,
    settings: Iterable[Mapping[str, Any]],
    quick_settings: Iterable[Mapping[str, Any]],
    *,
    title: str,
    plot: str,
    spec: Mapping[str, Any] | None = None,
    quick: Mapping[str, Any] | None = None,
    paper: bool = True,
    **plot_options: Any,
) -> FigureSpec:
    """The family's defaults changed by ``spec``, over ``settings``; quick: 10 seeds, ``quick``."""
    full = ExperimentSpec.for_family(family, name, settings, **(spec or {}))
    small = full.replace(settings=tuple(quick_settings), **{"seeds": 10, **(quick or {})})
    return FigureSpec(name, title, full, small, plot, plot_options, paper)


_LINEAR_BASE = {"arms": 100, "dim": 30, "noise": 1.0}
_TUNE: dict[str, Any] = {
    "plot": "plot_tune",
    "half_life": DEFAULT_HALF_LIFE,
    "gate_price": DEFAULT_GATE_PRICE,
}
#: The published Bernoulli figures were computed in seed batches of 25, which their specs keep
#: (agents draw per batch, so ``reproduce`` then gives their numbers exactly); ``run bernoulli``
#: takes the family's default, all 100 seeds in one batch.
_PUBLISHED_BATCH = {"batch_size": 25}
_TUNE_SPEC = {"agents": ("delight", "thompson", "greedy"), **_PUBLISHED_BATCH}
_TUNE_GRID = ((10, 30, 100, 300, 1000), (0.01, 0.03, 0.1, 0.3, 1.0))
_TUNE_QUICK_GRID = ((10, 100, 1000), (0.01, 0.1, 1.0))
_DEEP_SEA_QUICK = {"horizon": 200}


def _control_figure(family: Family, quick_agents: tuple[str, ...]) -> FigureSpec:
    """A control family's figure: its default agents and seeds at its task's steps, a
    checkpoint every 5 000 steps; quick: ``quick_agents``, one seed, 1 000 steps."""
    return _figure(
        family.name,
        family,
        setting_grid(eval_every=(5000,), eval_episodes=(5,)),
        setting_grid(eval_every=(500,), eval_episodes=(1,)),
        title=f"{family.title}: fraction of seeds solved vs training steps",
        plot="plot_solved_curves",
        quick={"seeds": 1, "horizon": 1000, "agents": quick_agents},
        paper=False,
        agents_of=family.name,
    )


def _neural_grid(*arms: int) -> tuple[dict[str, Any], ...]:
    """The ``neural-width`` settings: ``arms`` × both reward functions, the env's defaults."""
    return setting_grid(
        arms=arms, reward=("quadratic", "cosine"), dim=(20,), context_dim=(0,), noise=(0.1,)
    )


#: The figures ``delight-gym reproduce`` knows, by name.
FIGURES: Mapping[str, FigureSpec] = {
    figure.name: figure
    for figure in (
        _figure(
            "bernoulli-arms",
            BERNOULLI,
            setting_grid(arms=(10, 30, 100, 300, 1000, 3000, 10000)),
            setting_grid(arms=(10, 100, 1000)),
            title="Bernoulli bandits: regret vs number of arms K",
            plot="plot_final_regret",
            spec=_PUBLISHED_BATCH,
            x="arms",
            xlabel="number of arms K",
        ),
        _figure(
            "bernoulli-curves",
            BERNOULLI,
            setting_grid(arms=(10, 100, 1000)),
            setting_grid(arms=(10, 100, 1000)),
            title="Bernoulli bandits: learning curves",
            plot="plot_regret_curves",
            spec=_PUBLISHED_BATCH,
            panel="arms",
            panel_label="K",
        ),
        _figure(
            "bernoulli-tune",
            BERNOULLI,
            tune_settings(setting_grid(arms=(100, 1000)), *_TUNE_GRID),
            tune_settings(setting_grid(arms=(100, 1000)), *_TUNE_QUICK_GRID),
            title="Bernoulli bandits: sensitivity to M and λ",
            spec={**_TUNE_SPEC, "setting_columns": ("arms", "half_life", "gate_price")},
            **_TUNE,
        ),
        _figure(
            "linear-dim",
            LINEAR,
            setting_grid(arms=(100,), dim=(2, 5, 10, 20, 30, 50), noise=(1.0,)),
            setting_grid(arms=(100,), dim=(2, 10, 30), noise=(1.0,)),
            title="Linear bandits (K=100, σ=1): regret vs dimension D",
            plot="plot_final_regret",
            x="dim",
            xlabel="feature dimension D",
        ),
        _figure(
            "linear-noise",
            LINEAR,
            setting_grid(arms=(100,), dim=(30,), noise=(0.1, 0.3, 1.0, 3.0, 10.0)),
            setting_grid(arms=(100,), dim=(30,), noise=(0.1, 1.0, 10.0)),
            title="Linear bandits (K=100, D=30): regret vs noise σ",
            plot="plot_final_regret",
            x="noise",
            xlabel="reward noise σ",
        ),
        _figure(
            "linear-tune",
            LINEAR,
            tune_settings([_LINEAR_BASE], *_TUNE_GRID),
            tune_settings([_LINEAR_BASE], *_TUNE_QUICK_GRID),
            title="Linear bandits (K=100, D=30, σ=1): sensitivity to M and λ",
            spec={**_TUNE_SPEC, "setting_columns": (*_LINEAR_BASE, "half_life", "gate_price")},
            **_TUNE,
        ),
        _figure(
            "deepsea-regret",
            DEEP_SEA,
            setting_grid(size=(2, 4, 6, 8, 10, 15, 20, 30, 40, 50)),
            setting_grid(size=(2, 6, 10, 20)),
            title="DeepSea: final regret vs size N",  # the horizon is on the y axis
            plot="plot_final_regret",
            x="size",
            log_x=False,
            quick=_DEEP_SEA_QUICK,
            xlabel="DeepSea size N",
            horizon_unit="episodes",
        ),
        _figure(
            "deepsea-curves",
            DEEP_SEA,
            setting_grid(size=(5, 10, 20)),
            setting_grid(size=(5, 10)),
            title="DeepSea: learning curves",
            plot="plot_regret_curves",
            panel="size",
            quick=_DEEP_SEA_QUICK,
            panel_label="N",
            xlabel="episode",
        ),
        # Deep agents under bsuite's yardstick (beyond the paper; docs/reproduce/deepsea-bsuite.md):
        # 5 seeds (seed s plays mapping_seed = s), each run stopped once solved or after
        # min(2^N + 100, 10 000) episodes. Quick: N ∈ {6, 8}, 2 seeds, at most 200 episodes.
        _figure(
            "deepsea-bsuite",
            DEEP_SEA_BSUITE,
            setting_grid(size=DEEP_SEA_BSUITE.instance[0].sweep),
            setting_grid(size=(6, 8)),
            title="DeepSea, bsuite's yardstick: episodes to solve vs size N",
            plot="plot_bsuite_deep_sea",
            quick={"seeds": 2, "horizon": 200},
            paper=False,
        ),
        # Learned posteriors on the showdown's wheel and on many-armed neural bandits (beyond
        # the paper; docs/reproduce/contextual.md says how the sizes were chosen).
        _figure(
            "wheel",
            WHEEL,
            setting_grid(delta=WHEEL.instance[0].sweep, noise=(0.01,)),
            setting_grid(delta=(0.5, 0.95), noise=(0.01,)),
            title="Wheel bandit: cumulative regret relative to uniform play vs δ",
            plot="plot_regret_panels",
            quick={"horizon": 300, "seeds": 10, "batch_size": 10},
            paper=False,
            x="delta",
            xlabel="radius δ of the low-reward disk",
            log_x=False,
            log_y=True,
            relative_to="uniform",
        ),
        _figure(
            "neural-width",
            NEURAL_WIDTH,
            _neural_grid(10, 100, 1000, 10_000),
            _neural_grid(10, 100),
            title="Neural bandits: regret vs number of arms K",
            plot="plot_regret_panels",
            spec={"horizon": 1000, "seeds": 10, "batch_size": 10},
            quick={"horizon": 200, "seeds": 10, "batch_size": 10},
            paper=False,
            x="arms",
            panel="reward",
        ),
        _figure(
            "continuum",
            CONTINUUM,
            setting_grid(dim=(1, 2, 5, 10, 20), needle_width=(0.15,)),
            setting_grid(dim=(1, 2), needle_width=(0.15,)),
            title="Continuum bandits (widths ∝ √d): regret at T vs dimension d",
            plot="plot_regret_panels",
            quick={"batch_size": 10, "horizon": 100},
            paper=False,
            x="dim",
            xlabel="dimension d",
            log_x=True,
        ),
        # SB3 hosts on classic control (beyond the paper; docs/reproduce/continuous-control.md).
        _control_figure(MOUNTAIN_CAR_CONTINUOUS, ("sac", "td3")),
        _control_figure(PENDULUM, ("sac", "td3")),
        _control_figure(MOUNTAIN_CAR, ("dqn", "dqn_ez")),
    )
}

#: What ``delight-gym reproduce all`` runs: the paper's figures, in :data:`FIGURES`' order.
PAPER_FIGURES = tuple(name for name, figure in FIGURES.items() if figure.paper)
