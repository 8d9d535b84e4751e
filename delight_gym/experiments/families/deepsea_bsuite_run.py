"""One agent on one DeepSea size and seed, scored by bsuite's rule (the DeepSea bsuite families).

:func:`run_bsuite_deep_sea` plays one run (agent, size ``N``, seed ``s`` on bsuite's instance
``mapping_seed = s`` unless told otherwise), feeds every finished episode's
``info["bad_episode"]`` to a :class:`~delight_gym.experiments.scores.SolveTracker` and stops
once the run is solved or at the episode budget
:func:`~delight_gym.experiments.scores.deep_sea_episode_budget`. The agents are the family
record's (:data:`~delight_gym.experiments.families.deepsea_bsuite.DEEP_SEA_BSUITE`);
:func:`make_deep_agent` builds the deep ones. What each agent is, the settings taken from
bsuite's baselines, and what the deep agents log: ``docs/reproduce/deepsea-bsuite.md``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from delight_gym._checks import check_nonnegative_int, check_positive_int
from delight_gym.experiments.families.base import DE_PARAMETERS, DELIGHT, PSRL
from delight_gym.experiments.families.deepsea_bsuite import (
    BOOT_DQN_DE_AGREE,
    BOOT_DQN_DE_COMMIT_FAST,
    BOOT_DQN_DE_OPTIONS,
    BOOT_DQN_DE_SPREAD,
    BSUITE_REPLAY_SIZE,
    DEEP_SEA_BSUITE,
    DELIGHT_DQN,
    DQN_EGREEDY,
)
from delight_gym.experiments.scores import (
    BSUITE_EXPERIMENTS,
    DeepSeaSolve,
    SolveTracker,
    deep_sea_episode_budget,
)

__all__ = [
    "BSUITE_AGENTS",
    "BSUITE_DQN_SETTINGS",
    "DEEP_AGENTS",
    "DE_AGENTS",
    "DE_VARIANTS",
    "TABULAR_AGENTS",
    "BsuitePlan",
    "BsuiteRun",
    "DeepSeaSolveCallback",
    "SolveState",
    "make_deep_agent",
    "run_bsuite_deep_sea",
]

#: Every agent :func:`run_bsuite_deep_sea` knows: the family record's, in its order.
BSUITE_AGENTS = DEEP_SEA_BSUITE.agent_names
#: The tabular reference agents (:mod:`delight_gym.agents.mdp`).
TABULAR_AGENTS = (PSRL.name, DELIGHT.name)
#: The DE variants (beyond the paper), not in the family's default sweep.
DE_VARIANTS = (BOOT_DQN_DE_SPREAD.name, BOOT_DQN_DE_AGREE.name, BOOT_DQN_DE_COMMIT_FAST.name)
#: The deep (SB3) agents, built by :func:`make_deep_agent`.
DEEP_AGENTS = tuple(name for name in BSUITE_AGENTS if name not in TABULAR_AGENTS)
#: The agents with DE: they take those of ``half_life``, ``gate_price`` and ``surprisal_cap``
#: that they do not fix.
DE_AGENTS = tuple(
    a.name for a in DEEP_SEA_BSUITE.agents if any(p in DE_PARAMETERS for p in a.parameters)
)

#: bsuite's DQN baseline (``default_agent``) mapped onto SB3's DQN (module docstring).
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
_DE_KEYS = ("half_life", "gate_price", "surprisal_cap")


@dataclass
class BsuiteRun:
    """One run of :func:`run_bsuite_deep_sea`.

    Attributes
    ----------
    agent : str
    size, seed : int
        What was run (``seed`` is also the mapping seed).
    budget : int
        The episode budget of the run.
    bad : numpy.ndarray
        bool ``(episodes,)``: each played episode's bad flag (``episodes <= budget``).
    regret : numpy.ndarray
        float ``(episodes,)``: each episode's regret (optimal minus denoised return).
    solve : DeepSeaSolve
        The run's :class:`~delight_gym.experiments.scores.DeepSeaSolve` (an unsolved run
        reports its last logged episode).
    overrides : int
        DE's overridden decisions over the run (0 for the agents without DE).
    seconds : float
        Wall-clock time of the run, s.
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
        """Episodes played."""
        return int(self.bad.shape[0])


