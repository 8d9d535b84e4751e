"""``K`` Q-heads with randomized prior functions and their target networks, in one module.

:class:`EnsembleQNetwork` holds ``Q_k = f_k + β p_k`` for ``k = 1 … K``: ``f_k`` a trainable
MLP, ``p_k`` a frozen random MLP of the same shape scaled by ``β = prior_scale`` ("Randomized
Prior Functions for Deep Reinforcement Learning", Osband et al. 2018), and each head's target
copy of ``f_k``, as one set of batched tensors (no Python loop over heads).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from delight_gym._checks import check_positive_int, check_would_fit
from delight_gym.posteriors.arguments import check_head_options
from delight_gym.posteriors.batched_mlp import mlp_parameter_count
from delight_gym.posteriors.boot_dqn_defaults import BOOT_DQN_DEFAULTS
from delight_gym.posteriors.ensemble_inputs import EnsembleInputs, Transitions
from delight_gym.posteriors.ensemble_tabular import TABLE_MAX_STATES, StateTables

__all__ = [
    "DEFAULT_HIDDEN_SIZES",
    "DEFAULT_NUM_HEADS",
    "DEFAULT_PRIOR_SCALE",
    "EnsembleQNetwork",
]

#: The heads' defaults, shared by every ensemble of the package.
DEFAULT_NUM_HEADS = BOOT_DQN_DEFAULTS.num_heads
DEFAULT_HIDDEN_SIZES = BOOT_DQN_DEFAULTS.hidden_sizes
DEFAULT_PRIOR_SCALE = BOOT_DQN_DEFAULTS.prior_scale

Layers = list[tuple[torch.Tensor, torch.Tensor]]


def _invalidate_tables(network: EnsembleQNetwork, incompatible_keys: Any) -> None:
    # load_state_dict may have replaced the frozen weights
    if network.tables is not None:
        network.tables.invalidate()


class EnsembleQNetwork(nn.Module):
    """``K`` trainable Q-heads, their target copies and their frozen priors, batched.

    Parameters
    ----------
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box
        Box observations of any shape are flattened.
    num_actions, num_heads : int
        ``A``, and ``K`` (default 10).
    hidden_sizes : sequence of int, default (64, 64)
    prior_scale : float, default 3.0
        ``β >= 0`` (0: no prior).
    encoding : str, default "auto"
        One of :data:`~delight_gym.posteriors.ensemble_inputs.ENCODINGS`.
    generator : torch.Generator, optional
        CPU generator of the initial weights (default: a fresh unseeded one).

    Attributes
    ----------
    inputs : EnsembleInputs
        The observation space's encoding and the input checks.
    encoding, input_dim, obs_start, obs_shape :
        ``inputs``' (:class:`~delight_gym.posteriors.ensemble_inputs.EnsembleInputs`).
    tables : StateTables or None
        The frozen parts per state, for look-up inputs with few states.
    weights, biases : torch.nn.ParameterList
        Trainable layers ``(K, in_l, out_l)`` and ``(K, 1, out_l)``.
    frozen_weights_<l>, frozen_biases_<l> : torch.Tensor
        Buffers ``(2K, in_l, out_l)`` and ``(2K, 1, out_l)``: rows ``[:K]`` the targets',
        ``[K:]`` the priors'.
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
        self.num_heads, self.hidden_sizes, self.prior_scale = check_head_options(
            num_heads, hidden_sizes, prior_scale, allow_no_hidden=True
        )
        self.inputs = EnsembleInputs(observation_space, self.num_actions, self.num_heads, encoding)
        self.encoding, self.input_dim = self.inputs.encoding, self.inputs.input_dim
        self.obs_start, self.obs_shape = self.inputs.obs_start, self.inputs.obs_shape
        if generator is None:
            generator = torch.Generator()
        sizes = (self.input_dim, *self.hidden_sizes, self.num_actions)
        check_would_fit(
            self.training_bytes(sizes, self.num_heads), self.size_description(sizes), "cpu"
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
            self.tables = StateTables(self.input_dim, self.run_layers)
            self.register_load_state_dict_post_hook(_invalidate_tables)

    @staticmethod
    def training_bytes(sizes: Sequence[int], num_heads: int) -> int:
        """Bytes ``num_heads`` heads of layer widths ``sizes`` take while training: float32
        parameters six times over (trainable, target, prior, gradient, Adam's two moments)."""
        return 6 * 4 * num_heads * mlp_parameter_count(sizes)

    def size_description(self, sizes: Sequence[int]) -> str:
        """The settings behind layer widths ``sizes``, for a refusal to allocate them."""
        return (
            f"num_heads={self.num_heads} with hidden_sizes={self.hidden_sizes}, "
            f"{sizes[0]} inputs (observation_space) and {sizes[-1]} actions"
        )

    @property
    def device(self) -> torch.device:
        """Where the heads live."""
        return self.weights[0].device

    # -- layers and targets ----------------------------------------------------------------------

    def frozen_layers(self) -> Layers:
        """``(weight (2K, in, out), bias (2K, 1, out))`` per layer: targets, then priors."""
        return [
            (self._buffers[f"frozen_weights_{i}"], self._buffers[f"frozen_biases_{i}"])  # type: ignore[misc]
            for i in range(self.num_layers)
        ]

    def trainable_layers(self) -> Layers:
        """``(weight (K, in, out), bias (K, 1, out))`` per layer: the trainable heads."""
        w, b = self.weights._parameters, self.biases._parameters
        return [(w[str(i)], b[str(i)]) for i in range(self.num_layers)]  # type: ignore[misc]

    @torch.no_grad()
    def update_target(self) -> None:
        """Copy the trainable layers into the target networks (a hard update)."""
        k = self.num_heads
        frozen = self.frozen_layers()
        for (w, b), (fw, fb) in zip(self.trainable_layers(), frozen, strict=True):
            fw[:k].copy_(w)
            fb[:k].copy_(b)
        if self.tables is not None and self.tables.current(fw):
            self.tables.refresh_target(frozen, k)

    def tables_for(self, inputs: torch.Tensor) -> StateTables | None:
        """The state tables, refreshed if stale, for states ``(n,)`` shared by every head;
        else ``None``."""
        if self.tables is None or inputs.dtype != torch.int64 or inputs.ndim != 1:
            return None
        if not self.tables.current(self._buffers["frozen_weights_0"]):  # type: ignore[arg-type]
            self.tables.refresh(self.frozen_layers(), self.num_heads, self.prior_scale)
        return self.tables

    # -- inputs ----------------------------------------------------------------------------------

    def encode(self, observations: Any, name: str = "observations") -> torch.Tensor:
        """A batch of observations checked, as the first layer's input.

        Parameters
        ----------
        observations : array_like or torch.Tensor
            ``(n,)`` or ``(n, 1)`` Discrete observations, or ``(n, *obs_shape)`` Box ones
            (or flattened rows).
        name : str
            The argument name for error messages.

        Returns
        -------
        torch.Tensor
            int64 ``(n,)`` state indices (``-1`` for an all-zero one-hot row), or float32
            ``(n, input_dim)``; on :attr:`device`.

        Raises
        ------
        TypeError
            If the observations are not numbers.
        ValueError
            On a wrong shape, a non-finite value (also beyond float32's range), or a Discrete
            observation that is not an integer of the space.
        """
        return self.inputs.encode(observations, self.device, name)

    def check_transitions(self, batch: Transitions) -> Transitions:
        """A batch of ``B`` transitions checked and on :attr:`device` (errors name the field).

        Parameters
        ----------
        batch : Transitions
            Each field array_like or a tensor: observations as for :meth:`encode`; ``actions``,
            ``rewards`` and ``terminated`` (1 where the episode ended without a truncation)
            ``(B,)`` or ``(B, 1)``; ``masks`` ``None`` or ``(B, K)`` non-negative weights.

        Returns
        -------
        Transitions
            Observations encoded (:meth:`encode`), int64 ``actions``, float32 ``rewards``,
            ``terminated`` and ``masks``.

        Raises
        ------
        ValueError
            On a shape that does not fit ``B`` rows, a non-finite observation, reward or mask,
            an action outside ``[0, A)``, ``terminated`` not 0/1, or a negative mask.
        TypeError
            On non-numeric observations or rewards.
        """
        return self.inputs.check(batch, self.device)

    # -- forward ---------------------------------------------------------------------------------

    @staticmethod
    def run_layers(inputs: torch.Tensor, layers: Layers) -> torch.Tensor:
        """``H`` stacked heads' MLP on inputs shared by every head (``(n,)`` indices or
        ``(n, d)`` rows) or one batch per head (``(H, n)`` or ``(H, n, d)``): ``(H, n, A)``."""
        w0, b0 = layers[0]
        # Index inputs are a row look-up of the first weight; index -1 (an all-zero one-hot
        # row) gives the bias alone.
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
        q = self.run_layers(inputs, self.trainable_layers())
        if self.prior_scale == 0:
            return q
        k = self.num_heads
        with torch.no_grad():
            tables = self.tables_for(inputs)
            if tables is not None:
                return q + tables.prior.index_select(1, tables.rows(inputs))
            prior = self.run_layers(inputs, [(w[k:], b[k:]) for w, b in self.frozen_layers()])
        return q + self.prior_scale * prior
