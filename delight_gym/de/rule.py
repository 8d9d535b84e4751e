"""The Delight-gated exploration (DE) rule and its ε schedule — the only implementation.

For one decision with actions ``a = 1..A`` (paper §2.1, Algorithm 1):

* surprisal under the host, ``ℓ(a) = min([−log π(a) − min_b(−log π(b))]_+, L)``: the host's
  favourite gets 0 and, for a greedy host, every other action gets exactly ``L``;
* prospective delight ``χ(a) = EI(a)·ℓ(a)``;
* gate ``G = {a : χ(a) ≥ λ, χ(a) > 0}``; override ``q(a) ∝ χ(a)·1{a ∈ G}`` (``q = π`` if ``G = ∅``);
* acting distribution ``(1 − ε)·π + ε·q`` with ``ε_t = M / (M + t)``.

Batched over any leading dimensions (last axis: actions), numpy or torch in, the same type,
dtype and device out. DE's options record: :mod:`delight_gym.de.options`. Guide: ``docs/rule.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np

from delight_gym._arrays import array_namespace, is_torch
from delight_gym._checks import (
    check_instance,
    check_nonnegative_float,
    check_positive_float,
    check_probabilities,
    check_probability,
)

__all__ = [
    "DEFAULT_GATE_PRICE",
    "DEFAULT_HALF_LIFE",
    "DEFAULT_SURPRISAL_CAP",
    "DelightDecision",
    "ExploreRowsDraw",
    "Gate",
    "GateSettings",
    "apply_delight_rule",
    "check_gate_settings",
    "delight_rule",
    "draw_acting_uniforms",
    "epsilon_schedule",
    "greedy_probs",
    "sample_acting",
    "sample_acting_on_explore_rows",
    "sample_categorical",
    "surprisal",
]

#: Defaults used everywhere (the paper transfers them unchanged across all experiments).
DEFAULT_HALF_LIFE = 100.0
DEFAULT_GATE_PRICE = 0.1
DEFAULT_SURPRISAL_CAP = 10.0

Array = Any  # numpy.ndarray or torch.Tensor


def _as_numbers(value: Any, name: str, like: Array) -> Array:
    """``value`` as ``like``'s kind (tensor on its device, else numpy floats); TypeError else."""
    if is_torch(like):
        torch = sys.modules["torch"]
        if not is_torch(value):
            value = torch.as_tensor(np.asarray(value, dtype=np.float64), device=like.device)
        if value.dtype == torch.bool or value.is_complex():
            raise TypeError(f"{name} must be real numbers, got dtype {value.dtype}")
        return value if value.is_floating_point() else value.to(like.dtype)
    try:
        arr = np.asarray(value)
        return arr if arr.dtype.kind == "f" else arr.astype(np.float64, casting="safe")
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be real numbers, got {value!r}") from None


def _check_rule_inputs(
    host_probs: Array, ei: Array, epsilon: Any, multiplicity: Array | None, atol: float
) -> None:
    xp = array_namespace(host_probs)
    shape = tuple(host_probs.shape)
    if host_probs.ndim == 0 or shape[-1] == 0:
        raise ValueError("host_probs must have at least one action on its last axis")
    for name, value in (("expected_improvement", ei), ("multiplicity", multiplicity)):
        if value is None:
            continue
        try:
            fits = np.broadcast_shapes(tuple(value.shape), shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"{name} must broadcast to host_probs' shape {shape}, got {tuple(value.shape)}"
            )
        if not bool(xp.all(xp.isfinite(value))) or bool(xp.any(value < 0)):
            raise ValueError(f"{name} must be finite and non-negative (no NaN or inf)")
    probs = host_probs if multiplicity is None else host_probs * multiplicity
    check_probabilities(probs, "host_probs", atol=atol)
    if np.isscalar(epsilon):
        check_probability(epsilon, "epsilon")
        return
    eps = _as_numbers(epsilon, "epsilon", host_probs)
    if tuple(eps.shape) not in ((), shape[:-1]):
        raise ValueError(f"epsilon must be a scalar or of shape {shape[:-1]}, got {eps.shape}")
    if not bool(xp.all((eps >= 0) & (eps <= 1))):
        raise ValueError("epsilon must lie in [0, 1] (no NaN)")


