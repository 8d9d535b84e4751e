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
    check_nonnegative_float,
    check_positive_float,
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
    """``value`` as an array of ``like``'s kind (a tensor on its device, else numpy floats);
    a ``TypeError`` naming ``name`` for anything that is not real numbers."""
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
    """:func:`delight_rule`'s checks of its arrays (shapes, ranges, finiteness), each naming
    its argument."""
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
    if not bool(xp.all(xp.isfinite(probs))):
        raise ValueError("host_probs must be finite (no NaN or inf)")
    if bool(xp.any(probs < 0)):
        raise ValueError("host_probs must be non-negative")
    if bool(xp.any(xp.abs(probs.sum(axis=-1) - 1.0) > atol)):
        raise ValueError("host_probs must sum to 1 along the last axis")
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
    """The gate's settings, checked: ``(λ, L)`` as floats, a :class:`Gate`.

    Parameters
    ----------
    gate_price
        ``λ >= 0`` (``inf`` allowed: the gate is then always empty).
    surprisal_cap
        ``L > 0`` (finite).

    Raises
    ------
    ValueError, TypeError
        naming ``gate_price`` or ``surprisal_cap``.
    """
    lam = check_nonnegative_float(gate_price, "gate_price", allow_inf=True)
    return Gate(lam, check_positive_float(surprisal_cap, "surprisal_cap"))


def epsilon_schedule(t: Any, half_life: float = DEFAULT_HALF_LIFE) -> Any:
    """Annealed override probability ``ε_t = M / (M + t)``.

    Parameters
    ----------
    t
        number of completed rounds (``t = 0`` on the first decision, so ``ε_0 = 1``);
        a non-negative scalar or array.
    half_life : float
        ``M > 0``; ``ε`` halves when ``t`` reaches ``M``.

    Returns
    -------
    Any
        ``ε_t`` with the shape of ``t`` (a ``float`` for a scalar ``t``).
    """
    m = check_positive_float(half_life, "half_life")
    if np.isscalar(t):
        return m / (m + check_nonnegative_float(t, "t"))
    xp = array_namespace(t)
    if bool(xp.any(t < 0)) or not bool(xp.all(xp.isfinite(t))):
        raise ValueError("t must be finite and non-negative")
    return m / (m + t)


def surprisal(host_probs: Array, surprisal_cap: float = DEFAULT_SURPRISAL_CAP) -> Array:
    """Capped relative surprisal ``min([−log π(a) − min_b(−log π(b))]_+, L)``.

    Parameters
    ----------
    host_probs : Array
        host action probabilities, shape ``(..., A)``.
    surprisal_cap : float
        ``L > 0``.

    Returns
    -------
    Array
        Shape ``(..., A)``; 0 for the host's most likely action(s), ``L`` for actions the host
        never takes.
    """
    return _surprisal(host_probs, check_positive_float(surprisal_cap, "surprisal_cap"))


