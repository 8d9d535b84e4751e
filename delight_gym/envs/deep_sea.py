"""DeepSea-v0, exactly as bsuite 0.3.6's ``deep_sea``: a single Gymnasium env and a vector form.

The *instance* is bsuite's action mapping (which action means "right" in each cell); the maths
is in :mod:`delight_gym.envs.deep_sea_maths`.
"""

from __future__ import annotations

import operator
from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import (
    check_action_batch,
    check_finite_array,
    check_flag,
    check_nonnegative_float,
    check_positive_int,
)
from delight_gym.envs._base import (
    InstanceEnv,
    InstanceVectorEnv,
    VectorStep,
    check_discrete_action,
    check_num_entries,
    check_render_mode,
    read_only_copy,
    require_drawn,
    set_vector_spaces,
    vector_step_infos,
)
from delight_gym.envs.deep_sea_maths import (
    DEFAULT_DEEP_SEA_SIZE,
    DEFAULT_UNSCALED_MOVE_COST,
    MAX_DEEP_SEA_CELLS,
    MAX_DEEP_SEA_SIZE,
    bsuite_mapping,
    check_deep_sea_size,
    check_mapping_seed,
    deep_sea_expected_return,
    deep_sea_optimal_return,
    draw_mapping_seed,
    one_hot,
    render_rgb,
    render_text,
)

__all__ = [
    "DEFAULT_DEEP_SEA_SIZE",
    "DEFAULT_UNSCALED_MOVE_COST",
    "MAX_DEEP_SEA_CELLS",
    "MAX_DEEP_SEA_SIZE",
    "DeepSeaEnv",
    "DeepSeaVectorEnv",
    "check_deep_sea_size",
    "deep_sea_expected_return",
    "deep_sea_optimal_return",
]


_METADATA: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}


def _read_only(attr: str, doc: str) -> Any:
    """A public read-only attribute reading ``attr`` (assigning raises ``AttributeError``)."""
    return property(operator.attrgetter(attr), doc=doc)


class _DeepSeaParameters:
    """The keywords shared by the single and vector DeepSea envs, checked once, read-only."""

    def _set_parameters(
        self,
        size: int,
        deterministic: bool,
        unscaled_move_cost: float,
        randomize_actions: bool,
        render_mode: str | None,
        num_envs: int = 1,
    ) -> None:
        self._size = check_deep_sea_size(size, "size", num_envs)
        self._deterministic = check_flag(deterministic, "deterministic")
        self._unscaled_move_cost = check_nonnegative_float(unscaled_move_cost, "unscaled_move_cost")
        self._randomize_actions = check_flag(randomize_actions, "randomize_actions")
        self.render_mode = check_render_mode(render_mode, _METADATA["render_modes"])
        self._move_cost = self._unscaled_move_cost / self._size
        self._optimal_return = deep_sea_optimal_return(
            self._size, self._deterministic, self._unscaled_move_cost
        )
        self._mapping: NDArray[np.int64] | None = None

    def _require_mapping(self) -> NDArray[np.int64]:
        not_drawn = "the action mapping is drawn at the first reset(); call reset()"
        return require_drawn(self._mapping, not_drawn)

    def _has_instance(self) -> bool:
        return self._mapping is not None

    def _expected_return(self, mapping: NDArray[np.int64], probs: ArrayLike) -> float:
        return deep_sea_expected_return(
            mapping,
            probs,
            deterministic=self._deterministic,
            unscaled_move_cost=self._unscaled_move_cost,
        )

    def _given_mapping_seeds(self, mapping_seed: Any, num_envs: int | None) -> list[int] | None:
        """``mapping_seed`` checked, one seed per env (or None); a single env takes an int only."""
        if mapping_seed is None:
            return None
        if not self._randomize_actions:
            raise ValueError("mapping_seed must be None when randomize_actions=False")
        if num_envs is None:
            return [check_mapping_seed(mapping_seed)]
        if isinstance(mapping_seed, (list, tuple)):
            check_num_entries(mapping_seed, "mapping_seed as a sequence", num_envs)
            return [check_mapping_seed(s, f"mapping_seed[{i}]") for i, s in enumerate(mapping_seed)]
        return [check_mapping_seed(mapping_seed)] * num_envs

    def _init_mapping(self, mapping_seed: Any, num_envs: int | None) -> list[int] | None:
        """Check ``mapping_seed``; set ``_fixed_instance`` and the mapping it fixes, if any."""
        seeds = self._given_mapping_seeds(mapping_seed, num_envs)
        n = self._size
        if seeds is not None:
            maps = [bsuite_mapping(s, n) for s in seeds]
            self._mapping = maps[0] if num_envs is None else np.stack(maps)
        elif not self._randomize_actions:  # bsuite's debugging mode: action 1 everywhere
            self._mapping = np.ones((n, n) if num_envs is None else (num_envs, n, n), np.int64)
        fixed = seeds is not None or not self._randomize_actions
        reason = "the action mapping is fixed (mapping_seed was given, or randomize_actions=False)"
        self._fixed_instance = reason if fixed else None
        return seeds

    @property
    def action_mapping(self) -> NDArray[np.int64]:
        """Read-only copy of the mapping, ``(N, N)`` (vector env ``(num_envs, N, N)``): entry
        ``[row, column]`` is the action that means "right" there."""
        return read_only_copy(self._require_mapping())

    size: int = _read_only("_size", "``N``, the grid's side and the episode length.")
    deterministic: bool = _read_only("_deterministic", "False for the stochastic variant.")
    unscaled_move_cost: float = _read_only(
        "_unscaled_move_cost", 'bsuite\'s ``unscaled_move_cost``; each "right" costs it ``/ N``.'
    )
    move_cost: float = _read_only("_move_cost", 'The cost of one "right".')
    randomize_actions: bool = _read_only(
        "_randomize_actions", 'False in bsuite\'s debugging mode (action 1 is "right" everywhere).'
    )
    optimal_return: float = _read_only(
        "_optimal_return",
        "bsuite's optimal (expected) return: ``1 − c`` or ``(1 − 1/N)**(N − 1) − c``.",
    )


