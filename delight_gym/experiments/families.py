"""Experiment families: one record per kind of experiment (bsuite's ``experiments/<name>/``).

A :class:`Family` says everything the package needs to run, sweep and draw one kind of
experiment, and nothing else repeats it: its **cell function** (module-level, with the
runner's protocol ``fn(agent, horizon, seeds, *, seed, **setting)``), its **agents**
(:class:`Agent`: name, label, colour, line style and the :class:`Parameter` records they
take), its **instance parameters** (each with its check and the values ``delight-gym run``
sweeps by default) and the command line's defaults. The command line
(:mod:`delight_gym.cli`), the figure specs (:mod:`delight_gym.experiments.specs`), the
runner and the figures all read :data:`FAMILIES`.

A :class:`Parameter`'s ``check`` is the one the agents' constructors call, so whatever
``delight-gym run`` accepts the agents accept. Validation, override counts and how to add a
family: the documentation's "Results files, resume, Ray" page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from delight_gym._checks import (
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_would_fit,
)
from delight_gym.envs.deep_sea import check_deep_sea_size
from delight_gym.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE, DEFAULT_SURPRISAL_CAP

if TYPE_CHECKING:
    from delight_gym.experiments.runner import ExperimentResult

__all__ = [
    "BERNOULLI",
    "BSUITE_DEEP_SEA",
    "BSUITE_DEEP_SEA_STOCHASTIC",
    "BSUITE_SIZES",
    "DEEP_SEA",
    "DEEP_SEA_BSUITE",
    "DE_PARAMETERS",
    "FAMILIES",
    "GATE_PRICE",
    "HALF_LIFE",
    "LINEAR",
    "NEURAL_WIDTH",
    "SURPRISAL_CAP",
    "WHEEL",
    "Agent",
    "BsuiteCellResult",
    "DeepSeaCellResult",
    "Family",
    "Parameter",
    "SettingError",
    "bernoulli_cell",
    "bsuite_deep_sea_cell",
    "bsuite_deep_sea_stochastic_cell",
    "bsuite_score_report",
    "deep_sea_bsuite_cell",
    "deep_sea_cell",
    "linear_cell",
    "neural_cell",
    "uniform_relative_report",
    "wheel_cell",
]


class SettingError(ValueError):
    """A setting value its family refuses; ``key`` is the setting's name (``gate_price``)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Parameter:
    """One number of an experiment's setting.

    Attributes
    ----------
    name
        the keyword of the cell function and of the agents (``gate_price``).
    kind
        ``int``, ``float`` or ``str`` (how the command line parses it).
    check
        ``check(value, name) -> number``: the :mod:`delight_gym._checks` function the
        agents call on the same argument; raises ``ValueError``/``TypeError`` naming
        ``name`` and returns the value as ``kind``.
    default
        agent parameters: the value a setting that leaves it out gets (and the
        command line's default).
    sweep
        instance parameters: the values ``delight-gym run`` sweeps by default.
    symbol
        short name in labels and panel titles (``λ``, ``K``; default ``name``).
    help
        the command line's help text.
    """

    name: str
    kind: type[int] | type[float] | type[str]
    check: Callable[[Any, str], Any]
    default: float | str | None = None
    sweep: tuple[float | str, ...] = ()
    symbol: str = ""
    help: str = ""

    @property
    def option(self) -> str:
        """The command-line option, ``--gate-price`` for ``gate_price``."""
        return "--" + self.name.replace("_", "-")

    @property
    def short(self) -> str:
        """``symbol`` or, if empty, ``name``."""
        return self.symbol or self.name

    def format(self, value: Any) -> str:
        """``symbol=value`` for labels: ints and strings as they are, floats in ``%g``."""
        exact = isinstance(value, (int, np.integer, str))
        shown = str(value) if exact else f"{float(value):g}"
        return f"{self.short}={shown}"


