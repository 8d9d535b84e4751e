"""DeepSea, exactly as bsuite 0.3.6's ``deep_sea``: a single Gymnasium env and a vector form.

bsuite's DeepSea (Osband et al., "Deep Exploration via Randomized Value Functions"; bsuite's
``bsuite/environments/deep_sea.py``) is an ``N x N`` grid that the agent falls through one row
per step. Moving "right" costs ``0.01 / N``; moving "right" in the last column is worth
``+1``. Which of the two actions means "right" is drawn at random per cell, so no policy that
ignores the state can find the treasure. Step order, reward arithmetic and random draws follow
bsuite's source statement by statement, so that for the same size, mapping seed and action
sequence the observations, rewards and terminations are identical (the tests compare them with
a transcription of bsuite's code and, when it is installed, with bsuite itself).

The *instance* is the action mapping. With ``mapping_seed`` given it is bsuite's
(``numpy.random.RandomState(mapping_seed).binomial(1, 0.5, (N, N))``); without it a mapping
seed is drawn from the env's own generator at the first :meth:`~DeepSeaEnv.reset` and kept for
the env's life (``reset(options={"resample": True})`` draws a new one).
"""

from __future__ import annotations

import math
from typing import Any, Generic, TypeVar, cast, overload

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
    check_render_mode,
    read_only_copy,
    set_vector_spaces,
    vector_step_infos,
    warn_no_render_mode,
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

#: Grid size ``N`` used when ``size`` is not given (the smallest size of bsuite's sweep).
DEFAULT_DEEP_SEA_SIZE = 10
#: bsuite's default ``unscaled_move_cost``: each "right" costs ``0.01 / N``.
DEFAULT_UNSCALED_MOVE_COST = 0.01
#: The most grid cells one env (``N**2``) or one vector env (``num_envs * N**2``) may hold.
#: DeepSea materialises ``N x N`` arrays: the action mapping (int64, 8 bytes a cell, drawn
#: whole as bsuite draws it), the observation space's bounds and every observation (float32,
#: 4 bytes a cell each), so ``2**24`` cells cost about 0.2 GiB per env before any step.
MAX_DEEP_SEA_CELLS = 2**24
#: The largest ``size`` a single env accepts: ``isqrt(MAX_DEEP_SEA_CELLS)`` = 4096 (bsuite's
#: sweep stops at 50).
MAX_DEEP_SEA_SIZE = math.isqrt(MAX_DEEP_SEA_CELLS)

_MAX_MAPPING_SEED = 2**32 - 1  # numpy.random.RandomState accepts seeds in [0, 2**32 - 1]

# Colours of the rgb_array frame.
_SEA = np.array([16, 40, 96], dtype=np.uint8)
_DIAGONAL = np.array([40, 72, 140], dtype=np.uint8)
_TREASURE = np.array([255, 200, 0], dtype=np.uint8)
_AGENT = np.array([255, 255, 255], dtype=np.uint8)