@dataclass(frozen=True)
class BsuitePlan:
    """One run's checked arguments (:meth:`checked`): what the run plays and when it stops.

    Attributes
    ----------
    agent : str
    size, seed, mapping_seed : int
        DeepSea's ``N``, the agent's seed (and the noise's) and the instance's mapping seed.
    deterministic : bool
        bsuite's ``deep_sea`` and its solve rule, else ``deep_sea_stochastic`` and its rule.
    budget : int
        The most episodes: bsuite's ``min(2**N + 100, 10 000)``, capped by ``episodes``.
    early_stop : bool
        Stop once the run is solved.
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
        *,
        seed: int,
        episodes: int | None,
        early_stop: bool,
        mapping_seed: int | None,
        deterministic: bool,
    ) -> BsuitePlan:
        """The plan of :func:`run_bsuite_deep_sea`'s arguments (their defaults are its:
        ``episodes`` ``None``: bsuite's budget, ``mapping_seed`` ``None``: ``seed``); a
        ``ValueError``/``TypeError`` naming the argument it refuses."""
        if agent not in BSUITE_AGENTS:
            raise ValueError(f"agent must be one of {list(BSUITE_AGENTS)}, got {agent!r}")
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
        first = BSUITE_EXPERIMENTS[name].first_episode
        if budget < first:
            raise ValueError(
                f"episodes must be >= {first} for deterministic={deterministic}: bsuite's "
                f"{name} rule tests no episode before {first}, got {episodes}"
            )
        return cls(agent, n, seed, mapping, deterministic, budget, bool(early_stop))

    def solve_state(self) -> SolveState:
        """A fresh :class:`SolveState` for this run (its budget, stop and solve rule)."""
        return SolveState(self.budget, self.early_stop, self.deterministic)

    def result(self, state: SolveState, seconds: float) -> BsuiteRun:
        """The :class:`BsuiteRun` of this plan from what its run recorded in ``state``."""
        return BsuiteRun(
            agent=self.agent,
            size=self.size,
            seed=self.seed,
            budget=self.budget,
            bad=np.asarray(state.bad, dtype=bool),
            regret=np.asarray(state.regret, dtype=np.float64),
            solve=state.tracker.result(),
            overrides=int(state.overrides),
            seconds=float(seconds),
        )


def _de_settings(agent: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The DE keywords of ``kwargs``, removed from it; a ``TypeError`` naming those that
    ``agent`` does not take (it has no DE, or it fixes them)."""
    found = {k: kwargs.pop(k) for k in _DE_KEYS if k in kwargs}
    if found and agent not in DE_AGENTS:
        raise TypeError(f"agent {agent!r} has no DE: it does not take {sorted(found)}")
    fixed = sorted(set(found) & set(BOOT_DQN_DE_OPTIONS.get(agent) or {}))
    if fixed:
        raise TypeError(f"agent {agent!r} fixes {fixed}: it does not take them")
    return found


def make_deep_agent(agent: str, env: Any, *, seed: int, **kwargs: Any) -> Any:
    """Build the SB3 algorithm of a deep agent of :data:`DEEP_AGENTS` on ``env``.

    Parameters
    ----------
    agent : str
        One of :data:`DEEP_AGENTS`.
    env : gymnasium.Env or VecEnv
        DeepSea.
    seed : int
        Seeds the algorithm (and its posterior).
    **kwargs
        The DE agents' ``half_life``, ``gate_price``, ``surprisal_cap``; any other keyword goes
        to the algorithm's constructor over bsuite's settings (``tensorboard_log``: SB3's
        TensorBoard folder, default none).

    Returns
    -------
    stable_baselines3.DQN or BootstrappedDQN or DelightDQN
    """
    if agent not in DEEP_AGENTS:
        raise ValueError(f"agent must be one of {list(DEEP_AGENTS)}, got {agent!r}")
    kwargs = dict(kwargs)
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
    """What one run records, episode by episode: its bad flags, regret and overrides, fed to
    bsuite's solve rule (a :class:`~delight_gym.experiments.scores.SolveTracker`).
    :class:`DeepSeaSolveCallback`, the tabular loop and the batched run (one per seed) keep one.
    """

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

    def count_overrides(self, stats: Any) -> None:
        """Read the run's overrides so far from ``stats`` (a
        :class:`~delight_gym.de.stats.DelightStats`: its ``total_overridden`` is never
        reset by the algorithm's log dumps)."""
        self.overrides = int(stats.total_overridden)

    def episode(self, bad: bool, regret: float) -> bool:
        """Record one finished episode; returns whether the run should go on."""
        self.bad.append(bool(bad))
        self.regret.append(float(regret))
        solved = self.tracker.update(bool(bad))
        if len(self.bad) >= self.budget:
            return False
        return not (self.early_stop and solved)

    def final_episode(self, final_info: Any, i: int) -> bool:
        """:meth:`episode` of sub-env ``i``'s finished episode, read from a DeepSea vector
        env's ``final_info`` (its bad flag, and its regret: optimal minus denoised return)."""
        regret = float(final_info["optimal_return"][i]) - float(final_info["denoised_return"][i])
        return self.episode(bool(final_info["bad_episode"][i]), regret)


class DeepSeaSolveCallback(BaseCallback):
    """SB3 callback: feeds every finished DeepSea episode to bsuite's rule, counts DE's
    overrides, logs ``deepsea/*`` and stops training once the run is solved (``early_stop``)
    or after ``budget`` episodes.

    Parameters
    ----------
    budget : int
        The most episodes to play.
    early_stop : bool, default True
        Stop once the solve episode is known.
    deterministic : bool, default True
        Score by bsuite's ``deep_sea`` rule, else by its ``deep_sea_stochastic`` rule.
    """

    def __init__(self, budget: int, *, early_stop: bool = True, deterministic: bool = True) -> None:
        super().__init__(verbose=0)
        self.state = SolveState(
            check_positive_int(budget, "budget"), bool(early_stop), bool(deterministic)
        )

    def _on_step(self) -> bool:
        state = self.state
        stats = getattr(self.model, "delight_stats", None)
        if stats is not None and (
            getattr(self.model, "delight", None) is not None
        ):  # BootstrappedDQN without DE keeps no statistics worth counting
            state.count_overrides(stats)
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


