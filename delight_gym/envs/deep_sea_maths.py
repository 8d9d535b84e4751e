"""DeepSea's maths apart from the env classes: the size limit, bsuite 0.3.6's action mapping,
the optimal and exact expected returns, and the observation and the frames."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import (
    check_binary,
    check_finite_array,
    check_flag,
    check_nonnegative_float,
    check_positive_int,
    check_unit_interval_array,
)

__all__ = [
    "DEFAULT_DEEP_SEA_SIZE",
    "DEFAULT_UNSCALED_MOVE_COST",
    "MAX_DEEP_SEA_CELLS",
    "MAX_DEEP_SEA_SIZE",
    "MAX_MAPPING_SEED",
    "bsuite_mapping",
    "check_deep_sea_size",
    "check_mapping_seed",
    "deep_sea_expected_return",
    "deep_sea_optimal_return",
    "draw_mapping_seed",
    "one_hot",
    "render_rgb",
    "render_text",
]

#: Grid size ``N`` used when ``size`` is not given (the smallest size of bsuite's sweep).
DEFAULT_DEEP_SEA_SIZE = 10
#: bsuite's default ``unscaled_move_cost``: each "right" costs ``0.01 / N``.
DEFAULT_UNSCALED_MOVE_COST = 0.01
#: The most grid cells one env (``N**2``) or one vector env (``num_envs * N**2``) may hold:
#: the mapping (int64) and observations (float32) are ``N x N``, about 0.2 GiB at ``2**24``.
MAX_DEEP_SEA_CELLS = 2**24
#: The largest ``size`` a single env accepts (4096; bsuite's sweep stops at 50).
MAX_DEEP_SEA_SIZE = math.isqrt(MAX_DEEP_SEA_CELLS)

#: The largest mapping seed: ``numpy.random.RandomState`` accepts seeds in ``[0, 2**32 - 1]``.
MAX_MAPPING_SEED = 2**32 - 1

# Colours of the rgb_array frame.
_SEA = np.array([16, 40, 96], dtype=np.uint8)
_DIAGONAL = np.array([40, 72, 140], dtype=np.uint8)
_TREASURE = np.array([255, 200, 0], dtype=np.uint8)
_AGENT = np.array([255, 255, 255], dtype=np.uint8)


def check_deep_sea_size(value: Any, name: str = "size", num_envs: int = 1) -> int:
    """``value`` as an int ``>= 1`` with ``num_envs * value**2 <= MAX_DEEP_SEA_CELLS``; an
    error naming ``name`` otherwise (the command line checks ``--size`` with it up front)."""
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


def check_mapping_seed(value: Any, name: str = "mapping_seed") -> int:
    """``value`` as an int in ``[0, MAX_MAPPING_SEED]``; an error naming ``name`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be None or an integer, got {value!r}")
    if not 0 <= value <= MAX_MAPPING_SEED:
        raise ValueError(f"{name} must lie in [0, 2**32 - 1] (numpy RandomState's range)")
    return int(value)


def bsuite_mapping(mapping_seed: int, size: int) -> NDArray[np.int64]:
    """bsuite's mapping: ``RandomState(mapping_seed).binomial(1, 0.5, [size, size])``."""
    mapping = np.random.RandomState(mapping_seed).binomial(1, 0.5, [size, size])
    return np.asarray(mapping, dtype=np.int64)


def draw_mapping_seed(rng: np.random.Generator) -> int:
    """A mapping seed drawn from the env's generator (one ``integers`` draw)."""
    return int(rng.integers(0, MAX_MAPPING_SEED + 1))


def deep_sea_optimal_return(
    size: int,
    deterministic: bool = True,
    unscaled_move_cost: float = DEFAULT_UNSCALED_MOVE_COST,
) -> float:
    """bsuite's ``_optimal_return``: ``1 - cost`` or ``(1 - 1/N)**(N - 1) - cost``, the
    expected return of always going "right" (stochastic: ``N - 1`` moves must succeed)."""
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
    """Exact expected (denoised) return of a Markov policy in one DeepSea instance, by forward
    dynamic programming over the column's distribution in each row.

    Parameters
    ----------
    action_mapping : ArrayLike
        ``(N, N)`` 0/1; entry ``[row, column]`` is the action that means "right" there.
    action_one_probs : ArrayLike
        ``(N, N)`` probabilities of action ``1`` per cell, or ``(N,)`` 0/1, an open-loop
        action sequence (action ``actions[t]`` at step ``t`` whatever the column).
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
    check_binary(mapping, "action_mapping")
    n = mapping.shape[0]
    probs = check_finite_array(action_one_probs, "action_one_probs")
    if probs.shape == (n,):
        check_binary(probs, "action_one_probs as an action sequence (shape (N,))")
        probs = np.repeat(probs[:, None], n, axis=1)
    if probs.shape != (n, n):
        raise ValueError(
            f"action_one_probs must have shape (N, N) = ({n}, {n}) or (N,), got {probs.shape}"
        )
    check_unit_interval_array(probs, "action_one_probs")
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


def one_hot(size: int, row: int, column: int) -> NDArray[np.float32]:
    """The ``(size, size)`` one-hot observation of ``(row, column)``."""
    obs = np.zeros((size, size), dtype=np.float32)
    if row < size:  # bsuite's end-of-episode observation is all zeros
        obs[row, column] = 1.0
    return obs


def render_text(
    size: int, row: int, column: int, deterministic: bool, denoised_return: float
) -> str:
    """The ``"ansi"`` frame: a header line, then the grid (``@`` the agent, ``$`` the treasure)."""
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


def render_rgb(size: int, row: int, column: int) -> NDArray[np.uint8]:
    """The ``"rgb_array"`` frame: the grid as an RGB image, about 128 pixels a side."""
    cell = max(2, 128 // size)
    grid = np.empty((size, size, 3), dtype=np.uint8)
    grid[:] = _SEA
    grid[np.arange(size), np.arange(size)] = _DIAGONAL
    grid[size - 1, size - 1] = _TREASURE
    if row < size:
        grid[row, column] = _AGENT
    return np.repeat(np.repeat(grid, cell, axis=0), cell, axis=1)