# ------------------------------------------------------------------------- helpers
def check_deep_sea_size(value: Any, name: str = "size", num_envs: int = 1) -> int:
    """``value`` as an int ``>= 1`` with ``num_envs * value**2`` at most
    :data:`MAX_DEEP_SEA_CELLS` (what the envs accept); a ``ValueError``/``TypeError`` naming
    ``name`` otherwise (the command line checks its ``--size`` with it up front)."""
    n = check_positive_int(value, name)
    cells = num_envs * n * n
    if cells > MAX_DEEP_SEA_CELLS:
        largest = math.isqrt(MAX_DEEP_SEA_CELLS // num_envs)
        envs = "" if num_envs == 1 else f" for num_envs={num_envs}"
        raise ValueError(
            f"{name}={n} is too large: DeepSea holds N x N arrays (the action mapping and every "
            f"observation), {cells} cells in all, more than MAX_DEEP_SEA_CELLS = "
            f"{MAX_DEEP_SEA_CELLS}; {name} must be <= {largest}{envs}"
        )
    return n


def _check_mapping_seed(value: Any, name: str = "mapping_seed") -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be None or an integer, got {value!r}")
    if not 0 <= value <= _MAX_MAPPING_SEED:
        raise ValueError(f"{name} must lie in [0, 2**32 - 1] (numpy RandomState's range)")
    return int(value)


def _bsuite_mapping(mapping_seed: int, size: int) -> NDArray[np.int64]:
    """bsuite's mapping: ``RandomState(mapping_seed).binomial(1, 0.5, [size, size])``."""
    mapping = np.random.RandomState(mapping_seed).binomial(1, 0.5, [size, size])
    return np.asarray(mapping, dtype=np.int64)


def _draw_mapping_seed(rng: np.random.Generator) -> int:
    """A mapping seed drawn from the env's generator (one ``integers`` draw)."""
    return int(rng.integers(0, _MAX_MAPPING_SEED + 1))


def deep_sea_optimal_return(
    size: int,
    deterministic: bool = True,
    unscaled_move_cost: float = DEFAULT_UNSCALED_MOVE_COST,
) -> float:
    """bsuite's ``_optimal_return``: ``1 - cost`` or ``(1 - 1/N)**(N - 1) - cost``.

    It is the expected return of always going "right" (``N`` moves, each costing
    ``unscaled_move_cost / N``), which is optimal; in the stochastic variant the ``N - 1``
    moves before the last row must all succeed, each with probability ``1 - 1/N``.
    """
    n = check_positive_int(size, "size")
    det = check_flag(deterministic, "deterministic")
    cost = check_nonnegative_float(unscaled_move_cost, "unscaled_move_cost")
    optimal_no_cost = 1.0 if det else (1 - 1 / n) ** (n - 1)
    return optimal_no_cost - cost


def deep_sea_expected_return(
    action_mapping: ArrayLike,
    action_one_probs: ArrayLike,
    *,
    deterministic: bool = True,
    unscaled_move_cost: float = DEFAULT_UNSCALED_MOVE_COST,
) -> float:
    """Exact expected (noise-free) return of a Markov policy in one DeepSea instance.

    Forward dynamic programming over the distribution of the column in each row; the
    ``N(0, 1)`` reward noise of the stochastic variant has mean zero and is left out, so the
    result is also the expected *denoised* return.

    Parameters
    ----------
    action_mapping : ArrayLike
        ``(N, N)`` array of 0/1; entry ``[row, column]`` is the action that
        means "right" in that cell (:attr:`DeepSeaEnv.action_mapping`).
    action_one_probs : ArrayLike
        ``(N, N)`` array, the probability of taking action ``1`` in each
        cell (0/1 entries for a deterministic policy), or ``(N,)``, an open-loop action
        sequence (action ``actions[t]`` at step ``t`` whatever the column; 0/1 entries).
    deterministic : bool
        the variant (``False``: "right" succeeds with probability ``1 - 1/N``).
    unscaled_move_cost : float
        each "right" costs ``unscaled_move_cost / N``.

    Returns
    -------
    float
        The expected return of one episode.
    """
    mapping = check_finite_array(action_mapping, "action_mapping")
    if mapping.ndim != 2 or mapping.shape[0] != mapping.shape[1] or mapping.size == 0:
        raise ValueError(f"action_mapping must have shape (N, N), got {mapping.shape}")
    if not np.all((mapping == 0) | (mapping == 1)):
        raise ValueError("action_mapping must hold only 0 and 1")
    n = mapping.shape[0]
    probs = check_finite_array(action_one_probs, "action_one_probs")
    if probs.shape == (n,):
        if not np.all((probs == 0) | (probs == 1)):
            raise ValueError("action_one_probs as an action sequence (shape (N,)) must be 0/1")
        probs = np.repeat(probs[:, None], n, axis=1)
    if probs.shape != (n, n):
        raise ValueError(
            f"action_one_probs must have shape (N, N) = ({n}, {n}) or (N,), got {probs.shape}"
        )
    if probs.min() < 0 or probs.max() > 1:
        raise ValueError("action_one_probs must lie in [0, 1]")
    det = check_flag(deterministic, "deterministic")
    move_cost = check_nonnegative_float(unscaled_move_cost, "unscaled_move_cost") / n
    success = 1.0 if det else 1.0 - 1.0 / n
    # P("right" | cell): the chosen action equals the cell's "right" action.
    p_right = np.where(mapping == 1, probs, 1.0 - probs)
    dist = np.zeros(n)
    dist[0] = 1.0
    total = 0.0
    for row in range(n):
        right = dist * p_right[row]
        left = dist - right
        total += right[n - 1] - move_cost * right.sum()
        nxt = np.zeros(n)
        nxt[1:] += success * right[:-1]  # a successful right moves one column on ...
        nxt[n - 1] += success * right[n - 1]  # ... except in the last column (clipped)
        nxt += (1.0 - success) * right  # a failed right stays
        nxt[:-1] += left[1:]  # left moves one column back ...
        nxt[0] += left[0]  # ... except in column 0 (clipped)
        dist = nxt
    return float(total)


def _one_hot(size: int, row: int, column: int) -> NDArray[np.float32]:
    obs = np.zeros((size, size), dtype=np.float32)
    if row < size:  # bsuite's end-of-episode observation is all zeros
        obs[row, column] = 1.0
    return obs


def _render_text(
    size: int, row: int, column: int, deterministic: bool, denoised_return: float
) -> str:
    variant = "deterministic" if deterministic else "stochastic"
    if row >= size:
        head = f"DeepSea N={size} ({variant}): episode over in column {column}"
    else:
        head = f"DeepSea N={size} ({variant}): row {row}, column {column}"
    lines = [f"{head}; denoised return so far {denoised_return:.3f}"]
    for r in range(size):
        chars = ["."] * size
        if r == size - 1:
            chars[size - 1] = "$"
        if r == row:
            chars[column] = "@"
        lines.append("".join(chars))
    return "\n".join(lines)


def _render_rgb(size: int, row: int, column: int) -> NDArray[np.uint8]:
    cell = max(2, 128 // size)
    grid = np.empty((size, size, 3), dtype=np.uint8)
    grid[:] = _SEA
    grid[np.arange(size), np.arange(size)] = _DIAGONAL
    grid[size - 1, size - 1] = _TREASURE
    if row < size:
        grid[row, column] = _AGENT
    return np.repeat(np.repeat(grid, cell, axis=0), cell, axis=1)


# ------------------------------------------------------------------------ single env
T = TypeVar("T")
_METADATA: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}


class _ReadOnly(Generic[T]):
    """A read-only public attribute of the DeepSea envs, ``env.<name>``, holding
    ``env._<name>`` (set once by ``_set_parameters``); assigning to it raises
    ``AttributeError`` as a property without a setter does."""

    def __init__(self) -> None:
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> _ReadOnly[T]: ...
    @overload
    def __get__(self, obj: object, objtype: type | None = None) -> T: ...
    def __get__(self, obj: object, objtype: type | None = None) -> T | _ReadOnly[T]:
        if obj is None:
            return self
        return cast("T", getattr(obj, f"_{self.name}"))

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(
            f"property {self.name!r} of {type(obj).__name__!r} object has no setter"
        )


class _DeepSeaParameters:
    """The parameters shared by :class:`DeepSeaEnv` and :class:`DeepSeaVectorEnv`: checked
    once, each a read-only attribute."""

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
        if self._mapping is None:
            raise ResetNeeded("the action mapping is drawn at the first reset(); call reset()")
        return self._mapping

    def _has_instance(self) -> bool:
        return self._mapping is not None

    def _given_mapping_seeds(self, mapping_seed: Any, num_envs: int | None) -> list[int] | None:
        """``mapping_seed`` checked: None, or one seed per env (``num_envs`` None: a single
        env, which takes an int only; else an int for all or a sequence of ``num_envs``)."""
        if mapping_seed is None:
            return None
        if not self._randomize_actions:
            raise ValueError("mapping_seed must be None when randomize_actions=False")
        if num_envs is None:
            return [_check_mapping_seed(mapping_seed)]
        if isinstance(mapping_seed, (list, tuple)):
            if len(mapping_seed) != num_envs:
                raise ValueError(
                    f"mapping_seed as a sequence must have num_envs={num_envs} entries, "
                    f"got {len(mapping_seed)}"
                )
            return [
                _check_mapping_seed(s, f"mapping_seed[{i}]") for i, s in enumerate(mapping_seed)
            ]
        return [_check_mapping_seed(mapping_seed)] * num_envs

    def _fixed_reason(self, mapping_seed_given: bool) -> str | None:
        """Why ``resample`` is refused (None if the mapping is drawn)."""
        if mapping_seed_given or not self._randomize_actions:
            return (
                "the action mapping is fixed (mapping_seed was given, or randomize_actions=False)"
            )
        return None

    @property
    def action_mapping(self) -> NDArray[np.int64]:
        """Read-only copy of the mapping: ``(N, N)``, or ``(num_envs, N, N)`` in the vector
        env; entry ``[row, column]`` is the action that means "right" there.

        Raises ``ResetNeeded`` while the mapping is still to be drawn (before the first reset
        when ``mapping_seed`` is None).
        """
        return read_only_copy(self._require_mapping())

    size = _ReadOnly[int]()
    """``N``, the grid's side and the episode length."""
    deterministic = _ReadOnly[bool]()
    """True for the deterministic variant, False for the stochastic one."""
    unscaled_move_cost = _ReadOnly[float]()
    """bsuite's ``unscaled_move_cost``; each "right" costs it ``/ N``."""
    move_cost = _ReadOnly[float]()
    """The cost of one "right": ``unscaled_move_cost / N``."""
    randomize_actions = _ReadOnly[bool]()
    """False in bsuite's debugging mode (action 1 is "right" everywhere)."""
    optimal_return = _ReadOnly[float]()
    """bsuite's optimal (expected) return: ``1 − c`` or ``(1 − 1/N)**(N − 1) − c``."""


class DeepSeaEnv(_DeepSeaParameters, InstanceEnv[NDArray[np.float32]]):
    """bsuite's DeepSea: fall through an ``N x N`` grid and find the treasure at the far right.

    ## Description

    The agent starts in the top-left cell ``(row, column) = (0, 0)``. Every step the row goes
    down by one and the agent moves "left" (column − 1, clipped at 0) or "right" (column + 1,
    clipped at ``N − 1``). Taking "right" in the last column pays ``+1``; every "right" costs
    ``unscaled_move_cost / N``. The only way to the treasure is "right" ``N`` times in a row,
    return ``1 − unscaled_move_cost`` (0.99 by default); everything else returns at most 0.
    This is bsuite 0.3.6's ``deep_sea`` (same step order, arithmetic and random draws).

    ## Action Space

    ``Discrete(2)``. Which action means "right" is fixed per cell by the action mapping:
    action ``a`` is "right" in ``(row, column)`` iff ``a == action_mapping[row, column]``
    (bsuite's rule). With ``randomize_actions=False`` action 1 is "right" everywhere. An
    action outside ``{0, 1}`` (also a bool or a float) raises a ``ValueError`` naming
    ``action``.

    ## Observation Space

    ``Box(0, 1, (N, N), float32)``: one-hot of ``(row, column)``; all zeros after the last
    step (bsuite's "null observation").

    ## Rewards

    In bsuite's order: ``reward = 0.0``; ``+= 1.0`` if the action is "right" and the column
    (before the move) is ``N − 1``; stochastic variant only: ``+= N(0, 1)`` noise
    (``self.np_random.standard_normal()``) for any action in the bottom-row cells
    ``(N − 1, 0)`` and ``(N − 1, N − 1)``; then ``-= unscaled_move_cost / N`` for every
    "right" (a failed one included).

    ## Transitions

    Deterministic variant: "right" always moves. Stochastic variant
    (``deterministic=False``, also registered as ``DeepSeaStochastic-v0``): "right" moves
    only if ``self.np_random.random() > 1 / N`` (probability ``1 − 1/N``; drawn after the
    noise, only when the action is "right"), else the column stays. "Left" always moves.

    ## Episode End

    ``terminated=True`` after exactly ``N`` steps; never truncated (no
    ``max_episode_steps``). Calling :meth:`step` after the episode terminated, or before the
    first :meth:`reset`, raises ``gymnasium.error.ResetNeeded`` (bsuite would silently
    restart instead; Gymnasium's API leaves this undefined and we refuse it).

    ## Information

    :meth:`step` returns ``info`` with

    - ``"optimal_return"`` (float): :attr:`optimal_return`;
    - ``"bad_episode"`` (bool): the episode has gone "bad": some step took "left" while on
      the diagonal (``row == column``, including ``(0, 0)``) — bsuite's ``_bad_episode``.
      In the deterministic variant a finished episode is bad iff it missed the treasure;
    - ``"denoised_reward"`` (float): this step's reward without the ``N(0, 1)`` noise
      (equal to the reward in the deterministic variant);
    - ``"denoised_return"`` (float): the sum of ``denoised_reward`` over the episode so far.
      (bsuite's ``denoised_return`` counts treasures over the env's life instead.)
    - ``"is_success"`` (bool), on the terminal step only: the episode found the treasure,
      i.e. it took "right" in the bottom-right cell ``(N − 1, N − 1)`` and was paid the
      ``+1`` (bsuite's treasure: the ``+1`` it adds to ``denoised_return``). SB3's
      ``Monitor`` passes it on and SB3's logger reports ``rollout/success_rate`` from it. In
      the deterministic variant ``is_success == not bad_episode``. In the stochastic variant
      it means exactly the same (the ``+1`` was paid; the ``N(0, 1)`` noise does not enter,
      and the last "right" pays the ``+1`` whether or not its own move then fails), but it is
      not ``not bad_episode``: a failed "right" knocks the agent off the diagonal without
      making the episode bad, so an episode can be neither bad nor a success. A successful
      episode is never bad in either variant.

    A finished episode's ``optimal_return - info["denoised_return"]`` is its regret: exact in
    the deterministic variant, an unbiased estimate of the played policy's expected regret in
    the stochastic one. :meth:`expected_return` gives the exact expected return of a policy.

    :attr:`optimal_return` is bsuite's number, the expected return of always going "right".
    In the deterministic variant it is the optimum. In the stochastic variant it is not quite:
    once a failed move has put the treasure out of reach, "left" saves the move cost, so the
    true optimum is higher by less than ``unscaled_move_cost`` (e.g. 0.3919 vs 0.3952 at
    ``N = 6``), and a good episode's regret against bsuite's number can be slightly negative.
    :meth:`reset` returns an empty ``info``.

    Bad arguments raise ``TypeError`` (wrong type) or ``ValueError`` (bad value) naming the
    argument.

    ## Version History

    - v0: initial version (delight_gym 0.1.0), faithful to bsuite 0.3.6. Later additions
      that change no observation, reward or termination: ``info["is_success"]`` on the
      terminal step, and the ``size`` limit (:data:`MAX_DEEP_SEA_SIZE`).

    Parameters
    ----------
    size : int
        int in ``[1, MAX_DEEP_SEA_SIZE]`` = ``[1, 4096]``, default 10: ``N``. The env holds ``N x
        N`` arrays (the action mapping, drawn whole as bsuite draws it, and every observation), so a
        larger ``size`` is refused with a ``ValueError`` naming it instead of failing later with a
        ``MemoryError``.
    deterministic : bool
        bool, default True: the variant.
    unscaled_move_cost : float
        float >= 0, default 0.01: "right" costs this ``/ N``.
    randomize_actions : bool
        bool, default True: False makes action 1 "right" everywhere (bsuite's debugging mode; then
        ``mapping_seed`` must be None).
    mapping_seed : int | None
        int in ``[0, 2**32 - 1]`` or None: fixes the mapping to bsuite's for that seed. None: a
        mapping seed is drawn as ``self.np_random.integers(0, 2**32)`` at the first :meth:`reset`
        and the mapping is made from it the bsuite way (so :attr:`mapping_seed` rebuilds the same
        instance in bsuite); it is kept for the env's life and redrawn on
        ``reset(options={"resample": True})`` (an error when the mapping is fixed).
    render_mode : str | None
        None, ``"ansi"`` or ``"rgb_array"``: ``"ansi"`` renders the grid as text (``@`` the agent,
        ``$`` the treasure cell), ``"rgb_array"`` as an RGB image.

    Examples
    --------
    >>> from delight_gym.envs import DeepSeaEnv
    >>> env = DeepSeaEnv(size=3, mapping_seed=42)
    >>> env.action_mapping
    array([[0, 1, 1],
           [1, 0, 0],
           [0, 1, 1]])
    >>> obs, info = env.reset(seed=0)
    >>> obs
    array([[1., 0., 0.],
           [0., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    >>> total = 0.0
    >>> for _ in range(3):  # always "right"
    ...     row, column = env.position
    ...     obs, reward, terminated, truncated, info = env.step(env.action_mapping[row, column])
    ...     total += reward
    >>> round(total, 6), terminated, info["bad_episode"], info["is_success"]
    (0.99, True, False, True)
    >>> round(env.optimal_return, 6)
    0.99

    With the ids registered (``import delight_gym``), ``gym.make("DeepSea-v0", size=20)``
    builds it, ``gym.make("DeepSeaStochastic-v0")`` the stochastic variant, and
    ``gym.make_vec("DeepSea-v0", num_envs=30)`` builds :class:`DeepSeaVectorEnv`.
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
        given = self._given_mapping_seeds(mapping_seed, None)
        n = self._size
        self.action_space = spaces.Discrete(2)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(n, n), dtype=np.float32)

        self._fixed_instance = self._fixed_reason(given is not None)
        self._mapping_seed: int | None = None if given is None else given[0]
        if given is not None:
            self._mapping = _bsuite_mapping(given[0], n)
        elif not self._randomize_actions:
            self._mapping = np.ones((n, n), dtype=np.int64)
        self._row = 0
        self._column = 0
        self._bad_episode = False
        self._found_treasure = False
        self._denoised_return = 0.0
        self._has_reset = False

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
        """Exact expected (denoised) return of a policy on this instance.

        ``action_one_probs``: ``(N, N)`` probabilities of action 1 per cell, or an ``(N,)``
        open-loop 0/1 action sequence; see :func:`deep_sea_expected_return`.
        """
        return deep_sea_expected_return(
            self._require_mapping(),
            action_one_probs,
            deterministic=self._deterministic,
            unscaled_move_cost=self._unscaled_move_cost,
        )

    # ----------------------------------------------------------------- Env API
    # reset() is InstanceEnv's: the seed also seeds the stochastic variant's noise and failed
    # moves; the mapping seed is drawn from self.np_random at the first reset or on resample.
    def _draw_instance(self) -> None:
        self._mapping_seed = _draw_mapping_seed(self.np_random)
        self._mapping = _bsuite_mapping(self._mapping_seed, self._size)

    def _start_episode(self) -> NDArray[np.float32]:
        self._row = 0
        self._column = 0
        self._bad_episode = False
        self._found_treasure = False
        self._denoised_return = 0.0
        return _one_hot(self._size, 0, 0)

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """One step down the grid; ``terminated`` after the ``N``-th step."""
        self._require_reset()
        n = self._size
        if self._row >= n:
            raise ResetNeeded("the episode has terminated; call reset() before step()")
        if isinstance(action, (bool, np.bool_)) or not self.action_space.contains(action):
            raise ValueError(
                f"action must be 0 or 1 (the action space Discrete(2)), got {action!r}"
            )
        mapping = self._require_mapping()
        row, column = self._row, self._column
        right = int(action) == mapping[row, column]

        # bsuite's order: treasure (column before the move), noise, then the move and its cost.
        reward = 0.0
        denoised = 0.0
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
        return _one_hot(n, self._row, column), reward, terminated, False, info

    def render(self) -> str | NDArray[np.uint8] | None:
        """``"ansi"``: the grid as text; ``"rgb_array"``: an RGB image; otherwise ``None``."""
        if self.render_mode is None:
            warn_no_render_mode(self)
            return None
        if self.render_mode == "ansi":
            return _render_text(
                self._size, self._row, self._column, self._deterministic, self._denoised_return
            )
        return _render_rgb(self._size, self._row, self._column)


# ------------------------------------------------------------------------ vector env
# Tuples per sub-env, as SyncVectorEnv returns them, where VectorEnv declares one generator.
class DeepSeaVectorEnv(_DeepSeaParameters, InstanceVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent DeepSea envs of one size, stepped together (numpy, no loops).

    Sub-env ``i`` behaves exactly like a :class:`DeepSeaEnv` with the same arguments reset
    with seed ``seed + i`` (Gymnasium's convention; a list of per-env seeds is accepted too):
    it owns a generator made as ``gymnasium.utils.seeding.np_random(seed_i)`` makes it, draws
    its mapping seed from it at the first reset and its noise and failed moves in the single
    env's order. Same seeds and actions give identical observations, rewards, terminations
    and infos.

    ## Spaces

    ``action_space = MultiDiscrete([2] * num_envs)``, ``observation_space = Box(0, 1,
    (num_envs, N, N), float32)``.

    ## Autoreset

    ``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``: a sub-env whose episode ends
    is reset inside that step (the autoreset never draws a new mapping), so the returned
    observation is the new episode's first one and every ``step`` is a real move. As
    ``SAME_STEP`` requires, ``infos`` then carry ``final_obs`` (object array, the terminal
    all-zero observations, ``None`` elsewhere) and ``final_info`` (the terminal step's infos,
    with ``_key`` masks) with masks ``_final_obs`` / ``_final_info`` = ``terminated``. The
    step's infos (``optimal_return``, ``bad_episode``, ``denoised_reward``,
    ``denoised_return``, float64/bool arrays of shape ``(num_envs,)``, masks all True) are
    also at the top level of ``infos`` for every sub-env, terminated or not; ``is_success``
    (bool, as in :class:`DeepSeaEnv`) is in ``final_info`` and at the top level, with mask
    ``terminated``, in the steps where some sub-env's episode ended.

    ``reset(options={"resample": ...})`` takes a bool (all sub-envs) or a bool array of shape
    ``(num_envs,)`` (those sub-envs). ``render()`` returns a tuple with one frame per sub-env.

    Parameters
    ----------
    num_envs : int
        int >= 1.
    size, deterministic, unscaled_move_cost, randomize_actions, render_mode
        as in :class:`DeepSeaEnv`, shared by all sub-envs; ``num_envs * size**2`` may be at most
        ``MAX_DEEP_SEA_CELLS`` (``2**24``).
    mapping_seed : int | list[int] | tuple[int, ...] | None
        None (each sub-env draws its own at the first reset), an int (every sub-env gets bsuite's
        mapping for it) or a sequence of ``num_envs`` ints.

    Examples
    --------
    >>> import numpy as np
    >>> from delight_gym.envs import DeepSeaVectorEnv
    >>> envs = DeepSeaVectorEnv(num_envs=2, size=2, mapping_seed=[0, 1])
    >>> obs, infos = envs.reset(seed=0)
    >>> envs.action_mapping
    array([[[1, 1],
            [1, 1]],
    <BLANKLINE>
           [[0, 1],
            [0, 0]]])
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([1, 0]))
    >>> rewards, terminated, infos["bad_episode"]
    (array([-0.005, -0.005]), array([False, False]), array([False, False]))
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([1, 1]))
    >>> rewards, terminated, infos["bad_episode"]  # sub-env 1 took "left" on the diagonal
    (array([0.995, 0.   ]), array([ True,  True]), array([False,  True]))
    >>> infos["final_info"]["denoised_return"], obs[:, 0, 0]  # SAME_STEP: new episodes
    (array([ 0.99 , -0.005]), array([1., 1.], dtype=float32))
    >>> infos["is_success"], infos["_is_success"]  # sub-env 0 found the treasure
    (array([ True, False]), array([ True,  True]))
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
        seeds = self._given_mapping_seeds(mapping_seed, m)

        set_vector_spaces(
            self, spaces.Discrete(2), spaces.Box(0.0, 1.0, shape=(n, n), dtype=np.float32)
        )

        self._fixed_instance = self._fixed_reason(seeds is not None)
        self._mapping_seeds: list[int | None] = [None] * m if seeds is None else list(seeds)
        if seeds is not None:
            self._mapping = np.stack([_bsuite_mapping(s, n) for s in seeds])
        elif not self._randomize_actions:
            self._mapping = np.ones((m, n, n), dtype=np.int64)
        self._init_generators()
        self._idx = np.arange(m)
        self._row = np.zeros(m, dtype=np.int64)
        self._column = np.zeros(m, dtype=np.int64)
        self._bad = np.zeros(m, dtype=np.bool_)
        self._found = np.zeros(m, dtype=np.bool_)
        self._denoised_return = np.zeros(m, dtype=np.float64)
        self._has_reset = False

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
        """Exact expected returns, shape ``(num_envs,)``, of one policy per sub-env.

        ``action_one_probs``: ``(num_envs, N, N)`` probabilities of action 1, or
        ``(num_envs, N)`` open-loop action sequences; see :func:`deep_sea_expected_return`.
        """
        mapping = self._require_mapping()
        probs = check_finite_array(action_one_probs, "action_one_probs")
        if probs.ndim == 0 or probs.shape[0] != self.num_envs:
            raise ValueError(
                f"action_one_probs must have num_envs={self.num_envs} rows, got {probs.shape}"
            )
        return np.array(
            [
                deep_sea_expected_return(
                    mapping[i],
                    probs[i],
                    deterministic=self._deterministic,
                    unscaled_move_cost=self._unscaled_move_cost,
                )
                for i in range(self.num_envs)
            ]
        )

    def _observations(self) -> NDArray[np.float32]:
        n = self._size
        obs = np.zeros((self.num_envs, n, n), dtype=np.float32)
        live = self._row < n
        obs[self._idx[live], self._row[live], self._column[live]] = 1.0
        return obs

    # --------------------------------------------------------------- VectorEnv API
    # reset() is InstanceVectorEnv's: sub-env j draws its mapping seed from its own generator.
    def _allocate_instances(self) -> None:
        self._mapping = np.empty((self.num_envs, self._size, self._size), dtype=np.int64)

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        mapping = self._require_mapping()
        for j in np.flatnonzero(resample).tolist():
            drawn = _draw_mapping_seed(self._rng(j))
            self._mapping_seeds[j] = drawn
            mapping[j] = _bsuite_mapping(drawn, self._size)

    def _start_episodes(self, which: NDArray[np.bool_] | slice = slice(None)) -> None:
        self._row[which] = 0
        self._column[which] = 0
        self._bad[which] = False
        self._found[which] = False
        self._denoised_return[which] = 0.0

    def step(
        self, actions: Any
    ) -> tuple[
        NDArray[np.float32],
        NDArray[np.float64],
        NDArray[np.bool_],
        NDArray[np.bool_],
        dict[str, Any],
    ]:
        """Move every sub-env one row down; finished sub-envs are reset in this same step."""
        self._require_reset()
        mapping = self._require_mapping()
        acts = check_action_batch(actions, self.num_envs, 2, "actions")
        n, m = self._size, self.num_envs
        row, column = self._row, self._column
        right = acts == mapping[self._idx, row, column]

        # bsuite's order per sub-env: treasure, noise, then the move and its cost.
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
        final_obs = None
        if terminated.any():
            final_obs = np.full(m, None, dtype=object)
            for i in np.flatnonzero(terminated).tolist():
                final_obs[i] = np.zeros((n, n), dtype=np.float32)
        success = {"is_success": self._found & terminated}
        infos = vector_step_infos(step_info, terminated, final_obs, success)
        self._start_episodes(terminated)  # SAME_STEP autoreset; the mapping is kept
        return self._observations(), rewards, terminated, np.zeros(m, dtype=np.bool_), infos

    def render(self) -> tuple[str, ...] | tuple[NDArray[np.uint8], ...] | None:
        """One frame per sub-env (text for ``"ansi"``, RGB for ``"rgb_array"``)."""
        if self.render_mode is None:
            warn_no_render_mode(self)
            return None
        rows, cols = self._row.tolist(), self._column.tolist()
        if self.render_mode == "ansi":
            return tuple(
                _render_text(self._size, r, c, self._deterministic, float(d))
                for r, c, d in zip(rows, cols, self._denoised_return, strict=True)
            )
        return tuple(_render_rgb(self._size, r, c) for r, c in zip(rows, cols, strict=True))
