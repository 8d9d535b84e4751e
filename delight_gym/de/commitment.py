"""Committed overrides: DE over options ``(a, k)``, ``a`` held ``k`` steps (beyond the paper).

Host ``π``, durations ``k ∈ K ∋ 1``: option surprisal ``ℓ_k(a) = min(k·ℓ(a), L)`` with
``ℓ(a) = [−log π(a) + log max π]_+``; delight ``χ(a, k) = EI(a)·ℓ_k(a)``; gate ``χ ≥ λ``, ``χ > 0``;
override ``q(a, k) ∝ χ·1{gate}`` (the host for one step if the gate is empty). With probability
``ε`` a fresh decision draws ``(a, k) ~ q`` and plays ``a`` for exactly ``k`` steps.
``K = {1}`` is the paper's rule exactly. :class:`Commitment` holds each env's commitment.
numpy only. Guide: ``docs/exploring-in-time.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from delight_gym._checks import (
    check_finite_array,
    check_flag,
    check_positive_int,
    check_probabilities,
    check_probability,
    check_unit_interval_array,
)
from delight_gym.de.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_SURPRISAL_CAP,
    DelightDecision,
    Gate,
    GateSettings,
    apply_delight_rule,
    check_gate_settings,
    draw_acting_uniforms,
    sample_acting_on_explore_rows,
    surprisal,
)
from delight_gym.de.scale import scale_free_gate_price

__all__ = [
    "DEFAULT_DURATIONS",
    "CommitDecision",
    "Commitment",
    "OptionDecision",
    "apply_option_rule",
    "check_durations",
    "held_in_gate",
    "option_rule",
    "option_surprisal",
]

#: Durations of the default options: powers of two up to 64 steps.
DEFAULT_DURATIONS = (1, 2, 4, 8, 16, 32, 64)

Array = Any  # numpy.ndarray


def check_durations(durations: Any) -> np.ndarray:
    """The option durations as int64 ``(D,)``; ValueError naming ``durations`` unless they are
    integers increasing strictly from ``1`` (the one-step override, the empty gate's fallback)."""
    arr = np.asarray(durations)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"durations must be a non-empty 1-D sequence, got {durations!r}")
    if not np.issubdtype(arr.dtype, np.integer):
        if not (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr))):
            raise ValueError(f"durations must be integers, got {durations!r}")
    out = arr.astype(np.int64)
    if out[0] != 1 or np.any(np.diff(out) <= 0):
        raise ValueError(f"durations must increase strictly from 1, got {durations!r}")
    return out


def option_surprisal(
    host_probs: Array,
    durations: Any = DEFAULT_DURATIONS,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
) -> Array:
    """Capped surprisal of the options, ``ℓ_k(a) = min(k·ℓ(a), L)``, ``(..., A, D)`` for ``π``
    ``(..., A)``; column ``k = 1`` is :func:`~delight_gym.de.rule.surprisal`."""
    dur = check_durations(durations)
    per_step = surprisal(np.asarray(host_probs), surprisal_cap)  # min(ℓ, L)
    return np.minimum(per_step[..., None] * dur, surprisal_cap)  # min(k·min(ℓ, L), L)


