"""The run function of the DeepSea families scored by bsuite's rule: :func:`run_bsuite_seeds`.

It plays one :func:`run_bsuite_deep_sea` per seed (seed ``s`` on instance ``mapping_seed = s``
unless the family fixes it) or, with a ``device``, one :func:`run_bsuite_deep_sea_batched` of
the cell's seeds. Each run feeds every finished episode's ``info["bad_episode"]`` to bsuite's
solve rule (:class:`~delight_gym.experiments.scores.SolveTracker`) and stops once solved or at
bsuite's budget. The tabular agents play the ``deepsea`` family's loop
(:func:`~delight_gym.experiments.deep_sea.play_deep_sea`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from delight_gym._checks import check_choice, check_nonnegative_int, check_positive_int
from delight_gym.experiments.families.base import DE_PARAMETERS, DELIGHT, PSRL
from delight_gym.experiments.families.deepsea_bsuite import (
    BATCHED_AGENTS,
    BOOT_DQN_DE_AGREE,
    BOOT_DQN_DE_COMMIT_FAST,
    BOOT_DQN_DE_OPTIONS,
    BOOT_DQN_DE_SPREAD,
    BSUITE_REPLAY_SIZE,
    DEEP_SEA_BSUITE,
    DELIGHT_DQN,
    DQN_EGREEDY,
    PER_SEED,
)
from delight_gym.experiments.scores import (
    BSUITE_EXPERIMENTS,
    DeepSeaSolve,
    SolveTracker,
    deep_sea_episode_budget,
)

__all__ = [
    "BsuiteCellResult",
    "BsuiteRun",
    "make_deep_agent",
    "run_bsuite_deep_sea",
    "run_bsuite_deep_sea_batched",
    "run_bsuite_seeds",
]

#: Every agent :func:`run_bsuite_deep_sea` knows: the family record's, in its order.
BSUITE_AGENTS = DEEP_SEA_BSUITE.agent_names
#: The tabular reference agents (:mod:`delight_gym.agents.mdp`).
TABULAR_AGENTS = (PSRL.name, DELIGHT.name)
#: The DE variants (beyond the paper), not in the family's default sweep.
DE_VARIANTS = (BOOT_DQN_DE_SPREAD.name, BOOT_DQN_DE_AGREE.name, BOOT_DQN_DE_COMMIT_FAST.name)
#: The deep (SB3) agents, built by :func:`make_deep_agent`.
DEEP_AGENTS = tuple(name for name in BSUITE_AGENTS if name not in TABULAR_AGENTS)
#: The agents with DE: they take the DE settings they do not fix.
DE_AGENTS = tuple(
    a.name for a in DEEP_SEA_BSUITE.agents if any(p in DE_PARAMETERS for p in a.parameters)
)

#: bsuite's DQN baseline (``default_agent``) mapped onto SB3's DQN.
BSUITE_DQN_SETTINGS: dict[str, Any] = {
    "learning_rate": 1e-3,
    "buffer_size": BSUITE_REPLAY_SIZE,
    "learning_starts": 100,
    "batch_size": 32,
    "gamma": 0.99,
    "train_freq": 1,
    "gradient_steps": 1,
    "target_update_interval": 4,
    "policy_kwargs": {"net_arch": [50, 50]},
}


@dataclass
class BsuiteRun:
    """One run of :func:`run_bsuite_deep_sea`.

    Attributes
    ----------
    agent, size, seed, budget
        what was run, and its episode budget.
    bad, regret
        each played episode's bad flag and regret (optimal minus denoised return).
    solve
        the run's :class:`~delight_gym.experiments.scores.DeepSeaSolve` (an unsolved run
        reports its last logged episode).
    overrides, seconds
        DE's overridden decisions over the run (0 without DE); wall-clock time.
    """

    agent: str
    size: int
    seed: int
    budget: int
    bad: np.ndarray
    regret: np.ndarray
    solve: DeepSeaSolve
    overrides: int
    seconds: float

    @property
    def episodes(self) -> int:
        return int(self.bad.shape[0])


@dataclass(frozen=True)
class BsuitePlan:
    """One run's checked arguments (:meth:`checked`): what it plays and when it stops.

    ``budget`` is bsuite's ``min(2**N + 100, 10 000)`` episodes capped by ``episodes``;
    ``deterministic`` picks ``deep_sea`` and its solve rule, else ``deep_sea_stochastic``.
    """

    agent: str
    size: int
    seed: int
    mapping_seed: int
    deterministic: bool
    budget: int
    early_stop: bool

    @classmethod
    def checked(
        cls,
        agent: str,
        size: int,
        seed: int,
        episodes: int | None,
        early_stop: bool,
        mapping_seed: int | None,
        deterministic: bool,
    ) -> BsuitePlan:
        """The plan of :func:`run_bsuite_deep_sea`'s arguments; a ``ValueError``/``TypeError``
        naming the argument it refuses."""
        check_choice(agent, list(BSUITE_AGENTS), "agent")
        n = check_positive_int(size, "size")
        seed = check_nonnegative_int(seed, "seed")
        mapping = (
            seed if mapping_seed is None else check_nonnegative_int(mapping_seed, "mapping_seed")
        )
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be a bool, got {deterministic!r}")
        budget = deep_sea_episode_budget(n)
        if episodes is not None:
            budget = min(budget, check_positive_int(episodes, "episodes"))
        name = "deep_sea" if deterministic else "deep_sea_stochastic"
        # A budget shorter than the rule's first tested episode could never be scored.
        first = BSUITE_EXPERIMENTS[name].first_episode
        if budget < first:
            raise ValueError(
                f"episodes must be >= {first} for deterministic={deterministic}: bsuite's "
                f"{name} rule tests no episode before {first}, got {episodes}"
            )
        return cls(agent, n, seed, mapping, deterministic, budget, bool(early_stop))

    def result(self, state: SolveState, seconds: float) -> BsuiteRun:
        """The :class:`BsuiteRun` of this plan from what its run recorded in ``state``."""
        bad = np.asarray(state.bad, dtype=bool)
        regret = np.asarray(state.regret, dtype=np.float64)
        return BsuiteRun(
            self.agent, self.size, self.seed, self.budget, bad, regret,
            state.tracker.result(), int(state.overrides), float(seconds),
        )  # fmt: skip


def _de_settings(agent: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the DE keywords out of ``kwargs``; a ``TypeError`` for those ``agent`` does not take."""
    found = {p.name: kwargs.pop(p.name) for p in DE_PARAMETERS if p.name in kwargs}
    if found and agent not in DE_AGENTS:
        raise TypeError(f"agent {agent!r} has no DE: it does not take {sorted(found)}")
    fixed = sorted(set(found) & set(BOOT_DQN_DE_OPTIONS.get(agent) or {}))
    if fixed:
        raise TypeError(f"agent {agent!r} fixes {fixed}: it does not take them")
    return found