class DeepSeaEnv(_DeepSeaParameters, InstanceEnv[NDArray[np.float32]]):
    """bsuite's DeepSea: fall through an ``N x N`` grid and find the treasure at the far right.

    From ``(row, column) = (0, 0)`` every step goes one row down and "left" or "right" (clipped
    to the grid); action ``a`` is "right" iff ``a == action_mapping[row, column]``.

    - Action space: ``Discrete(2)`` (a ``ValueError`` naming ``action`` outside it).
    - Observation space: ``Box(0, 1, (N, N), float32)``, one-hot ``(row, column)``, 0 at the end.
    - Rewards: ``+1`` for "right" in the last column, ``−unscaled_move_cost/N`` per "right";
      stochastic: ``N(0, 1)`` noise at ``(N−1, 0)``, ``(N−1, N−1)``; "right" fails w.p. ``1/N``.
    - Episode end: after ``N`` steps; ``info``: ``optimal_return``, ``bad_episode``,
      ``denoised_reward``, ``denoised_return`` and, on the last step, ``is_success``.
    - Arguments: ``size`` (10, at most :data:`MAX_DEEP_SEA_SIZE`), ``deterministic`` (True),
      ``unscaled_move_cost`` (0.01), ``randomize_actions`` (True), ``mapping_seed`` (None:
      drawn at the first reset), ``render_mode`` (``"ansi"``, ``"rgb_array"``).
    - Version history: v0, the initial version (delight_gym 0.1.0); later ``is_success``.

    >>> env = DeepSeaEnv(size=3, mapping_seed=42)
    >>> obs, info = env.reset(seed=0)
    >>> for _ in range(3):  # always "right"
    ...     row, column = env.position
    ...     obs, reward, terminated, truncated, info = env.step(env.action_mapping[row, column])
    >>> round(info["denoised_return"], 6), terminated, info["is_success"]
    (0.99, True, True)
    """

    # Gymnasium reads ``metadata`` from the class (``gym.make`` checks render modes there).
    metadata = _METADATA

    def __init__(
        self,
        size: int = DEFAULT_DEEP_SEA_SIZE,
        deterministic: bool = True,
        unscaled_move_cost: float = DEFAULT_UNSCALED_MOVE_COST,
        randomize_actions: bool = True,
        mapping_seed: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        self._set_parameters(
            size, deterministic, unscaled_move_cost, randomize_actions, render_mode
        )
        given = self._init_mapping(mapping_seed, None)
        n = self._size
        self.action_space = spaces.Discrete(2)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n, n), dtype=np.float32)
        self._mapping_seed: int | None = None if given is None else given[0]
        self._clear_episode()

    @property
    def mapping_seed(self) -> int | None:
        """The seed the mapping was made from (given or drawn); None if not randomized."""
        if self._randomize_actions:
            self._require_mapping()
        return self._mapping_seed

    @property
    def position(self) -> tuple[int, int]:
        """The current ``(row, column)``; ``row == N`` once the episode is over."""
        return self._row, self._column

    def expected_return(self, action_one_probs: ArrayLike) -> float:
        """Exact expected (denoised) return on this instance of a policy (``(N, N)``
        probabilities of action 1, or an ``(N,)`` 0/1 action sequence)."""
        return self._expected_return(self._require_mapping(), action_one_probs)

    # reset() is InstanceEnv's: its seed also seeds the stochastic variant's noise and moves.
    def _draw_instance(self) -> None:
        self._mapping_seed = draw_mapping_seed(self.np_random)
        self._mapping = bsuite_mapping(self._mapping_seed, self._size)

    def _clear_episode(self) -> None:
        self._row, self._column = 0, 0
        self._bad_episode = self._found_treasure = False
        self._denoised_return = 0.0

    def _start_episode(self) -> NDArray[np.float32]:
        self._clear_episode()
        return one_hot(self._size, 0, 0)

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """One step down the grid; ``terminated`` after the ``N``-th step."""
        self._require_reset()
        n = self._size
        if self._row >= n:
            raise ResetNeeded("the episode has terminated; call reset() before step()")
        action = check_discrete_action(action, self.action_space)
        mapping = self._require_mapping()
        row, column = self._row, self._column
        right = action == mapping[row, column]

        # bsuite's order: treasure (column before the move), noise, then the move and its cost.
        reward = denoised = 0.0
        if column == n - 1 and right:
            reward += 1.0
            denoised += 1.0
            self._found_treasure = True
        if not self._deterministic and row == n - 1 and column in (0, n - 1):
            reward += float(self.np_random.standard_normal())
        if right:
            if self._deterministic or self.np_random.random() > 1 / n:
                column = min(column + 1, n - 1)
            reward -= self._move_cost
            denoised -= self._move_cost
        else:
            if row == column:  # was on the optimal path and left it
                self._bad_episode = True
            column = max(column - 1, 0)
        self._row, self._column = row + 1, column
        self._denoised_return += denoised
        info: dict[str, Any] = {
            "optimal_return": self._optimal_return,
            "bad_episode": self._bad_episode,
            "denoised_reward": denoised,
            "denoised_return": self._denoised_return,
        }
        terminated = self._row == n
        if terminated:
            info["is_success"] = self._found_treasure
        return one_hot(n, self._row, column), reward, terminated, False, info

    def _frame(self) -> str | NDArray[np.uint8]:  # the grid as text or as an RGB image
        if self.render_mode == "ansi":
            return render_text(
                self._size, self._row, self._column, self._deterministic, self._denoised_return
            )
        return render_rgb(self._size, self._row, self._column)