def _option_host(host_probs: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """Unnormalised ``p̃(a, k) = π_max·(π(a)/π_max)^k``, ``(..., A, D)``, whose rule surprisal
    is ``min(k·ℓ(a), L)``."""
    out = np.empty((*host_probs.shape, dur.size), dtype=np.float64)
    out[..., 0] = host_probs  # k = 1 is π itself, so that column is the paper's ℓ bit for bit
    if dur.size > 1:
        p_max = host_probs.max(axis=-1, keepdims=True)
        with np.errstate(divide="ignore"):
            log_ratio = np.log(host_probs) - np.log(p_max)  # ≤ 0; −inf where π(a) = 0
        # in log space: π(a)^k underflows for large k, the ratio to π_max does not
        out[..., 1:] = p_max[..., None] * np.exp(log_ratio[..., None] * dur[1:])
    return out


class OptionDecision(NamedTuple):
    """Output of :func:`option_rule`; batched like its inputs (``D`` durations).

    Attributes
    ----------
    host, probs
        ``π`` and the first step's law ``(1 − ε)π + ε·Σ_k q(·, k)``, ``(..., A)``.
    override, delight, surprisal, gate
        ``q`` (``π`` in the ``k = 1`` column where the gate is empty), ``χ(a, k)``,
        ``ℓ_k(a)`` and the gate mask, ``(..., A, D)``.
    gate_empty, epsilon
        ``(...)``.
    durations
        int64 ``(D,)``: ``K``.
    """

    host: Array
    probs: Array
    override: Array
    delight: Array
    surprisal: Array
    gate: Array
    gate_empty: Array
    epsilon: Array
    durations: Array


def option_rule(
    host_probs: Array,
    expected_improvement: Array,
    epsilon: Any,
    *,
    durations: Any = DEFAULT_DURATIONS,
    gate_price: float = DEFAULT_GATE_PRICE,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
    atol: float = 1e-6,
) -> OptionDecision:
    """DE over options ``(a, k)``: :func:`~delight_gym.de.rule.delight_rule` on the ``A·D``
    options with host ``p̃(a, k) ∝ π(a)^k`` and ``EI(a, k) = EI(a)``; checked, then
    :func:`apply_option_rule`.

    Parameters
    ----------
    host_probs, expected_improvement, epsilon, gate_price, surprisal_cap, atol
        As for :func:`~delight_gym.de.rule.delight_rule` (``EI(a)`` stands for every hold
        of ``a``: the posterior scores actions, not holds).
    durations : sequence of int
        ``K`` (:func:`check_durations`); ``(1,)`` is the paper's rule.

    Returns
    -------
    OptionDecision
        With ``durations = (1,)`` its ``[..., 0]`` columns are ``delight_rule``'s.
    """
    dur = check_durations(durations)
    gate = check_gate_settings(gate_price, surprisal_cap)
    host = np.asarray(host_probs, dtype=np.float64)
    ei = check_finite_array(expected_improvement, "expected_improvement")
    check_probabilities(host, "host_probs", atol=atol)
    if np.any(ei < 0):
        raise ValueError("expected_improvement must be non-negative")
    if np.isscalar(epsilon):
        check_probability(epsilon, "epsilon")
    else:
        check_unit_interval_array(epsilon, "epsilon")
    try:
        fits = np.broadcast_shapes(ei.shape, host.shape) == host.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"expected_improvement of shape {ei.shape} does not broadcast to host_probs' "
            f"shape {host.shape}"
        )
    return apply_option_rule(gate, host, ei, epsilon, dur)


def apply_option_rule(
    settings: GateSettings,
    host_probs: Array,
    expected_improvement: Array,
    epsilon: Any,
    durations: Any,
) -> OptionDecision:
    """:func:`option_rule` with ``settings``' ``λ`` (in value units) and ``L`` and checked
    int64 ``durations``, nothing checked (as :func:`~delight_gym.de.rule.apply_delight_rule`
    is to ``delight_rule``)."""
    host = np.asarray(host_probs, dtype=np.float64)
    dur = np.asarray(durations, dtype=np.int64)
    ei = np.broadcast_to(np.asarray(expected_improvement, dtype=np.float64), host.shape)
    lead, n_act, n_dur = host.shape[:-1], host.shape[-1], dur.size
    # Flatten (a, k) to column a·D + j and run the paper's rule on the A·D options.
    opt_host = _option_host(host, dur).reshape((*lead, n_act * n_dur))
    opt_ei = np.broadcast_to(ei[..., None], (*host.shape, n_dur)).reshape(opt_host.shape)
    gate = Gate(settings.gate_price, settings.surprisal_cap)
    d = apply_delight_rule(gate, opt_host, opt_ei, epsilon)
    shape = (*host.shape, n_dur)
    override = d.override.reshape(shape)
    if n_dur > 1:  # where the gate is empty: the host for one step (p̃ is not a law of acts)
        fallback = np.zeros(shape)
        fallback[..., 0] = host
        override = np.where(d.gate_empty[..., None, None], fallback, override)
    eps = d.epsilon
    probs = (1.0 - eps[..., None]) * host + eps[..., None] * override.sum(axis=-1)
    return OptionDecision(
        host,
        probs,
        override,
        d.delight.reshape(shape),
        d.surprisal.reshape(shape),
        d.gate.reshape(shape),
        d.gate_empty,
        eps,
        dur,
    )