def make_deep_agent(agent: str, env: Any, *, seed: int, **kwargs: Any) -> Any:
    """The SB3 algorithm (``DQN``, ``BootstrappedDQN`` or ``DelightDQN``) of ``agent``, one of
    :data:`DEEP_AGENTS`, on the DeepSea ``env``, seeded ``seed``; ``kwargs``: the DE agents'
    ``half_life``, ``gate_price``, ``surprisal_cap``, and constructor keywords over bsuite's
    settings (``tensorboard_log``...)."""
    check_choice(agent, list(DEEP_AGENTS), "agent")
    de = _de_settings(agent, kwargs)
    common: dict[str, Any] = {"seed": seed, "device": "cpu"}
    if agent == DQN_EGREEDY.name:
        from stable_baselines3 import DQN

        settings = {
            **BSUITE_DQN_SETTINGS,
            "exploration_fraction": 1e-6,
            "exploration_initial_eps": 0.05,
            "exploration_final_eps": 0.05,
        }
        return DQN("MlpPolicy", env, **{**settings, **common, **kwargs})
    if agent == DELIGHT_DQN.name:
        from delight_gym.posteriors.ensemble import EnsembleQPosterior
        from delight_gym.sb3.delight_dqn import DelightDQN

        posterior = EnsembleQPosterior(
            env.observation_space, env.action_space, gamma=BSUITE_DQN_SETTINGS["gamma"], seed=seed
        )
        return DelightDQN(
            "MlpPolicy",
            env,
            posterior=posterior,
            delight=de,
            **{**BSUITE_DQN_SETTINGS, **common, **kwargs},
        )
    from delight_gym.sb3.bootstrapped_dqn import BootstrappedDQN

    options = BOOT_DQN_DE_OPTIONS[agent]
    delight = None if options is None else {**de, **options}
    return BootstrappedDQN("MlpPolicy", env, delight=delight, **{**common, **kwargs})


