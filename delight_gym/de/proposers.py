"""The hosts and proposers of a candidate-set decision (re-exported by
:mod:`delight_gym.de.candidates`): the protocols, two hosts and four proposers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from gymnasium import spaces
from scipy.special import erf, ndtr, ndtri

from delight_gym._checks import (
    array_bytes,
    check_box_bounds,
    check_callable,
    check_positive_float,
    check_positive_int,
    check_probabilities,
    check_would_fit,
    host_view,
)
from delight_gym.de.rule import sample_categorical

__all__ = [
    "DEFAULT_HOST_STD",
    "HOST_STD_RANGE",
    "MAX_POSTERIOR_CALLS",
    "Array",
    "CandidateHost",
    "CandidateProposer",
    "CategoricalHost",
    "GaussianProposalHost",
    "HostSamples",
    "PosteriorArgmax",
    "RankingHost",
    "TopK",
    "UniformProposals",
    "space_bounds",
]

Array = Any  # numpy.ndarray (or torch.Tensor for candidate_rule)

#: The proposal scale of a deterministic host, as a fraction of each coordinate's range.
DEFAULT_HOST_STD = 0.1
#: ``host_std``'s range: below, the density underflows; above, draws lose resolution.
HOST_STD_RANGE = (1e-12, 1e6)
#: The most ``sample_values`` calls (one per proposal) of one :class:`PosteriorArgmax` decision.
MAX_POSTERIOR_CALLS = 10_000


class CandidateHost(Protocol):
    """The host as a candidate-set decision sees it: ``states`` holds ``b`` observations, host
    actions are int ``(b,)`` (``Discrete``) or float ``(b, d)`` (``Box``)."""

    def log_weight(self, states: Any, host_actions: Array, candidates: Array) -> Array:
        """``log π(c | s)`` (``-inf`` where ``π = 0``) or a finite log-density (``Box``),
        ``(b, C)``, of candidates ``(b, C)`` or ``(b, C, d)``."""

    def sample(self, states: Any, host_actions: Array, n: int, rng: np.random.Generator) -> Array:
        """``n`` independent draws from the host per row: ``(b, n)`` or ``(b, n, d)``."""


class RankingHost(CandidateHost, Protocol):
    """A ``Discrete`` host that can list its most probable actions (a retrieval index)."""

    def top_actions(self, states: Any, k: int) -> Array:
        """int ``(b, k)``: the host's ``k`` most probable distinct actions per row."""


class CandidateProposer(Protocol):
    """Proposes ``n`` candidates per row: int ``(b, n)`` or float ``(b, n, d)``, in the space."""

    def propose(
        self, states: Any, host_actions: Array, n: int, rng: np.random.Generator
    ) -> Array: ...


def space_bounds(space: Any, name: str) -> tuple[int, np.ndarray, np.ndarray]:
    """``(K, empty, empty)`` for ``Discrete(K)`` (start 0), ``(0, low, high)`` (float64) for a
    1-D ``Box``; other spaces are refused."""
    if isinstance(space, spaces.Discrete):
        if int(space.start) != 0:
            raise ValueError(f"{name} must be a Discrete space starting at 0, got {space}")
        return int(space.n), np.empty(0), np.empty(0)
    if isinstance(space, spaces.Box) and len(space.shape) == 1:
        if not np.issubdtype(space.dtype, np.floating):
            check_box_bounds(space, name)  # raises: an integer Box
        return 0, space.low.astype(np.float64), space.high.astype(np.float64)
    raise TypeError(f"{name} must be a gymnasium Discrete or 1-D Box space, got {space!r}")