#: ``M`` of ``ε_t = M/(M + t)``: positive and finite (``check_positive_float``, as the agents).
HALF_LIFE = Parameter(
    "half_life",
    float,
    check_positive_float,
    default=DEFAULT_HALF_LIFE,
    symbol="M",
    help="M, the half-life of the override schedule ε_t = M/(M+t) (default %(default)s)",
)
#: ``λ``: non-negative, ``inf`` allowed (the gate is then always empty), as the agents.
GATE_PRICE = Parameter(
    "gate_price",
    float,
    functools.partial(check_nonnegative_float, allow_inf=True),
    default=DEFAULT_GATE_PRICE,
    symbol="λ",
    help="λ, the gate price (default %(default)s; inf: never override)",
)
#: ``L``: positive and finite, as the agents.
SURPRISAL_CAP = Parameter(
    "surprisal_cap",
    float,
    check_positive_float,
    default=DEFAULT_SURPRISAL_CAP,
    symbol="L",
    help="L, the surprisal cap (default %(default)s)",
)
#: The DE rule's three settings (``M``, ``λ``, ``L``), declared once for every family.
DE_PARAMETERS = (HALF_LIFE, GATE_PRICE, SURPRISAL_CAP)


@dataclass(frozen=True)
class Agent:
    """An agent of a family, as the sweeps and the figures see it.

    Attributes
    ----------
    name
        the name the family's cell function (and ``--agents``) takes.
    label
        legend label (default ``name``).
    color
        line colour (default: matplotlib's cycle).
    linestyle
        line style (default solid).
    parameters
        the tunable settings the agent takes (its constructor's keywords).
    """

    name: str
    label: str = ""
    color: str | None = None
    linestyle: str = "-"
    parameters: tuple[Parameter, ...] = ()


DELIGHT = Agent("delight", "DE (delight-gated)", "#d62728", parameters=DE_PARAMETERS)
THOMPSON = Agent("thompson", "Thompson sampling", "#1f77b4")
EGREEDY = Agent("egreedy", "annealed ε-greedy", "#2ca02c", parameters=(HALF_LIFE,))
# The greedy ablation is dashed, so that an agent whose curve coincides with its host's (DE on
# DeepSea) stays visible under it.
GREEDY = Agent("greedy", "greedy (host only)", "#7f7f7f", linestyle="--")
UCB = Agent("ucb", "UCB1", "#9467bd")
PSRL = Agent("psrl", "PSRL", "#ff7f0e")