class SolveState:
    """What one run records episode by episode (bad flags, regret, overrides), fed to bsuite's
    solve rule (a :class:`~delight_gym.experiments.scores.SolveTracker`)."""

    def __init__(self, budget: int, early_stop: bool, deterministic: bool = True) -> None:
        self.budget = budget
        self.early_stop = early_stop
        rule = BSUITE_EXPERIMENTS["deep_sea" if deterministic else "deep_sea_stochastic"]
        self.tracker = SolveTracker(
            threshold=rule.threshold,
            num_episodes=rule.num_episodes,
            first_episode=rule.first_episode,
        )
        self.bad: list[bool] = []
        self.regret: list[float] = []
        self.overrides = 0

    def episode(self, bad: bool, regret: float) -> bool:
        """Record one finished episode; returns whether the run should go on."""
        self.bad.append(bool(bad))
        self.regret.append(float(regret))
        solved = self.tracker.update(bool(bad))  # before the budget test: the last one counts
        if len(self.bad) >= self.budget:
            return False
        return not (self.early_stop and solved)

    def final_episode(self, final_info: Any, i: int) -> bool:
        """:meth:`episode` of sub-env ``i``'s finished episode, from a DeepSea vector env's
        ``final_info``."""
        regret = float(final_info["optimal_return"][i]) - float(final_info["denoised_return"][i])
        return self.episode(bool(final_info["bad_episode"][i]), regret)


class DeepSeaSolveCallback(BaseCallback):
    """SB3 callback: feeds every finished DeepSea episode to bsuite's rule, counts DE's
    overrides, logs ``deepsea/*`` and stops training once the run is solved (``early_stop``)
    or after ``budget`` episodes (``deterministic=False``: ``deep_sea_stochastic``'s rule)."""

    def __init__(self, budget: int, *, early_stop: bool = True, deterministic: bool = True) -> None:
        super().__init__(verbose=0)
        self.state = SolveState(
            check_positive_int(budget, "budget"), bool(early_stop), bool(deterministic)
        )

    def _on_step(self) -> bool:
        state = self.state
        stats = getattr(self.model, "delight_stats", None)
        # BootstrappedDQN without DE keeps statistics, but none worth counting; the total
        # survives the algorithm's log dumps.
        if stats is not None and getattr(self.model, "delight", None) is not None:
            state.overrides = int(stats.total_overridden)
        go_on = True
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if not done:
                continue
            bad = bool(info["bad_episode"])
            regret = float(info["optimal_return"]) - float(info["denoised_return"])
            go_on = state.episode(bad, regret) and go_on
            tracker = state.tracker
            self.logger.record("deepsea/bad_episode", float(bad))
            self.logger.record("deepsea/bad_fraction", tracker.bad / tracker.episodes)
            if tracker.solved_at is not None:
                self.logger.record("deepsea/solve_episode", tracker.solved_at)
        if not go_on:  # SB3 stops before its own dump: write the last episode's row now
            self.model.dump_logs()
        return go_on


def _run_deep(plan: BsuitePlan, tensorboard_log: str | None, kwargs: dict[str, Any]) -> SolveState:
    from delight_gym.envs.deep_sea import DeepSeaEnv

    n, agent, seed = plan.size, plan.agent, plan.seed
    env = DeepSeaEnv(size=n, deterministic=plan.deterministic, mapping_seed=plan.mapping_seed)
    model = make_deep_agent(agent, env, seed=seed, tensorboard_log=tensorboard_log, **kwargs)
    callback = DeepSeaSolveCallback(
        plan.budget, early_stop=plan.early_stop, deterministic=plan.deterministic
    )
    model.learn(
        total_timesteps=plan.budget * n,  # the callback stops it at the budget's last episode
        callback=callback,
        log_interval=1 if tensorboard_log is not None else 4,
        tb_log_name=f"deepsea_bsuite_{agent}_N{n}_seed{seed}",
    )
    return callback.state


def _run_tabular(plan: BsuitePlan, kwargs: dict[str, Any]) -> SolveState:
    from delight_gym.experiments.deep_sea import play_deep_sea

    state = SolveState(plan.budget, plan.early_stop, plan.deterministic)
    # The tabular agents run as a batch of one sub-env, on the run's own instance.
    mdp = play_deep_sea(
        plan.agent,
        plan.size,
        1,
        lambda final: state.final_episode(final, 0),
        seed=plan.seed,
        deterministic=plan.deterministic,
        mapping_seed=[plan.mapping_seed],
        **kwargs,
    )
    count = getattr(mdp, "override_count", None)
    state.overrides = 0 if count is None else int(count.sum())
    return state