class Gate(NamedTuple):
    """The gate's settings ``(λ, L)`` as a record (a :class:`GateSettings`)."""

    gate_price: float
    surprisal_cap: float


def check_gate_settings(gate_price: Any, surprisal_cap: Any) -> Gate:
    """The gate's settings checked, as a :class:`Gate`: ``λ >= 0`` (``inf``: the gate is always
    empty) and a finite ``L >= 2.2e-308``; ValueError or TypeError naming the argument otherwise."""
    lam = check_nonnegative_float(gate_price, "gate_price", allow_inf=True)
    return Gate(lam, check_positive_float(surprisal_cap, "surprisal_cap", normal=True))


def epsilon_schedule(t: Any, half_life: float = DEFAULT_HALF_LIFE) -> Any:
    """Annealed override probability ``ε_t = M / (M + t)``, shaped like ``t`` (a float for a
    scalar): ``t >= 0`` completed rounds (``ε_0 = 1``), ``half_life`` ``M > 0``."""
    m = check_positive_float(half_life, "half_life", normal=True)
    if np.isscalar(t):
        t = check_nonnegative_float(t, "t")
        total = m + t
        # m + t overflows only when both are huge: halving both is then exact.
        return m / total if total < np.inf else (m / 2) / (m / 2 + t / 2)
    xp = array_namespace(t)
    if bool(xp.any(t < 0)) or not bool(xp.all(xp.isfinite(t))):
        raise ValueError("t must be finite and non-negative")
    with np.errstate(over="ignore"):
        total = m + t
    out = m / total
    overflow = ~xp.isfinite(total)
    return xp.where(overflow, (m / 2) / (m / 2 + t / 2), out) if bool(overflow.any()) else out


def surprisal(host_probs: Array, surprisal_cap: float = DEFAULT_SURPRISAL_CAP) -> Array:
    """Capped relative surprisal ``min([−log π(a) − min_b(−log π(b))]_+, L)`` of
    ``host_probs`` ``(..., A)``: 0 for the host's favourite(s), ``L`` for actions it never
    takes."""
    return _surprisal(host_probs, check_positive_float(surprisal_cap, "surprisal_cap"))


def _surprisal(host_probs: Array, cap: float) -> Array:
    xp = array_namespace(host_probs)
    if xp is np:
        with np.errstate(divide="ignore"):
            log_p = np.log(host_probs)
    else:
        log_p = xp.log(host_probs)
    # −log π(a) − min_b(−log π(b)) = log max_b π(b) − log π(a) ≥ 0; π(a) = 0 gives +inf → L.
    rel = xp.amax(log_p, axis=-1, keepdims=True) - log_p
    return xp.clip(rel, 0.0, cap)


class DelightDecision(NamedTuple):
    """Output of :func:`delight_rule`; every field is batched like the inputs.

    Attributes
    ----------
    host, probs, override
        ``π``, the acting law ``(1 − ε)π + εq`` and ``q`` (``π`` where the gate is empty),
        ``(..., A)``.
    delight, surprisal, gate
        ``χ = EI·ℓ``, ``ℓ`` and the bool gate mask ``G``, ``(..., A)``.
    gate_empty, epsilon
        bool ``(...)``: ``G`` is empty; and ``ε`` broadcast to ``(...)``.
    """

    host: Array
    probs: Array
    override: Array
    delight: Array
    surprisal: Array
    gate: Array
    gate_empty: Array
    epsilon: Array