def _surprisal(host_probs: Array, cap: float) -> Array:
    """:func:`surprisal` without the check of ``cap``."""
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
    host
        the host policy ``π`` as given, shape ``(..., A)``.
    probs
        acting distribution ``(1 − ε)π + εq``, shape ``(..., A)``.
    override
        the override distribution ``q``, shape ``(..., A)`` (``π`` where the gate is
        empty).
    delight
        prospective delight ``χ = EI·ℓ``, shape ``(..., A)``.
    surprisal
        ``ℓ``, shape ``(..., A)``.
    gate
        boolean gate mask ``G``, shape ``(..., A)``.
    gate_empty
        boolean, shape ``(...)``: ``True`` where ``G`` is empty.
    epsilon
        the override probability used, broadcast to shape ``(...)``.
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
        host policy ``π``, shape ``(..., A)``, non-negative, rows sum to 1.
    expected_improvement : Array
        ``EI(a) = E[(f(a) − v)^+]`` over the host baseline ``v``, shape
        ``(..., A)`` (broadcastable), finite and non-negative.
    epsilon
        override probability in ``[0, 1]``: a scalar or an array of shape ``(...)``
        (e.g. from :func:`epsilon_schedule`).
    gate_price : float
        ``λ ≥ 0`` (``inf`` allowed: the gate is then always empty).
    surprisal_cap : float
        ``L > 0``.
    atol : float
        tolerance on ``Σ π = 1``.
    multiplicity : Array | None
        optional non-negative integer counts ``m``, shape ``(..., A)``
        (broadcastable): column ``c`` then stands for ``m_c`` interchangeable actions, each
        with host probability ``host_probs[c]`` and expected improvement
        ``expected_improvement[c]`` (so ``Σ_c m_c π_c = 1``). This lets a bandit with
        millions of untried, identical arms be decided over a handful of columns. The
        returned ``probs``, ``override`` and ``host`` are then per *column* (the total over
        its members, summing to one), while ``delight``, ``surprisal`` and ``gate`` stay
        per member; columns with ``m_c = 0`` are never in the gate. With all ``m_c = 1``
        the result equals the plain rule.

    Returns
    -------
    DelightDecision
        A :class:`DelightDecision`; every field finite for finite inputs (``χ`` is capped at
        the dtype's largest value, and ``q`` is formed from EI relative to the gate's largest,
        so an EI of ``1e308`` overflows nothing).

    Raises
    ------
    ValueError
        on probabilities that are negative or do not sum to one, a negative or
        NaN EI, an EI or ``multiplicity`` that does not broadcast to ``host_probs``, ``ε``
        outside ``[0, 1]``, ``λ < 0`` or ``L ≤ 0``; each names the argument.
    TypeError
        on inputs that are not real numbers.
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
    """:func:`delight_rule` on checked inputs (the maths, nothing checked)."""
    xp = array_namespace(host_probs)
    if multiplicity is not None:
        host_probs = host_probs * multiplicity  # per-column host probabilities
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
        gated = gated * multiplicity
    total = gated.sum(axis=-1, keepdims=True)
    gate_empty = total[..., 0] <= 0
    safe_total = xp.where(total > 0, total, 1.0)
    override = xp.where(total > 0, gated / safe_total, host_probs)
    eps = epsilon
    eps_b: Any = eps if np.isscalar(eps) or eps.ndim == 0 else eps[..., None]
    probs = (1.0 - eps_b) * host_probs + eps_b * override
    eps_out = xp.zeros(gate_empty.shape, dtype=probs.dtype) + eps
    if xp is not np:
        eps_out = eps_out.to(probs.device)
    return DelightDecision(host_probs, probs, override, delight, surp, gate, gate_empty, eps_out)


class GateSettings(Protocol):
    """Anything holding checked gate settings (:class:`~delight_gym.de.options.DelightOptions`)."""

    @property
    def gate_price(self) -> float:
        """``λ >= 0`` (checked)."""
        ...

    @property
    def surprisal_cap(self) -> float:
        """``L > 0`` (checked)."""
        ...


def apply_delight_rule(
    settings: GateSettings,
    host_probs: Array,
    expected_improvement: Array,
    epsilon: Any,
    *,
    multiplicity: Array | None = None,
) -> DelightDecision:
    """:func:`delight_rule` with ``settings.gate_price`` and ``settings.surprisal_cap``,
    unchecked: for per-step code whose settings were checked once (by
    :func:`check_gate_settings`, typically in a constructor) and whose inputs it builds itself.

    Parameters
    ----------
    settings : GateSettings
        holds ``gate_price`` and ``surprisal_cap``.
    host_probs, expected_improvement, epsilon, multiplicity
        as for :func:`delight_rule`.
    """
    return _decide(
        host_probs,
        expected_improvement,
        epsilon,
        settings.gate_price,
        settings.surprisal_cap,
        multiplicity,
    )


