"""The paper's experiments as data: one small spec per figure (bsuite-sweep style).

An :class:`ExperimentSpec` says *what* to run — agents, a list of settings (dicts with keys
such as ``arms``, ``half_life``, ``gate_price``), seeds, horizon and the setting columns of the
results tables — and names the *cell function* that runs one (agent, setting, seed batch)
cell by import path, so that a worker process or a Ray task can import and call it. The sweep
runner (:mod:`delight_gym.experiments.runner`) executes the cells; :mod:`.figures` draws them.

Cells
    A spec expands to cells ``agent × setting × seed batch`` (:meth:`ExperimentSpec.cells`).
    A setting applies to an agent only through the parameters that agent takes
    (:data:`BERNOULLI_AGENT_PARAMETERS`): ``half_life`` reaches ``delight`` and ``egreedy``,
    ``gate_price`` and ``surprisal_cap`` only ``delight``; instance keys (``arms``) reach every
    agent. Settings that become equal once restricted to an agent (Thompson sampling at
    two values of ``λ``) are run once. A parameter an agent takes but the setting leaves out is
    filled with its default, so a cell's key names every number that determines it.

Seed batches
    The ``seeds`` instances are split into batches of at most ``batch_size``: batch ``j``
    covers seed indices ``[j·b, (j+1)·b)`` and calls the cell function with
    ``seeds = b_j`` and ``seed = seed + j·b``. Environment instance ``i`` is therefore always
    seeded ``seed + i`` whatever the batching (every agent faces the same instances), but an
    agent's own random draws are seeded per batch (``run_bernoulli`` seeds the agent with the
    batch's base seed), so results are reproducible *for a given batch size*; a different
    ``batch_size`` gives statistically equivalent, not identical, numbers for randomised agents.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from delight_gym._checks import check_nonnegative_int, check_positive_int
from delight_gym.experiments.results import cell_key
from delight_gym.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE, DEFAULT_SURPRISAL_CAP

__all__ = [
    "BERNOULLI_AGENT_PARAMETERS",
    "BERNOULLI_CELL",
    "DEEP_SEA_AGENT_PARAMETERS",
    "DEEP_SEA_CELL",
    "FIGURES",
    "LINEAR_AGENT_PARAMETERS",
    "LINEAR_CELL",
    "Cell",
    "ExperimentSpec",
    "FigureSpec",
    "bernoulli_cell",
    "cell_name",
    "deep_sea_cell",
    "linear_cell",
]

#: The tunable keyword arguments each Bernoulli agent takes, with their defaults.
BERNOULLI_AGENT_PARAMETERS: Mapping[str, Mapping[str, float]] = {
    "delight": {
        "half_life": DEFAULT_HALF_LIFE,
        "gate_price": DEFAULT_GATE_PRICE,
        "surprisal_cap": DEFAULT_SURPRISAL_CAP,
    },
    "thompson": {},
    "egreedy": {"half_life": DEFAULT_HALF_LIFE},
    "greedy": {},
    "ucb": {},
}

#: Import path of the Bernoulli cell function (see :func:`bernoulli_cell`).
BERNOULLI_CELL = "delight_gym.experiments.specs:bernoulli_cell"

#: The linear agents take the same tunable parameters as the Bernoulli ones.
LINEAR_AGENT_PARAMETERS = BERNOULLI_AGENT_PARAMETERS

#: Import path of the linear-bandit cell function (see :func:`linear_cell`).
LINEAR_CELL = "delight_gym.experiments.specs:linear_cell"


def bernoulli_cell(
    agent: str, horizon: int, seeds: int, *, seed: int, arms: int, **agent_kwargs: Any
) -> Any:
    """Cell function of the Bernoulli experiments: one call of ``run_bernoulli``.

    The cell-function protocol of the runner is ``fn(agent, horizon, seeds, *, seed,
    **setting)`` returning an object with ``cumulative`` (shape ``(seeds, horizon)``),
    ``seconds`` and optionally ``overrides`` (shape ``(seeds,)``).
    ``run_bernoulli`` is looked up on its module at call time (in the worker).
    """
    from delight_gym.experiments import bandit

    return bandit.run_bernoulli(agent, arms, horizon, seeds, seed=seed, **agent_kwargs)


def linear_cell(
    agent: str,
    horizon: int,
    seeds: int,
    *,
    seed: int,
    arms: int,
    dim: int,
    noise: float,
    **agent_kwargs: Any,
) -> Any:
    """Cell function of the linear experiments: one call of ``run_linear`` (CPU, float64)."""
    from delight_gym.experiments import linear

    return linear.run_linear(agent, arms, dim, noise, horizon, seeds, seed=seed, **agent_kwargs)


#: The tunable keyword arguments of each DeepSea agent (:mod:`delight_gym.agents.mdp`).
DEEP_SEA_AGENT_PARAMETERS: Mapping[str, Mapping[str, float]] = {
    "delight": BERNOULLI_AGENT_PARAMETERS["delight"],
    "psrl": {},
    "egreedy": {"half_life": DEFAULT_HALF_LIFE},
    "greedy": {},
}

#: Import path of the DeepSea cell function (see :func:`deep_sea_cell`).
DEEP_SEA_CELL = "delight_gym.experiments.specs:deep_sea_cell"


@dataclass
class DeepSeaCellResult:
    """What :func:`deep_sea_cell` returns (the runner's cell protocol)."""

    cumulative: Any
    seconds: float
    overrides: Any
    first_success: Any


def deep_sea_cell(
    agent: str, horizon: int, seeds: int, *, seed: int, size: int, **agent_kwargs: Any
) -> DeepSeaCellResult:
    """Cell function of the DeepSea experiments: ``run_deep_sea`` for one agent, ``horizon``
    episodes (deterministic DeepSea, the agents' default priors, CPU).

    Returns cumulative per-episode regret ``(seeds, episodes)``, DE's override counts (0 for
    the other agents) and ``first_success``: the 1-based episode of each seed's first treasure,
    0 if never found (:data:`~delight_gym.experiments.results.OPTIONAL_PER_SEED`).
    """
    import numpy as np

    from delight_gym.experiments import deep_sea

    result = deep_sea.run_deep_sea(
        size, horizon, seeds, agent, seed=seed, progress=False, **agent_kwargs
    )
    overrides = result.overrides.get(agent, np.zeros(seeds, dtype=np.int64))
    return DeepSeaCellResult(
        cumulative=result.cumulative(agent).T,
        seconds=result.seconds[agent],
        overrides=overrides,
        first_success=result.first_success[agent] + 1,
    )


def cell_name(cell: str | Callable[..., Any]) -> str:
    """The ``module:qualname`` import path of a cell function (strings pass through)."""
    if isinstance(cell, str):
        if ":" not in cell:
            raise ValueError(f"cell must be an import path 'module:function', got {cell!r}")
        return cell
    if not callable(cell):
        raise TypeError(f"cell must be a callable or an import path, got {cell!r}")
    return f"{cell.__module__}:{cell.__qualname__}"


def _number(value: Any, name: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"setting {name!r} must be a number, got {value!r}")
    return int(value) if isinstance(value, numbers.Integral) else float(value)


@dataclass(frozen=True)
class Cell:
    """One unit of work: an agent, its (restricted, completed) setting and one seed batch.

    Attributes:
        experiment: name of the spec it comes from (not part of the key).
        cell: import path of the cell function.
        agent: agent name.
        setting: keyword arguments of the cell function besides ``seed`` (``arms``, the
            agent's parameters), restricted to what the agent takes.
        horizon: rounds.
        batch: batch index ``j``.
        seeds: instances in this batch.
        seed: base seed of this batch (``spec.seed + j·batch_size``).
    """

    experiment: str
    cell: str
    agent: str
    setting: Mapping[str, Any]
    horizon: int
    batch: int
    seeds: int
    seed: int

    def key_spec(self) -> dict[str, Any]:
        """Everything that determines the cell's numbers (the experiment name does not).

        The package version is part of it, so cells computed by another release (whose random
        streams may differ) are recomputed rather than mixed in.
        """
        from delight_gym import __version__

        return {
            "version": __version__,
            "cell": self.cell,
            "agent": self.agent,
            "setting": dict(self.setting),
            "horizon": self.horizon,
            "seeds": self.seeds,
            "seed": self.seed,
        }

    @property
    def key(self) -> str:
        """Stable hash of :meth:`key_spec`; the cell's file is ``cells/<key>.npz``."""
        return cell_key(self.key_spec())

    def label(self) -> str:
        """Short human-readable name, e.g. ``delight arms=100 M=10 seeds 0-24``."""
        short = {"half_life": "M", "gate_price": "λ", "surprisal_cap": "L"}
        parts = [f"{short.get(k, k)}={v:g}" for k, v in self.setting.items()]
        first = self.seed
        return " ".join([self.agent, *parts, f"seeds {first}-{first + self.seeds - 1}"])


@dataclass(frozen=True)
class ExperimentSpec:
    """A sweep: ``agents × settings × seed batches``, as data.

    Args:
        name: experiment name (the ``experiment`` column of the results).
        agents: agent names.
        settings: dicts whose keys are instance keys (``arms``) or agent parameters
            (``half_life``, ``gate_price``, ``surprisal_cap``).
        setting_columns: the setting keys reported as columns of ``summary.csv`` and
            ``curves.csv`` (empty where an agent does not take the parameter).
        horizon: rounds per run.
        seeds: independent instances per (agent, setting).
        seed: base seed; instance ``i`` is seeded ``seed + i``.
        batch_size: at most this many seeds per cell.
        cell: the cell function or its import path ``module:function``.
        instance_keys: setting keys passed to every agent's cell.
        agent_parameters: per agent, the parameters it takes and their defaults.
    """

    name: str
    agents: tuple[str, ...]
    settings: tuple[Mapping[str, Any], ...]
    setting_columns: tuple[str, ...]
    horizon: int = 1000
    seeds: int = 100
    seed: int = 0
    batch_size: int = 25
    cell: str | Callable[..., Any] = BERNOULLI_CELL
    instance_keys: tuple[str, ...] = ("arms",)
    agent_parameters: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: BERNOULLI_AGENT_PARAMETERS
    )

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        set_(self, "agents", tuple(self.agents))
        set_(self, "settings", tuple(dict(s) for s in self.settings))
        set_(self, "setting_columns", tuple(self.setting_columns))
        set_(self, "instance_keys", tuple(self.instance_keys))
        set_(self, "horizon", check_positive_int(self.horizon, "horizon"))
        set_(self, "seeds", check_positive_int(self.seeds, "seeds"))
        set_(self, "seed", check_nonnegative_int(self.seed, "seed"))
        set_(self, "batch_size", check_positive_int(self.batch_size, "batch_size"))
        cell_name(self.cell)
        if not self.agents:
            raise ValueError("agents must not be empty")
        unknown = [a for a in self.agents if a not in self.agent_parameters]
        if unknown:
            raise ValueError(
                f"agents: unknown {unknown}; choose from {sorted(self.agent_parameters)}"
            )
        if len(set(self.agents)) != len(self.agents):
            raise ValueError(f"agents must not repeat, got {list(self.agents)}")
        if not self.settings:
            raise ValueError("settings must not be empty")
        known = set(self.instance_keys).union(*map(set, self.agent_parameters.values()))
        for setting in self.settings:
            bad = sorted(set(setting) - known)
            if bad:
                raise ValueError(f"settings: unknown key(s) {bad}; choose from {sorted(known)}")
            missing = [k for k in self.instance_keys if k not in setting]
            if missing:
                raise ValueError(f"settings: every setting needs {missing}, got {setting}")
            for k, v in setting.items():
                _number(v, k)
        bad_cols = [c for c in self.setting_columns if c not in known]
        if bad_cols:
            raise ValueError(f"setting_columns: unknown {bad_cols}; choose from {sorted(known)}")
        rows: dict[tuple[Any, ...], Mapping[str, Any]] = {}
        for agent, setting in self.groups():
            row = (agent, *(setting.get(c) for c in self.setting_columns))
            if row in rows:
                raise ValueError(
                    f"settings {rows[row]} and {setting} of agent {agent!r} differ only in keys "
                    f"that are not setting_columns {list(self.setting_columns)}"
                )
            rows[row] = setting

    def replace(self, **changes: Any) -> ExperimentSpec:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def restrict(self, agent: str, setting: Mapping[str, Any]) -> dict[str, Any]:
        """The cell-function keywords of ``setting`` for ``agent``: instance keys, then the
        agent's parameters (defaults filled in), with ints as ``int`` and parameters as
        ``float`` so that equal values always give equal keys."""
        out: dict[str, Any] = {k: _number(setting[k], k) for k in self.instance_keys}
        for k, default in self.agent_parameters[agent].items():
            out[k] = float(_number(setting.get(k, default), k))
        return out

    def groups(self) -> list[tuple[str, dict[str, Any]]]:
        """The distinct (agent, restricted setting) pairs, settings outer, agents inner."""
        seen: list[tuple[str, dict[str, Any]]] = []
        for setting in self.settings:
            for agent in self.agents:
                pair = (agent, self.restrict(agent, setting))
                if pair not in seen:
                    seen.append(pair)
        return seen

    def batches(self) -> list[tuple[int, int]]:
        """``(seeds, seed)`` of each seed batch: batch ``j`` covers ``[j·b, (j+1)·b)``."""
        b = self.batch_size
        return [
            (min(b, self.seeds - start), self.seed + start) for start in range(0, self.seeds, b)
        ]

    def cells(self) -> list[Cell]:
        """Every cell, grouped by (agent, setting) and in seed order within a group."""
        name = cell_name(self.cell)
        return [
            Cell(self.name, name, agent, setting, self.horizon, j, n, s)
            for agent, setting in self.groups()
            for j, (n, s) in enumerate(self.batches())
        ]