def held_in_gate(
    host_probs: Array,
    expected_improvement: Array,
    actions: Array,
    remaining: Array,
    *,
    gate_price: float = DEFAULT_GATE_PRICE,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
) -> np.ndarray:
    """bool ``(n,)``: each held action still clears the gate at the new state as the option of
    its remaining hold, ``EI(a)·min(r·ℓ(a), L) >= λ`` and ``> 0``: ``π`` and ``EI`` at the
    new states ``(n, A)``, the held ``actions`` and the steps ``remaining`` ``r >= 1`` (this
    one included) int ``(n,)``, ``λ`` scaled (:func:`scale_free_gate_price`)."""
    a = np.asarray(actions, dtype=np.int64)[:, None]
    per_step = np.take_along_axis(surprisal(np.asarray(host_probs), surprisal_cap), a, -1)[:, 0]
    ei = np.take_along_axis(np.asarray(expected_improvement, dtype=np.float64), a, -1)[:, 0]
    chi = ei * np.minimum(np.asarray(remaining) * per_step, surprisal_cap)
    return np.asarray((chi >= gate_price) & (chi > 0))


class CommitDecision(NamedTuple):
    """Output of :meth:`Commitment.decide` for ``n`` envs.

    Attributes
    ----------
    actions, durations
        int64 ``(n,)``: the actions to play, and the duration started on explored rows (1
        where the gate was empty; else 0).
    held, explored, released
        bool ``(n,)``: continues an earlier commitment; a fresh decision whose ε coin chose
        the override; a hold ended early this step (``recheck``).
    rows, decision
        int64 ``(r,)``: the explored rows, and their :class:`OptionDecision` (or ``None``).
    """

    actions: np.ndarray
    held: np.ndarray
    explored: np.ndarray
    durations: np.ndarray
    released: np.ndarray
    rows: np.ndarray
    decision: OptionDecision | None


EIArg = Array | Callable[[np.ndarray], Array]


def _ei_rows(expected_improvement: EIArg, rows: np.ndarray) -> np.ndarray:
    if callable(expected_improvement):
        return np.asarray(expected_improvement(rows), dtype=np.float64)
    return np.asarray(expected_improvement, dtype=np.float64)[rows]