def delight_rule(
    host_probs: Array,
    expected_improvement: Array,
    epsilon: Any,
    *,
    gate_price: float = DEFAULT_GATE_PRICE,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
    atol: float = 1e-6,
    multiplicity: Array | None = None,
) -> DelightDecision:
    """Apply Delight-gated exploration to one batch of decisions.

    Parameters
    ----------
    host_probs : Array
        ``π``, ``(..., A)``, non-negative rows summing to 1 (within ``atol``).
    expected_improvement : Array
        ``EI(a) = E[(f(a) − v)^+]`` over the host baseline ``v``, finite, ``>= 0``,
        broadcastable to ``(..., A)``.
    epsilon
        ``ε`` in ``[0, 1]``, scalar or ``(...)`` (e.g. :func:`epsilon_schedule`).
    gate_price, surprisal_cap : float
        ``λ >= 0`` (``inf``: the gate is always empty) and ``L > 0``.
    multiplicity : Array | None
        counts ``m >= 0`` broadcastable to ``(..., A)``: column ``c`` stands for ``m_c``
        identical actions of probability ``host_probs[c]`` (``Σ_c m_c π_c = 1``). ``probs``,
        ``override`` and ``host`` are then per column, ``delight``, ``surprisal`` and
        ``gate`` per member; ``m_c = 0`` is never in the gate.

    Returns
    -------
    DelightDecision
        Finite for finite inputs (an EI of ``1e308`` overflows nothing).

    Raises
    ------
    ValueError, TypeError
        naming the argument, on bad values or shapes, or inputs that are not real numbers.
    """
    lam, cap = check_gate_settings(gate_price, surprisal_cap)
    host_probs = _as_numbers(host_probs, "host_probs", host_probs)
    ei = _as_numbers(expected_improvement, "expected_improvement", host_probs)
    if multiplicity is not None:
        multiplicity = _as_numbers(multiplicity, "multiplicity", host_probs)
    _check_rule_inputs(host_probs, ei, epsilon, multiplicity, atol)
    return _decide(host_probs, ei, epsilon, lam, cap, multiplicity)


def _decide(
    host_probs: Array,
    ei: Array,
    epsilon: Any,
    lam: float,
    cap: float,
    multiplicity: Array | None,
) -> DelightDecision:
    xp = array_namespace(host_probs)
    if multiplicity is not None:
        # per-column host mass m·π; the surprisal is of one member (π, 0 where m = 0)
        host_probs = host_probs * multiplicity
        member_probs = xp.where(
            multiplicity > 0, host_probs / xp.where(multiplicity > 0, multiplicity, 1), 0.0
        )
    surp = _surprisal(host_probs if multiplicity is None else member_probs, cap)
    # Numeric guard: χ = EI·ℓ capped at the dtype's largest value (EI 1e308 times L overflows);
    # a capped χ is still >= any finite λ, and never >= λ = inf (the gate stays empty).
    if xp is np:
        with np.errstate(over="ignore"):
            delight = np.minimum(ei * surp, np.finfo(surp.dtype).max)
    else:
        delight = (ei * surp).clamp(max=xp.finfo(surp.dtype).max)
    gate = (delight >= lam) & (delight > 0)
    if multiplicity is not None:
        gate = gate & (multiplicity > 0)
    # Numeric guard: q ∝ χ formed as (EI / max_G EI)·ℓ, each factor <= 1 or L, so the sum over
    # the gate cannot overflow; the gate's largest EI keeps a positive weight.
    ei_gate = xp.where(gate, ei, 0.0)
    top = xp.amax(ei_gate, axis=-1, keepdims=True)
    gated = (ei_gate / xp.where(top > 0, top, 1.0)) * surp
    if multiplicity is not None:
        gated = gated * multiplicity  # a column's weight is its members' total
    total = gated.sum(axis=-1, keepdims=True)
    gate_empty = total[..., 0] <= 0
    safe_total = xp.where(total > 0, total, 1.0)
    override = xp.where(total > 0, gated / safe_total, host_probs)
    eps_b: Any = epsilon if np.isscalar(epsilon) or epsilon.ndim == 0 else epsilon[..., None]
    probs = (1.0 - eps_b) * host_probs + eps_b * override
    eps_out = xp.zeros(gate_empty.shape, dtype=probs.dtype) + epsilon
    if xp is not np:
        eps_out = eps_out.to(probs.device)
    return DelightDecision(host_probs, probs, override, delight, surp, gate, gate_empty, eps_out)