@dataclass(frozen=True)
class Family:
    """One kind of experiment: its cell function, agents, parameters and command-line defaults.

    Attributes
    ----------
    name
        ``delight-gym run NAME`` and the default experiment name.
    help
        one line for the command line.
    cell
        the cell function (module level; see the module docstring for its protocol).
    agents
        the agents the cell function runs.
    instance
        the setting keys every agent gets (``arms``), in column order.
    default_agents
        what ``run`` runs without ``--agents``.
    horizon
        default horizon (rounds or episodes).
    horizon_option
        ``--horizon`` or ``--episodes``.
    time_label
        what a time step is, for the curves' axis (``t``, ``episode``).
    seeds
        default number of seeds.
    batch_size
        default seeds per cell.
    title
        title of the ``run`` figure.
    report
        optional ``report(result) -> lines`` printed after a ``run``.
    """

    name: str
    help: str
    cell: Callable[..., Any]
    agents: tuple[Agent, ...]
    instance: tuple[Parameter, ...]
    default_agents: tuple[str, ...]
    horizon: int = 1000
    horizon_option: str = "--horizon"
    time_label: str = "t"
    seeds: int = 100
    batch_size: int = 25
    title: str = ""
    report: Callable[[ExperimentResult], list[str]] | None = None
    _parameters: dict[str, Parameter] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not callable(self.cell):
            raise TypeError(f"cell must be a function, got {self.cell!r}")
        names = [a.name for a in self.agents]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"agents must be non-empty and distinct, got {names}")
        unknown = [a for a in self.default_agents if a not in names]
        if unknown:
            raise ValueError(f"default_agents: unknown {unknown}; choose from {names}")
        params: dict[str, Parameter] = {}
        for p in (*self.instance, *(p for a in self.agents for p in a.parameters)):
            if params.setdefault(p.name, p) != p:
                raise ValueError(f"two different parameters are named {p.name!r}")
        object.__setattr__(self, "_parameters", params)

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The agents' names, in record order."""
        return tuple(a.name for a in self.agents)

    @property
    def instance_keys(self) -> tuple[str, ...]:
        """The instance parameters' names."""
        return tuple(p.name for p in self.instance)

    @property
    def parameters(self) -> Mapping[str, Parameter]:
        """Every setting key of the family: instance parameters, then the agents' parameters."""
        return self._parameters

    @property
    def agent_parameters(self) -> tuple[Parameter, ...]:
        """The agents' tunable parameters (each once), in record order."""
        instance = set(self.instance_keys)
        return tuple(p for name, p in self._parameters.items() if name not in instance)

    def agent(self, name: str) -> Agent:
        """The agent record called ``name``."""
        for a in self.agents:
            if a.name == name:
                return a
        raise ValueError(f"agents: unknown {name!r}; choose from {list(self.agent_names)}")

    def check_setting(self, setting: Mapping[str, Any]) -> dict[str, Any]:
        """Check a setting (every instance key present, every value valid) and return it with
        each value as its parameter's ``kind``.

        Raises
        ------
        SettingError
            a value its parameter refuses (the message is the check's, naming
            the key); ``ValueError`` for an unknown or a missing key; ``TypeError`` for a
            value that is not a number of the right kind.
        """
        bad = sorted(set(setting) - set(self._parameters))
        if bad:
            raise ValueError(
                f"settings: unknown key(s) {bad} for the {self.name!r} family; choose from "
                f"{sorted(self._parameters)}"
            )
        missing = [k for k in self.instance_keys if k not in setting]
        if missing:
            raise ValueError(f"settings: every setting needs {missing}, got {dict(setting)}")
        out: dict[str, Any] = {}
        for key, value in setting.items():
            try:
                out[key] = self._parameters[key].check(value, key)
            except TypeError:
                raise
            except ValueError as exc:
                raise SettingError(key, str(exc)) from None
        return out

    def restrict(self, agent: str, setting: Mapping[str, Any]) -> dict[str, Any]:
        """The cell-function keywords of a checked ``setting`` for ``agent``: the instance keys,
        then the agent's parameters (defaults filled in), so that a cell's keywords name every
        number that determines it."""
        out = {k: setting[k] for k in self.instance_keys}
        for p in self.agent(agent).parameters:
            out[p.name] = setting.get(p.name, p.default)
        return out


# -- cell functions -------------------------------------------------------------------------
# Each imports its runner when called (in the worker), so that importing this module imports
# neither torch nor the environments, and a test can monkeypatch the runner.


def bernoulli_cell(
    agent: str, horizon: int, seeds: int, *, seed: int, arms: int, **agent_kwargs: Any
) -> Any:
    """Cell of the Bernoulli family: :func:`~delight_gym.experiments.bandit.run_bernoulli`
    (a :class:`~delight_gym.experiments.bandit.BanditResult`)."""
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
    """Cell of the linear family: :func:`~delight_gym.experiments.linear.run_linear` on the CPU
    in float64 (a :class:`~delight_gym.experiments.bandit.BanditResult`)."""
    from delight_gym.experiments import linear

    return linear.run_linear(agent, arms, dim, noise, horizon, seeds, seed=seed, **agent_kwargs)


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