@dataclass(frozen=True)
class FigureSpec:
    """A paper figure: the full experiment, its ``--quick`` variant and how to draw it.

    Attributes:
        name: figure name (``delight-gym reproduce NAME``).
        title: figure title.
        full: the paper-scale experiment.
        quick: a small version (about a minute on two cores).
        plot: name of the drawing function in :mod:`delight_gym.experiments.figures`.
        plot_options: keyword arguments for it.
    """

    name: str
    title: str
    full: ExperimentSpec
    quick: ExperimentSpec
    plot: str
    plot_options: Mapping[str, Any] = field(default_factory=dict)

    def spec(self, *, quick: bool = False) -> ExperimentSpec:
        """The full or the quick experiment."""
        return self.quick if quick else self.full


def _arms(values: Iterable[int]) -> tuple[dict[str, Any], ...]:
    return tuple({"arms": k} for k in values)


def _tune_settings(
    arms: Iterable[int], half_lives: Iterable[float], gate_prices: Iterable[float]
) -> tuple[dict[str, Any], ...]:
    """M sweep at the default λ and λ sweep at the default M, for each K (deduplicated)."""
    out: list[dict[str, Any]] = []
    for k in arms:
        for m in half_lives:
            out.append({"arms": k, "half_life": float(m), "gate_price": DEFAULT_GATE_PRICE})
        for lam in gate_prices:
            s = {"arms": k, "half_life": DEFAULT_HALF_LIFE, "gate_price": float(lam)}
            if s not in out:
                out.append(s)
    return tuple(out)