def run_bsuite_deep_sea(
    agent: str,
    size: int,
    *,
    seed: int,
    episodes: int | None = None,
    early_stop: bool = True,
    tensorboard_log: str | None = None,
    mapping_seed: int | None = None,
    deterministic: bool = True,
    **agent_kwargs: Any,
) -> BsuiteRun:
    """Run ``agent`` on DeepSea of size ``N`` under bsuite's rule.

    Parameters
    ----------
    agent : str
        One of :data:`BSUITE_AGENTS`.
    size : int
        ``N``.
    seed : int
        The seed of the agent (and of the stochastic variant's noise).
    episodes : int, optional
        The most episodes (default and cap: bsuite's budget ``min(2**N + 100, 10 000)``; at
        least 100 with ``deterministic=False``).
    early_stop : bool, default True
        Stop once the run is solved; ``False`` plays every episode of the budget.
    tensorboard_log : str, optional
        The deep agents' TensorBoard folder.
    mapping_seed : int, optional
        The instance's ``mapping_seed`` (default ``seed``; bsuite's sweeps use 42).
    deterministic : bool, default True
        bsuite's ``deep_sea`` and its rule; ``False``: ``deep_sea_stochastic`` and its rule.
    **agent_kwargs
        The DE agents' ``half_life``, ``gate_price``, ``surprisal_cap``; other keywords of the
        agent's constructor.

    Returns
    -------
    BsuiteRun
    """
    if agent in TABULAR_AGENTS and not deterministic:
        raise ValueError(
            f"deterministic=False: the tabular agent {agent!r} assumes DeepSea's noiseless rewards"
        )
    plan = BsuitePlan.checked(agent, size, seed, episodes, early_stop, mapping_seed, deterministic)
    start = time.perf_counter()
    if agent in TABULAR_AGENTS:
        _de_settings(agent, dict(agent_kwargs))  # refuses DE keywords for psrl
        state = _run_tabular(plan, agent_kwargs)
    else:
        state = _run_deep(plan, tensorboard_log, agent_kwargs)
    return plan.result(state, time.perf_counter() - start)


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

    :class:`~delight_gym.agents.boot_dqn.SeedBatchedBootDQN` on a
    :class:`~delight_gym.envs.deep_sea.DeepSeaVectorEnv`: bsuite's BootDQN, equal to the
    per-seed runs in distribution, not seed by seed (one generator, seeded ``seed``, draws for
    the batch). Each seed's record stops where its own run would.

    Parameters
    ----------
    agent : str
        One of :data:`~delight_gym.experiments.families.deepsea_bsuite.BATCHED_AGENTS`.
    size : int
        ``N``.
    seeds, seed : int
        How many seeds, and the first (sub-env ``i`` is reset with ``seed + i``).
    device : str or torch.device, default "cpu"
        Where the heads and the replay live.
    episodes, early_stop, mapping_seed, deterministic
        As for :func:`run_bsuite_deep_sea`.

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
            agent, size, first + i, episodes, early_stop, mapping_seed, deterministic
        )
        for i in range(count)
    ]
    n = plans[0].size
    start = time.perf_counter()
    envs = DeepSeaVectorEnv(
        count, size=n, deterministic=deterministic, mapping_seed=[p.mapping_seed for p in plans]
    )
    model = SeedBatchedBootDQN(count, n * n, 2, seed=first, device=device)
    records = [SolveState(p.budget, p.early_stop, p.deterministic) for p in plans]
    going = np.ones(count, dtype=bool)

    def record(terminated: np.ndarray, truncated: np.ndarray, infos: dict) -> bool:
        # A seed stopped by its rule keeps playing with the batch, unrecorded.
        for i in np.flatnonzero(terminated & going).tolist():
            going[i] = records[i].final_episode(infos["final_info"], i)
        return bool(going.any())

    model.run_online(envs, record, seed=first)
    share = (time.perf_counter() - start) / count
    return [p.result(r, share) for p, r in zip(plans, records, strict=True)]


@dataclass
class BsuiteCellResult:
    """What :func:`run_bsuite_seeds` returns (the runner's cell protocol).

    Attributes
    ----------
    cumulative, seconds
        cumulative per-episode regret ``(seeds, episodes)``, NaN after a run stopped; time.
    overrides, solve_episode, solved
        per seed: DE's overridden decisions (zeros without DE), bsuite's solve episode (an
        unsolved run: its budget) and whether it was solved within its budget.
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
    """The bsuite families' run function: :func:`run_bsuite_deep_sea` for seeds ``seed, …,
    seed + seeds − 1``, each for at most ``min(2**N + 100, horizon)`` episodes; a ``device``
    other than :data:`~delight_gym.experiments.families.deepsea_bsuite.PER_SEED` runs them as
    one :func:`run_bsuite_deep_sea_batched` there."""
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
            [run.solve.episode if run.solve.solved else run.budget for run in runs], dtype=np.int64
        ),
        solved=np.array([run.solve.solved for run in runs], dtype=bool),
    )