def linear_budget_report(result: ExperimentResult) -> list[str]:
    """DE's selected-override rounds (max over seeds) of each linear setting against the
    paper's budget :func:`~delight_gym.theory.budget.linear_override_budget`."""
    from delight_gym.theory.budget import linear_override_budget

    lines = []
    for row in result.rows:
        if row["agent"] != "delight":
            continue
        s = row["setting"]
        bound = linear_override_budget(
            s["dim"],
            result.spec.horizon,
            s["noise"],
            gate_price=s["gate_price"],
            surprisal_cap=s["surprisal_cap"],
        )
        most = int(np.max(row["overrides"]))
        verdict = "OK" if most <= bound else "EXCEEDED"
        lines.append(
            f"  K={s['arms']} D={s['dim']} σ={s['noise']:g}: {most} <= {bound:.1f} {verdict}"
        )
    if lines:
        lines.insert(0, "selected-override rounds of DE (max over seeds) vs the paper's budget:")
    return lines


# -- the families -------------------------------------------------------------------------

_ARMS = Parameter(
    "arms", int, check_positive_int, sweep=(10, 100, 1000), symbol="K", help="numbers of arms K"
)
_BANDIT_AGENTS = (DELIGHT, THOMPSON, EGREEDY, GREEDY, UCB)
_DEFAULT_AGENTS = ("delight", "thompson", "egreedy", "greedy")

#: K-armed Bernoulli bandits, means ~ U(0, 1) per instance.
BERNOULLI = Family(
    name="bernoulli",
    help="K-armed Bernoulli bandits, means ~ U(0,1)",
    cell=bernoulli_cell,
    agents=_BANDIT_AGENTS,
    instance=(_ARMS,),
    default_agents=_DEFAULT_AGENTS,
    # All 100 seeds in one batch (a few MB at K = 10^4): a step's array operations then serve
    # 100 seeds at once, 2.5x cheaper than four batches of 25.
    batch_size=100,
    title="Bernoulli bandits",
)

