"""Tabular MDP posteriors, batched over seeds (torch): ``B`` MDPs with ``S`` states, ``A``
actions and a known horizon ``H`` (time-homogeneous, ``V_H = 0``). Transitions have a sparse
symmetric ``Dirichlet(α0·1_S)`` prior; rewards are Beta (rescaled from ``reward_range``) or
Normal (known noise). :class:`TabularMDPAdapter` makes one a value posterior for DE.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from delight_gym._checks import (
    check_action_batch,
    check_all_finite,
    check_choice,
    check_finite_array,
    check_finite_float,
    check_positive_float,
    check_positive_int,
    check_shape,
)
from delight_gym.de.posterior import PosteriorValues, check_baseline, host_baseline
from delight_gym.posteriors.adapters import PosteriorAdapter, split_values, to_numpy
from delight_gym.posteriors.arguments import check_placement
from delight_gym.posteriors.encoders import DiscreteEncoder, OneHotEncoder, required_encoder
from delight_gym.posteriors.tabular_planning import TabularModel, value_iteration
from delight_gym.posteriors.tabular_sampling import (
    GeneratorLike,
    generators_per_row,
    sample_dense,
    sample_sparse,
)

__all__ = [
    "DEFAULT_STICK_TOLERANCE",
    "DEFAULT_TRANSITION_MASS",
    "TabularMDPAdapter",
    "TabularMDPPosterior",
    "TabularModel",
    "value_iteration",
]

#: Default total Dirichlet mass ``S·α0`` (``transition_prior=None``).
DEFAULT_TRANSITION_MASS = 0.1
#: Default truncation of the stick-breaking series of a sampled transition row.
DEFAULT_STICK_TOLERANCE = 1e-9


def _pair(value: Any, name: str, hint: str = "") -> Any:
    # value, a ValueError naming name unless it holds two entries
    if len(value) != 2:
        raise ValueError(f"{name} must be a pair{hint}")
    return value


class TabularMDPPosterior:
    """Dirichlet transition and Beta (or Normal) reward posteriors of ``B`` tabular MDPs.

    Parameters
    ----------
    batch_size, num_states, num_actions, horizon : int
        ``B`` independent MDPs (seeds), ``S``, ``A`` and the episode length ``H``.
    transition_prior : float, optional
        ``α0 > 0`` per successor state; default ``0.1/S``.
    reward_model : {"beta", "normal"}
        Bounded rewards or Normal rewards with known noise.
    reward_range : tuple[float, float]
        ``(low, high)`` of the rewards for ``"beta"``; outside: an error.
    reward_prior : tuple[float, float], optional
        Beta ``(a0, b0)`` (default ``(1, 1)``) or Normal ``(m0, s0)`` of the mean (``(0, 1)``).
    reward_noise : float
        ``σ`` of the Normal model.
    device, dtype
        Where the statistics live, and ``torch.float64`` or ``torch.float32``.
    """

    def __init__(
        self,
        batch_size: int,
        num_states: int,
        num_actions: int,
        horizon: int,
        *,
        transition_prior: float | None = None,
        reward_model: str = "beta",
        reward_range: tuple[float, float] = (0.0, 1.0),
        reward_prior: tuple[float, float] | None = None,
        reward_noise: float = 1.0,
        device: str | torch.device | None = None,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.num_states = check_positive_int(num_states, "num_states")
        self.num_actions = check_positive_int(num_actions, "num_actions")
        self.horizon = check_positive_int(horizon, "horizon")
        if transition_prior is None:
            transition_prior = DEFAULT_TRANSITION_MASS / self.num_states
        self.transition_prior = check_positive_float(transition_prior, "transition_prior")
        self.reward_model = check_choice(reward_model, ("beta", "normal"), "reward_model")
        self.device, self.dtype = check_placement(device, dtype)
        low, high = (float(x) for x in _pair(reward_range, "reward_range", " (low, high)"))
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"reward_range must be finite with low < high, got {reward_range}")
        self.reward_range = (low, high)
        if reward_prior is None:
            reward_prior = (1.0, 1.0) if reward_model == "beta" else (0.0, 1.0)
        _pair(reward_prior, "reward_prior")
        # A Beta prior's first parameter must be positive, a Normal prior's mean only finite.
        first = check_positive_float if reward_model == "beta" else check_finite_float
        self.reward_prior = (
            first(reward_prior[0], "reward_prior[0]"),
            check_positive_float(reward_prior[1], "reward_prior[1]"),
        )
        self.reward_noise = check_positive_float(reward_noise, "reward_noise")
        self._rows = torch.arange(self.batch_size, device=self.device)
        self.reset()

    def as_value_posterior(
        self, *, num_actions: int | None = None, observation_space: Any = None
    ) -> Any:
        """A :class:`TabularMDPAdapter` reading ``observation_space``."""
        return TabularMDPAdapter(self, observation_space=observation_space)

    def reset(self) -> None:
        """Back to the prior."""
        shape = (self.batch_size, self.num_states, self.num_actions)
        kw: dict[str, Any] = {"dtype": self.dtype, "device": self.device}
        #: transition counts ``n(s, a)`` (pairs whose successor was recorded), ``(B, S, A)``.
        self.visits = torch.zeros(shape, **kw)
        #: successor slots, int64 ``(B, S, A, K)``, and their counts (0 = empty slot).
        self.succ = torch.zeros((*shape, 1), dtype=torch.int64, device=self.device)
        self.succ_counts = torch.zeros((*shape, 1), **kw)
        #: reward statistics: Beta ``(a, b)`` or Normal ``(n, Σr)``, each ``(B, S, A)``.
        if self.reward_model == "beta":
            self.reward_a = torch.full(shape, self.reward_prior[0], **kw)
            self.reward_b = torch.full(shape, self.reward_prior[1], **kw)
        else:
            self.reward_n = torch.zeros(shape, **kw)
            self.reward_sum = torch.zeros(shape, **kw)

    def clone(self) -> TabularMDPPosterior:
        """A deep copy."""
        other = object.__new__(TabularMDPPosterior)
        for key, value in self.__dict__.items():
            other.__dict__[key] = value.clone() if isinstance(value, torch.Tensor) else value
        return other

    @property
    def num_slots(self) -> int:
        """``K``: the successor slots per pair."""
        return int(self.succ.shape[-1])

    def _check_index(
        self, x: Any, name: str, upper: int, allow_missing: bool = False
    ) -> torch.Tensor:
        on_device = isinstance(x, torch.Tensor) and x.device == self.device
        t = x if on_device else torch.as_tensor(x, device=self.device)
        if t.shape != (self.batch_size,) or t.dtype not in (torch.int32, torch.int64):
            raise ValueError(
                f"{name} must be an integer tensor of shape ({self.batch_size},), "
                f"got dtype {t.dtype} and shape {tuple(t.shape)}"
            )
        low = -1 if allow_missing else 0
        if bool(((t < low) | (t >= upper)).any()):
            extra = " (or -1 for no successor)" if allow_missing else ""
            raise ValueError(f"{name} must lie in [0, {upper}){extra}")
        return t if t.dtype == torch.int64 else t.long()

    def update(
        self, states: Any, actions: Any, rewards: Any, next_states: Any | None = None
    ) -> None:
        """Record one transition per seed: int ``states``, ``actions``, ``next_states`` (``None``
        or ``-1``: no successor) and float ``rewards`` (in ``reward_range`` for Beta), ``(B,)``."""
        s = self._check_index(states, "states", self.num_states)
        a = self._check_index(actions, "actions", self.num_actions)
        r = torch.as_tensor(rewards, dtype=self.dtype, device=self.device)
        check_shape(r, (self.batch_size,), "rewards")
        check_all_finite(r, "rewards")
        # Flat index of each row's (seed, s, a) pair: one index op per statistic.
        pair = (self._rows * self.num_states + s) * self.num_actions + a
        if self.reward_model == "beta":
            low, high = self.reward_range
            scaled = (r - low) / (high - low)
            # A rounding slack of 1e-9, then clamped so the Beta counts stay non-negative.
            if bool(((scaled < -1e-9) | (scaled > 1 + 1e-9)).any()):
                raise ValueError(f"rewards must lie in reward_range {self.reward_range}")
            scaled = scaled.clamp(0.0, 1.0)
            self.reward_a.view(-1).index_add_(0, pair, scaled)
            self.reward_b.view(-1).index_add_(0, pair, 1.0 - scaled)
        else:
            self.reward_n.view(-1).index_add_(0, pair, torch.ones_like(r))
            self.reward_sum.view(-1).index_add_(0, pair, r)
        if next_states is None:
            return
        nxt = self._check_index(next_states, "next_states", self.num_states, allow_missing=True)
        keep = nxt >= 0
        if not bool(keep.all()):
            pair, nxt = pair[keep], nxt[keep]
        self._add_transitions(pair, nxt)

    def _add_transitions(self, pair: torch.Tensor, nxt: torch.Tensor) -> None:
        # Each pair's successor goes to its slot if recorded, else to the first empty slot;
        # the slots double when some pair has none left.
        k = self.num_slots
        slot_succ = self.succ.view(-1, k).index_select(0, pair)
        slot_count = self.succ_counts.view(-1, k).index_select(0, pair)
        match = (slot_succ == nxt[:, None]) & (slot_count > 0)
        empty = slot_count == 0
        if k == 1 and bool((match | empty).all()):  # common on deterministic MDPs
            self._write(pair, torch.zeros_like(pair), nxt)
            return
        found = match.any(dim=1)
        if bool((~found & ~empty.any(dim=1)).any()):
            self._grow()
            k = self.num_slots
            empty = torch.cat([empty, torch.ones_like(empty)], dim=1)
            match = torch.cat([match, torch.zeros_like(match)], dim=1)
        slot = torch.where(
            found, match.to(torch.uint8).argmax(dim=1), empty.to(torch.uint8).argmax(dim=1)
        )
        self._write(pair, slot, nxt)

    def _write(self, pair: torch.Tensor, slot: torch.Tensor, nxt: torch.Tensor) -> None:
        flat = pair * self.num_slots + slot
        self.succ.view(-1).index_copy_(0, flat, nxt)
        self.succ_counts.view(-1).index_add_(0, flat, torch.ones_like(nxt, dtype=self.dtype))
        self.visits.view(-1).index_add_(0, pair, torch.ones_like(nxt, dtype=self.dtype))

    def _grow(self) -> None:
        self.succ = torch.cat([self.succ, torch.zeros_like(self.succ)], dim=-1)
        self.succ_counts = torch.cat([self.succ_counts, torch.zeros_like(self.succ_counts)], dim=-1)

    def _select(self, rows: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor:
        return x if rows is None else x[rows]

    def mean_reward(self, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Posterior mean reward ``(B, S, A)`` (or of the given seed rows)."""
        if self.reward_model == "beta":
            low, high = self.reward_range
            a = self._select(rows, self.reward_a)
            b = self._select(rows, self.reward_b)
            return low + (high - low) * a / (a + b)
        m0, s0 = self.reward_prior
        n = self._select(rows, self.reward_n)
        total = self._select(rows, self.reward_sum)
        # Conjugate Normal mean: the precision-weighted prior mean and reward sum.
        prec0, noise_prec = 1.0 / s0**2, 1.0 / self.reward_noise**2
        return (m0 * prec0 + total * noise_prec) / (prec0 + n * noise_prec)

    def mean_model(self, rows: torch.Tensor | None = None) -> TabularModel:
        """The posterior-mean MDP in sparse form (optionally only the given seed rows)."""
        # Dirichlet mean: counts/(c + n) on the seen successors, c/(c + n) spread uniformly.
        c = self.num_states * self.transition_prior
        denom = c + self._select(rows, self.visits)
        return TabularModel(
            reward=self.mean_reward(rows),
            succ=self._select(rows, self.succ),
            weight=self._select(rows, self.succ_counts) / denom[..., None],
            uniform=c / denom,
        )

    def mean_transitions_dense(self) -> torch.Tensor:
        """``P̄(s'|s, a)`` as a dense ``(B, S, A, S)`` tensor."""
        shape = (*self.visits.shape, self.num_states)
        alpha = torch.full(shape, self.transition_prior, dtype=self.dtype, device=self.device)
        alpha.scatter_add_(-1, self.succ, self.succ_counts)
        return alpha / alpha.sum(dim=-1, keepdim=True)

    def plan_mean(
        self, rows: torch.Tensor | None = None, first_step: int = 0, out: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``Q_h`` of the posterior-mean MDP, ``(H - first_step, B', S, A)`` (into ``out``)."""
        return value_iteration(self.mean_model(rows), self.horizon, first_step, out)

    def expected_sticks(self, stick_tolerance: float = DEFAULT_STICK_TOLERANCE) -> float:
        """``c·log(1/tol)``: the mean number of sticks a sparse sample row needs."""
        tol = check_positive_float(stick_tolerance, "stick_tolerance")
        return self.num_states * self.transition_prior * math.log(1.0 / tol)

    def sample_model(
        self,
        generator: GeneratorLike,
        *,
        rows: torch.Tensor | None = None,
        sampler: str = "auto",
        stick_tolerance: float = DEFAULT_STICK_TOLERANCE,
    ) -> TabularModel:
        """One MDP per seed drawn from the posterior.

        Parameters
        ----------
        generator : GeneratorLike
            One ``torch.Generator`` for all rows, or one per row (draws independent of others).
        rows : torch.Tensor, optional
            Seed rows to sample (default: all).
        sampler : {"auto", "sparse", "dense"}
            Stick-breaking, dense Dirichlet rows, or sparse unless :meth:`expected_sticks` > S/4.
        stick_tolerance : float
            Leftover mass at which the stick-breaking series stops.
        """
        tol = check_positive_float(stick_tolerance, "stick_tolerance")
        if not tol < 1.0:
            raise ValueError(f"stick_tolerance must be < 1, got {stick_tolerance}")
        check_choice(sampler, ("auto", "sparse", "dense"), "sampler")
        if sampler == "auto":
            sampler = "sparse" if self.expected_sticks(tol) <= self.num_states / 4 else "dense"
        row_list = list(range(self.batch_size)) if rows is None else [int(i) for i in rows]
        gens = generators_per_row(generator, row_list)
        if sampler == "sparse":
            return sample_sparse(self, row_list, gens, tol)
        return sample_dense(self, row_list, gens)

    def plan_sample(
        self, generator: GeneratorLike, *, out: torch.Tensor | None = None, **sample_options: Any
    ) -> torch.Tensor:
        """``Q_h`` of one :meth:`sample_model` draw per seed, ``(H, B', S, A)`` (into ``out``)."""
        model = self.sample_model(generator, **sample_options)
        return value_iteration(model, self.horizon, 0, out)


class TabularMDPAdapter(PosteriorAdapter):
    """A :class:`~delight_gym.posteriors.TabularMDPPosterior` as a
    :class:`~delight_gym.de.posterior.ValuePosterior` for finite-horizon MDPs (DeepSea).

    It answers at each row's step ``h`` (:attr:`steps`): :meth:`mean` is ``Q_h(s, ·)`` of the
    posterior-mean plan, :meth:`expected_improvement` the paper's mean surrogate
    ``(Q_h(s, a) − v_s)^+`` (§3.3). Every call passes exactly ``B`` rows (row ``i``: environment
    and seed ``i``); an episode longer than ``H`` is a ``ValueError``.

    Parameters
    ----------
    posterior : TabularMDPPosterior
        Its reward model must accept the rewards (DeepSea: ``reward_range=(-move_cost, 1)``).
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box, optional
        ``Discrete(S, start)`` or a one-hot ``Box``; default: inferred from each batch.

    Attributes
    ----------
    steps : numpy.ndarray
        int64 ``(B,)``: each row's step ``h``.
    """

    def __init__(self, posterior: Any, observation_space: Any = None) -> None:
        super().__init__(posterior, TabularMDPPosterior, getattr(posterior, "num_actions", None))
        self.encoder: DiscreteEncoder | OneHotEncoder | None = None
        if observation_space is not None:
            self.encoder = required_encoder(
                observation_space,
                "observation_space must be Discrete or a one-hot Box, got {space}",
            )
            if self.encoder.num_states != posterior.num_states:
                raise ValueError(
                    f"observation_space encodes {self.encoder.num_states} states but the "
                    f"posterior has num_states={posterior.num_states}"
                )
        self.steps: np.ndarray = np.zeros(posterior.batch_size, dtype=np.int64)
        self._plan: Any = None  # cached plan_mean(first_step=self._plan_first), torch
        self._plan_first = 0

    def _states(self, observations: Any, name: str, allow_blank: Any = None) -> np.ndarray:
        """State indices ``(B,)`` of a batch (``-1`` for blank rows where allowed)."""
        arr = np.asarray(observations)
        b, n_states = self.posterior.batch_size, self.posterior.num_states
        if arr.ndim == 0 or arr.shape[0] != b:
            got = "a scalar" if arr.ndim == 0 else f"{arr.shape[0]}"
            raise ValueError(
                f"{name} must hold one observation per posterior row (batch_size {b}), got "
                f"{got}; with the wrapper's lazy_gate=True use batch_size 1"
            )
        encoder = self.encoder
        if encoder is None and arr.ndim == 1 and np.issubdtype(arr.dtype, np.integer):
            encoder = DiscreteEncoder(n_states)
        elif encoder is None and int(np.prod(arr.shape[1:])) == n_states:
            encoder = OneHotEncoder(arr.shape[1:])
        elif encoder is None:
            raise ValueError(
                f"{name} must encode num_states={n_states} states: integer indices (n,) or "
                f"one-hot rows of {n_states} entries, got dtype {arr.dtype}, shape {arr.shape}"
            )
        return np.asarray(encoder(arr, name, allow_blank), dtype=np.int64)

    def _check_steps(self) -> None:
        over = self.steps >= self.posterior.horizon
        if np.any(over):
            i = int(np.flatnonzero(over)[0])
            raise ValueError(
                f"observations: row {i} has already taken horizon={self.posterior.horizon} "
                "steps; episodes must not outlast it (after a truncation, call reset_steps)"
            )

    def _q(self, states: np.ndarray) -> Any:
        """``Q_{h_i}(s_i, ·)`` of the posterior-mean plan, a ``(B, A)`` tensor."""
        self._check_steps()
        # The cached plan starts at the earliest step it served; replan only for an earlier one.
        first = int(self.steps.min())
        if self._plan is None or self._plan_first > first:
            self._plan = self.posterior.plan_mean(first_step=first)
            self._plan_first = first

        rows = np.arange(self.posterior.batch_size)
        idx = np.stack([self.steps - self._plan_first, rows, states])
        h, b, s = torch.as_tensor(idx, dtype=torch.int64, device=self._plan.device)
        return self._plan[h, b, s]

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Posterior-mean ``Q_h(s, ·)`` at each row's current step, float64 ``(B, A)``."""
        return to_numpy(self._q(self._states(observations, "observations")))

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """The mean surrogate ``(Q_h(s_i, a) − baseline_i)^+`` (paper §3.3), float64 ``(B, A)``."""
        means = self.mean(observations)
        base = check_baseline(baseline, means.shape[0])
        return np.asarray(np.maximum(means - base[:, None], 0.0))

    def evaluate(
        self, observations: np.ndarray, host_probs: np.ndarray, baseline: str = "host"
    ) -> PosteriorValues:
        """Means, baseline and mean-surrogate EI, on the posterior's device, copied once."""
        q = self._q(self._states(observations, "observations"))
        probs = self.posterior_tensor(host_probs, q.shape, "host_probs")
        base = host_baseline(q, probs, baseline)
        ei = (q - base[:, None]).clamp(min=0.0)
        return split_values(q, base, ei)

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray | None = None,
    ) -> None:
        """Record one transition per row at its step, then advance the steps (to 0 where the
        episode ended). ``next_observations`` may be blank (zeros) on terminated rows and at
        step ``H − 1``; ``ValueError`` on bad input or a row already ``H`` steps in."""
        s = self._states(observations, "observations")
        b = self.posterior.batch_size
        self._check_steps()
        term = self._flags(terminated, "terminated")
        trunc = (
            np.zeros(b, dtype=bool) if truncated is None else self._flags(truncated, "truncated")
        )
        no_successor = term | (self.steps == self.posterior.horizon - 1)
        nxt = self._states(next_observations, "next_observations", allow_blank=no_successor)
        nxt = np.where(no_successor, -1, nxt)
        act = check_action_batch(actions, b, self.num_actions)
        rew = check_finite_array(rewards, "rewards", shape=(b,))
        device = self.posterior.device
        self.posterior.update(
            torch.as_tensor(s, device=device),
            torch.as_tensor(act, device=device),
            torch.as_tensor(rew, dtype=self.posterior.dtype, device=device),
            torch.as_tensor(nxt, device=device),
        )
        self._plan = None
        self.steps = np.where(term | trunc, 0, self.steps + 1)

    def _flags(self, value: Any, name: str) -> np.ndarray:
        arr = np.asarray(value)
        b = self.posterior.batch_size
        if arr.size != b or arr.ndim > 1:
            raise ValueError(f"{name} must hold one flag per row ({b}), got shape {arr.shape}")
        return arr.reshape(b).astype(bool)

    def reset_steps(self, rows: Any = None) -> None:
        """Start a new episode (step 0) on ``rows`` (default: all)."""
        idx = np.arange(self.posterior.batch_size) if rows is None else np.asarray(rows)
        self.steps[idx] = 0

    def __repr__(self) -> str:
        p = self.posterior
        return (
            f"{type(self).__name__}(batch_size={p.batch_size}, num_states={p.num_states}, "
            f"num_actions={p.num_actions}, horizon={p.horizon})"
        )