def _run_deep(
    plan: BsuitePlan, tensorboard_log: str | None, kwargs: dict[str, Any]
) -> tuple[SolveState, Any]:
    from delight_gym.envs.deep_sea import DeepSeaEnv

    n, agent, seed = plan.size, plan.agent, plan.seed
    env = DeepSeaEnv(size=n, deterministic=plan.deterministic, mapping_seed=plan.mapping_seed)
    model = make_deep_agent(agent, env, seed=seed, tensorboard_log=tensorboard_log, **kwargs)
    callback = DeepSeaSolveCallback(
        plan.budget, early_stop=plan.early_stop, deterministic=plan.deterministic
    )
    model.learn(
        total_timesteps=plan.budget * n,
        callback=callback,
        log_interval=1 if tensorboard_log is not None else 4,
        tb_log_name=f"deepsea_bsuite_{agent}_N{n}_seed{seed}",
    )
    return callback.state, model


def _run_tabular(plan: BsuitePlan, kwargs: dict[str, Any]) -> SolveState:
    import torch

    from delight_gym.agents.mdp import make_mdp_agent
    from delight_gym.envs.deep_sea import DeepSeaVectorEnv
    from delight_gym.experiments.bandit import AGENT_SEED_SALT

    size, seed = plan.size, plan.seed
    envs = DeepSeaVectorEnv(
        num_envs=1, size=size, deterministic=plan.deterministic, mapping_seed=[plan.mapping_seed]
    )
    obs, _ = envs.reset(seed=seed)
    options: dict[str, Any] = {"reward_range": (-envs.move_cost, 1.0), **kwargs}
    mdp = make_mdp_agent(
        plan.agent, 1, size * size, 2, size, seed=[seed, AGENT_SEED_SALT], device="cpu", **options
    )
    state = plan.solve_state()
    go_on = True
    while go_on:
        mdp.begin_episode()
        states = obs.reshape(1, -1).argmax(axis=1)
        for h in range(size):
            actions = mdp.act(torch.as_tensor(states), h)
            obs, rewards, terminated, _, infos = envs.step(actions.cpu().numpy())
            next_states = obs.reshape(1, -1).argmax(axis=1)
            mdp.observe(
                torch.as_tensor(states),
                actions,
                torch.as_tensor(rewards),
                None if h == size - 1 else torch.as_tensor(next_states),
                h,
            )
            states = next_states
        if not bool(np.all(terminated)):  # pragma: no cover - DeepSea always ends after N steps
            raise RuntimeError("DeepSea episodes must end after exactly N steps")
        go_on = state.final_episode(infos["final_info"], 0)
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
        The most episodes (default and cap: bsuite's budget ``min(2**N + 100, 10 000)``,
        :func:`~delight_gym.experiments.scores.deep_sea_episode_budget`; at least 100 with
        ``deterministic=False``, whose rule tests no earlier episode).
    early_stop : bool, default True
        Stop once the run is solved (its solve episode is then known); ``False`` plays every
        episode of the budget.
    tensorboard_log : str, optional
        The deep agents' TensorBoard folder (needs the ``tensorboard`` package).
    mapping_seed : int, optional
        The instance's ``mapping_seed`` (default ``seed``; bsuite's sweeps use 42).
    deterministic : bool, default True
        bsuite's ``deep_sea`` and its solve rule; ``False``: ``deep_sea_stochastic`` and its
        rule (only episodes from 100 on count, threshold 0.8).
    **agent_kwargs
        The DE agents' ``half_life``, ``gate_price``, ``surprisal_cap``; for the deep agents
        any constructor keyword, for the tabular ones any keyword of their constructor.

    Returns
    -------
    BsuiteRun
    """
    if agent in TABULAR_AGENTS and not deterministic:
        raise ValueError(
            f"deterministic=False: the tabular agent {agent!r} assumes DeepSea's noiseless rewards"
        )
    plan = BsuitePlan.checked(
        agent,
        size,
        seed=seed,
        episodes=episodes,
        early_stop=early_stop,
        mapping_seed=mapping_seed,
        deterministic=deterministic,
    )
    kwargs = dict(agent_kwargs)
    start = time.perf_counter()
    if agent in TABULAR_AGENTS:
        _de_settings(agent, dict(kwargs))  # refuses DE keywords for psrl
        state = _run_tabular(plan, kwargs)
    else:
        state, _ = _run_deep(plan, tensorboard_log, kwargs)
    return plan.result(state, time.perf_counter() - start)