class GateSettings(Protocol):
    """Anything holding checked ``gate_price`` ``λ`` and ``surprisal_cap`` ``L`` (a
    :class:`~delight_gym.de.options.DelightOptions`, a :class:`Gate`)."""

    @property
    def gate_price(self) -> float: ...

    @property
    def surprisal_cap(self) -> float: ...


def apply_delight_rule(
    settings: GateSettings,
    host_probs: Array,
    expected_improvement: Array,
    epsilon: Any,
    *,
    multiplicity: Array | None = None,
) -> DelightDecision:
    """:func:`delight_rule` with ``settings``' ``λ`` and ``L``, nothing checked (for per-step
    code whose settings and inputs were checked once)."""
    return _decide(
        host_probs,
        expected_improvement,
        epsilon,
        settings.gate_price,
        settings.surprisal_cap,
        multiplicity,
    )


def sample_categorical(probs: Array, uniforms: Array) -> Array:
    """Inverse-CDF draw, int ``(...)``, from each row of ``probs`` ``(..., A)`` at its uniform
    in ``uniforms`` ``(...)``; only actions of positive probability, whatever the rounding."""
    xp = array_namespace(probs)
    cum = xp.cumsum(probs, axis=-1)
    u = uniforms[..., None]
    idx = (cum <= u).sum(axis=-1)
    # Rounding guard: if u exceeds the final cumulative sum, take the last positive action.
    n = probs.shape[-1]
    positive = probs > 0
    if xp is np:
        last_pos = n - 1 - np.argmax(positive[..., ::-1], axis=-1)
        return np.minimum(idx, last_pos)
    last_pos = n - 1 - xp.argmax(xp.flip(positive, dims=(-1,)).to(xp.uint8), dim=-1)
    return xp.minimum(idx, last_pos)


def sample_acting(
    decision: DelightDecision,
    rng: Any,
) -> tuple[Array, Array]:
    """Draw actions in Algorithm 1's two stages: ``explore = u1 < ε``, then the action from
    ``q`` (exploring) or ``π`` at a second uniform ``u2``; the law is ``decision.probs``.

    ``rng`` is a ``numpy.random.Generator`` (numpy decision) or a ``torch.Generator``.
    Returns ``(actions, explored)``, each ``(...)`` (``explored`` even where the gate was
    empty).
    """
    shape = decision.gate_empty.shape
    host = decision.host
    if is_torch(decision.probs):
        torch = sys.modules["torch"]
        dev = decision.probs.device
        gen_device = rng.device if isinstance(rng, torch.Generator) else None
        u1 = torch.rand(shape, generator=rng, dtype=torch.float64, device=gen_device).to(dev)
        u2 = torch.rand(shape, generator=rng, dtype=torch.float64, device=gen_device).to(dev)
        explored = u1 < decision.epsilon.to(torch.float64)
        choose = torch.where(explored[..., None], decision.override, host)
        return sample_categorical(choose, u2.to(choose.dtype)), explored
    u1, u2 = draw_acting_uniforms(rng, shape)
    explored = u1 < decision.epsilon
    choose = np.where(explored[..., None], decision.override, host)
    return sample_categorical(choose, u2), explored


