"""bsuite's DeepSea yardstick: the solve episode of a run and the score over sizes.

bsuite 0.3.6's ``deep_sea`` / ``deep_sea_stochastic`` rules without pandas: **solved** at the
first logged episode (from ``first_episode``) whose running fraction of bad episodes is below
``threshold`` (:data:`BSUITE_EXPERIMENTS`); size ``N`` **passes** if solved before episode
``2**N + forgiveness``; the **score** is the fraction that pass (``docs/reproduce/bsuite.md``).

Examples
--------
>>> solve = solve_episode([True] * 5 + [False] * 20)
>>> solve, deep_sea_passes(4, solve)
(DeepSeaSolve(solved=True, episode=6, finished=True), True)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np

from delight_gym._checks import check_flag, check_positive_float, check_positive_int

__all__ = ["BSUITE_EXPERIMENTS", "DeepSeaSolve", "SolveTracker", "deep_sea_score", "solve_episode"]

#: bsuite's episode budget for ``deep_sea`` (``sweep.NUM_EPISODES``).
BSUITE_NUM_EPISODES = 10_000
#: ``find_solution``'s default ``thresh`` in bsuite's ``deep_sea/analysis.py``.
DEEP_SEA_THRESHOLD = 0.9
#: The ``thresh`` that bsuite's ``deep_sea_stochastic/analysis.py`` passes.
DEEP_SEA_STOCHASTIC_THRESHOLD = 0.8
#: ``deep_sea_stochastic`` keeps only the logged episodes from this one on.
DEEP_SEA_STOCHASTIC_FIRST_EPISODE = 100
#: ``score``'s default ``forgiveness`` in bsuite's ``analysis.py``.
BSUITE_FORGIVENESS = 100.0

# bsuite's logging ratios, in tenths (1, 1.2, 1.4, 1.7, 2, 2.5, 3, 4, …, 10).
_RATIO_TENTHS = (10, 12, 14, 17, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100)


def is_logged_episode(episode: int) -> bool:
    """Whether bsuite's logging wrapper writes a row after episode ``episode`` (≥ 1)."""
    if episode < 1:
        return False
    # Logged: episode = decade · r / 10 for a ratio r of the episode's own decade (10^k).
    decade = 10 ** (len(str(int(episode))) - 1)
    return any((decade * r) % 10 == 0 and decade * r // 10 == episode for r in _RATIO_TENTHS)


def bsuite_logged_episodes(max_episode: int) -> np.ndarray:
    """All logged episodes ``≤ max_episode``, increasing (int64)."""
    last = check_positive_int(max_episode, "max_episode")
    return np.array([e for e in range(1, last + 1) if is_logged_episode(e)], dtype=np.int64)


class BsuiteExperiment(NamedTuple):
    """One of bsuite's DeepSea experiments: its sweep (``sweep.py``) and its solve rule."""

    name: str
    deterministic: bool
    threshold: float
    first_episode: int
    sizes: tuple[int, ...] = tuple(range(10, 51, 2))
    mapping_seed: int = 42
    num_episodes: int = BSUITE_NUM_EPISODES


#: bsuite's two deep-exploration experiments on DeepSea, by bsuite's name.
BSUITE_EXPERIMENTS = {
    "deep_sea": BsuiteExperiment("deep_sea", True, DEEP_SEA_THRESHOLD, 1),
    "deep_sea_stochastic": BsuiteExperiment(
        "deep_sea_stochastic",
        False,
        DEEP_SEA_STOCHASTIC_THRESHOLD,
        DEEP_SEA_STOCHASTIC_FIRST_EPISODE,
    ),
}


class DeepSeaSolve(NamedTuple):
    """Outcome of one run under bsuite's rule: ``solved`` (the running bad fraction dropped
    below the threshold at a logged episode within the budget), ``episode`` (that episode, or
    the last logged one if unsolved), ``finished`` (solved, or ran to ``num_episodes``)."""

    solved: bool
    episode: int
    finished: bool


class SolveTracker:
    """bsuite's solve rule, fed one episode at a time (so a run can stop once it is solved).

    Parameters
    ----------
    threshold : float
        A logged episode with running bad fraction ``< threshold`` solves the run.
    num_episodes : int
        bsuite's budget; episodes after it are ignored.
    logged : {"bsuite", "every"}
        Test the fraction at bsuite's logged episodes (as the published scores) or after
        every episode.
    first_episode : int
        Episodes before this one are never tested (``deep_sea_stochastic``: 100).
    """

    def __init__(
        self,
        *,
        threshold: float = DEEP_SEA_THRESHOLD,
        num_episodes: int = BSUITE_NUM_EPISODES,
        logged: str = "bsuite",
        first_episode: int = 1,
    ) -> None:
        self.threshold = check_positive_float(threshold, "threshold")
        self.num_episodes = check_positive_int(num_episodes, "num_episodes")
        self.first_episode = check_positive_int(first_episode, "first_episode")
        if logged not in ("bsuite", "every"):
            raise ValueError(f"logged must be 'bsuite' or 'every', got {logged!r}")
        self.logged = logged
        self.episodes = 0
        self.bad = 0
        self.last_logged = 0
        self.solved_at: int | None = None

    @property
    def solved(self) -> bool:
        """Whether the run is solved (its solve episode is known)."""
        return self.solved_at is not None

    def update(self, bad_episode: Any) -> bool:
        """Record one finished episode; returns :attr:`solved` afterwards."""
        self.episodes += 1
        self.bad += int(check_flag(bad_episode, "bad_episode"))
        e = self.episodes
        # The running fraction counts every episode but is tested only at logged ones.
        if self.solved_at is None and self.first_episode <= e <= self.num_episodes:
            if self.logged == "every" or is_logged_episode(e):
                self.last_logged = e
                if self.bad / e < self.threshold:
                    self.solved_at = e
        return self.solved

    def result(self) -> DeepSeaSolve:
        """The run's :class:`DeepSeaSolve` so far."""
        if self.last_logged == 0:
            raise ValueError("no logged episode yet: feed at least one episode first")
        if self.solved_at is not None:
            return DeepSeaSolve(True, self.solved_at, True)
        return DeepSeaSolve(False, self.last_logged, self.last_logged >= self.num_episodes)


def solve_episode(
    bad_flags: Iterable[Any],
    *,
    threshold: float = DEEP_SEA_THRESHOLD,
    num_episodes: int = BSUITE_NUM_EPISODES,
    logged: str = "bsuite",
    first_episode: int = 1,
) -> DeepSeaSolve:
    """bsuite's solve episode of one run from its per-episode bad flags.

    Parameters
    ----------
    bad_flags : iterable of bool
        ``bad_flags[i]``: episode ``i + 1`` was bad.
    threshold, num_episodes, logged, first_episode
        As for :class:`SolveTracker`.
    """
    flags = np.asarray(list(bad_flags) if not isinstance(bad_flags, np.ndarray) else bad_flags)
    if flags.ndim != 1 or flags.size == 0:
        raise ValueError(f"bad_flags must be a non-empty 1-d sequence, got shape {flags.shape}")
    if flags.dtype != np.bool_:
        raise TypeError(f"bad_flags must hold bools, got dtype {flags.dtype}")
    tracker = SolveTracker(
        threshold=threshold, num_episodes=num_episodes, logged=logged, first_episode=first_episode
    )
    for flag in flags:
        if tracker.update(flag):
            break
    return tracker.result()


def deep_sea_passes(
    size: int, solve: DeepSeaSolve, *, forgiveness: float = BSUITE_FORGIVENESS
) -> bool:
    """bsuite's ``beat_dither``: solved at an episode ``< 2**size + forgiveness``."""
    size = check_positive_int(size, "size")
    return bool(solve.solved and solve.episode < 2**size + forgiveness)


def deep_sea_episode_budget(
    size: int, *, forgiveness: float = BSUITE_FORGIVENESS, cap: int = BSUITE_NUM_EPISODES
) -> int:
    """Episodes a run needs to settle pass/fail, ``min(2**size + forgiveness, cap)``: a run
    not solved by then cannot pass."""
    size = check_positive_int(size, "size")
    cap = check_positive_int(cap, "cap")
    return int(min(2**size + int(np.ceil(forgiveness)), cap))


def deep_sea_score(
    solves: Mapping[int, DeepSeaSolve] | Iterable[tuple[int, DeepSeaSolve]],
    *,
    forgiveness: float = BSUITE_FORGIVENESS,
) -> float:
    """bsuite's ``score``: the fraction of runs ``(size, solve)`` that pass (bsuite has one run
    per size; with several seeds, pass every pair)."""
    pairs = list(solves.items() if isinstance(solves, Mapping) else solves)
    if not pairs:
        raise ValueError("solves must not be empty")
    return float(np.mean([deep_sea_passes(n, s, forgiveness=forgiveness) for n, s in pairs]))
