"""An ensemble of Q-heads with randomized prior functions: a value posterior for deep RL.

:class:`EnsembleQPosterior` follows Osband, Aslanides & Cassirer 2018, "Randomized prior
functions for deep reinforcement learning" (bsuite's ``boot_dqn``): ``K`` heads
``Q_k = f_k + β p_k``, ``f_k`` a trainable MLP and ``p_k`` a frozen random MLP scaled by
``β = prior_scale``, each trained by Q-learning on the same (optionally bootstrap-masked)
transitions with its own target network. The heads are one set of batched tensors (no Python
loop over heads). The posterior over ``Q(s, ·)`` is the ensemble's empirical distribution, and
EI over a baseline ``v_s`` is exact for it, ``EI(s, a) = (1/K) Σ_k (Q_k(s, a) − v_s)^+``
(:func:`ensemble_expected_improvement`). Defaults follow bsuite's baselines where sensible;
randomness comes only from the posterior's own ``seed``. The settings, the loss and the
initialisation are on the documentation's Posteriors page.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from delight_gym._checks import (
    check_action_batch,
    check_all_finite,
    check_binary,
    check_device,
    check_finite_array,
    check_nonnegative_float,
    check_positive_float,
    check_positive_int,
    check_probabilities,
    check_seed,
    check_would_fit,
    host_view,
)
from delight_gym.posteriors.base import BASELINES, PosteriorValues, check_baseline, host_baseline
from delight_gym.posteriors.ensemble_tabular import TABLE_MAX_STATES, StateTables

__all__ = [
    "DEFAULT_HIDDEN_SIZES",
    "DEFAULT_NUM_HEADS",
    "DEFAULT_PRIOR_SCALE",
    "ENCODINGS",
    "EnsembleQNetwork",
    "EnsembleQPosterior",
    "TDStepStats",
    "Transitions",
    "ensemble_expected_improvement",
    "ensemble_values",
    "one_hot_indices",
]

#: Input encodings of :class:`EnsembleQNetwork`: ``"auto"`` (Discrete → ``"index"``, Box with
#: bounds ``[0, 1]`` → ``"one_hot"``, other Box → ``"dense"``), ``"index"``, ``"one_hot"``
#: (row look-up when every row of a batch is one-hot or all zero, else the matrix product —
#: the same values either way), ``"dense"`` (always the matrix product).
ENCODINGS = ("auto", "index", "one_hot", "dense")

#: Defaults of the ensemble, shared by the network, the posterior and the deep agents built on
#: them: ``K`` heads, each an MLP with these hidden sizes plus its frozen prior scaled by
#: ``prior_scale`` (bsuite: 20 heads of [50, 50], scale 3 (TF) or 5 (JAX)).
DEFAULT_NUM_HEADS = 10
DEFAULT_HIDDEN_SIZES = (64, 64)
DEFAULT_PRIOR_SCALE = 3.0


def ensemble_expected_improvement(head_values: Any, baseline: Any) -> Any:
    """Exact expected improvement of an ensemble's empirical posterior.

    ``EI(s, a) = (1/K) Σ_k (Q_k(s, a) − v_s)^+``.

    Parameters
    ----------
    head_values : numpy.ndarray or torch.Tensor
        ``(K, ..., A)``: every head's value of every action.
    baseline : numpy.ndarray or torch.Tensor
        ``(...)``: the baseline ``v_s`` of every row (same type as ``head_values``).

    Returns
    -------
    numpy.ndarray or torch.Tensor
        ``(..., A)``, non-negative, the type, dtype and device of ``head_values``.
    """
    gap = head_values - baseline[None, ..., None]
    if isinstance(gap, torch.Tensor):
        return gap.clamp_min(0.0).mean(dim=0)
    return np.maximum(gap, 0.0).mean(axis=0)


def ensemble_values(
    head_values: Any, host_probs: Any, baseline: str = "host"
) -> tuple[Any, Any, Any]:
    """What one DE decision needs from an ensemble's head values: the heads' mean, the baseline
    ``v_s`` (:func:`~delight_gym.posteriors.base.host_baseline`) and the exact EI
    (:func:`ensemble_expected_improvement`). The one path from head values to a decision's
    inputs, used by :meth:`EnsembleQPosterior.evaluate` and
    :class:`~delight_gym.sb3.BootstrappedDQN`.

    Parameters
    ----------
    head_values : numpy.ndarray or torch.Tensor
        ``(K, n, A)``.
    host_probs : numpy.ndarray or torch.Tensor
        ``(n, A)``, same type as ``head_values`` (unused for ``baseline="max"``).
    baseline : {"host", "max"}, default "host"

    Returns
    -------
    tuple
        ``mean (n, A)``, ``baseline (n,)``, ``expected_improvement (n, A)``, the type of
        ``head_values``.
    """
    means = head_values.mean(0)
    base = host_baseline(means, host_probs, baseline)
    return means, base, ensemble_expected_improvement(head_values, base)


class Transitions(NamedTuple):
    """A checked batch of ``B`` transitions on the heads' device
    (:meth:`EnsembleQNetwork.check_transitions`).

    Attributes
    ----------
    observations, next_observations : torch.Tensor
        Encoded (:meth:`EnsembleQNetwork.encode`): int64 ``(B,)`` or float32 ``(B, d)``.
    actions : torch.Tensor
        int64 ``(B,)``.
    rewards, terminated : torch.Tensor
        float32 ``(B,)`` (``terminated`` 0 or 1).
    masks : torch.Tensor or None
        float32 ``(B, K)``.
    """

    observations: torch.Tensor
    next_observations: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    terminated: torch.Tensor
    masks: torch.Tensor | None


class TDStepStats(NamedTuple):
    """What one gradient step of :meth:`EnsembleQPosterior.td_step` reports (0-d tensors).

    Attributes
    ----------
    loss : torch.Tensor
        The summed loss of the ``K`` heads before the step.
    target_std : torch.Tensor
        Standard deviation of the TD targets ``y`` over the batch and the heads (the value
        scale of the environment; :class:`~delight_gym.sb3.BootstrappedDQN` can divide EI
        by its running average).
    """

    loss: torch.Tensor
    target_std: torch.Tensor


def _hidden_sizes(value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"hidden_sizes must be a sequence of integers, got {value!r}")
    return tuple(check_positive_int(h, "hidden_sizes") for h in value)


def _invalidate_tables(network: EnsembleQNetwork, incompatible_keys: Any) -> None:
    """After ``load_state_dict``: the frozen weights may have changed, the tables are stale."""
    if network.tables is not None:
        network.tables.invalidate()


class EnsembleQNetwork(nn.Module):
    """``K`` trainable Q-heads, their target copies and their frozen priors, batched.

    Parameters
    ----------
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box
        Box observations of any shape are flattened.
    num_actions : int
        ``A``.
    num_heads : int, default 10
        ``K``.
    hidden_sizes : sequence of int, default (64, 64)
    prior_scale : float, default 3.0
        ``β >= 0`` (0: no prior).
    encoding : str, default "auto"
        One of :data:`ENCODINGS`.
    generator : torch.Generator, optional
        CPU generator of the initial weights (default: a fresh unseeded one).

    Attributes
    ----------
    weights, biases : torch.nn.ParameterList
        Trainable layers: ``weights[l]`` of shape ``(K, in_l, out_l)`` (the first layer's
        ``in`` is the number of states for look-up inputs), ``biases[l]`` of shape
        ``(K, 1, out_l)``.
    frozen_weights_<l>, frozen_biases_<l> : torch.Tensor
        Buffers of shape ``(2K, in_l, out_l)`` and ``(2K, 1, out_l)``: rows ``[:K]`` are the
        target networks' layers, rows ``[K:]`` the priors'.
    """

    def __init__(
        self,
        observation_space: Any,
        num_actions: int,
        *,
        num_heads: int = DEFAULT_NUM_HEADS,
        hidden_sizes: Sequence[int] = DEFAULT_HIDDEN_SIZES,
        prior_scale: float = DEFAULT_PRIOR_SCALE,
        encoding: str = "auto",
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.num_actions = check_positive_int(num_actions, "num_actions")
        self.num_heads = check_positive_int(num_heads, "num_heads")
        self.hidden_sizes = _hidden_sizes(hidden_sizes)
        self.prior_scale = check_nonnegative_float(prior_scale, "prior_scale")
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, got {encoding!r}")
        if isinstance(observation_space, spaces.Discrete):
            if encoding not in ("auto", "index"):
                raise ValueError(
                    f"encoding {encoding!r} needs a Box observation space; a Discrete space "
                    "uses 'index'"
                )
            self.encoding = "index"
            self.input_dim = int(observation_space.n)
            self.obs_start = int(observation_space.start)
            self.obs_shape: tuple[int, ...] = ()
        elif isinstance(observation_space, spaces.Box):
            if encoding == "index":
                raise ValueError("encoding 'index' needs a Discrete observation space")
            if encoding == "auto":
                unit = bool(
                    np.all(observation_space.low == 0) and np.all(observation_space.high == 1)
                )
                encoding = "one_hot" if unit else "dense"
            self.encoding = encoding
            self.obs_shape = tuple(int(d) for d in observation_space.shape)
            self.input_dim = int(np.prod(self.obs_shape)) if self.obs_shape else 1
            self.obs_start = 0
            if self.input_dim == 0:
                raise ValueError(
                    "observation_space must hold at least one number, got a Box of shape "
                    f"{self.obs_shape}"
                )
        else:
            raise TypeError(
                "observation_space must be a gymnasium Discrete or Box space, got "
                f"{type(observation_space).__name__}"
            )
        if generator is None:
            generator = torch.Generator()
        sizes = (self.input_dim, *self.hidden_sizes, self.num_actions)
        check_would_fit(
            self.training_bytes(sizes, self.num_heads), self._size_description(sizes), "cpu"
        )
        k = self.num_heads
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for i, (fan_in, fan_out) in enumerate(itertools.pairwise(sizes)):
            # Heads 0..K-1 trainable, K..2K-1 the priors; targets start as copies.
            w = torch.empty(2 * k, fan_in, fan_out)
            std = 1.0 / math.sqrt(fan_in)
            nn.init.trunc_normal_(w, 0.0, std, -2.0 * std, 2.0 * std, generator=generator)
            b = torch.zeros(2 * k, 1, fan_out)
            self.weights.append(nn.Parameter(w[:k].clone()))
            self.biases.append(nn.Parameter(b[:k].clone()))
            self.register_buffer(f"frozen_weights_{i}", w.clone())
            self.register_buffer(f"frozen_biases_{i}", b.clone())
        self.num_layers = len(sizes) - 1
        # Look-up inputs with few states: the priors' and targets' values as per-state tables
        # (ensemble_tabular), refreshed at each target update and whenever weights are loaded.
        self.tables: StateTables | None = None
        if self.encoding in ("index", "one_hot") and self.input_dim <= TABLE_MAX_STATES:
            self.tables = StateTables(self.input_dim, self._mlp)
            self.register_load_state_dict_post_hook(_invalidate_tables)

    @staticmethod
    def training_bytes(sizes: Sequence[int], num_heads: int) -> int:
        """Bytes ``K`` heads of layer widths ``sizes`` (inputs, hidden..., actions) take while
        training: float32 weights and biases six times over (trainable, target, prior,
        gradient and Adam's two moments)."""
        per_head = sum(fan_in * fan_out + fan_out for fan_in, fan_out in itertools.pairwise(sizes))
        return 6 * 4 * num_heads * per_head

    def _size_description(self, sizes: Sequence[int]) -> str:
        return (
            f"num_heads={self.num_heads} with hidden_sizes={self.hidden_sizes}, "
            f"{sizes[0]} inputs (observation_space) and {sizes[-1]} actions"
        )

    # -- frozen layers ---------------------------------------------------------------------------

    def _frozen(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        return [
            (self._buffers[f"frozen_weights_{i}"], self._buffers[f"frozen_biases_{i}"])  # type: ignore[misc]
            for i in range(self.num_layers)
        ]

    def _trainable(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        w, b = self.weights._parameters, self.biases._parameters
        return [(w[str(i)], b[str(i)]) for i in range(self.num_layers)]  # type: ignore[misc]

    @torch.no_grad()
    def update_target(self) -> None:
        """Copy the trainable layers into the target networks (a hard update)."""
        k = self.num_heads
        for (w, b), (fw, fb) in zip(self._trainable(), self._frozen(), strict=True):
            fw[:k].copy_(w)
            fb[:k].copy_(b)
        if self.tables is not None and self.tables.current(fw):
            self.tables.refresh_target(self._frozen(), k)

    def _current_tables(self, inputs: torch.Tensor) -> StateTables | None:
        """The state tables, refreshed if stale, when ``inputs`` are one batch of states
        ``(n,)`` shared by every head; else ``None`` (the networks run)."""
        if self.tables is None or inputs.dtype != torch.int64 or inputs.ndim != 1:
            return None
        frozen = self._frozen()
        if not self.tables.current(frozen[0][0]):
            self.tables.refresh(frozen, self.num_heads, self.prior_scale)
        return self.tables

    # -- inputs ----------------------------------------------------------------------------------

    @property
    def device(self) -> torch.device:
        """Where the heads live."""
        return self.weights[0].device

    def encode(self, observations: Any, name: str = "observations") -> torch.Tensor:
        """A batch of observations as the first layer's input, checked.

        Numpy arrays and CPU tensors are checked in numpy (cheaper for small batches), a GPU
        tensor on its device; the checks and the encoding are the same either way.

        Parameters
        ----------
        observations : array_like or torch.Tensor
            ``(n,)`` or ``(n, 1)`` Discrete observations, or ``(n, *obs_shape)`` Box ones
            (flattened rows of the right size are accepted too).
        name : str
            The argument name for error messages.

        Returns
        -------
        torch.Tensor
            int64 ``(n,)`` state indices (``-1`` for an all-zero one-hot row) for a row
            look-up, or float32 ``(n, input_dim)`` for a matrix product; on :attr:`device`.

        Raises
        ------
        TypeError
            If the observations are not numbers.
        ValueError
            On a wrong shape, a non-finite value (also a float64 beyond float32's range), or a
            Discrete observation that is not an integer of the space.
        """
        return self._encode(observations, name, check_finite=True)

    def _encode(self, observations: Any, name: str, *, check_finite: bool) -> torch.Tensor:
        """:meth:`encode`; ``check_finite=False`` when the caller checked finiteness itself."""
        x = host_view(observations)
        if x.ndim == 0:
            raise ValueError(f"{name} must be a batch with a leading axis, got a scalar")
        n = int(x.shape[0])
        kind = _dtype_kind(x)
        if kind not in "biuf":
            raise TypeError(f"{name} must be numbers, got dtype {x.dtype}")
        if self.encoding == "index":
            self._check_index_shape(tuple(x.shape), name)
            if kind == "f" and check_finite:
                check_all_finite(x, name)
            if kind == "b" or (kind == "f" and bool((x != x.round()).any())):
                raise ValueError(f"{name} must be integers for a Discrete observation space")
            idx = _cast(x.reshape(n), "int64") - self.obs_start
            if bool(((idx < 0) | (idx >= self.input_dim)).any()):
                raise ValueError(self._range_message(name))
            return self._on_device(idx)
        self._check_box_shape(tuple(x.shape), name)
        flat = _cast(x.reshape(n, self.input_dim), "float32")
        if check_finite:  # after the cast: beyond float32's range is inf
            check_all_finite(flat, name, where=" in float32")
        if self.encoding == "one_hot":
            idx = one_hot_indices(flat)
            if idx is not None:
                return self._on_device(idx)
        return self._on_device(flat)

    def _on_device(self, value: Any) -> torch.Tensor:
        if isinstance(value, np.ndarray):
            value = torch.from_numpy(value)
        return value.to(self.device)

    def _check_index_shape(self, shape: tuple[int, ...], name: str) -> None:
        if len(shape) > 2 or (len(shape) == 2 and shape[1] != 1):
            raise ValueError(
                f"{name} must be Discrete observations of shape (n,) or (n, 1), got {shape}"
            )

    def _range_message(self, name: str) -> str:
        return f"{name} must lie in [{self.obs_start}, {self.obs_start + self.input_dim})"

    def _check_box_shape(self, shape: tuple[int, ...], name: str) -> None:
        if int(np.prod(shape[1:])) != self.input_dim:
            raise ValueError(
                f"{name} must have shape (n, {', '.join(map(str, self.obs_shape))}), got {shape}"
            )

    # -- forward ---------------------------------------------------------------------------------

    @staticmethod
    def _mlp(inputs: torch.Tensor, layers: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        """The batched MLP of ``H`` stacked heads → ``(H, n, A)``.

        ``inputs`` are shared by every head, ``(n,)`` indices or ``(n, d)`` rows, or one batch
        per head, ``(H, n)`` indices or ``(H, n, d)`` rows (:meth:`td_loss_encoded`). ``layers``
        holds ``(weight (H, in, out), bias (H, 1, out))`` per layer.
        """
        w0, b0 = layers[0]
        if inputs.dtype == torch.int64 and inputs.ndim == 2:  # one batch of indices per head
            blank = (inputs < 0)[..., None]
            heads = torch.arange(w0.shape[0], device=w0.device)[:, None]
            h = torch.where(blank, b0, w0[heads, inputs.clamp_min(0)] + b0)
        elif inputs.dtype == torch.int64:
            blank = inputs < 0  # all-zero one-hot rows: only the bias
            h = w0.index_select(1, inputs.clamp_min(0)) + b0  # (H, n, out): the row look-up
            if inputs.device.type != "cpu":  # no host sync on a GPU
                h = torch.where(blank[None, :, None], b0, h)
            elif bool(blank.any()):
                if h.requires_grad:
                    h = torch.where(blank[None, :, None], b0, h)
                else:  # the same numbers, in place: far cheaper than where on a CPU
                    h[:, blank] = b0
        elif inputs.ndim == 3:  # one batch of rows per head
            h = torch.baddbmm(b0, inputs, w0)
        else:
            h = torch.baddbmm(b0, inputs.expand(w0.shape[0], *inputs.shape), w0)
        for w, b in layers[1:]:
            h = torch.baddbmm(b, torch.relu(h), w)
        return h

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Every head's ``Q_k = f_k + β p_k`` on encoded inputs (:meth:`encode`): ``(K, n, A)``."""
        q = self._mlp(inputs, self._trainable())
        if self.prior_scale == 0:
            return q
        k = self.num_heads
        with torch.no_grad():
            tables = self._current_tables(inputs)
            if tables is not None:
                return q + tables.prior.index_select(1, tables.rows(inputs))
            prior = self._mlp(inputs, [(w[k:], b[k:]) for w, b in self._frozen()])
        return q + self.prior_scale * prior

    def td_loss(
        self,
        observations: Any,
        actions: Any,
        rewards: Any,
        next_observations: Any,
        terminated: Any,
        gamma: float,
        masks: Any = None,
        *,
        check: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The heads' summed Q-learning loss on one batch, and the TD targets' std.

        Parameters
        ----------
        observations, next_observations : array_like or torch.Tensor
            ``(B, ...)``, as for :meth:`encode`.
        actions : array_like or torch.Tensor
            ``(B,)`` or ``(B, 1)`` integers in ``[0, A)``.
        rewards, terminated : array_like or torch.Tensor
            ``(B,)`` or ``(B, 1)``; ``terminated`` is 1 where the episode ended without a
            time-limit truncation (the target does not bootstrap there).
        gamma : float
        masks : array_like or torch.Tensor, optional
            ``(B, K)`` bootstrap masks (weights of each transition in each head's loss).
        check : bool, default True
            Check the batch (:meth:`check_transitions`). ``False`` only converts it: for a
            caller whose data was checked as it came in (the SB3 algorithms' replay buffers).

        Returns
        -------
        (torch.Tensor, torch.Tensor)
            The loss (0-d, with a graph to the trainable parameters) and the std of the TD
            targets (0-d, no graph).
        """
        batch = (observations, actions, rewards, next_observations, terminated, masks)
        x, xn, act, rew, done, m = self._transitions(batch, check)
        return self.td_loss_encoded(x, xn, act, rew, done, gamma, None if m is None else m.T)

    def _transitions(self, batch: tuple[Any, ...], check: bool) -> Transitions:
        """:meth:`check_transitions` of ``batch`` (``observations, actions, rewards,
        next_observations, terminated, masks``), or its conversion alone for ``check=False``."""
        return self.check_transitions(*batch) if check else self._unchecked_transitions(*batch)

    def td_loss_encoded(
        self,
        x: torch.Tensor,
        xn: torch.Tensor,
        actions: torch.Tensor,
        rewards: torch.Tensor,
        terminated: torch.Tensor,
        gamma: float,
        weights: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`td_loss` on inputs already checked and encoded, shared or one batch per head.

        Parameters
        ----------
        x, xn : torch.Tensor
            Encoded observations and next observations (:meth:`encode`): ``(B,)``/``(B, d)``
            shared by every head, or ``(K, B)``/``(K, B, d)``, one batch per head (``K``
            independent learners in one network: e.g. several seeds' ensembles stacked).
        actions : torch.Tensor
            int64 ``(B,)`` or ``(K, B)``.
        rewards, terminated : torch.Tensor
            float32 ``(B,)`` or ``(K, B)``.
        gamma : float
        weights : torch.Tensor, optional
            float32 ``(K, B)``: each transition's weight in each head's loss (bootstrap masks).

        Returns
        -------
        (torch.Tensor, torch.Tensor)
            As :meth:`td_loss`.
        """
        k = self.num_heads
        b = actions.shape[-1]
        q = self._mlp(x, self._trainable())  # (K, B, A), with a graph
        with torch.no_grad():
            tables = self._current_tables(x) if xn.ndim == 1 else None
            if tables is not None:  # β p(x) and the targets at xn, read from the tables
                prior_s, next_q = tables.lookup(x, xn)
            else:
                frozen = self._frozen()
                beta = self.prior_scale
                prior_s = beta * self._mlp(x, [(w[k:], bb[k:]) for w, bb in frozen])  # (K, B, A)
                per_head = xn.ndim == (2 if xn.dtype == torch.int64 else 3)
                both = self._mlp(torch.cat([xn, xn]) if per_head else xn, frozen)  # (2K, B, A)
                next_q = both[:k] + beta * both[k:]
            y = rewards + gamma * (1.0 - terminated) * next_q.max(dim=-1).values  # (K, B)
        q_sa = (q + prior_s).gather(-1, actions.expand(k, b)[..., None])[..., 0]
        sq = 0.5 * (q_sa - y) ** 2
        if weights is not None:
            sq = sq * weights
        return sq.mean(dim=1).sum(), y.std() if y.numel() > 1 else y.new_zeros(())

    def check_transitions(
        self,
        observations: Any,
        actions: Any,
        rewards: Any,
        next_observations: Any,
        terminated: Any,
        masks: Any = None,
    ) -> Transitions:
        """A batch of ``B`` transitions checked and on :attr:`device` (arguments as for
        :meth:`td_loss`): every error names its argument, and nothing is computed from a batch
        that fails.

        Returns
        -------
        Transitions
            ``observations`` and ``next_observations`` encoded (:meth:`encode`), ``actions``
            int64 ``(B,)``, ``rewards`` and ``terminated`` float32 ``(B,)``, ``masks`` float32
            ``(B, K)`` or ``None``.

        Raises
        ------
        ValueError
            On a shape that does not fit ``B`` rows, a non-finite observation, reward or mask,
            an action outside ``[0, A)``, ``terminated`` not 0/1, or a negative mask.
        TypeError
            On non-numeric observations or rewards.

        Notes
        -----
        Tensors on a GPU are checked there with one host synchronisation for the whole batch
        (:meth:`_valid_on_device`); only a batch that fails is checked again item by item, for
        the message.
        """
        batch = (observations, actions, rewards, next_observations, terminated, masks)
        if self.device.type != "cpu" and self._valid_on_device(*batch):
            return self._unchecked_transitions(*batch)
        x = self.encode(observations, "observations")
        b = int(x.shape[0])
        xn = self.encode(next_observations, "next_observations")
        if xn.shape[0] != b:
            raise ValueError(
                f"next_observations must hold one row per observation ({b}), got {xn.shape[0]}"
            )
        act = check_action_batch(_column(actions, b, "actions"), b, self.num_actions, "actions")
        rew = _column(rewards, b, "rewards")
        if _dtype_kind(rew) not in "iuf":
            raise TypeError(f"rewards must be real numbers, got dtype {rew.dtype}")
        rew = _cast(rew, "float32")
        check_all_finite(rew, "rewards", where=" in float32")
        done = _column(terminated, b, "terminated")
        check_binary(done, "terminated")
        m = None
        if masks is not None:
            m = host_view(masks)
            if tuple(m.shape) != (b, self.num_heads):
                raise ValueError(
                    f"masks must have shape ({b}, {self.num_heads}), got {tuple(m.shape)}"
                )
            if _dtype_kind(m) not in "biuf":
                raise TypeError(f"masks must be numbers, got dtype {m.dtype}")
            m = _cast(m, "float32")
            check_all_finite(m, "masks", where=" in float32")
            if bool((m < 0).any()):
                raise ValueError("masks must be >= 0 (weights of each transition in each head)")
            m = self._on_device(_cast(m, "float32"))
        return Transitions(
            x,
            xn,
            self._on_device(act),
            self._on_device(_cast(rew, "float32")),
            self._on_device(_cast(done, "float32")),
            m,
        )

    def _valid_on_device(
        self,
        observations: Any,
        actions: Any,
        rewards: Any,
        next_observations: Any,
        terminated: Any,
        masks: Any,
    ) -> bool:
        """Whether a batch of tensors already on :attr:`device` passes every check of
        :meth:`check_transitions`, decided with one host synchronisation; ``False`` for anything
        else (which :meth:`check_transitions` then checks item by item)."""
        given = [observations, actions, rewards, next_observations, terminated]
        given += [] if masks is None else [masks]
        if not all(torch.is_tensor(v) and v.device == self.device for v in given):
            return False
        b = observations.shape[0] if observations.ndim else -1
        shapes = [tuple(v.shape) for v in (actions, rewards, terminated)]
        if (
            next_observations.ndim == 0
            or next_observations.shape[0] != b
            or any(shape not in ((b,), (b, 1)) for shape in shapes)
            or (masks is not None and tuple(masks.shape) != (b, self.num_heads))
            or _dtype_kind(actions) not in "iu"
            or _dtype_kind(rewards) != "f"
            or _dtype_kind(terminated) not in "bf"
            or (masks is not None and _dtype_kind(masks) not in "bf")
        ):
            return False
        flags = [
            ((actions >= 0) & (actions < self.num_actions)).all(),
            rewards.float().isfinite().all(),  # beyond float32's range is inf in the cast
            ((terminated == 0) | (terminated == 1)).all(),
        ]
        for obs in (observations, next_observations):
            if obs.is_floating_point():  # beyond float32's range becomes inf in the cast
                flags.append(obs.float().isfinite().all())
        if masks is not None and masks.is_floating_point():
            flags.append((masks.float().isfinite() & (masks >= 0)).all())
        return bool(torch.stack(flags).all())

    def _unchecked_transitions(
        self,
        observations: Any,
        actions: Any,
        rewards: Any,
        next_observations: Any,
        terminated: Any,
        masks: Any,
    ) -> Transitions:
        """:meth:`check_transitions`'s result without its value checks (for a batch known to
        pass them: :meth:`_valid_on_device`, or ``td_loss(check=False)``)."""
        dev, b = self.device, len(actions)
        return Transitions(
            self._encode(observations, "observations", check_finite=False),
            self._encode(next_observations, "next_observations", check_finite=False),
            _tensor(actions, dev).reshape(b).long(),
            _tensor(rewards, dev).reshape(b).float(),
            _tensor(terminated, dev).reshape(b).float(),
            None if masks is None else _tensor(masks, dev).float(),
        )


def one_hot_indices(rows: Any) -> Any | None:
    """Row indices of ``(n, d)`` rows (numpy or torch) that are each one-hot or all zero.

    Returns
    -------
    array or torch.Tensor or None
        int64 ``(n,)``: the column of each row's one, ``-1`` for an all-zero row; ``None`` if
        some row is neither.
    """
    if isinstance(rows, np.ndarray):  # the row's maximum must be its only nonzero entry
        at = np.arange(rows.shape[0])
        top = rows.argmax(1)
        peak = rows[at, top]
        rebuilt = np.zeros_like(rows)
        rebuilt[at, top] = peak
        if not (np.array_equal(rows, rebuilt) and ((peak == 1) | (peak == 0)).all()):
            return None
        return np.where(peak == 1, top, -1).astype(np.int64, copy=False)
    count = (rows != 0).sum(1)
    if not bool(((count <= 1) & (rows.sum(1) == count)).all()):
        return None
    return _cast(torch.where(count == 1, rows.argmax(1), -1), "int64")


def _column(value: Any, rows: int, name: str) -> Any:
    """``value`` (:func:`~delight_gym._checks.host_view`) as ``(rows,)``; it may be ``(rows,)``
    or ``(rows, 1)`` (SB3's replay samples)."""
    x = host_view(value)
    if tuple(x.shape) not in ((rows,), (rows, 1)):
        raise ValueError(f"{name} must have shape ({rows},) or ({rows}, 1), got {tuple(x.shape)}")
    return x.reshape(rows)


def _dtype_kind(x: Any) -> str:
    """numpy's dtype kind (``"b"``, ``"i"``, ``"u"``, ``"f"``, ``"c"``, ...) of an array or a
    tensor."""
    if isinstance(x, np.ndarray):
        return str(x.dtype.kind)
    if x.dtype == torch.bool:
        return "b"
    if x.dtype.is_floating_point:
        return "f"
    if x.dtype.is_complex:
        return "c"
    return "u" if x.dtype == torch.uint8 else "i"


def _cast(x: Any, dtype: str) -> Any:
    """``x`` (array or tensor) as ``"int64"`` or ``"float32"`` (no copy if it already is)."""
    if isinstance(x, np.ndarray):
        with np.errstate(over="ignore"):  # beyond float32's range: inf, refused by the caller
            return x.astype(dtype, copy=False)
    return x.to(getattr(torch, dtype))


def _tensor(value: Any, device: torch.device) -> torch.Tensor:
    if torch.is_tensor(value):
        return value.to(device)
    return torch.as_tensor(np.asarray(value), device=device)


class EnsembleQPosterior:
    """A :class:`~delight_gym.posteriors.base.ValuePosterior` over ``Q(s, ·)``: ``K`` Q-heads
    with randomized priors, trained by TD from their own replay buffer (see the module
    docstring for the maths and the bsuite settings).

    Parameters
    ----------
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box
        Box observations of any shape are flattened.
    action_space : gymnasium.spaces.Discrete or int
        The actions, or their number ``A``.
    gamma : float, default 0.99
        Discount of the TD targets, in ``[0, 1]``.
    learning_rate : float, default 1e-3
        Adam's step size.
    batch_size : int, default 128
    buffer_size : int, default 10_000
        Replay capacity (oldest transitions are overwritten).
    learning_starts : int, default 128
        No gradient step until the buffer holds this many transitions.
    sgd_period : int, default 1
        One gradient step every ``sgd_period`` transitions given to :meth:`update`.
    target_update_period : int, default 4
        Gradient steps between copies of the trainable heads into the targets.
    mask_prob : float, default 1.0
        Probability that a transition is in a head's bootstrap sample, in ``(0, 1]``.
    device : torch.device or str, default "cpu"
    seed : int, optional
        Seed of the posterior's CPU ``torch.Generator`` (initial weights, replay samples,
        masks).
    **network_options
        The heads' architecture, :class:`EnsembleQNetwork`'s keyword arguments (documented,
        defaulted and checked there): ``num_heads`` (``K``, default 10), ``hidden_sizes``
        (default ``(64, 64)``), ``prior_scale`` (``β``, default 3.0) and ``encoding`` (default
        ``"auto"``).

    Attributes
    ----------
    network : EnsembleQNetwork
    optimizer : torch.optim.Adam
    generator : torch.Generator
    num_actions, num_heads : int
    transitions, sgd_steps : int
        Transitions given to :meth:`update` and gradient steps taken so far.

    Notes
    -----
    Rows of one :meth:`update` call are stored first, then that call's gradient steps run. Use
    :meth:`td_step` to train the heads from another replay buffer (an SB3 algorithm's); the
    posterior's own buffer then stays empty. ``state_dict``/``load_state_dict`` and pickling
    keep the heads, priors, targets, optimizer, generator, buffer and counters.

    Examples
    --------
    >>> from gymnasium import spaces
    >>> post = EnsembleQPosterior(spaces.Discrete(3), 2, num_heads=4, seed=0)
    >>> post.head_values([0, 2]).shape
    (4, 2, 2)
    >>> ei = post.expected_improvement([0], post.mean([0]).max(axis=1))
    >>> bool((ei >= 0).all())
    True
    """

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        *,
        gamma: float = 0.99,
        learning_rate: float = 1e-3,
        batch_size: int = 128,
        buffer_size: int = 10_000,
        learning_starts: int = 128,
        sgd_period: int = 1,
        target_update_period: int = 4,
        mask_prob: float = 1.0,
        device: Any = "cpu",
        seed: int | None = None,
        **network_options: Any,
    ) -> None:
        if isinstance(action_space, spaces.Discrete):
            if int(action_space.start) != 0:
                raise ValueError("action_space must start at 0")
            num_actions = int(action_space.n)
        elif isinstance(action_space, numbers.Integral) and not isinstance(action_space, bool):
            num_actions = int(action_space)
        else:
            raise TypeError(
                "action_space must be a gymnasium Discrete space or an int, got "
                f"{type(action_space).__name__}"
            )
        self.num_actions = check_positive_int(num_actions, "action_space")
        self.gamma = check_nonnegative_float(gamma, "gamma")
        if self.gamma > 1:
            raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.buffer_size = check_positive_int(buffer_size, "buffer_size")
        self.learning_starts = check_positive_int(learning_starts, "learning_starts")
        if self.learning_starts > self.buffer_size:
            raise ValueError(
                f"learning_starts={learning_starts} exceeds buffer_size={buffer_size}: the "
                "buffer never holds that many transitions, so the heads would never train"
            )
        self.sgd_period = check_positive_int(sgd_period, "sgd_period")
        self.target_update_period = check_positive_int(target_update_period, "target_update_period")
        self.mask_prob = check_positive_float(mask_prob, "mask_prob")
        if self.mask_prob > 1:
            raise ValueError(f"mask_prob must lie in (0, 1], got {mask_prob}")
        self.seed = check_seed(seed)
        self.generator = torch.Generator()
        if seed is None:
            self.generator.seed()
        else:
            self.generator.manual_seed(int(seed))
        dev = check_device(device)
        if "generator" in network_options:
            raise TypeError("generator is the posterior's own (seeded by seed); remove it")
        network = EnsembleQNetwork(
            observation_space, self.num_actions, generator=self.generator, **network_options
        )
        if dev.type != "cpu":  # it was built on the CPU, and checked there
            sizes = (network.input_dim, *network.hidden_sizes, self.num_actions)
            check_would_fit(
                network.training_bytes(sizes, network.num_heads),
                network._size_description(sizes),
                dev,
            )
        self.network = network.to(dev)
        self.num_heads = self.network.num_heads
        self.observation_space = observation_space
        self.optimizer = torch.optim.Adam(
            self.network.parameters(), lr=self.learning_rate, fused=dev.type in ("cpu", "cuda")
        )
        self.transitions = 0
        self.sgd_steps = 0
        self._buffer: dict[str, torch.Tensor] = {}
        self._buffer_pos = 0
        self._buffer_len = 0

    # -- values ----------------------------------------------------------------------------------

    @property
    def device(self) -> torch.device:
        """Where the heads live."""
        return self.network.device

    def head_values_tensor(self, observations: Any) -> torch.Tensor:
        """Every head's values ``(K, n, A)`` as a float32 tensor on :attr:`device` (no graph)."""
        with torch.no_grad():
            return self.network(self.network.encode(observations))

    def head_values(self, observations: Any) -> np.ndarray:
        """Every head's ``Q_k(s, a)``: float64 ``(K, n, A)`` for ``n`` observations."""
        return self.head_values_tensor(observations).double().cpu().numpy()

    def q_values(self, observations: Any, head: int) -> np.ndarray:
        """Head ``head``'s ``Q_head(s, a)``: float64 ``(n, A)``."""
        if isinstance(head, bool) or not isinstance(head, numbers.Integral):
            raise TypeError(f"head must be an int, got {head!r}")
        if not 0 <= int(head) < self.num_heads:
            raise ValueError(f"head must lie in [0, {self.num_heads}), got {head}")
        return self.head_values(observations)[int(head)]

    def mean(self, observations: Any) -> np.ndarray:
        """The heads' mean ``(1/K) Σ_k Q_k(s, a)``: float64 ``(n, A)``."""
        return self.head_values_tensor(observations).double().mean(dim=0).cpu().numpy()

    def expected_improvement(self, observations: Any, baseline: Any) -> np.ndarray:
        """``(1/K) Σ_k (Q_k(s_i, a) − baseline_i)^+``: float64 ``(n, A)``.

        Parameters
        ----------
        observations : array_like
            ``(n, ...)``.
        baseline : array_like
            ``(n,)``, finite.
        """
        q = self.head_values_tensor(observations).double()
        base = torch.as_tensor(check_baseline(baseline, q.shape[1]), device=q.device)
        return ensemble_expected_improvement(q, base).cpu().numpy()

    def evaluate(
        self, observations: Any, host_probs: Any, baseline: str = "host"
    ) -> PosteriorValues:
        """Means, baseline and EI computed on :attr:`device`, copied to the host once.

        Parameters
        ----------
        observations : array_like
            ``(n, ...)``.
        host_probs : array_like
            float ``(n, A)``: the host's probabilities, each row a distribution (finite,
            non-negative, summing to 1); may be ``None`` for ``baseline="max"``.
        baseline : {"host", "max"}, default "host"
            See :func:`~delight_gym.posteriors.base.host_baseline`.

        Returns
        -------
        PosteriorValues
            float64 ``mean (n, A)``, ``baseline (n,)``, ``expected_improvement (n, A)``.
        """
        if baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
        q = self.head_values_tensor(observations).double()
        n, a = q.shape[1], q.shape[2]
        if host_probs is None and baseline == "max":
            host_probs = np.full((n, a), 1.0 / a)  # unused by the "max" baseline
        checked = check_finite_array(host_probs, "host_probs", shape=(n, a))
        check_probabilities(checked, "host_probs")
        probs = torch.as_tensor(checked, device=q.device)
        means, base, ei = ensemble_values(q, probs, baseline)
        out = torch.cat([means, base[:, None], ei], dim=1).cpu().numpy()  # one copy
        return PosteriorValues(out[:, :a], out[:, a], out[:, a + 1 :].reshape(n, a))

    # -- training --------------------------------------------------------------------------------

    def td_step(
        self,
        observations: Any,
        actions: Any,
        rewards: Any,
        next_observations: Any,
        terminated: Any,
        masks: Any = None,
        *,
        check: bool = True,
    ) -> TDStepStats:
        """One Adam step of every head on one batch of ``B`` transitions.

        The arguments are :meth:`EnsembleQNetwork.td_loss`'s (shapes documented there), with
        the posterior's ``gamma``. A batch that fails its checks raises before anything
        changes. ``check=False`` skips them, for data checked where it came in (the SB3
        algorithms check every observation and reward the environment hands them): on a GPU
        the checks need a host synchronisation per step (``docs/sb3.md``, "Input checks").

        Returns
        -------
        TDStepStats
            The loss before the step and the TD targets' std (0-d tensors on :attr:`device`).

        Notes
        -----
        The target networks are not touched: call :meth:`update_target` every
        ``target_update_period`` steps (:meth:`update` does). On the CPU, a batch of look-up
        inputs with state tables takes the tables' path
        (:meth:`~delight_gym.posteriors.ensemble_tabular.StateTables.td_gradients`: no graph,
        each distinct state run once); the result is the generic path's up to float32
        rounding.
        """
        net = self.network
        batch = (observations, actions, rewards, next_observations, terminated, masks)
        x, xn, act, rew, done, m = net._transitions(batch, check)
        weights = None if m is None else m.T
        tabular = xn.ndim == 1 and x.device.type == "cpu" and x.shape[0] > 0
        tables = net._current_tables(x) if tabular else None
        if tables is not None:  # states on the CPU: no graph, the gradients written directly
            loss, target_std = tables.td_gradients(
                net._trainable(), x, xn, act, rew, done, self.gamma, weights
            )
        else:
            loss, target_std = net.td_loss_encoded(x, xn, act, rew, done, self.gamma, weights)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
        self.optimizer.step()
        return TDStepStats(loss.detach(), target_std)

    def update_target(self) -> None:
        """Copy the trainable heads into their target networks."""
        self.network.update_target()

    def update(
        self,
        observations: Any,
        actions: Any,
        rewards: Any,
        next_observations: Any,
        terminated: Any,
        truncated: Any = None,
    ) -> None:
        """Store ``n`` transitions and take the gradient steps they are due.

        Parameters
        ----------
        observations, next_observations : array_like
            ``(n, ...)``; ``next_observations`` is the real next observation (the final one
            for an episode that ended).
        actions : array_like
            int ``(n,)`` in ``[0, A)``.
        rewards : array_like
            float ``(n,)``, finite.
        terminated : array_like
            bool or 0/1 ``(n,)``: ``True`` where the episode ended without truncation.
        truncated : array_like, optional
            Ignored: a truncated transition bootstraps like any other.

        Raises
        ------
        ValueError, TypeError
            As :meth:`EnsembleQNetwork.check_transitions`, before anything is stored or
            trained (a refused update changes nothing).
        """
        dev = self.device
        net = self.network
        checked = net.check_transitions(
            observations, actions, rewards, next_observations, terminated
        )
        n = checked.actions.shape[0]
        shape = (n, *net.obs_shape)  # (n,) for Discrete observations given as (n, 1)
        rows = {
            "observations": _tensor(observations, dev).reshape(shape),
            "next_observations": _tensor(next_observations, dev).reshape(shape),
            "actions": checked.actions,
            "rewards": checked.rewards,
            "terminated": checked.terminated.bool(),
        }
        if self.mask_prob < 1:
            draw = torch.rand((n, self.num_heads), generator=self.generator)
            rows["masks"] = (draw < self.mask_prob).to(dev)
        self._store(rows)
        before = self.transitions
        self.transitions += n
        due = self.transitions // self.sgd_period - before // self.sgd_period
        if self._buffer_len < self.learning_starts:
            return
        for _ in range(due):
            idx = torch.randint(self._buffer_len, (self.batch_size,), generator=self.generator)
            batch = {k: v[idx.to(v.device)] for k, v in self._buffer.items()}
            self.td_step(
                batch["observations"],
                batch["actions"],
                batch["rewards"],
                batch["next_observations"],
                batch["terminated"],
                batch.get("masks"),
            )
            self.sgd_steps += 1
            if self.sgd_steps % self.target_update_period == 0:
                self.update_target()

    def _store(self, rows: dict[str, torch.Tensor]) -> None:
        n = len(rows["actions"])
        if n == 0:
            return
        if not self._buffer:
            row_bytes = sum(v[0].numel() * v.element_size() for v in rows.values())
            check_would_fit(
                self.buffer_size * row_bytes, f"buffer_size={self.buffer_size}", self.device
            )
            self._buffer = {
                k: torch.zeros((self.buffer_size, *v.shape[1:]), dtype=v.dtype, device=v.device)
                for k, v in rows.items()
            }
        for start in range(0, n, self.buffer_size):  # a batch larger than the buffer wraps
            chunk = {k: v[start : start + self.buffer_size] for k, v in rows.items()}
            m = len(chunk["actions"])
            pos = (self._buffer_pos + torch.arange(m)) % self.buffer_size
            for k, v in chunk.items():
                self._buffer[k][pos.to(v.device)] = v.to(self._buffer[k].dtype)
            self._buffer_pos = int((self._buffer_pos + m) % self.buffer_size)
            self._buffer_len = min(self._buffer_len + m, self.buffer_size)

    # -- state -----------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Heads, priors, targets, optimizer, generator, replay buffer and counters."""
        return {
            "network": self.network.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "buffer": {k: v.clone() for k, v in self._buffer.items()},
            "buffer_pos": self._buffer_pos,
            "buffer_len": self._buffer_len,
            "transitions": self.transitions,
            "sgd_steps": self.sgd_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (into a posterior built with the same
        settings)."""
        self.network.load_state_dict(state["network"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self._buffer = {k: v.clone().to(self.device) for k, v in state["buffer"].items()}
        self._buffer_pos = int(state["buffer_pos"])
        self._buffer_len = int(state["buffer_len"])
        self.transitions = int(state["transitions"])
        self.sgd_steps = int(state["sgd_steps"])

    def __repr__(self) -> str:
        net = self.network
        return (
            f"{type(self).__name__}(num_heads={net.num_heads}, hidden_sizes={net.hidden_sizes}, "
            f"prior_scale={net.prior_scale}, encoding={net.encoding!r}, device={self.device})"
        )