#: Linear-Gaussian bandits: φ(a) ~ N(0, I/D), θ* ~ N(0, I), reward noise σ.
LINEAR = Family(
    name="linear",
    help="linear-Gaussian bandits: φ(a) ~ N(0, I/D), θ* ~ N(0, I), noise σ",
    cell=linear_cell,
    agents=_BANDIT_AGENTS,
    instance=(
        dataclasses.replace(_ARMS, sweep=(100,)),
        Parameter("dim", int, check_positive_int, sweep=(10, 30), symbol="D", help="dimensions D"),
        Parameter("noise", float, check_positive_float, sweep=(1.0,), symbol="σ", help="noise σ"),
    ),
    default_agents=_DEFAULT_AGENTS,
    title="Linear bandits",
    report=linear_budget_report,
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


# -- deepsea-bsuite: deep agents on DeepSea, scored by bsuite's rule (beyond the paper) --------


@dataclass
class BsuiteCellResult:
    """What :func:`deep_sea_bsuite_cell` returns (the runner's cell protocol).

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


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Run the block with torch on one thread, then restore the thread count.

    A torch cell's numbers then do not depend on the machine's cores, ``OMP_NUM_THREADS`` or
    whether the runner used workers (CPU reductions on several threads sum in another order).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def deep_sea_bsuite_cell(
    agent: str,
    horizon: int,
    seeds: int,
    *,
    seed: int,
    size: int,
    mapping_seed: int | None = None,
    deterministic: bool = True,
    **agent_kwargs: Any,
) -> BsuiteCellResult:
    """Cell of the ``deepsea-bsuite`` family:
    :func:`~delight_gym.experiments.deep_sea_bsuite.run_bsuite_deep_sea` for seeds
    ``seed, …, seed + seeds − 1`` (seed ``s`` plays ``mapping_seed = s`` unless
    ``mapping_seed`` is given), each for at most ``min(2**N + 100, horizon)`` episodes and
    stopped once solved; torch on one thread."""
    from delight_gym.experiments import deep_sea_bsuite

    with _one_torch_thread():
        cumulative = np.full((seeds, horizon), np.nan)
        overrides = np.zeros(seeds, dtype=np.int64)
        solve_episode = np.zeros(seeds, dtype=np.int64)
        solved = np.zeros(seeds, dtype=bool)
        seconds = 0.0
        for i in range(seeds):
            run = deep_sea_bsuite.run_bsuite_deep_sea(
                agent,
                size,
                seed=seed + i,
                episodes=horizon,
                mapping_seed=mapping_seed,
                deterministic=deterministic,
                **agent_kwargs,
            )
            cumulative[i, : run.episodes] = np.cumsum(run.regret)
            overrides[i] = run.overrides
            solved[i] = run.solve.solved
            solve_episode[i] = run.solve.episode if run.solve.solved else run.budget
            seconds += run.seconds
    return BsuiteCellResult(cumulative, seconds, overrides, solve_episode, solved)


def bsuite_score_report(result: ExperimentResult) -> list[str]:
    """Each agent's bsuite score over the runs of the sweep (the fraction of (size, seed) runs
    solved within ``2**N + 100`` episodes,
    :func:`~delight_gym.experiments.scores.deep_sea_score`)."""
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


#: Transitions the deep agents of ``deepsea-bsuite`` keep in replay: bsuite's 10 000 (the
#: ``buffer_size`` its DQN and bootstrapped DQN agents are built with).
BSUITE_REPLAY_SIZE = 10_000


def check_bsuite_size(value: Any, name: str) -> int:
    """``size`` of the ``deepsea-bsuite`` family, checked before any cell runs: what DeepSea
    accepts (:func:`~delight_gym.envs.deep_sea.check_deep_sea_size`), and a replay buffer of
    :data:`BSUITE_REPLAY_SIZE` transitions (two ``N x N`` float32 observations each) that fits
    in the machine's memory; a ``ValueError`` naming ``name`` and the size it would need
    otherwise."""
    n = check_deep_sea_size(value, name)
    check_would_fit(
        BSUITE_REPLAY_SIZE * 2 * n * n * 4,
        f"{name}={n} (the deep agents' replay of {BSUITE_REPLAY_SIZE} transitions, two N x N "
        "float32 observations each)",
    )
    return n


DQN_EGREEDY = Agent("dqn", "DQN, ε = 0.05 (SB3, bsuite's settings)", "#2ca02c")
BOOT_DQN = Agent("boot_dqn", "BootDQN + priors (K=10)", "#1f77b4")
BOOT_DQN_DE = Agent(
    "boot_dqn_de", "BootDQN + DE (host: episode's head)", "#c51b7d", parameters=DE_PARAMETERS
)
BOOT_DQN_DE_MEAN = Agent(
    "boot_dqn_de_mean", "BootDQN + DE (host: ensemble mean)", "#17becf", parameters=DE_PARAMETERS
)
BOOT_DQN_DE_COMMIT = Agent(
    "boot_dqn_de_commit",
    "BootDQN + DE + commit (beyond the paper)",
    "#9467bd",
    parameters=DE_PARAMETERS,
)
DELIGHT_DQN = Agent(
    "delight_dqn", "DelightDQN (ensemble posterior)", "#8c564b", parameters=DE_PARAMETERS
)
# The DE variants (beyond the paper), each with its setting(s) chosen on seeds 100-104 and fixed
# in its DE options (``deep_sea_bsuite``); a fixed setting is not one of its parameters.
BOOT_DQN_DE_SPREAD = Agent(
    "boot_dqn_de_spread",
    "BootDQN + DE, λ in units of the heads' spread",
    "#e377c2",
    "--",
    parameters=(HALF_LIFE, SURPRISAL_CAP),
)
BOOT_DQN_DE_AGREE = Agent(
    "boot_dqn_de_agree",
    "BootDQN + DE, gate closed where the heads agree",
    "#bcbd22",
    "--",
    parameters=DE_PARAMETERS,
)
BOOT_DQN_DE_COMMIT_FAST = Agent(
    "boot_dqn_de_commit_fast",
    "BootDQN + DE + commit, shorter M",
    "#7f7f7f",
    "--",
    parameters=(GATE_PRICE, SURPRISAL_CAP),
)

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
    cell=deep_sea_bsuite_cell,
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


# -- bsuite's own deep_sea and deep_sea_stochastic sweeps -----------------------------------


def _bsuite_cell(
    deterministic: bool, agent: str, horizon: int, seeds: int, seed: int, size: int, kwargs: Any
) -> BsuiteCellResult:
    from delight_gym.experiments.scores import BSUITE_EXPERIMENTS

    experiment = BSUITE_EXPERIMENTS["deep_sea" if deterministic else "deep_sea_stochastic"]
    return deep_sea_bsuite_cell(
        agent,
        horizon,
        seeds,
        seed=seed,
        size=size,
        mapping_seed=experiment.mapping_seed,
        deterministic=deterministic,
        **kwargs,
    )


def bsuite_deep_sea_cell(
    agent: str, horizon: int, seeds: int, *, seed: int, size: int, **agent_kwargs: Any
) -> BsuiteCellResult:
    """Cell of ``bsuite-deep-sea``: bsuite's ``deep_sea`` setting ``size`` (``mapping_seed``
    42), agent seeds ``seed, …``, scored and stopped by bsuite's ``deep_sea`` rule."""
    return _bsuite_cell(True, agent, horizon, seeds, seed, size, agent_kwargs)


