"""Candidate-set Delight-gated exploration: the paper's gate on a finite candidate set ``C(s)``.

For ``Box`` actions and ``Discrete`` spaces too large to score, a decision that explores
(probability ``ε_t``) draws ``C(s)``: the host's own action, then the proposers' candidates.
Each ``c ∈ C`` is scored with the caller's EI over the posterior mean of the host's action and
the surprisal under the host *restricted to C* (renormalised over its distinct members), then
:func:`~delight_gym.de.rule.delight_rule` applies unchanged. When ``C`` is a whole small
``Discrete`` space this is Algorithm 1. numpy; :func:`candidate_rule` also takes torch tensors.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from delight_gym._arrays import array_namespace, is_torch
from delight_gym._checks import (
    array_bytes,
    check_action_batch,
    check_callable,
    check_positive_float,
    check_positive_int,
    check_shape,
    check_would_fit,
    host_view,
)
from delight_gym.de import proposers as candidates_proposers
from delight_gym.de.proposers import *  # noqa: F403 - re-exported: its __all__
from delight_gym.de.proposers import (
    Array,
    CandidateHost,
    CandidateProposer,
    check_posterior_calls,
    space_bounds,
)
from delight_gym.de.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    DelightDecision,
    apply_delight_rule,
    check_gate_settings,
    delight_rule,
    draw_acting_uniforms,
    epsilon_schedule,
    sample_categorical,
)

__all__ = [
    "CandidateDecision",
    "CandidateDelight",
    "CandidateEI",
    "candidate_row_bytes",
    "candidate_rule",
]
__all__ += candidates_proposers.__all__  # the hosts and proposers are importable from here too


class CandidateEI(Protocol):
    """``EI(c) = E[(f(s, c) − v(s))^+]``, shape ``(b, C)``, finite and non-negative, where the
    baseline ``v(s)`` is the posterior mean value of the host's action ``candidates[:, 0]``."""

    def __call__(self, states: Any, candidates: Array) -> Array: ...