class DeepSeaVectorEnv(_DeepSeaParameters, InstanceVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent DeepSea envs of one size, stepped together (numpy, no loops).

    Sub-env ``i`` behaves exactly like a :class:`DeepSeaEnv` with the same arguments reset
    with seed ``seed + i``. Spaces are batched; autoreset is ``SAME_STEP`` (never a new
    mapping); the infos are ``(num_envs,)`` arrays (``is_success`` masked by ``terminated``).
    ``mapping_seed`` may be None, an int for every sub-env or ``num_envs`` ints;
    ``num_envs * size**2`` is at most :data:`MAX_DEEP_SEA_CELLS`.

    >>> envs = DeepSeaVectorEnv(num_envs=2, size=2, mapping_seed=[0, 1])
    >>> obs, infos = envs.reset(seed=0)
    >>> envs.action_mapping[1]
    array([[0, 1],
           [0, 0]])
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([1, 0]))
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([1, 1]))
    >>> rewards, terminated, infos["bad_episode"]  # sub-env 1 took "left" on the diagonal
    (array([0.995, 0.   ]), array([ True,  True]), array([False,  True]))
    >>> infos["final_info"]["denoised_return"], infos["is_success"]
    (array([ 0.99 , -0.005]), array([ True, False]))
    """

    metadata = {**_METADATA, **InstanceVectorEnv.metadata}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int,
        size: int = DEFAULT_DEEP_SEA_SIZE,
        deterministic: bool = True,
        unscaled_move_cost: float = DEFAULT_UNSCALED_MOVE_COST,
        randomize_actions: bool = True,
        mapping_seed: int | list[int] | tuple[int, ...] | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        self._set_parameters(
            size, deterministic, unscaled_move_cost, randomize_actions, render_mode, self.num_envs
        )
        n, m = self._size, self.num_envs
        seeds = self._init_mapping(mapping_seed, m)
        set_vector_spaces(
            self, spaces.Discrete(2), spaces.Box(0.0, 1.0, shape=(n, n), dtype=np.float32)
        )
        self._mapping_seeds: list[int | None] = [None] * m if seeds is None else list(seeds)
        self._init_generators()
        self._idx = np.arange(m)
        self._row = np.zeros(m, dtype=np.int64)
        self._column = np.zeros(m, dtype=np.int64)
        self._bad = np.zeros(m, dtype=np.bool_)
        self._found = np.zeros(m, dtype=np.bool_)
        self._denoised_return = np.zeros(m, dtype=np.float64)

    @property
    def mapping_seed(self) -> tuple[int | None, ...]:
        """Each sub-env's mapping seed (given or drawn); None entries if not randomized."""
        if self._randomize_actions:
            self._require_mapping()
        return tuple(self._mapping_seeds)

    @property
    def position(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Copies of the current rows and columns, each of shape ``(num_envs,)``."""
        return self._row.copy(), self._column.copy()

    def expected_return(self, action_one_probs: ArrayLike) -> NDArray[np.float64]:
        """Exact expected returns ``(num_envs,)`` of one policy per sub-env (``(num_envs, N, N)``
        probabilities of action 1, or ``(num_envs, N)`` action sequences)."""
        mapping = self._require_mapping()
        probs = check_finite_array(action_one_probs, "action_one_probs")
        if probs.ndim == 0 or probs.shape[0] != self.num_envs:
            raise ValueError(
                f"action_one_probs must have num_envs={self.num_envs} rows, got {probs.shape}"
            )
        return np.array([self._expected_return(mapping[i], probs[i]) for i in range(self.num_envs)])

    def _observations(self) -> NDArray[np.float32]:
        n = self._size
        obs = np.zeros((self.num_envs, n, n), dtype=np.float32)
        live = self._row < n
        obs[self._idx[live], self._row[live], self._column[live]] = 1.0
        return obs

    def _allocate_instances(self) -> None:
        self._mapping = np.empty((self.num_envs, self._size, self._size), dtype=np.int64)

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        mapping = self._require_mapping()
        for j in np.flatnonzero(resample).tolist():
            drawn = draw_mapping_seed(self._rng(j))
            self._mapping_seeds[j] = drawn
            mapping[j] = bsuite_mapping(drawn, self._size)

    def _start_episodes(self, which: NDArray[np.bool_] | slice = slice(None)) -> None:
        self._row[which] = 0
        self._column[which] = 0
        self._bad[which] = False
        self._found[which] = False
        self._denoised_return[which] = 0.0

    def step(self, actions: Any) -> VectorStep:
        """Move every sub-env one row down; finished sub-envs are reset in this same step."""
        self._require_reset()
        mapping = self._require_mapping()
        acts = check_action_batch(actions, self.num_envs, 2, "actions")
        n, m = self._size, self.num_envs
        row, column = self._row, self._column
        right = acts == mapping[self._idx, row, column]

        # bsuite's order per sub-env: treasure, noise, then the move and its cost. Only the
        # stochastic variant draws, in sub-env order, exactly what the single env draws.
        rewards = np.zeros(m, dtype=np.float64)
        denoised = np.zeros(m, dtype=np.float64)
        treasure = right & (column == n - 1)
        rewards[treasure] += 1.0
        denoised[treasure] += 1.0
        self._found |= treasure
        if self._deterministic:
            moved = right
        else:
            noisy = (row == n - 1) & ((column == 0) | (column == n - 1))
            moved = np.zeros(m, dtype=np.bool_)
            rngs = cast("list[np.random.Generator]", self._rngs)  # all made by reset()
            for i in np.flatnonzero(noisy | right).tolist():
                if noisy[i]:
                    rewards[i] += float(rngs[i].standard_normal())
                if right[i]:
                    moved[i] = rngs[i].random() > 1 / n
        rewards[right] -= self._move_cost
        denoised[right] -= self._move_cost
        self._bad |= ~right & (row == column)
        self._column = np.where(
            right, np.where(moved, np.minimum(column + 1, n - 1), column), np.maximum(column - 1, 0)
        )
        self._row = row + 1
        self._denoised_return += denoised

        terminated = self._row == n
        step_info = {
            "optimal_return": np.full(m, self._optimal_return),
            "bad_episode": self._bad.copy(),
            "denoised_reward": denoised,
            "denoised_return": self._denoised_return.copy(),
        }
        final_obs = None  # built only on a step where some sub-env terminated
        if terminated.any():
            final_obs = np.full(m, None, dtype=object)
            for i in np.flatnonzero(terminated).tolist():
                final_obs[i] = np.zeros((n, n), dtype=np.float32)
        success = {"is_success": self._found & terminated}
        infos = vector_step_infos(step_info, terminated, final_obs, success)
        self._start_episodes(terminated)  # SAME_STEP autoreset; the mapping is kept
        return self._observations(), rewards, terminated, np.zeros(m, dtype=np.bool_), infos

    def _frames(self) -> tuple[str, ...] | tuple[NDArray[np.uint8], ...]:
        rows, cols = self._row.tolist(), self._column.tolist()
        if self.render_mode == "ansi":
            return tuple(
                render_text(self._size, r, c, self._deterministic, float(d))
                for r, c, d in zip(rows, cols, self._denoised_return, strict=True)
            )
        return tuple(render_rgb(self._size, r, c) for r, c in zip(rows, cols, strict=True))