def _finite_box(space: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    if space_bounds(space, name)[0]:
        raise TypeError(f"{name} must be a Box space, got {space!r}")
    return check_box_bounds(space, name)


def _check_draws(n: Any, name: str, *shape: int, copies: int = 1) -> int:
    """``n >= 1`` such that ``copies`` float64 arrays ``(*shape, n)`` fit in memory."""
    n = check_positive_int(n, name)
    check_would_fit(copies * array_bytes(*shape, n), f"{name}={n}")
    return n


def check_posterior_calls(n: int, name: str) -> int:
    """``n`` posterior proposals of one decision, refused beyond :data:`MAX_POSTERIOR_CALLS`."""
    if n > MAX_POSTERIOR_CALLS:
        raise ValueError(f"{name}: {n} posterior proposals exceed {MAX_POSTERIOR_CALLS=}")
    return n


def checked_actions(value: Any, n: int, low: np.ndarray, high: np.ndarray, name: str) -> Any:
    """``value`` as finite float64 ``(n, d)`` actions in ``[low, high]`` (``(d,)`` if ``n = 1``);
    ValueError or TypeError naming ``name``."""
    view = host_view(value)
    kind = view.dtype.kind if isinstance(view, np.ndarray) else "f"
    if kind not in "iuf":
        raise TypeError(f"{name} must give real-valued actions, got dtype {view.dtype}")
    try:
        arr = np.asarray(view, dtype=np.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name} must give numeric actions") from None
    d = low.size
    if n == 1 and arr.shape == (d,):
        arr = arr[None]
    if arr.shape != (n, d):
        raise ValueError(f"{name} must give actions of shape ({n}, {d}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} gave non-finite actions")
    if (arr < low).any() or (arr > high).any():
        raise ValueError(f"{name} gave actions outside the action space [{low}, {high}]")
    return arr


def _uniform(space: Any, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    k, low, high = space_bounds(space, "space")
    if k:
        return rng.integers(0, k, size=shape, dtype=np.int64)
    return low + (high - low) * rng.random((*shape, low.size))


class CategoricalHost:
    """A ``Discrete`` host given by its probabilities, ``O(b·K)`` a call (for millions of
    actions use a :class:`RankingHost`).

    Parameters
    ----------
    probs : Callable[[Any], Array]
        States ``(b, ...)`` → probabilities ``(b, K)``, rows summing to one.
    """

    def __init__(self, probs: Callable[[Any], Array]) -> None:
        self.probs = check_callable(probs, "probs")

    def _table(self, states: Any) -> np.ndarray:
        try:
            table = np.asarray(host_view(self.probs(states)), dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("probs must return numeric probabilities") from None
        if table.ndim != 2:
            raise ValueError(f"probs must return shape (b, K), got {table.shape}")
        check_probabilities(table, "probs(states)")
        return table

    def log_weight(self, states: Any, host_actions: Array, candidates: Array) -> np.ndarray:
        """``log π(c | s)``, ``(b, C)`` (``-inf`` where ``π = 0``)."""
        picked = np.take_along_axis(self._table(states), candidates, axis=-1)
        with np.errstate(divide="ignore"):
            return np.log(picked)

    def sample(self, states: Any, host_actions: Array, n: int, rng: np.random.Generator) -> Any:
        """int ``(b, n)``: independent draws from ``π(·|s)`` (inverse CDF)."""
        table = self._table(states)
        # sample_categorical's cumulative sums (float64) and two masks, (b, n, K) each
        n = _check_draws(n, "n", table.shape[0], table.shape[1] + 1, copies=2)
        rows = np.broadcast_to(table[:, None, :], (table.shape[0], n, table.shape[1]))
        return sample_categorical(rows, rng.random((table.shape[0], n)))

    def top_actions(self, states: Any, k: int) -> np.ndarray:
        """int ``(b, k)``: the ``k`` most probable actions, most probable first."""
        table = self._table(states)
        k = check_positive_int(k, "k")
        if k > table.shape[1]:
            raise ValueError(f"k must be <= the number of actions {table.shape[1]}, got {k}")
        top = np.argpartition(-table, k - 1, axis=-1)[:, :k]
        order = np.argsort(-np.take_along_axis(table, top, axis=-1), axis=-1, kind="stable")
        return np.take_along_axis(top, order, axis=-1)


class GaussianProposalHost:
    """A deterministic ``Box`` host (TD3, DDPG) given a density: its action ``μ(s)`` plus
    Gaussian noise of scale ``σ_i = host_std·(high_i − low_i)``, truncated to the box.

    Parameters
    ----------
    space : gymnasium.spaces.Box
        1-D, finite bounds, ``high > low``.
    host_std : float
        The noise scale as a fraction of each coordinate's range, in :data:`HOST_STD_RANGE`.
    """

    def __init__(self, space: Any, host_std: float = 0.1) -> None:
        self.low, self.high = _finite_box(space, "space")
        self.host_std = check_positive_float(host_std, "host_std")
        low, high = HOST_STD_RANGE
        if not low <= self.host_std <= high:
            raise ValueError(f"host_std must lie in [{low:g}, {high:g}], got {host_std!r}")
        self.scale = self.host_std * (self.high - self.low)

    def _mean(self, host_actions: Array) -> np.ndarray:
        n = len(host_actions)
        return checked_actions(host_actions, n, self.low, self.high, "host_actions")[:, None, :]

    def _limits(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The bounds ``α``, ``β`` in units of ``σ`` and the mass ``Φ(β) − Φ(α)``."""
        # α ≤ 0 ≤ β, so the mass is two non-negative erf halves: no cancellation, finite log.
        alpha, beta = (self.low - mu) / self.scale, (self.high - mu) / self.scale
        return alpha, beta, 0.5 * (erf(beta / np.sqrt(2.0)) + erf(-alpha / np.sqrt(2.0)))

    def log_weight(self, states: Any, host_actions: Array, candidates: Array) -> np.ndarray:
        """Log-density ``Π_i φ(z_i) / (σ_i·mass_i)`` of ``candidates`` ``(b, C, d)``: ``(b, C)``."""
        mu = self._mean(host_actions)
        _, _, mass = self._limits(mu)
        z = (candidates - mu) / self.scale
        log_pdf = -0.5 * z**2 - 0.5 * np.log(2 * np.pi) - np.log(self.scale) - np.log(mass)
        inside = (candidates >= self.low) & (candidates <= self.high)
        return np.where(inside, log_pdf, -np.inf).sum(axis=-1)

    def sample(
        self, states: Any, host_actions: Array, n: int, rng: np.random.Generator
    ) -> np.ndarray:
        """float ``(b, n, d)``: inverse-CDF draws, each tail computed on its accurate side."""
        mu = self._mean(host_actions)
        n = _check_draws(n, "n", *mu.shape[::2], copies=8)  # r, Φ's, z and the draws
        alpha, beta, mass = self._limits(mu)
        r = rng.random((mu.shape[0], n, mu.shape[-1]))
        r = np.where(r == 0.0, 2.0**-54, r)  # r in (0, 1): both tails below stay positive
        lower = ndtr(alpha) + r * mass  # Φ(z)
        upper = ndtr(-beta) + (1.0 - r) * mass  # 1 − Φ(z)
        z = np.where(lower <= 0.5, ndtri(lower), -ndtri(upper))
        # z ∈ [α, β] in exact arithmetic; the clip only undoes float rounding (a few ulps).
        return np.clip(mu + self.scale * z, self.low, self.high)


class HostSamples:
    """Proposes ``n`` independent draws from the host (``host.sample``)."""

    def __init__(self, host: CandidateHost) -> None:
        self.host = host

    def propose(self, states: Any, host_actions: Array, n: int, rng: np.random.Generator) -> Any:
        return self.host.sample(states, host_actions, n, rng)


class TopK:
    """Proposes the host's ``n`` most probable actions, for ``Discrete`` spaces too large to
    score."""

    def __init__(self, host: RankingHost) -> None:
        self.host = host

    def propose(self, states: Any, host_actions: Array, n: int, rng: np.random.Generator) -> Any:
        return self.host.top_actions(states, n)


class UniformProposals:
    """Proposes ``n`` actions uniformly from ``space`` (a ``Discrete`` or finite 1-D ``Box``)."""

    def __init__(self, space: Any) -> None:
        k, low, _ = space_bounds(space, "space")
        if not k:
            _finite_box(space, "space")
        self.space, self._width = space, max(low.size, 1)

    def propose(self, states: Any, host_actions: Array, n: int, rng: np.random.Generator) -> Any:
        b = len(host_actions)
        return _uniform(self.space, (b, _check_draws(n, "n", b, self._width, copies=3)), rng)


class PosteriorArgmax:
    """Approximate Thompson proposals: each the best of ``n_random`` uniform actions under one
    fresh posterior sample (e.g. one ensemble member).

    Parameters
    ----------
    space : gymnasium.spaces.Discrete | gymnasium.spaces.Box
        A ``Box`` needs finite bounds.
    sample_values : Callable
        ``(states, actions (b, N[, d]), rng)`` → ``(b, N)`` values under one fresh sample.
    n_random : int
        Random actions scored per proposal.
    """

    def __init__(self, space: Any, sample_values: Callable[..., Array], n_random: int = 64) -> None:
        self._width = UniformProposals(space)._width  # checks the space
        self.space, self.sample_values = space, check_callable(sample_values, "sample_values")
        self.n_random = check_positive_int(n_random, "n_random")

    def propose(self, states: Any, host_actions: Array, n: int, rng: np.random.Generator) -> Any:
        b = len(host_actions)
        n = _check_draws(n, "n", b, self._width, copies=2)  # the picks and their stack
        # each proposal's uniform actions, their values and a temporary: (b, n_random, d + 1)
        check_would_fit(
            3 * array_bytes(b, self.n_random, self._width + 1), f"n_random={self.n_random}"
        )
        picks = []
        for _ in range(n):
            actions = _uniform(self.space, (b, self.n_random), rng)
            values = np.asarray(host_view(self.sample_values(states, actions, rng)))
            if values.shape != (b, self.n_random):
                raise ValueError(
                    f"sample_values must return shape {(b, self.n_random)}, got {values.shape}"
                )
            if values.dtype.kind not in "iuf" or not np.isfinite(values).all():
                raise ValueError("sample_values must return finite numbers (no NaN or inf)")
            picks.append(actions[np.arange(b), np.argmax(values, axis=-1)])
        return np.stack(picks, axis=1)