def bsuite_deep_sea_stochastic_cell(
    agent: str, horizon: int, seeds: int, *, seed: int, size: int, **agent_kwargs: Any
) -> BsuiteCellResult:
    """Cell of ``bsuite-deep-sea-stochastic``: bsuite's ``deep_sea_stochastic`` setting
    ``size`` (``mapping_seed`` 42), scored and stopped by its rule (episodes ≥ 100, 0.8)."""
    return _bsuite_cell(False, agent, horizon, seeds, seed, size, agent_kwargs)


#: bsuite's sizes N = 10, 12, …, 50 (``deep_sea/sweep.py``; a test reads the installed bsuite).
BSUITE_SIZES = tuple(range(10, 51, 2))
_BSUITE_SWEEP_AGENTS = (DQN_EGREEDY, BOOT_DQN, BOOT_DQN_DE, BOOT_DQN_DE_COMMIT_FAST)
_BSUITE_SIZE = Parameter(
    "size", int, check_bsuite_size, sweep=BSUITE_SIZES, symbol="N", help="sizes N"
)

#: bsuite's ``deep_sea`` experiment exactly: its 21 settings, one run each, its budget and score.
BSUITE_DEEP_SEA = Family(
    name="bsuite-deep-sea",
    help="bsuite's deep_sea sweep (N = 10..50, mapping_seed 42), scored by bsuite's rule",
    cell=bsuite_deep_sea_cell,
    agents=(*_BSUITE_AGENTS, *_BSUITE_VARIANTS),
    instance=(_BSUITE_SIZE,),
    default_agents=tuple(a.name for a in _BSUITE_SWEEP_AGENTS),
    horizon=10_000,
    horizon_option="--episodes",
    time_label="episode",
    seeds=1,
    batch_size=1,
    title="bsuite deep_sea",
    report=bsuite_score_report,
)

#: bsuite's ``deep_sea_stochastic`` experiment exactly (its own solve rule).
BSUITE_DEEP_SEA_STOCHASTIC = dataclasses.replace(
    BSUITE_DEEP_SEA,
    name="bsuite-deep-sea-stochastic",
    help="bsuite's deep_sea_stochastic sweep (N = 10..50, mapping_seed 42), bsuite's rule",
    cell=bsuite_deep_sea_stochastic_cell,
    agents=tuple(a for a in BSUITE_DEEP_SEA.agents if a not in (PSRL, DELIGHT)),
    title="bsuite deep_sea_stochastic",
)

# -- contextual bandits with learned posteriors: the wheel and many-armed neural bandits ------