BERNOULLI_AGENTS = ("delight", "thompson", "egreedy", "greedy")

_ARMS_FULL = ExperimentSpec(
    name="bernoulli-arms",
    agents=BERNOULLI_AGENTS,
    settings=_arms((10, 30, 100, 300, 1000, 3000, 10000)),
    setting_columns=("arms",),
    horizon=1000,
    seeds=100,
)
_CURVES_FULL = ExperimentSpec(
    name="bernoulli-curves",
    agents=BERNOULLI_AGENTS,
    settings=_arms((10, 100, 1000)),
    setting_columns=("arms",),
    horizon=1000,
    seeds=100,
)
_TUNE_FULL = ExperimentSpec(
    name="bernoulli-tune",
    agents=("delight", "thompson", "greedy"),
    settings=_tune_settings((100, 1000), (10, 30, 100, 300, 1000), (0.01, 0.03, 0.1, 0.3, 1.0)),
    setting_columns=("arms", "half_life", "gate_price"),
    horizon=1000,
    seeds=100,
)


def _linear(
    arms: Iterable[int], dims: Iterable[int], noises: Iterable[float]
) -> tuple[dict[str, Any], ...]:
    return tuple(
        {"arms": k, "dim": d, "noise": float(s)} for k in arms for d in dims for s in noises
    )