def draw_acting_uniforms(rng: np.random.Generator, shape: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sample_acting`'s two uniforms in its order, ``u1`` (explore?) then ``u2`` (the
    action), each of ``shape``: for :func:`sample_acting_on_explore_rows`."""
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    return rng.random(shape), rng.random(shape)


class ExploreRowsDraw(NamedTuple):
    """Output of :func:`sample_acting_on_explore_rows` for ``n`` decisions: int64 ``actions``
    and bool ``explored`` ``(n,)``; the exploring ``rows`` (int64 ``(r,)``, ascending), their
    :class:`DelightDecision` and the ``(r,)`` column ``chosen`` from its ``override`` (both
    ``None`` if no row explored)."""

    actions: Array
    explored: Array
    rows: Array
    decision: DelightDecision | None
    chosen: Array | None


def sample_acting_on_explore_rows(
    uniforms: tuple[Array, Array],
    epsilon: Any,
    decide: Callable[[Array], DelightDecision | tuple[DelightDecision, Array]],
    *,
    host_probs: Array | None = None,
    host_actions: Array | None = None,
) -> ExploreRowsDraw:
    """:func:`sample_acting` with the posterior and the gate evaluated only on exploring rows.

    The same actions :func:`sample_acting` draws from the same uniforms, at the cost of the
    exploring rows only (few once ``ε_t`` is small).

    Parameters
    ----------
    uniforms : tuple[Array, Array]
        ``(u1, u2)``, each ``(n,)`` in ``[0, 1)`` (:func:`draw_acting_uniforms`, or torch).
    epsilon
        ``ε`` in ``[0, 1]``, scalar or ``(n,)``.
    decide : Callable[[Array], DelightDecision | tuple[DelightDecision, Array]]
        ``decide(rows)`` for the exploring rows (int64 ``(r,)``, ``r >= 1``); or
        ``(decision, columns)``, ``columns`` int ``(r, C)`` the action of each column.
    host_probs, host_actions : Array | None
        exactly one: ``π`` ``(n, A)``, or a greedy host's int ``(n,)`` actions.

    Returns
    -------
    ExploreRowsDraw
        numpy in, numpy out; torch in, torch out (on the inputs' device).

    Raises
    ------
    TypeError
        if neither or both of ``host_probs`` and ``host_actions`` are given.

    Examples
    --------
    >>> import numpy as np
    >>> pi = np.array([[0.9, 0.1], [0.9, 0.1]])
    >>> decide = lambda rows: delight_rule(pi[rows], np.array([[0.0, 1.0]]), 0.5)
    >>> draw = sample_acting_on_explore_rows((np.array([0.2, 0.7]), np.array([0.5, 0.5])),
    ...                                      0.5, decide, host_probs=pi)
    >>> draw.actions.tolist(), draw.explored.tolist(), draw.rows.tolist()
    ([1, 0], [True, False], [0])
    """
    if (host_probs is None) == (host_actions is None):
        raise TypeError("give exactly one of host_probs and host_actions")
    u1, u2 = uniforms
    # The same uniforms as sample_acting: u1 picks the exploring rows, u2 the action on every
    # row, so computing q on those rows only changes no action.
    explored = u1 < epsilon
    if is_torch(explored):
        rows = sys.modules["torch"].nonzero(explored).flatten()
    else:
        rows = np.flatnonzero(explored)
    if host_actions is not None:
        actions = host_actions.clone() if is_torch(host_actions) else np.array(host_actions)
    elif is_torch(host_probs):
        actions = sample_categorical(host_probs, u2.to(host_probs.dtype))  # type: ignore[union-attr]
    else:
        actions = sample_categorical(host_probs, u2)
    if rows.shape[0] == 0:
        return ExploreRowsDraw(actions, explored, rows, None, None)
    out = decide(rows)
    decision, columns = (out, None) if isinstance(out, DelightDecision) else out
    u_rows = u2[rows]
    if is_torch(decision.override):
        u_rows = u_rows.to(decision.override.dtype)
    chosen = sample_categorical(decision.override, u_rows)
    if columns is None:
        actions[rows] = chosen
    elif is_torch(columns):
        actions[rows] = columns.gather(-1, chosen[:, None])[:, 0]
    else:
        actions[rows] = np.take_along_axis(columns, chosen[:, None], axis=-1)[:, 0]
    return ExploreRowsDraw(actions, explored, rows, decision, chosen)


def greedy_probs(values: np.ndarray) -> np.ndarray:
    """A greedy host's float64 ``(n, A)`` one-hot on ``argmax_a values[i, a]`` (ties: the first
    maximal index, as ``torch.argmax`` and DQN's ``predict``)."""
    out = np.zeros(values.shape, dtype=np.float64)
    out[np.arange(values.shape[0]), np.argmax(values, axis=1)] = 1.0
    return out