class Commitment:
    """Each env's committed override (held action, steps left), stepped by :meth:`decide`.

    Parameters
    ----------
    n_envs : int
        Number of envs (rows).
    durations : sequence of int
        ``K`` (:func:`check_durations`); ``(1,)``: the paper's per-step rule.
    gate_price, surprisal_cap : float
        ``λ`` (in units of ``value_scale``) and ``L``.
    recheck : bool, default False
        Also end a hold once its action leaves the gate (:func:`held_in_gate`; needs EI on
        held rows each step).

    Attributes
    ----------
    action, remaining : numpy.ndarray
        int64 ``(n_envs,)``: the held action and the steps still held after the last one
        played (0: the next step decides afresh).
    """

    def __init__(
        self,
        n_envs: int,
        durations: Any = DEFAULT_DURATIONS,
        *,
        gate_price: float = DEFAULT_GATE_PRICE,
        surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
        recheck: bool = False,
    ) -> None:
        self.n_envs = check_positive_int(n_envs, "n_envs")
        self.durations = check_durations(durations)
        self.gate_price, self.surprisal_cap = check_gate_settings(gate_price, surprisal_cap)
        self.recheck = check_flag(recheck, "recheck")
        self.action = np.zeros(self.n_envs, dtype=np.int64)
        self.remaining = np.zeros(self.n_envs, dtype=np.int64)

    def release(self, mask: Any = None) -> None:
        """End the holds where ``mask`` (bool ``(n_envs,)``; all if ``None``)."""
        if mask is None:
            self.remaining[:] = 0
        else:
            self.remaining[np.asarray(mask, dtype=bool).reshape(self.n_envs)] = 0

    def decide(
        self,
        host_probs: Array,
        expected_improvement: EIArg,
        epsilon: Any,
        rng: np.random.Generator,
        *,
        value_scale: float = 1.0,
        episode_start: Any = None,
    ) -> CommitDecision:
        """One step for every env: held rows play their action, the others DE's draw over
        options (ε coin, then ``(a, k) ~ q``); two uniforms per env every step.

        Parameters
        ----------
        host_probs, epsilon
            ``π`` ``(n, A)`` (checked by the caller) and ``ε``, scalar or ``(n,)``.
        expected_improvement : numpy.ndarray or callable
            ``EI`` ``(n, A)``, or ``f(rows) -> (r, A)`` evaluated only where needed (explored
            rows; held rows too with ``recheck``).
        rng : numpy.random.Generator
            The only randomness.
        value_scale : float, default 1.0
            ``s`` of :func:`scale_free_gate_price`.
        episode_start : array_like, optional
            bool ``(n,)``: rows starting an episode; their holds end first.

        Returns
        -------
        CommitDecision
            With ``durations=(1,)``, the actions of
            :func:`~delight_gym.de.rule.sample_acting_on_explore_rows` on the same uniforms.
        """
        n = self.n_envs
        host = np.asarray(host_probs, dtype=np.float64)
        lam = scale_free_gate_price(self.gate_price, value_scale)
        gate = Gate(lam, self.surprisal_cap)
        if episode_start is not None:
            self.release(episode_start)
        released = np.zeros(n, dtype=bool)
        held = self.remaining > 0
        if self.recheck and held.any():
            rows_h = np.flatnonzero(held)
            keep = held_in_gate(
                host[rows_h],
                _ei_rows(expected_improvement, rows_h),
                self.action[rows_h],
                self.remaining[rows_h],
                gate_price=lam,
                surprisal_cap=self.surprisal_cap,
            )
            released[rows_h[~keep]] = True
            self.remaining[rows_h[~keep]] = 0
            held = self.remaining > 0
        eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (n,))
        # ε = 0 on held rows: they never explore, yet draw their two uniforms like the others,
        # so the generator advances the same whatever is held.
        eps_free = np.where(held, 0.0, eps)
        captured: list[OptionDecision] = []
        dur = self.durations
        columns_row = np.repeat(np.arange(host.shape[-1]), dur.size)  # column a·D + j → a

        def decide_rows(rows: np.ndarray) -> tuple[DelightDecision, np.ndarray]:
            od = apply_option_rule(
                gate, host[rows], _ei_rows(expected_improvement, rows), eps_free[rows], dur
            )
            captured.append(od)
            per_option = (od.override, od.delight, od.surprisal, od.gate)
            q, chi, ell, in_gate = (x.reshape(len(rows), -1) for x in per_option)  # (r, A·D)
            as_rule = DelightDecision(
                od.host, od.probs, q, chi, ell, in_gate, od.gate_empty, od.epsilon
            )
            return as_rule, np.broadcast_to(columns_row, (len(rows), columns_row.size))

        draw = sample_acting_on_explore_rows(
            draw_acting_uniforms(rng, (n,)), eps_free, decide_rows, host_probs=host
        )
        actions = np.asarray(draw.actions, dtype=np.int64)
        actions[held] = self.action[held]  # the host's draw on held rows is discarded
        self.remaining[held] -= 1
        durations = np.zeros(n, dtype=np.int64)
        rows = np.asarray(draw.rows, dtype=np.int64)
        if rows.size:
            assert draw.chosen is not None
            durations[rows] = dur[np.asarray(draw.chosen) % dur.size]  # column a·D + j → k_j
            self.action[rows] = actions[rows]
            self.remaining[rows] = durations[rows] - 1  # this step is the hold's first
        return CommitDecision(
            actions,
            held,
            np.asarray(draw.explored, dtype=bool),
            durations,
            released,
            rows,
            captured[0] if captured else None,
        )