def _linear_tune(
    half_lives: Iterable[float], gate_prices: Iterable[float]
) -> tuple[dict[str, Any], ...]:
    base = {"arms": 100, "dim": 30, "noise": 1.0}
    return tuple({**base, **s} for s in _tune_settings((100,), half_lives, gate_prices))


def _linear_spec(name: str, settings: tuple[dict[str, Any], ...], **kwargs: Any) -> ExperimentSpec:
    return ExperimentSpec(
        name=name,
        agents=kwargs.pop("agents", BERNOULLI_AGENTS),
        settings=settings,
        setting_columns=kwargs.pop("setting_columns", ("arms", "dim", "noise")),
        horizon=1000,
        seeds=100,
        cell=LINEAR_CELL,
        instance_keys=("arms", "dim", "noise"),
        agent_parameters=LINEAR_AGENT_PARAMETERS,
        **kwargs,
    )


_LINEAR_DIM = _linear_spec("linear-dim", _linear((100,), (2, 5, 10, 20, 30, 50), (1.0,)))
_LINEAR_NOISE = _linear_spec("linear-noise", _linear((100,), (30,), (0.1, 0.3, 1.0, 3.0, 10.0)))
_LINEAR_TUNE = _linear_spec(
    "linear-tune",
    _linear_tune((10, 30, 100, 300, 1000), (0.01, 0.03, 0.1, 0.3, 1.0)),
    agents=("delight", "thompson", "greedy"),
    setting_columns=("arms", "dim", "noise", "half_life", "gate_price"),
)