def wheel_cell(
    agent: str,
    horizon: int,
    seeds: int,
    *,
    seed: int,
    delta: float,
    noise: float,
    **agent_kwargs: Any,
) -> Any:
    """Cell of the ``wheel`` family: :func:`~delight_gym.experiments.contextual.run_wheel`
    (a :class:`~delight_gym.experiments.bandit.BanditResult`); torch on one thread."""
    from delight_gym.experiments import contextual

    with _one_torch_thread():
        return contextual.run_wheel(
            agent, delta, horizon, seeds, seed=seed, noise=noise, **agent_kwargs
        )


def neural_cell(
    agent: str,
    horizon: int,
    seeds: int,
    *,
    seed: int,
    arms: int,
    reward: str,
    dim: int,
    context_dim: int,
    noise: float,
    **agent_kwargs: Any,
) -> Any:
    """Cell of the ``neural-width`` family: :func:`~delight_gym.experiments.contextual.run_neural`
    (a :class:`~delight_gym.experiments.bandit.BanditResult`); torch on one thread."""
    from delight_gym.experiments import contextual

    with _one_torch_thread():
        return contextual.run_neural(
            agent,
            arms,
            reward,
            horizon,
            seeds,
            seed=seed,
            dim=dim,
            context_dim=context_dim,
            noise=noise,
            **agent_kwargs,
        )


def _check_nl_settings(value: Any, name: str) -> str:
    from delight_gym.posteriors.neural_linear import neural_linear_settings

    return neural_linear_settings(value, name)


#: Which NeuralLinear settings the ``*-neurallinear`` agents use: the Showdown's public example
#: or its paper's (:data:`~delight_gym.posteriors.neural_linear.NEURAL_LINEAR_SETTINGS`); the
#: ``wheel`` family defaults to the paper's (:data:`WHEEL_NL_SETTINGS`), which come closest to
#: the Showdown's published wheel results.
NL_SETTINGS = Parameter(
    "nl_settings",
    str,
    _check_nl_settings,
    default="example",
    symbol="NL",
    help="NeuralLinear's settings: example (the Showdown's public example_main.py) or paper "
    "(its paper's: two layers of 100, retrained every 20 rounds for 20 steps) "
    "(default %(default)s)",
)
WHEEL_NL_SETTINGS = dataclasses.replace(NL_SETTINGS, default="paper")


def uniform_relative_report(result: ExperimentResult) -> list[str]:
    """The showdown's metric for each setting: every agent's cumulative regret divided by
    ``uniform``'s (:func:`~delight_gym.experiments.contextual.relative_to_uniform`)."""
    from delight_gym.experiments.contextual import relative_to_uniform

    columns = list(result.spec.setting_columns)
    table = relative_to_uniform(result.summary, columns)
    if table.empty:
        return []
    lines = ["cumulative regret relative to uniform play (the showdown's metric):"]
    for _, row in table.iterrows():
        setting = " ".join(result.spec.family.parameters[c].format(row[c]) for c in columns)
        lines.append(
            f"  {setting} {row['agent']}: {row['relative_regret']:.4f} ± {row['relative_se']:.4f}"
        )
    return lines


def _check_neural_reward(value: Any, name: str) -> str:
    from delight_gym.envs.contextual import check_neural_reward

    return check_neural_reward(value, name)


