"""An ensemble of ``Q(s, a)`` networks with randomized prior functions, for ``Box`` actions.

:class:`ContinuousQEnsemble` is the continuous-action sibling of
:class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` (Osband, Aslanides & Cassirer 2018,
"Randomized prior functions for deep reinforcement learning"): ``K`` heads
``Q_k(s, a) = f_k(s, a) + β p_k(s, a)`` on the concatenated observation and action, ``f_k``
trainable, ``p_k`` frozen, all ``K`` in one set of batched tensors
(:class:`~delight_gym.posteriors.batched_mlp.BatchedMLP`). Trained off-policy by TD(0) toward
``r + γ(1 − done) Q_k^target(s', a')`` with ``a'`` from the host policy (a SAC or TD3 actor)
and Polyak-averaged target networks. EI over a baseline ``v`` is exact for the ensemble,
``(1/K) Σ_k (Q_k(s, c) − v)^+``, for any finite candidate set ``c``.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces

from delight_gym._checks import (
    array_bytes,
    check_all_finite,
    check_binary,
    check_box_bounds,
    check_instance,
    check_magnitude,
    check_probability,
    check_seed,
    check_shape,
    check_would_fit,
    host_view,
    magnitude_limit,
)
from delight_gym.posteriors.arguments import (
    check_fraction,
    check_head,
    check_head_options,
    check_placement,
    seeded_generator,
)
from delight_gym.posteriors.batched_mlp import BatchedMLP
from delight_gym.posteriors.ensemble import (
    DEFAULT_HIDDEN_SIZES,
    DEFAULT_NUM_HEADS,
    DEFAULT_PRIOR_SCALE,
    TDStepStats,
    ensemble_expected_improvement,
)
from delight_gym.posteriors.ensemble_inputs import (
    as_column,
    box_size,
    nonnegative_masks,
    numbers_kind,
)

__all__ = ["ContinuousQEnsemble", "ContinuousTransitions"]

_WHY = "so that training's squares stay finite in {dtype}"


class ContinuousTransitions(NamedTuple):
    """A batch of ``n`` transitions for :meth:`ContinuousQEnsemble.update`.

    Attributes
    ----------
    observations, next_observations : array_like or torch.Tensor
        ``(n, *obs_shape)`` (or ``(n, obs_dim)``), finite.
    actions : array_like or torch.Tensor
        ``(n, act_dim)`` inside the action space's bounds.
    rewards, dones : array_like or torch.Tensor
        ``(n,)`` or ``(n, 1)``; ``dones`` is 1 where the episode terminated (no bootstrap),
        0 elsewhere (a time-limit truncation is 0).
    next_actions : array_like, torch.Tensor or callable
        ``a'`` of shape ``(n, act_dim)``, or the host policy: called (without a graph) on the
        checked next observations, a ``(n, obs_dim)`` tensor of the ensemble's dtype on its
        device, and returning ``(n, act_dim)``.
    masks : array_like or torch.Tensor, optional
        ``(n, K)``: each transition's non-negative weight in each head's loss.
    """

    observations: Any
    actions: Any
    rewards: Any
    next_observations: Any
    dones: Any
    next_actions: Any
    masks: Any = None


def _box_size(space: Any, name: str) -> int:
    if isinstance(space, spaces.Dict | spaces.Tuple):
        raise TypeError(
            f"{name} is a {type(space).__name__} space: ContinuousQEnsemble does not support "
            "composite observations; flatten them first (gymnasium.wrappers.FlattenObservation)"
        )
    return box_size(check_instance(space, spaces.Box, name, "a gymnasium Box space"), name)


def _numbers(value: Any, name: str, *, bools: bool = False) -> Any:
    """``value`` as a numpy array or a non-CPU tensor of real numbers (bools, where allowed,
    as float64); a ``TypeError`` naming ``name`` otherwise."""
    try:
        x = host_view(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"{name} must be array-like of numbers: {exc}") from None
    if numbers_kind(x, name, "biuf" if bools else "iuf", "real numbers") == "b":
        return x.astype(np.float64) if isinstance(x, np.ndarray) else x.double()
    return x


class ContinuousQEnsemble:
    """``K`` Q-networks over ``(observation, action)`` with randomized priors, batched.

    Parameters
    ----------
    observation_space, action_space : gymnasium.spaces.Box
        Observations of any shape (flattened to ``obs_dim``, bounds may be infinite); 1-D
        actions with finite bounds, fed to the networks as ``(a − mid)/half`` in ``[-1, 1]``.
    num_heads, hidden_sizes, prior_scale : int, sequence of int, float
        ``K`` (default 10), the MLPs' widths (default (64, 64)), ``β >= 0`` (default 3.0).
    gamma, tau, learning_rate : float, default 0.99, 0.005, 1e-3
        The discount; the targets' Polyak rate in ``(0, 1]`` (1: a copy after every update);
        Adam's step size in ``(0, 1]``.
    mask_prob : float, default 1.0
        For a batch without masks: probability that a transition enters a head's loss, drawn
        anew at each update, in ``(0, 1]``.
    seed, device, dtype : int, torch.device or str, torch.dtype, default None, "cpu", float32
        Seeds :attr:`generator` (initial weights, then masks); where and in what the nets live.

    Notes
    -----
    Training squares TD errors (the loss, Adam's second moment), so rewards and
    ``prior_scale`` are refused above :attr:`magnitude` ``= finfo(dtype).max^(1/4)``
    (``4.3e9`` in float32, ``1.2e77`` in float64); rescale larger rewards.

    Attributes
    ----------
    online, target, prior : BatchedMLP
        ``f_k``, its Polyak average and the frozen ``p_k``: ``K`` models of one output each.
    optimizer, generator, num_updates : torch.optim.Adam, torch.Generator, int
    """

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        *,
        num_heads: int = DEFAULT_NUM_HEADS,
        hidden_sizes: Sequence[int] = DEFAULT_HIDDEN_SIZES,
        prior_scale: float = DEFAULT_PRIOR_SCALE,
        gamma: float = 0.99,
        tau: float = 0.005,
        learning_rate: float = 1e-3,
        mask_prob: float = 1.0,
        seed: int | None = None,
        device: Any = "cpu",
        dtype: torch.dtype = torch.float32,
    ) -> None:
        self.obs_dim = _box_size(observation_space, "observation_space")
        low, high = check_box_bounds(action_space, "action_space")
        self.act_dim = len(low)
        self.num_heads, self.hidden_sizes, self.prior_scale = check_head_options(
            num_heads, hidden_sizes, prior_scale
        )
        self.gamma = check_probability(gamma, "gamma")
        self.tau = check_fraction(tau, "tau")
        self.learning_rate = check_fraction(learning_rate, "learning_rate")
        self.mask_prob = check_fraction(mask_prob, "mask_prob")
        self.seed = check_seed(seed)
        self.device, self.dtype = check_placement(device, dtype)
        self.magnitude = magnitude_limit(self.dtype, 4)
        check_magnitude(
            self.prior_scale, "prior_scale", self.magnitude, why=_WHY.format(dtype=self.dtype)
        )
        sizes = (self.obs_dim + self.act_dim, *self.hidden_sizes, 1)
        weights = self.num_heads * sum((i + 1) * o for i, o in itertools.pairwise(sizes))
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        check_would_fit(
            {  # online, target, prior, Adam's two moments and the gradient
                "weights (6 copies)": array_bytes(6, weights, itemsize=itemsize),
            },
            f"num_heads={self.num_heads}, hidden_sizes={self.hidden_sizes}, "
            f"obs_dim={self.obs_dim}, act_dim={self.act_dim}",
            self.device,
        )
        self.observation_space, self.action_space = observation_space, action_space
        self.generator = seeded_generator(self.seed)
        like: dict[str, Any] = {"dtype": self.dtype, "device": self.device}
        self._low = torch.as_tensor(low, **like)
        self._high = torch.as_tensor(high, **like)
        self._mid, self._half = (self._high + self._low) / 2, (self._high - self._low) / 2
        if not bool(torch.isfinite(torch.cat([self._mid, self._half])).all()):
            raise ValueError(
                f"action_space's high + low and high - low must be finite in {self.dtype} (the "
                f"actions' scaling), got low={low} high={high}; rescale the actions"
            )
        nets = [
            BatchedMLP(
                self.num_heads, sizes, generators=[self.generator], init="trunc_normal", **like
            )
            for _ in range(2)  # f_k first, then p_k, from the one generator
        ]
        self.online = nets[0]
        self.prior = nets[1].requires_grad_(False)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.online.parameters(), lr=self.learning_rate)
        self.num_updates = 0

    # -- checks ------------------------------------------------------------------------------------

    def _tensor(self, x: Any, name: str) -> torch.Tensor:
        """Checked numbers as a finite tensor of the ensemble's dtype on its device."""
        if isinstance(x, np.ndarray):
            x = torch.from_numpy(np.ascontiguousarray(x))
        t = x.to(**self._like)
        where = " in float32" if self.dtype == torch.float32 else ""
        check_all_finite(t, name, where=where)
        return t

    @property
    def _like(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "device": self.device}

    def _observations(self, value: Any, name: str, rows: int | None = None) -> torch.Tensor:
        """``(n, obs_dim)`` from ``(n, *obs_shape)`` or ``(n, obs_dim)``."""
        x = _numbers(value, name, bools=True)
        shape = tuple(x.shape)
        obs_shape = tuple(self.observation_space.shape)
        if (
            len(shape) == 0
            or shape[1:] not in (obs_shape, (self.obs_dim,))
            or (rows is not None and shape[0] != rows)
        ):
            lead = "n" if rows is None else str(rows)
            raise ValueError(
                f"{name} must have shape ({lead}, {', '.join(map(str, obs_shape))}), got {shape}"
            )
        t = self._tensor(x, name)
        check_magnitude(t, name, self.magnitude, why=_WHY.format(dtype=self.dtype))
        return t.reshape(shape[0], self.obs_dim)

    def _actions(self, value: Any, name: str, lead: tuple[int | None, ...]) -> torch.Tensor:
        """``(*lead, act_dim)`` actions inside the bounds (``None`` in ``lead``: any size)."""
        x = check_shape(_numbers(value, name), (*lead, self.act_dim), name, any_size="C")
        t = self._tensor(x, name)
        outside = (t < self._low) | (t > self._high)
        if bool(outside.any()):
            entry = tuple(int(i) for i in outside.nonzero()[0])
            raise ValueError(
                f"{name} must lie inside the action space's bounds [{self._low.tolist()}, "
                f"{self._high.tolist()}]; entry {entry} is {t[entry].item()}"
            )
        return t

    def _column(self, value: Any, name: str, rows: int, *, binary: bool = False) -> torch.Tensor:
        """``(rows,)`` from ``(rows,)`` or ``(rows, 1)``; ``binary``: 0/1 only, never rounded."""
        x = as_column(_numbers(value, name, bools=True), rows, name)
        if binary:
            check_binary(x, name)
        return self._tensor(x, name)

    def _query(self, observations: Any, actions: Any, heads: int) -> tuple[torch.Tensor, int, int]:
        """The network inputs ``(B·C, obs_dim + act_dim)`` of a query, with ``B`` and ``C``,
        refused if ``heads`` heads' hidden layers (two at a time) would not fit."""
        obs = self._observations(observations, "observations")
        act = self._actions(actions, "actions", (obs.shape[0], None))
        b, c = act.shape[:2]
        width = max(self.obs_dim + self.act_dim, *self.hidden_sizes)
        check_would_fit(
            array_bytes(2, heads, b, c, width, itemsize=torch.finfo(self.dtype).bits // 8),
            f"actions of shape {tuple(act.shape)} with {heads} heads of width {width}",
            self.device,
        )
        return self._inputs(obs, act), b, c

    def _inputs(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """``[s, (a − mid)/half]``: ``(B, obs_dim)`` and ``(B, C, act_dim)`` → ``(B·C, in)``."""
        b, c = actions.shape[:2]
        scaled = (actions - self._mid) / self._half
        return torch.cat([obs[:, None].expand(b, c, self.obs_dim), scaled], -1).reshape(b * c, -1)

    # -- values ------------------------------------------------------------------------------------

    def _heads(self, net: BatchedMLP, x: torch.Tensor, models: torch.Tensor | None = None) -> Any:
        """``f_k(x) + β p_k(x)`` with ``f = net``: ``x`` ``(n, in)`` shared → ``(K, n)``, or
        ``(M, n, in)`` for ``M`` selected ``models`` → ``(M, n)``."""
        if x.ndim == 2:
            x = x.expand(self.num_heads, *x.shape)
        cols = torch.zeros((1, x.shape[1]), dtype=torch.int64, device=self.device)
        q = net(x, cols, models)
        if self.prior_scale == 0:
            return q
        with torch.no_grad():
            prior = self.prior(x, cols, models)
        return q + self.prior_scale * prior

    @torch.no_grad()
    def values(self, observations: Any, actions: Any) -> torch.Tensor:
        """Every head's ``Q_k(s_b, a_bc)``.

        Parameters
        ----------
        observations : array_like or torch.Tensor
            ``(B, *obs_shape)`` or ``(B, obs_dim)``, finite.
        actions : array_like or torch.Tensor
            ``(B, C, act_dim)``, inside the action space's bounds.

        Returns
        -------
        torch.Tensor
            ``(K, B, C)``, the ensemble's dtype, on its device (no graph).
        """
        x, b, c = self._query(observations, actions, self.num_heads)
        return self._heads(self.online, x).reshape(self.num_heads, b, c)

    def mean(self, observations: Any, actions: Any) -> torch.Tensor:
        """The heads' mean ``(1/K) Σ_k Q_k(s, a)``: ``(B, C)`` (arguments as :meth:`values`)."""
        return self.values(observations, actions).mean(dim=0)

    def expected_improvement(
        self, observations: Any, candidates: Any, baseline: Any = None
    ) -> torch.Tensor:
        """``(1/K) Σ_k (Q_k(s_b, c_bj) − v_b)^+``: ``(B, C)``, exact for the ensemble.

        Parameters
        ----------
        observations : array_like or torch.Tensor
            ``(B, *obs_shape)`` or ``(B, obs_dim)``.
        candidates : array_like or torch.Tensor
            ``(B, C, act_dim)``, inside the action space's bounds.
        baseline : array_like or torch.Tensor, optional
            ``(B,)`` finite ``v``; default: the heads' mean at ``candidates[:, 0]`` (the host's
            action, as :class:`~delight_gym.de.candidates.CandidateEI` asks).
        """
        q = self.values(observations, candidates)
        if baseline is None:
            if q.shape[2] == 0:
                raise ValueError("candidates must hold the host's action first when baseline=None")
            base = q[:, :, 0].mean(dim=0)
        else:
            base = self._column(baseline, "baseline", q.shape[1])
        return ensemble_expected_improvement(q, base)

    def sample_head(self, rng: np.random.Generator) -> int:
        """A head drawn uniformly with ``rng``: a Thompson sample of the posterior."""
        check_instance(rng, np.random.Generator, "rng", "a numpy Generator")
        return int(rng.integers(self.num_heads))

    @torch.no_grad()
    def head_values(self, observations: Any, actions: Any, head: int) -> torch.Tensor:
        """Head ``head``'s ``Q_head(s_b, a_bc)``: ``(B, C)`` (arguments as :meth:`values`)."""
        models = torch.tensor([check_head(head, self.num_heads)], device=self.device)
        x, b, c = self._query(observations, actions, 1)
        return self._heads(self.online, x[None], models).reshape(b, c)

    @torch.no_grad()
    def sample_values(self, observations: Any, actions: Any, rng: np.random.Generator) -> Any:
        """``Q_{k_b}(s_b, a_bc)`` with a fresh head ``k_b`` per row: ``(B, C)``; the
        ``sample_values`` of :class:`~delight_gym.de.candidates.PosteriorArgmax`."""
        check_instance(rng, np.random.Generator, "rng", "a numpy Generator")
        x, b, c = self._query(observations, actions, 1)
        heads = torch.as_tensor(rng.integers(self.num_heads, size=b), device=self.device)
        return self._heads(self.online, x.reshape(b, c, -1), heads)

    # -- training ----------------------------------------------------------------------------------

    def check_batch(self, batch: ContinuousTransitions) -> ContinuousTransitions:
        """``batch`` checked, as tensors of the ensemble's dtype on its device (``next_actions``
        computed if a callable, ``rewards``/``dones`` ``(n,)``, ``masks`` ``(n, K)`` or None);
        every error names its field."""
        check_instance(batch, ContinuousTransitions, "batch", "a ContinuousTransitions")
        obs = self._observations(batch.observations, "observations")
        n = obs.shape[0]
        if n == 0:
            raise ValueError("batch must hold at least one transition (an empty batch)")
        act = self._actions(batch.actions, "actions", (n,))
        rew = self._column(batch.rewards, "rewards", n)
        why = _WHY.format(dtype=self.dtype) + " (rescale the rewards)"
        check_magnitude(rew, "rewards", self.magnitude, why=why)
        nxt = self._observations(batch.next_observations, "next_observations", n)
        done = self._column(batch.dones, "dones", n, binary=True)
        next_actions = batch.next_actions
        if callable(next_actions):
            with torch.no_grad():
                next_actions = next_actions(nxt)
        next_act = self._actions(next_actions, "next_actions", (n,))
        masks = batch.masks
        if masks is not None:
            x = check_shape(_numbers(masks, "masks", bools=True), (n, self.num_heads), "masks")
            masks = nonnegative_masks(self._tensor(x, "masks"))
        return ContinuousTransitions(obs, act, rew, nxt, done, next_act, masks)

    def td_loss(self, batch: ContinuousTransitions) -> TDStepStats:
        """The heads' summed loss ``Σ_k mean_i m_ik (Q_k(s_i, a_i) − y_ik)² / 2`` with
        ``y_ik = r_i + γ(1 − done_i) Q_k^target(s'_i, a'_i)`` on a checked batch
        (:meth:`check_batch`), with a graph to :attr:`online`, and the std of the ``y``."""
        x = self._inputs(batch.observations, batch.actions[:, None])
        xn = self._inputs(batch.next_observations, batch.next_actions[:, None])
        with torch.no_grad():
            bootstrap = self.gamma * (1.0 - batch.dones)
            y = batch.rewards + bootstrap * self._heads(self.target, xn)  # (K, n)
        sq = 0.5 * (self._heads(self.online, x) - y) ** 2
        if batch.masks is not None:
            sq = sq * batch.masks.T
        return TDStepStats(sq.mean(dim=1).sum(), y.std() if y.numel() > 1 else y.new_zeros(()))

    def update(self, batch: ContinuousTransitions) -> TDStepStats:
        """One Adam step of every head on ``batch``, then a Polyak step of every target:
        ``θ_target ← (1 − τ) θ_target + τ θ``. A batch that fails its checks changes nothing.

        Returns
        -------
        TDStepStats
            The loss before the step and the TD targets' std (0-d tensors, no graph).
        """
        return self._step(self.check_batch(batch))

    def _update(self, batch: ContinuousTransitions) -> TDStepStats:
        """:meth:`update` for data checked where it came in (an SB3 replay buffer's): only
        converted, and the rewards' magnitude (a numeric guard) checked."""
        n = len(batch.rewards)

        def tensor(x: Any, *shape: int) -> torch.Tensor:
            return torch.as_tensor(x).to(**self._like).reshape(*shape)

        rew = tensor(batch.rewards, n)
        why = _WHY.format(dtype=self.dtype) + " (rescale the rewards)"
        check_magnitude(rew, "rewards", self.magnitude, why=why)
        nxt = tensor(batch.next_observations, n, self.obs_dim)
        next_actions = batch.next_actions
        if callable(next_actions):
            with torch.no_grad():
                next_actions = next_actions(nxt)
        return self._step(
            ContinuousTransitions(
                tensor(batch.observations, n, self.obs_dim),
                tensor(batch.actions, n, self.act_dim),
                rew,
                nxt,
                tensor(batch.dones, n),
                tensor(next_actions, n, self.act_dim),
                None if batch.masks is None else tensor(batch.masks, n, self.num_heads),
            )
        )

    def _step(self, checked: ContinuousTransitions) -> TDStepStats:
        if checked.masks is None and self.mask_prob < 1:
            draw = torch.rand((len(checked.rewards), self.num_heads), generator=self.generator)
            checked = checked._replace(masks=(draw < self.mask_prob).to(**self._like))
        loss, target_std = self.td_loss(checked)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            for t, p in zip(self.target.parameters(), self.online.parameters(), strict=True):
                t.lerp_(p, self.tau)
        self.num_updates += 1
        return TDStepStats(loss.detach(), target_std)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_heads={self.num_heads}, hidden_sizes={self.hidden_sizes}, "
            f"prior_scale={self.prior_scale}, obs_dim={self.obs_dim}, act_dim={self.act_dim}, "
            f"device={self.device}, dtype={self.dtype})"
        )