def sample_categorical(probs: Array, uniforms: Array) -> Array:
    """Inverse-CDF draw from each row of ``probs`` given one uniform per row.

    Parameters
    ----------
    probs : Array
        shape ``(..., A)``, rows sum to one.
    uniforms : Array
        shape ``(...)``, values in ``[0, 1)``.

    Returns
    -------
    Array
        Integer actions of shape ``(...)``. Only actions with positive probability are drawn,
        even when rounding leaves the last cumulative sum slightly below ``u``.
    """
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
    """Draw actions from the acting distribution in two stages, as Algorithm 1 does.

    First ``explore ~ Bernoulli(ε)``; then the action is drawn from ``q`` if ``explore`` and
    from the host ``π`` otherwise, by inverse CDF from a second uniform. The marginal law of
    the action is exactly ``decision.probs``. Randomness comes only from ``rng``: a
    ``numpy.random.Generator`` for numpy inputs, a ``torch.Generator`` for tensors.

    Parameters
    ----------
    decision : DelightDecision
        output of :func:`delight_rule`, batch shape ``(...)``.
    rng
        the generator to draw from.

    Returns
    -------
    tuple[Array, Array]
        ``(actions, explored)``, both of shape ``(...)``; ``explored`` is ``True`` where the
        override was drawn (whether or not the gate was empty).
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
    """The two uniforms of :func:`sample_acting`, in its order: ``u1`` (override or not), then
    ``u2`` (inverse-CDF draw of the action), each of ``shape``.

    Pass them to :func:`sample_acting_on_explore_rows` to evaluate the gate only on the rows
    that explore: the same actions as :func:`sample_acting` on the full decision.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng.random(shape), rng.random(shape)


class ExploreRowsDraw(NamedTuple):
    """Output of :func:`sample_acting_on_explore_rows`, for a batch of ``n`` decisions.

    Attributes
    ----------
    actions
        int64 ``(n,)``: the host's draw, replaced by the override's on exploring rows.
    explored
        bool ``(n,)``: ``u1 < ε`` (the override was drawn, whether or not the gate was
        empty).
    rows
        int64 ``(r,)``: the exploring rows, ascending (``explored``'s indices).
    decision
        the :class:`DelightDecision` of those rows (batch ``(r,)``), or ``None`` when
        no row explored (``decide`` was then not called).
    chosen
        int64 ``(r,)``: the column drawn from ``decision.override`` on each exploring
        row (before ``columns`` mapped it to an action), or ``None`` with ``decision``.
    """

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
    """The two-stage draw of :func:`sample_acting`, with the gate evaluated only on the rows
    that explore.

    Row ``i`` explores where ``u1[i] < ε``; it then plays ``sample_categorical(q_i, u2[i])``
    from the override ``q`` of ``decide``, and elsewhere ``sample_categorical(π_i, u2[i])`` from
    the host. This is exactly :func:`sample_acting` on the full decision with the same uniforms
    (the same actions, not only the same law), but the posterior and the gate — the costly part
    once ``ε_t`` is small — are evaluated on the exploring rows only. It is the one home of this
    pattern: the bandit and MDP DE agents and the wrapper's ``lazy_gate`` all call it.

    Parameters
    ----------
    uniforms : tuple[Array, Array]
        ``(u1, u2)``, each of shape ``(n,)``, in ``[0, 1)``: from
        :func:`draw_acting_uniforms` (numpy) or drawn in advance (e.g. one pair per step
        of an episode, torch).
    epsilon
        override probability ``ε`` in ``[0, 1]``, a scalar or shape ``(n,)``.
    decide : Callable[[Array], DelightDecision | tuple[DelightDecision, Array]]
        ``decide(rows) -> decision`` for the exploring rows ``rows`` (int64 ``(r,)``,
        ``r >= 1``), typically ``delight_rule(host_probs[rows], ei_of(rows), ε, ...)``. When
        the decision's columns are not the actions (e.g. a bandit deciding over a handful
        of compacted columns), it returns ``(decision, columns)`` with ``columns`` int
        ``(r, C)`` the action of each column.
    host_probs : Array | None
        ``π``, shape ``(n, A)``; the host's draw is
        ``sample_categorical(π, u2)``.
    host_actions : Array | None
        int ``(n,)``, instead of ``host_probs`` for a deterministic host (a
        greedy one): its draw from a one-hot ``π`` is its action whatever ``u2``, so
        ``host_actions`` may be given without ever building ``π`` (a bandit with millions
        of arms). Exactly one of the two must be given.

    Returns
    -------
    ExploreRowsDraw
        An :class:`ExploreRowsDraw`. numpy in, numpy out; torch in, torch out (on the inputs'
        device).

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
    """A greedy host's probabilities: one-hot on ``argmax_a values[i, a]`` (ties: the first
    maximal index, as ``torch.argmax`` and DQN's ``predict``), float64 ``(n, A)`` for values
    ``(n, A)``."""
    out = np.zeros(values.shape, dtype=np.float64)
    out[np.arange(values.shape[0]), np.argmax(values, axis=1)] = 1.0
    return out
