"""Continuum-armed bandits: a narrow needle among broad bumps on ``[0, 1]^d``.

The mean reward of an action ``x ∈ [0, 1]^d`` is the maximum of isotropic Gaussian bumps,
``f(x) = max_j h_j exp(−‖x − c_j‖² / (2 w_j²))``: one needle (height 1, width
``needle_width``) and ``num_bumps`` broad bumps (heights ``U(0.3, 0.6)``, width
``bump_width``). Each bump is at most its height and equals it at its centre, so
``max f = max_j h_j``, exactly, at the highest bump's centre. The *instance* is the centres
and heights, drawn at the first reset and kept.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import (
    array_bytes,
    check_finite_array,
    check_magnitude,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_unit_interval_array,
    check_would_fit,
)
from delight_gym.envs._bandit import SUB_ENV_BYTES, BanditEnv, BanditKeywords, BanditVectorEnv
from delight_gym.envs._base import (
    VectorStep,
    check_agrees,
    instance_array,
    pull_info,
    read_only_copy,
    require_drawn,
    set_vector_spaces,
    vector_step_infos,
    zero_final_obs,
)

__all__ = [
    "BUMP_HEIGHT_RANGE",
    "CENTER_MARGIN",
    "DEFAULT_BUMP_WIDTH",
    "DEFAULT_CONTINUUM_DIM",
    "DEFAULT_NEEDLE_WIDTH",
    "DEFAULT_NOISE",
    "DEFAULT_NUM_BUMPS",
    "GRID_BUMP_WIDTH",
    "GRID_NEEDLE_WIDTH",
    "MAX_NOISE",
    "MAX_PLACEMENT_WORK",
    "NEEDLE_HEIGHT",
    "WIDTH_RANGE",
    "ContinuumBanditEnv",
    "ContinuumBanditVectorEnv",
    "basin_volume",
    "max_of_bumps",
]

#: Defaults of ``dim``, ``num_bumps``, ``bump_width`` and ``needle_width``.
DEFAULT_CONTINUUM_DIM = 2
DEFAULT_NUM_BUMPS = 5
DEFAULT_BUMP_WIDTH = 0.15
DEFAULT_NEEDLE_WIDTH = 0.03
#: The width-scaling grid's widths at d = 1 (the experiments scale them with √d) and the
#: reward noise's default standard deviation.
GRID_NEEDLE_WIDTH = 0.15
GRID_BUMP_WIDTH = 0.3
DEFAULT_NOISE = 0.1
#: Height of the needle; the broad bumps' heights are ``U(*BUMP_HEIGHT_RANGE)``.
NEEDLE_HEIGHT = 1.0
BUMP_HEIGHT_RANGE = (0.3, 0.6)
#: Drawn centres lie in ``[CENTER_MARGIN, 1 − CENTER_MARGIN]^d``.
CENTER_MARGIN = 0.1
#: Uniform candidates per broad bump in the best-candidate placement.
_CANDIDATES = 16
#: ``bump_width`` and ``needle_width`` lie in this range: ``w²`` and ``‖x − c‖²/w²`` stay finite
#: and normal in float64 (``1e-200`` would square to 0 and give NaN rewards).
WIDTH_RANGE = (1e-150, 1e150)
#: The largest ``noise``: ``noise·z`` and its square stay finite.
MAX_NOISE = 1e150
#: The most coordinates the drawn placement may compare, ``8·J(J + 1)·(d + 8)`` per env with
#: ``J = num_bumps`` (about 3 s: 3 500 bumps at ``d = 2``, 350 at ``d = 1000``), and the most
#: one ``mean_reward`` call may, ``n·(J + 1)·(d + 8)`` for ``n`` points (about 5 s).
MAX_PLACEMENT_WORK = 10**9
_LOG_MAX = math.log(np.finfo(np.float64).max)
_FIXED = "this env was built with fixed centers and heights"


def max_of_bumps(
    x: NDArray[np.float64],
    centers: NDArray[np.float64],
    heights: NDArray[np.float64],
    widths: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``f(x) = max_j h_j exp(−‖x − c_j‖² / (2 w_j²))``, broadcast over leading axes.

    ``x`` is ``(..., d)``, ``centers`` ``(..., J, d)`` (broadcast against ``x``'s leading
    axes), ``heights`` and ``widths`` ``(..., J)`` (``> 0``); the result is ``(...)``.
    """
    # Elementwise, summed over the last axis: a batched instance gives bit-identical values.
    sq = np.sum((x[..., None, :] - centers) ** 2, axis=-1)
    return np.max(heights * np.exp(-sq / (2.0 * widths**2)), axis=-1)