def _first_occurrences(candidates: Array) -> Array:
    """bool ``(b, C)``: the first occurrence of each distinct candidate of a row (column 0
    always), for int ``(b, C)`` or float ``(b, C, d)`` candidates (equal in every coordinate)."""
    xp = array_namespace(candidates)
    if candidates.ndim == 2:  # Discrete: a stable sort puts each value's first column first
        if xp is np:
            order = np.argsort(candidates, axis=-1, kind="stable")
            ranked = np.take_along_axis(candidates, order, axis=-1)
            first = np.ones(ranked.shape, dtype=bool)
            first[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
            out = np.empty_like(first)
            np.put_along_axis(out, order, first, axis=-1)
            return out
        ranked, order = xp.sort(candidates, dim=-1, stable=True)
        first = xp.ones_like(ranked, dtype=xp.bool)
        first[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        return xp.empty_like(first).scatter_(-1, order, first)
    if xp is np:  # Box: sort each row by a hash of the coordinates' bits, compare neighbours
        exact = np.ascontiguousarray(candidates, dtype=np.float64) + 0.0  # −0.0 → 0.0
        bits = exact.view(np.uint64)
        key = bits[..., 0].copy()
        for j in range(1, bits.shape[-1]):
            key = (key * np.uint64(0x9E3779B97F4A7C15)) ^ bits[..., j]
        order = np.argsort(key, axis=-1, kind="stable")
        ranked = np.take_along_axis(exact, order[..., None], axis=1)
        ranked_key = np.take_along_axis(key, order, axis=-1)
        equal = (ranked[:, 1:] == ranked[:, :-1]).all(-1)
        # Equal rows have equal keys, so they are neighbours after the sort unless two distinct
        # rows collide on a key: then fall back to the quadratic comparison below.
        if not (ranked_key[:, 1:] == ranked_key[:, :-1])[~equal].any():
            first = np.ones(order.shape, dtype=bool)
            first[:, 1:] = ~equal
            out = np.empty_like(first)
            np.put_along_axis(out, order, first, axis=-1)
            return out
    same = (candidates[:, :, None, :] == candidates[:, None, :, :]).all(-1)  # (b, C, C)
    size = candidates.shape[1]
    earlier = np.triu(np.ones((size, size), dtype=bool), 1)  # [i, j]: i < j
    if xp is not np:
        earlier = xp.from_numpy(earlier).to(candidates.device)
    return ~(same & earlier).any(-2)


def _check_log_weights(log_w: Array, shape: tuple[int, ...], box: bool, name: str) -> None:
    """Refuse log-weights of the wrong shape, NaN or ``+inf``, non-finite in column 0 (the
    host's action) or anywhere for ``Box`` candidates (densities), naming ``name``."""
    xp = array_namespace(log_w)
    check_shape(log_w, shape, name)
    if bool(xp.any(xp.isnan(log_w))) or bool(xp.any(log_w == np.inf)):
        raise ValueError(f"{name} must not hold NaN or +inf")
    if not bool(xp.all(xp.isfinite(log_w[:, 0]))):
        raise ValueError(f"{name}[:, 0] (the host's own action) must be finite")
    if box and not bool(xp.all(xp.isfinite(log_w))):
        raise ValueError(f"{name} must be finite for Box candidates (log-densities)")


def candidate_rule(
    candidates: Array,
    host_log_weights: Array,
    expected_improvement: Array,
    epsilon: Any,
    *,
    gate_price: float = DEFAULT_GATE_PRICE,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
) -> tuple[DelightDecision, Array]:
    """:func:`~delight_gym.de.rule.delight_rule` on candidate sets, the host restricted to them.

    Only a candidate's first occurrence keeps host mass and EI; later copies get 0, so
    ``χ = 0`` and never gate. ``π(·|C)`` is a softmax of ``host_log_weights`` over the distinct
    members.

    Parameters
    ----------
    candidates : Array
        int ``(b, C)`` (``Discrete``) or float ``(b, C, d)`` (``Box``), ``b, C >= 1``;
        column 0 is the host's own action.
    host_log_weights : Array
        ``(b, C)``: log-probabilities (``-inf`` allowed, ``Discrete``) or finite
        log-densities (``Box``); column 0 finite.
    expected_improvement, epsilon, gate_price, surprisal_cap
        As for :func:`~delight_gym.de.rule.delight_rule`, ``EI`` over ``(b, C)``.

    Returns
    -------
    tuple[DelightDecision, Array]
        the decision over the ``C`` columns (its ``host`` is ``π(·|C)``) and the bool
        ``(b, C)`` mask of first occurrences.

    Raises
    ------
    ValueError
        naming the argument: bad shapes, an empty batch or set, bad log-weights, and the
        rule's own checks.
    """
    if candidates.ndim not in (2, 3) or 0 in tuple(candidates.shape[:2]):
        raise ValueError(
            f"candidates must be (b, C) or (b, C, d) with b, C >= 1, got {tuple(candidates.shape)}"
        )
    shape = tuple(candidates.shape[:2])
    _check_log_weights(host_log_weights, shape, candidates.ndim == 3, "host_log_weights")
    restricted, unique = _restricted_host(candidates, host_log_weights)
    xp = array_namespace(host_log_weights)
    ei = xp.where(unique, expected_improvement, 0.0)
    decision = delight_rule(
        restricted, ei, epsilon, gate_price=gate_price, surprisal_cap=surprisal_cap
    )
    return decision, unique


def _restricted_host(candidates: Array, host_log_weights: Array) -> tuple[Array, Array]:
    """``π(·|C)`` (softmax over first occurrences) and their mask, ``(b, C)``, for checked input."""
    xp = array_namespace(host_log_weights)
    unique = _first_occurrences(candidates)
    log_w = xp.where(unique, host_log_weights, -np.inf)
    weights = xp.exp(log_w - xp.amax(log_w, axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True), unique


class CandidateDecision(NamedTuple):
    """Output of :meth:`CandidateDelight.decide` for ``b`` decisions, ``r`` of which explored.

    Attributes
    ----------
    actions
        int ``(b,)`` or float ``(b, d)``: the host's action unless overridden.
    explored, overridden
        bool ``(b,)``: a candidate set was drawn (``u < ε_t``); and its gate was not empty,
        the action drawn from ``q`` (it may equal the host's).
    rows
        int64 ``(r,)``: the exploring rows, ascending.
    candidates, unique
        ``(r, C)`` or ``(r, C, d)``: their sets (column 0 the host's action), and the bool
        ``(r, C)`` first occurrences.
    delight, gate, decision
        ``(r, C)`` ``χ`` and gate mask, and the rule's decision (``None`` if none explored).
    """

    actions: Array
    explored: Array
    overridden: Array
    rows: Array
    candidates: Array
    unique: Array
    delight: Array
    gate: Array
    decision: DelightDecision | None


def _numbers(value: Any, name: str) -> np.ndarray:
    """A callable's output as float64, or a ``TypeError`` naming ``name``."""
    try:
        return np.asarray(host_view(value), dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must return real numbers, got {type(value).__name__}") from None


def candidate_row_bytes(size: int, dim: int, proposals: Sequence[tuple[Any, int]]) -> int:
    """Bytes one exploring row needs: its set ``(|C|, d)``, its scores (log-weights, EI, the
    rule's eight ``(|C|,)`` arrays) and every posterior proposal's scored draws
    ``(n_random, d + 1)``."""
    d = max(dim, 1)
    scored = sum(n * getattr(p, "n_random", 0) for p, n in proposals)
    return array_bytes(size, d + 10) + array_bytes(scored, d + 1)


def _take_rows(states: Any, rows: np.ndarray) -> Any:
    """``states`` restricted to ``rows``: arrays and tensors indexed, dicts entrywise."""
    if isinstance(states, dict):
        return {key: _take_rows(value, rows) for key, value in states.items()}
    if states is None:
        return None
    if is_torch(states):
        return states[sys.modules["torch"].from_numpy(rows).to(states.device)]
    return np.asarray(states)[rows]


class CandidateDelight:
    """Candidate-set DE around one host and one posterior; :meth:`decide` acts for a batch.

    An exploring row's set is the host's action then each proposer's ``n`` candidates
    (``|C| = 1 + Σ n``), scored as :func:`candidate_rule` does. An empty gate plays the host's
    action, itself a draw from ``π`` (the rule's ``q = π``).

    Parameters
    ----------
    space : gymnasium.spaces.Discrete | gymnasium.spaces.Box
        ``Discrete(K)`` (start 0) or a 1-D ``Box``.
    host : CandidateHost
        the host's log-weights on candidates.
    expected_improvement : CandidateEI
        the posterior's EI of candidates over the posterior mean of the host's action.
    proposals : Sequence[tuple[CandidateProposer, int]]
        proposers with their budgets ``n ≥ 1``, e.g. ``[(HostSamples(host), 8),
        (PosteriorArgmax(space, f), 8)]``.
    half_life, gate_price, surprisal_cap : float
        ``M > 0``, ``λ >= 0``, ``L > 0``.
    """

    def __init__(
        self,
        space: Any,
        host: CandidateHost,
        expected_improvement: CandidateEI,
        proposals: Sequence[tuple[CandidateProposer, int]],
        *,
        half_life: float = DEFAULT_HALF_LIFE,
        gate_price: float = DEFAULT_GATE_PRICE,
        surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
    ) -> None:
        self.num_actions, self.low, self.high = space_bounds(space, "space")
        self.space, self.host, self.expected_improvement = space, host, expected_improvement
        if not callable(getattr(host, "log_weight", None)):
            raise TypeError(f"host must have a callable log_weight, got {host!r}")
        check_callable(expected_improvement, "expected_improvement")
        self.half_life = check_positive_float(half_life, "half_life", normal=True)
        self.gate_price, self.surprisal_cap = check_gate_settings(gate_price, surprisal_cap)
        if isinstance(proposals, str | bytes) or not isinstance(proposals, Sequence):
            raise TypeError(
                "proposals must be a sequence of (proposer, n) pairs, e.g. "
                f"[(HostSamples(host), 8)], got {type(proposals).__name__}"
            )
        if not proposals:
            raise ValueError("proposals must hold at least one (proposer, n) pair")
        self.proposals: list[tuple[CandidateProposer, int]] = []
        calls = 0  # posterior samples per decision: one Python call each
        for i, pair in enumerate(proposals):
            if not (isinstance(pair, tuple) and len(pair) == 2 and hasattr(pair[0], "propose")):
                raise TypeError(f"proposals[{i}] must be a (proposer, n) pair, got {pair!r}")
            n = check_positive_int(pair[1], f"proposals[{i}] n")
            if hasattr(pair[0], "n_random"):
                calls = check_posterior_calls(calls + n, f"proposals[{i}] n")
            self.proposals.append((pair[0], n))
        self.size = 1 + sum(n for _, n in self.proposals)
        self.row_bytes = candidate_row_bytes(self.size, self.low.size, self.proposals)
        budgets = ", ".join(f"proposals[{i}] n={n}" for i, (_, n) in enumerate(self.proposals))
        check_would_fit(self.row_bytes, f"a candidate set of {budgets}")

    def _check_actions(self, actions: Any, size: int, name: str) -> np.ndarray:
        """int ``(size,)`` or float ``(size, d)`` actions inside the space; ValueError else."""
        if self.num_actions:
            return check_action_batch(actions, size, self.num_actions, name)
        arr = np.asarray(host_view(actions), dtype=np.float64)
        check_shape(arr, (size, self.low.size), name)
        if not np.isfinite(arr).all() or (arr < self.low).any() or (arr > self.high).any():
            raise ValueError(f"{name} must be finite and inside the Box [{self.low}, {self.high}]")
        return arr

    def candidates(self, states: Any, host_actions: np.ndarray, rng: np.random.Generator) -> Any:
        """``C`` for each row: ``(b, |C|)`` or ``(b, |C|, d)``, column 0 ``host_actions``."""
        b = len(host_actions)
        parts = [host_actions[:, None]]
        for i, (proposer, n) in enumerate(self.proposals):
            out = np.asarray(host_view(proposer.propose(states, host_actions, n, rng)))
            shape = host_actions.shape[1:]
            if out.shape != (b, n, *shape):
                raise ValueError(
                    f"proposals[{i}] must return shape {(b, n, *shape)}, got {out.shape}"
                )
            flat = self._check_actions(out.reshape(b * n, *shape), b * n, f"proposals[{i}]")
            parts.append(flat.reshape(b, n, *shape))
        return np.concatenate(parts, axis=1)

    def decide(
        self, states: Any, host_actions: Any, t: Any, rng: np.random.Generator
    ) -> CandidateDecision:
        """One decision per row: the host's action, or on exploring rows the gate's draw.

        Parameters
        ----------
        states
            ``b`` states (arrays, tensors or dicts of them), restricted to the exploring rows
            for the host, the proposers and the EI.
        host_actions : Array
            int ``(b,)`` or float ``(b, d)``, inside the space.
        t
            rounds completed, scalar or ``(b,)``, ``>= 0``.
        rng : numpy.random.Generator
            the only randomness.

        Returns
        -------
        CandidateDecision
        """
        b = len(host_actions)
        if b == 0:
            raise ValueError("host_actions must hold at least one row (an empty batch)")
        return self._decide(states, self._check_actions(host_actions, b, "host_actions"), t, rng)

    def _decide(
        self, states: Any, host: np.ndarray, t: Any, rng: np.random.Generator
    ) -> CandidateDecision:
        """:meth:`decide` on ``host`` actions already checked: a non-empty batch in the space."""
        b = len(host)
        eps = np.asarray(epsilon_schedule(t, self.half_life), dtype=np.float64)
        if eps.shape not in ((), (b,)):
            raise ValueError(f"t must be a scalar or have shape ({b},), got {eps.shape}")
        eps = np.broadcast_to(eps, (b,))
        u_explore, u_draw = draw_acting_uniforms(rng, (b,))
        explored = u_explore < eps
        rows = np.flatnonzero(explored)
        actions, overridden = host.copy(), np.zeros(b, dtype=bool)
        if rows.size == 0:
            none = np.zeros((0, self.size), dtype=bool)
            cands = np.empty((0, self.size, *host.shape[1:]), dtype=host.dtype)
            return CandidateDecision(
                actions, explored, overridden, rows, cands, none, np.zeros(none.shape), none, None
            )
        check_would_fit(rows.size * self.row_bytes, f"{rows.size} candidate sets")
        sub = states if rows.size == b else _take_rows(states, rows)
        cands = self.candidates(sub, host[rows], rng)
        shape = cands.shape[:2]
        log_w = _numbers(self.host.log_weight(sub, host[rows], cands), "host.log_weight")
        _check_log_weights(log_w, shape, cands.ndim == 3, "host.log_weight")
        ei = _numbers(self.expected_improvement(sub, cands), "expected_improvement")
        check_shape(ei, shape, "expected_improvement")
        if not ((ei >= 0) & (ei < np.inf)).all():
            raise ValueError("expected_improvement must return finite, non-negative values")
        restricted, unique = _restricted_host(cands, log_w)
        decision = apply_delight_rule(self, restricted, np.where(unique, ei, 0.0), eps[rows])
        # u_draw was drawn for every row with u_explore (the same draws whoever explores);
        # an empty gate plays column 0, the host's own action.
        chosen = np.where(
            decision.gate_empty, 0, sample_categorical(decision.override, u_draw[rows])
        )
        actions[rows] = cands[np.arange(rows.size), chosen]
        overridden[rows] = ~decision.gate_empty
        return CandidateDecision(
            actions,
            explored,
            overridden,
            rows,
            cands,
            unique,
            decision.delight,
            decision.gate,
            decision,
        )