def _contextual_agents(nl_settings: Parameter) -> tuple[Agent, ...]:
    """``RULE-POSTERIOR`` for the three rules and the three learned posteriors (the
    NeuralLinear ones taking ``nl_settings``), then the paper's annealed ε-greedy and uniform
    play (the names of :data:`~delight_gym.agents.contextual.CONTEXTUAL_AGENTS`)."""
    posteriors = {"linfull": "LinFull", "neurallinear": "NeuralLinear", "ensemble": "ensemble"}
    colors = {
        "delight": ("#d62728", "#e377c2", "#8c564b"),
        "thompson": ("#1f77b4", "#17becf", "#9467bd"),
        "greedy": ("#7f7f7f", "#bcbd22", "#393b79"),
    }
    rules = {"delight": "DE", "thompson": "Thompson", "greedy": "greedy"}
    agents = []
    for rule, label in rules.items():
        for (post, post_label), color in zip(posteriors.items(), colors[rule], strict=True):
            agents.append(
                Agent(
                    f"{rule}-{post}",
                    f"{label} ({post_label})",
                    color,
                    linestyle="--" if rule == "greedy" else "-",
                    parameters=(
                        *(DE_PARAMETERS if rule == "delight" else ()),
                        *((nl_settings,) if post == "neurallinear" else ()),
                    ),
                )
            )
    uniform = Agent("uniform", "uniform play", "#000000", linestyle=":")
    return (*agents, EGREEDY, uniform)


_WHEEL_AGENTS = _contextual_agents(WHEEL_NL_SETTINGS)
_CONTEXTUAL_AGENTS = _contextual_agents(NL_SETTINGS)
_CONTEXTUAL_NAMES = tuple(a.name for a in _CONTEXTUAL_AGENTS)

#: The Deep Bayesian Bandits Showdown's wheel (``WheelBandit-v0``): one model per arm on the
#: context; DE's λ = gate_price × 49 (the mean-reward range), fixed before any result.
WHEEL = Family(
    name="wheel",
    help="the Deep Bayesian Bandits Showdown's wheel bandit (WheelBandit-v0)",
    cell=wheel_cell,
    agents=_WHEEL_AGENTS,
    instance=(
        Parameter(
            "delta",
            float,
            check_probability,
            sweep=(0.5, 0.7, 0.9, 0.95, 0.99),
            symbol="δ",
            help="radii δ beyond which the quadrant's arm pays 50",
        ),
        Parameter(
            "noise", float, check_nonnegative_float, sweep=(0.01,), symbol="σ", help="noise σ"
        ),
    ),
    default_agents=_CONTEXTUAL_NAMES,
    horizon=2000,
    seeds=20,
    batch_size=20,
    title="Wheel bandit",
    report=uniform_relative_report,
)

#: Many persistent arms with nonlinear means (``NeuralBandit-v0``): one shared model on every
#: arm's row; DE's λ = gate_price × the mean-reward range (10 quadratic, 2 cosine).
NEURAL_WIDTH = Family(
    name="neural-width",
    help="K persistent arms with nonlinear means 10 (xᵀθ)² or cos(3 xᵀθ) (NeuralBandit-v0)",
    cell=neural_cell,
    agents=_CONTEXTUAL_AGENTS,
    instance=(
        dataclasses.replace(_ARMS, sweep=(10, 100, 1000)),
        Parameter(
            "reward",
            str,
            _check_neural_reward,
            sweep=("quadratic", "cosine"),
            symbol="h",
            help="mean-reward functions h (quadratic: 10 s², cosine: cos(3 s))",
        ),
        Parameter("dim", int, check_positive_int, sweep=(20,), symbol="D", help="arm dimensions"),
        Parameter(
            "context_dim",
            int,
            check_nonnegative_int,
            sweep=(0,),
            symbol="C",
            help="per-round context dimensions",
        ),
        Parameter(
            "noise", float, check_nonnegative_float, sweep=(0.1,), symbol="σ", help="noise σ"
        ),
    ),
    default_agents=_CONTEXTUAL_NAMES,
    horizon=1000,
    seeds=10,
    batch_size=10,
    title="Neural bandits",
)

#: Every family, by name (``delight-gym run NAME``).
FAMILIES: Mapping[str, Family] = {
    f.name: f
    for f in (
        BERNOULLI,
        LINEAR,
        DEEP_SEA,
        DEEP_SEA_BSUITE,
        BSUITE_DEEP_SEA,
        BSUITE_DEEP_SEA_STOCHASTIC,
        WHEEL,
        NEURAL_WIDTH,
    )
}