def basin_volume(width: float, dim: int, level: float) -> float:
    """Volume of ``{x ∈ R^d : exp(−‖x − c‖² / (2w²)) > level}``, a ball of radius
    ``r = w·√(2 log(1/level))``: ``π^{d/2} r^d / Γ(d/2 + 1)``.

    Parameters
    ----------
    width, dim : float, int
        ``w > 0`` and ``d ≥ 1``.
    level : float
        In ``(0, 1)``, the share of the bump's height.
    """
    w = check_positive_float(width, "width")
    d = check_positive_int(dim, "dim")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    radius = w * math.sqrt(2.0 * math.log(1.0 / float(level)))
    log_volume = 0.5 * d * math.log(math.pi) + d * math.log(radius) - math.lgamma(0.5 * d + 1)
    if log_volume > _LOG_MAX:
        raise ValueError(
            f"width={width}, dim={dim}: the volume e^{log_volume:.4g} overflows float64"
        )
    return math.exp(log_volume)


def _draw_instance(
    rng: np.random.Generator, num_bumps: int, dim: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Centres ``(J, d)`` and heights ``(J,)``, ``J = num_bumps + 1``, row 0 the needle.

    Draw order: the needle's centre, ``_CANDIDATES`` candidates per broad bump (one draw), the
    broad heights. Each bump takes the candidate farthest from the centres placed before it
    (Mitchell's best-candidate sampling).
    """
    lo, span = CENTER_MARGIN, 1.0 - 2.0 * CENTER_MARGIN
    centers = np.empty((num_bumps + 1, dim))
    centers[0] = lo + span * rng.random(dim)
    candidates = lo + span * rng.random((num_bumps, _CANDIDATES, dim))
    # Rounded to float32 so that the float32 action space holds every centre exactly.
    centers[0] = centers[0].astype(np.float32)
    candidates = candidates.astype(np.float32).astype(np.float64)
    for j in range(num_bumps):
        sq = np.sum((candidates[j][:, None, :] - centers[None, : j + 1]) ** 2, axis=-1)
        centers[j + 1] = candidates[j][np.argmax(sq.min(axis=1))]
    heights = np.empty(num_bumps + 1)
    heights[0] = NEEDLE_HEIGHT
    heights[1:] = rng.uniform(*BUMP_HEIGHT_RANGE, size=num_bumps)
    return centers, heights


def _check_box_actions(value: Any, shape: tuple[int, ...], name: str) -> NDArray[np.float64]:
    """``value`` as a new float64 array of ``shape`` in ``[0, 1]`` (refused, not clipped)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise ValueError(f"{name} must be an array of reals: {exc}") from None
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    out = arr.astype(np.float64)
    check_finite_array(out, name, shape=shape)
    bad = (out < 0.0) | (out > 1.0)
    if bad.any():
        where = np.argwhere(bad)[:5].tolist()
        raise ValueError(
            f"{name} must lie in [0, 1] (the action space; actions are not clipped); entries "
            f"{where} are outside, e.g. {out[bad][:5].tolist()}"
        )
    return out


def _check_width(value: Any, name: str) -> float:
    width = check_positive_float(value, name)
    low, high = WIDTH_RANGE
    if not low <= width <= high:
        raise ValueError(
            f"{name} must lie in [{low:g}, {high:g}] (so that its square stays finite and "
            f"nonzero), got {value}"
        )
    return width


def _instance_bytes(num_envs: int | None, num_bumps: int, dim: int, drawn: bool) -> dict[str, int]:
    """Bytes by name of an env's instance, spaces, steps and (``drawn``) placement."""
    n, j = num_envs or 1, num_bumps + 1
    parts = {
        "centers": array_bytes(n, j, dim),
        "a step's distances": 2 * array_bytes(n, j, dim),
        "heights and widths": array_bytes(n + 1, j),
        # float32 low and high and two bool masks per coordinate, single and batched, twice.
        "action spaces": array_bytes(n + 1, dim, itemsize=20),
    }
    if num_envs is not None:
        parts["sub-envs"] = SUB_ENV_BYTES * num_envs
    if drawn:
        # The float64 draw, its float32 rounding and float64 copy; one bump's distances.
        parts["placement candidates"] = array_bytes(num_bumps, _CANDIDATES, dim, itemsize=24)
        parts["placement distances"] = 2 * array_bytes(_CANDIDATES, j, dim)
    return parts


def _check_sizes(num_envs: int | None, num_bumps: int, dim: int, drawn: bool) -> None:
    """Refuse an env that would not fit in memory or whose placement is too much work."""
    what = f"dim={dim}, num_bumps={num_bumps}"
    if num_envs is not None:
        what = f"num_envs={num_envs}, {what}"
    check_would_fit(_instance_bytes(num_envs, num_bumps, dim, drawn), what)
    if drawn:  # each bump's 16 candidates are compared with every centre placed before it
        _check_work(
            (num_envs or 1) * 8 * num_bumps * (num_bumps + 1) * (dim + 8),
            f"{what}: placing the bumps compares "
            f"{'num_envs·' if num_envs else ''}8·num_bumps·(num_bumps + 1)·(dim + 8)",
            "use fewer bumps (or envs), or pass centers and heights",
        )


def _check_work(work: int, what: str, advice: str) -> None:
    if work > MAX_PLACEMENT_WORK:
        raise ValueError(
            f"{what} = {work:.3g} coordinates, more than MAX_PLACEMENT_WORK = "
            f"{MAX_PLACEMENT_WORK:.0e} (a few seconds); {advice}"
        )


class _ContinuumParameters(BanditKeywords):
    """The keywords shared by the single and vector continuum bandits, checked once."""

    family = "ContinuumBandit"
    dim: int
    num_bumps: int
    bump_width: float
    needle_width: float
    noise: float
    widths: NDArray[np.float64]
    _centers: NDArray[np.float64] | None
    _heights: NDArray[np.float64] | None

    def _has_instance(self) -> bool:
        return self._centers is not None

    def _instance(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        not_drawn = self._not_drawn
        return require_drawn(self._centers, not_drawn), require_drawn(self._heights, not_drawn)

    @property
    def centers(self) -> NDArray[np.float64]:
        """Bump centres ``(J, d)``, row 0 the needle (vector: ``(num_envs, J, d)``), read-only."""
        return read_only_copy(self._instance()[0])

    @property
    def heights(self) -> NDArray[np.float64]:
        """Bump heights ``(J,)`` (vector env ``(num_envs, J)``), read-only."""
        return read_only_copy(self._instance()[1])

    def _set_parameters(
        self,
        dim: Any,
        num_bumps: Any,
        bump_width: Any,
        needle_width: Any,
        noise: Any,
        centers: ArrayLike | None,
        heights: ArrayLike | None,
        render_mode: str | None,
        num_envs: int | None = None,
    ) -> None:
        """Check and store the keywords and the given ``centers`` and ``heights`` (or None)."""
        d = None if dim is None else check_positive_int(dim, "dim")
        k = None if num_bumps is None else check_nonnegative_int(num_bumps, "num_bumps")
        self.bump_width = _check_width(bump_width, "bump_width")
        self.needle_width = _check_width(needle_width, "needle_width")
        self.noise = check_nonnegative_float(noise, "noise")
        check_magnitude(
            self.noise, "noise", MAX_NOISE, why="so that the rewards and their squares stay finite"
        )
        self._set_render_mode(render_mode)
        fixed = None
        if (centers is None) != (heights is None):
            raise ValueError("centers and heights fix the instance together: pass both or neither")
        if centers is not None and heights is not None:
            c = instance_array(
                check_unit_interval_array(centers, "centers"), "centers", ("J", "dim"), num_envs
            )
            h = instance_array(check_finite_array(heights, "heights"), "heights", ("J",), num_envs)
            if h.min() <= 0.0:
                raise ValueError(f"heights must be > 0, got a minimum of {h.min()}")
            if h.shape[-1] != c.shape[-2]:
                raise ValueError(
                    f"heights has {h.shape[-1]} bumps but centers has {c.shape[-2]} (shape "
                    f"{c.shape}); they must agree"
                )
            for name, given, implied in (
                ("dim", d, c.shape[-1]),
                ("num_bumps", k, c.shape[-2] - 1),
            ):
                check_agrees(name, given, implied, f"centers of shape {c.shape}")
            d, k, fixed = c.shape[-1], c.shape[-2] - 1, (c, h)
        self.dim = DEFAULT_CONTINUUM_DIM if d is None else d
        self.num_bumps = DEFAULT_NUM_BUMPS if k is None else k
        _check_sizes(num_envs, self.num_bumps, self.dim, drawn=fixed is None)
        self.widths = np.full(self.num_bumps + 1, self.bump_width)
        self.widths[0] = self.needle_width
        self._fixed_instance = None if fixed is None else _FIXED
        self._centers, self._heights = (None, None) if fixed is None else fixed

    def _action_box(self) -> spaces.Space[Any]:
        box = spaces.Box(0.0, 1.0, shape=(self.dim,), dtype=np.float32)
        return cast("spaces.Space[Any]", box)

    def _summary(
        self, centers: NDArray[np.float64] | None, heights: NDArray[np.float64] | None, last: Any
    ) -> str:
        name = f"{self.family} d={self.dim} bumps={self.num_bumps + 1}"
        if centers is None or heights is None:
            return f"{name}: instance not drawn yet (call reset())"
        best = int(np.argmax(heights))
        text = f"{name}: best at {np.round(centers[best], 3).tolist()} (mean {heights[best]:.3f})"
        if last is None:
            return text + "; no pull yet"
        x, expected, reward = last
        return text + f"; last pull {np.round(x, 3).tolist()} (mean {expected:.3f}) -> {reward:.3f}"


class ContinuumBanditEnv(_ContinuumParameters, BanditEnv[np.int64]):
    """A continuum-armed bandit on ``[0, 1]^d``: a narrow needle among broad bumps.

    The instance (module docstring; row 0 the needle) is drawn at the first :meth:`reset`, kept
    until ``reset(options={"resample": True})``: the needle's centre ``U([0.1, 0.9]^d)``, each
    broad centre the farthest of 16 uniform candidates from those placed (float32 centres).

    ## Action Space
    ``Box(0, 1, (d,), float32)``; any real ``(d,)`` array in ``[0, 1]``, else a ``ValueError``.
    ## Observation Space
    ``Discrete(1)``: always ``0``.
    ## Rewards
    ``f(x) + noise·z``, ``z = self.np_random.standard_normal()``, one draw per step.
    ## Episode End
    One pull: ``terminated=True``; ``info`` has floats ``expected_reward`` (``f(x)``),
    ``optimal_expected_reward`` (``max_j h_j``) and ``regret``.
    ## Arguments
    ``dim`` (2), ``num_bumps`` (5, may be 0; drawn: up to :data:`MAX_PLACEMENT_WORK`),
    ``bump_width`` (0.15) and ``needle_width`` (0.03) in ``[1e-150, 1e150]``, ``noise`` (0.1)
    in ``[0, 1e150]``; ``centers`` ``(J, d)`` in ``[0, 1]`` and ``heights`` ``(J,)`` ``> 0`` fix
    the instance together; ``render_mode`` ``None`` or ``"ansi"``. Sizes that would not fit in
    memory are refused before anything is allocated.
    ## Version History
    - v0: initial version.

    Examples
    --------
    >>> env = ContinuumBanditEnv(dim=2, noise=0.0); _ = env.reset(seed=0)
    >>> env.step(env.optimal_action.astype("float32"))[1:4]
    (1.0, True, False)
    """

    def __init__(
        self,
        dim: int | None = None,
        num_bumps: int | None = None,
        bump_width: float = DEFAULT_BUMP_WIDTH,
        needle_width: float = DEFAULT_NEEDLE_WIDTH,
        noise: float = DEFAULT_NOISE,
        centers: ArrayLike | None = None,
        heights: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        self._set_parameters(
            dim, num_bumps, bump_width, needle_width, noise, centers, heights, render_mode
        )
        self.action_space = self._action_box()
        self.observation_space = spaces.Discrete(1)
        self._last: tuple[NDArray[np.float64], float, float] | None = None

    def _draw_instance(self) -> None:
        self._centers, self._heights = _draw_instance(self.np_random, self.num_bumps, self.dim)
        self._last = None

    def _start_episode(self) -> np.int64:
        return np.int64(0)

    @property
    def optimal_action(self) -> NDArray[np.float64]:
        """The maximiser ``c_{argmax h}``, ``(d,)`` (lowest row on ties)."""
        centers, heights = self._instance()
        return centers[int(np.argmax(heights))].copy()

    @property
    def optimal_expected_reward(self) -> float:
        """``max f = max_j h_j``."""
        return float(self._instance()[1].max())

    def mean_reward(self, x: ArrayLike) -> NDArray[np.float64]:
        """``f(x)`` at points ``x`` of shape ``(..., d)`` (any reals), shape ``(...)``."""
        centers, heights = self._instance()
        pts = check_finite_array(x, "x")
        if pts.ndim == 0 or pts.shape[-1] != self.dim:
            raise ValueError(f"x must have shape (..., {self.dim}), got {pts.shape}")
        n, j = pts.size // self.dim, self.num_bumps + 1
        what = f"x of shape {pts.shape} against {j} bumps"
        check_would_fit(2 * array_bytes(n, j, self.dim), what)
        _check_work(n * j * (self.dim + 8), f"{what} compares n·J·(dim + 8)", "pass fewer points")
        with np.errstate(over="ignore"):  # a far point's squared distance is inf: f = 0
            return max_of_bumps(pts, centers, heights, self.widths)

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        """Pull ``action`` (``(d,)`` in ``[0, 1]``); the episode terminates after it."""
        self._require_reset()
        centers, heights = self._instance()
        x = _check_box_actions(action, (self.dim,), "action")
        expected = float(max_of_bumps(x, centers, heights, self.widths))
        reward = expected + self.noise * float(self.np_random.standard_normal())
        self._last = (x, expected, reward)
        return np.int64(0), reward, True, False, pull_info(expected, float(heights.max()))

    def _frame(self) -> str:
        return self._summary(self._centers, self._heights, self._last)


class ContinuumBanditVectorEnv(_ContinuumParameters, BanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent continuum bandits stepped together, without subprocesses.

    Sub-env ``i`` equals a :class:`ContinuumBanditEnv` reset with seed ``seed + i`` (same
    instances, rewards and infos). Spaces are batched; ``step`` takes ``(num_envs, d)`` reals
    in ``[0, 1]``; autoreset is ``SAME_STEP`` and never resamples;
    ``reset(options={"resample": mask})`` redraws the sub-envs in ``mask``.

    Parameters
    ----------
    num_envs : int
        >= 1.
    dim, num_bumps, bump_width, needle_width, noise, render_mode
        As in :class:`ContinuumBanditEnv` (``render`` returns a tuple of strings).
    centers, heights : ArrayLike | None
        ``(num_envs, J, d)`` and ``(num_envs, J)``, or ``(J, d)`` and ``(J,)`` shared by all.
    """

    _last: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None = None

    def __init__(
        self,
        num_envs: int,
        dim: int | None = None,
        num_bumps: int | None = None,
        bump_width: float = DEFAULT_BUMP_WIDTH,
        needle_width: float = DEFAULT_NEEDLE_WIDTH,
        noise: float = DEFAULT_NOISE,
        centers: ArrayLike | None = None,
        heights: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        self._set_parameters(
            dim, num_bumps, bump_width, needle_width, noise, centers, heights, render_mode,
            self.num_envs,
        )  # fmt: skip
        set_vector_spaces(self, self._action_box(), spaces.Discrete(1))
        self._init_generators()
        self._all_true = np.ones(self.num_envs, dtype=np.bool_)

    def _allocate_instances(self) -> None:
        self._centers = np.empty((self.num_envs, self.num_bumps + 1, self.dim))
        self._heights = np.empty((self.num_envs, self.num_bumps + 1))

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        assert self._centers is not None and self._heights is not None
        for j in np.flatnonzero(resample).tolist():
            self._centers[j], self._heights[j] = _draw_instance(
                self._rng(j), self.num_bumps, self.dim
            )
        self._last = None

    def _observations(self) -> NDArray[np.int64]:
        return np.zeros(self.num_envs, dtype=np.int64)

    @property
    def optimal_action(self) -> NDArray[np.float64]:
        """Each sub-env's maximiser, ``(num_envs, d)``."""
        centers, heights = self._instance()
        return centers[np.arange(self.num_envs), np.argmax(heights, axis=1)]

    @property
    def optimal_expected_reward(self) -> NDArray[np.float64]:
        """``max_j h_j`` of each sub-env, ``(num_envs,)``."""
        return self._instance()[1].max(axis=1)

    def step(self, actions: Any) -> VectorStep:
        """Pull ``actions[i]`` in sub-env ``i``; each terminates and is reset in this step."""
        self._require_reset()
        centers, heights = self._instance()
        x = _check_box_actions(actions, (self.num_envs, self.dim), "actions")
        expected = max_of_bumps(x, centers, heights, self.widths)
        rngs = self._generators()
        normals = np.array([rng.standard_normal() for rng in rngs], dtype=np.float64)
        rewards = expected + self.noise * normals
        self._last = (x, expected, rewards.copy())
        every = self._all_true
        step_info = pull_info(expected, heights.max(axis=1))
        infos = vector_step_infos(step_info, every, zero_final_obs(self.num_envs))
        return self._observations(), rewards, every.copy(), ~every, infos

    def _frames(self) -> tuple[str, ...]:
        out = []
        for i in range(self.num_envs):
            c = None if self._centers is None else self._centers[i]
            h = None if self._heights is None else self._heights[i]
            last = None if self._last is None else tuple(part[i] for part in self._last)
            out.append(self._summary(c, h, last))
        return tuple(out)