DEEP_SEA_AGENTS = ("delight", "psrl", "egreedy", "greedy")


def _deep_sea_spec(name: str, sizes: Iterable[int]) -> ExperimentSpec:
    return ExperimentSpec(
        name=name,
        agents=DEEP_SEA_AGENTS,
        settings=tuple({"size": n} for n in sizes),
        setting_columns=("size",),
        horizon=1000,
        seeds=30,
        batch_size=30,
        cell=DEEP_SEA_CELL,
        instance_keys=("size",),
        agent_parameters=DEEP_SEA_AGENT_PARAMETERS,
    )


_DEEP_SEA_REGRET = _deep_sea_spec("deepsea-regret", (2, 4, 6, 8, 10, 15, 20, 30, 40, 50))
_DEEP_SEA_CURVES = _deep_sea_spec("deepsea-curves", (5, 10, 20))


#: The figures ``delight-gym reproduce`` knows, by name.
FIGURES: Mapping[str, FigureSpec] = {
    "bernoulli-arms": FigureSpec(
        name="bernoulli-arms",
        title="Bernoulli bandits: regret vs number of arms K",
        full=_ARMS_FULL,
        quick=_ARMS_FULL.replace(settings=_arms((10, 100, 1000)), seeds=10),
        plot="plot_final_regret",
        plot_options={"x": "arms", "xlabel": "number of arms K"},
    ),
    "bernoulli-curves": FigureSpec(
        name="bernoulli-curves",
        title="Bernoulli bandits: learning curves",
        full=_CURVES_FULL,
        quick=_CURVES_FULL.replace(seeds=10),
        plot="plot_regret_curves",
        plot_options={"panel": "arms", "panel_label": "K"},
    ),
    "bernoulli-tune": FigureSpec(
        name="bernoulli-tune",
        title="Bernoulli bandits: sensitivity to M and λ",
        full=_TUNE_FULL,
        quick=_TUNE_FULL.replace(
            settings=_tune_settings((100, 1000), (10, 100, 1000), (0.01, 0.1, 1.0)), seeds=10
        ),
        plot="plot_tune",
        plot_options={"half_life": DEFAULT_HALF_LIFE, "gate_price": DEFAULT_GATE_PRICE},
    ),
    "linear-dim": FigureSpec(
        name="linear-dim",
        title="Linear bandits (K=100, σ=1): regret vs dimension D",
        full=_LINEAR_DIM,
        quick=_LINEAR_DIM.replace(settings=_linear((100,), (2, 10, 30), (1.0,)), seeds=10),
        plot="plot_final_regret",
        plot_options={"x": "dim", "xlabel": "feature dimension D"},
    ),
    "linear-noise": FigureSpec(
        name="linear-noise",
        title="Linear bandits (K=100, D=30): regret vs noise σ",
        full=_LINEAR_NOISE,
        quick=_LINEAR_NOISE.replace(settings=_linear((100,), (30,), (0.1, 1.0, 10.0)), seeds=10),
        plot="plot_final_regret",
        plot_options={"x": "noise", "xlabel": "reward noise σ"},
    ),
    "linear-tune": FigureSpec(
        name="linear-tune",
        title="Linear bandits (K=100, D=30, σ=1): sensitivity to M and λ",
        full=_LINEAR_TUNE,
        quick=_LINEAR_TUNE.replace(
            settings=_linear_tune((10, 100, 1000), (0.01, 0.1, 1.0)), seeds=10
        ),
        plot="plot_tune",
        plot_options={"half_life": DEFAULT_HALF_LIFE, "gate_price": DEFAULT_GATE_PRICE},
    ),
    "deepsea-regret": FigureSpec(
        name="deepsea-regret",
        title="DeepSea: regret after 1000 episodes vs size N",
        full=_DEEP_SEA_REGRET,
        quick=_DEEP_SEA_REGRET.replace(
            settings=tuple({"size": n} for n in (2, 6, 10, 20)), horizon=200, seeds=10
        ),
        plot="plot_final_regret",
        plot_options={
            "x": "size",
            "xlabel": "DeepSea size N",
            "log_x": False,
            "horizon_unit": "episodes",
        },
    ),
    "deepsea-curves": FigureSpec(
        name="deepsea-curves",
        title="DeepSea: learning curves",
        full=_DEEP_SEA_CURVES,
        quick=_DEEP_SEA_CURVES.replace(
            settings=tuple({"size": n} for n in (5, 10)), horizon=200, seeds=10
        ),
        plot="plot_regret_curves",
        plot_options={"panel": "size", "panel_label": "N", "xlabel": "episode"},
    ),
}
