"""The inputs of an ensemble of Q-heads: observation encodings and the transitions' checks.

:class:`EnsembleInputs` turns observations into the first layer's input (row indices for a
look-up, or float32 rows for a matrix product) and transitions into a checked
:class:`Transitions` on the heads' device. The checks run once, where data comes in; every
error names its argument. The TD step trusts what they return.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces

from delight_gym._checks import (
    check_action_batch,
    check_all_finite,
    check_binary,
    check_choice,
    check_shape,
    host_view,
)

__all__ = [
    "ENCODINGS",
    "EnsembleInputs",
    "Transitions",
    "as_column",
    "as_device_tensor",
    "box_size",
    "nonnegative_masks",
    "numbers_kind",
    "one_hot_indices",
]

#: Input encodings of an ensemble of Q-heads: ``"auto"`` (Discrete → ``"index"``, Box with
#: bounds ``[0, 1]`` → ``"one_hot"``, other Box → ``"dense"``), ``"index"``, ``"one_hot"``
#: (row look-up when every row of a batch is one-hot or all zero, else the matrix product —
#: the same values either way), ``"dense"`` (always the matrix product).
ENCODINGS = ("auto", "index", "one_hot", "dense")


class Transitions(NamedTuple):
    """A batch of ``B`` transitions, as given (array_like or tensors) or checked and encoded.

    Checked, the rows are shared by every head (``(B, ...)``) or there is one batch per head
    (``(H, B, ...)``, e.g. several seeds' ensembles in one network).

    Attributes
    ----------
    observations, next_observations : torch.Tensor
        Encoded: int64 ``(B,)`` or float32 ``(B, d)``; per head ``(H, B)`` or ``(H, B, d)``.
    actions : torch.Tensor
        int64 ``(B,)`` or ``(H, B)``.
    rewards, terminated : torch.Tensor
        float32 ``(B,)`` or ``(H, B)`` (``terminated`` 1: no bootstrap from ``s'``).
    masks : torch.Tensor or None, default None
        float32 ``(B, K)``: each transition's weight in each head's loss.
    """

    observations: torch.Tensor
    next_observations: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    terminated: torch.Tensor
    masks: torch.Tensor | None = None


class EnsembleInputs:
    """The inputs of ``K`` Q-heads over ``A`` actions on one observation space, and their checks.

    Parameters
    ----------
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box
        Box observations of any shape are flattened.
    num_actions, num_heads : int
        ``A``, and ``K`` (the masks' width); checked by the caller.
    encoding : str, default "auto"
        One of :data:`ENCODINGS`.

    Attributes
    ----------
    encoding : str
        The resolved encoding: ``"index"``, ``"one_hot"`` or ``"dense"``.
    input_dim, obs_start, obs_shape :
        The number of states or of numbers in an observation; a Discrete space's first state
        (else 0); a Box observation's shape (else ``()``).
    """

    def __init__(
        self, observation_space: Any, num_actions: int, num_heads: int, encoding: str = "auto"
    ) -> None:
        self.num_actions = num_actions
        self.num_heads = num_heads
        check_choice(encoding, ENCODINGS, "encoding")
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
            self.input_dim = box_size(observation_space, "observation_space")
            self.obs_start = 0
        else:
            raise TypeError(
                "observation_space must be a gymnasium Discrete or Box space, got "
                f"{type(observation_space).__name__}"
            )

    # -- observations ----------------------------------------------------------------------------

    def encode(
        self, observations: Any, device: torch.device, name: str = "observations"
    ) -> torch.Tensor:
        """Observations checked and encoded on ``device``
        (:meth:`~delight_gym.posteriors.ensemble_network.EnsembleQNetwork.encode`)."""
        x = host_view(observations)
        if x.ndim == 0:
            raise ValueError(f"{name} must be a batch with a leading axis, got a scalar")
        kind = numbers_kind(x, name, "biuf", "numbers")
        shape = tuple(x.shape)
        if self.encoding == "index":
            if len(shape) > 2 or (len(shape) == 2 and shape[1] != 1):
                raise ValueError(
                    f"{name} must be Discrete observations of shape (n,) or (n, 1), got {shape}"
                )
            if kind == "f":
                check_all_finite(x, name)
            if kind == "b" or (kind == "f" and bool((x != x.round()).any())):
                raise ValueError(f"{name} must be integers for a Discrete observation space")
            rows = self._host_rows(x)
            if bool(((rows < 0) | (rows >= self.input_dim)).any()):
                raise ValueError(
                    f"{name} must lie in [{self.obs_start}, {self.obs_start + self.input_dim})"
                )
        else:
            if math.prod(shape[1:]) != self.input_dim:
                raise ValueError(
                    f"{name} must have shape (n, {', '.join(map(str, self.obs_shape))}), "
                    f"got {shape}"
                )
            rows = self._host_rows(x)
            check_all_finite(rows, name, where=" in float32")  # beyond float32's range: inf
        return self._to_device(rows, device)

    def _host_rows(self, x: Any) -> Any:
        # int64 state indices (from 0), or float32 flat rows; not yet on the device
        n = int(x.shape[0])
        if self.encoding == "index":
            return _cast(x.reshape(n), "int64") - self.obs_start
        return _cast(x.reshape(n, self.input_dim), "float32")

    def _to_device(self, rows: Any, device: torch.device) -> torch.Tensor:
        if self.encoding == "one_hot":  # a row look-up when every row allows one
            idx = one_hot_indices(rows)
            if idx is not None:
                rows = idx
        return as_device_tensor(rows, device)

    # -- transitions -----------------------------------------------------------------------------

    def check(self, batch: Transitions, device: torch.device) -> Transitions:
        """``batch`` checked and on ``device``
        (:meth:`~delight_gym.posteriors.ensemble_network.EnsembleQNetwork.check_transitions`).

        GPU tensors are checked with one host synchronisation (:meth:`valid_on_device`); only a
        batch that fails is checked again item by item, for the message.
        """
        if device.type != "cpu" and self.valid_on_device(batch, device):
            return self.convert(batch, device)
        x = self.encode(batch.observations, device, "observations")
        b = int(x.shape[0])
        xn = self.encode(batch.next_observations, device, "next_observations")
        if xn.shape[0] != b:
            raise ValueError(
                f"next_observations must hold one row per observation ({b}), got {xn.shape[0]}"
            )
        act = as_column(batch.actions, b, "actions")
        act = check_action_batch(act, b, self.num_actions, "actions")
        rew = _float32(as_column(batch.rewards, b, "rewards"), "rewards", "iuf", "real numbers")
        done = as_column(batch.terminated, b, "terminated")
        check_binary(done, "terminated")
        m = None
        if batch.masks is not None:
            m = check_shape(host_view(batch.masks), (b, self.num_heads), "masks")
            m = _float32(m, "masks", "biuf", "numbers")
            m = as_device_tensor(nonnegative_masks(m), device)
        return Transitions(
            observations=x,
            next_observations=xn,
            actions=as_device_tensor(act, device),
            rewards=as_device_tensor(rew, device),
            terminated=as_device_tensor(_cast(done, "float32"), device),
            masks=m,
        )

    def valid_on_device(self, batch: Transitions, device: torch.device) -> bool:
        """Whether a batch of tensors on ``device`` passes every check of :meth:`check`, with
        one host synchronisation; ``False`` for anything else."""
        obs, nxt, actions, rewards, terminated, masks = batch
        given = [obs, actions, rewards, nxt, terminated]
        given += [] if masks is None else [masks]
        if not all(torch.is_tensor(v) and v.device == device for v in given):
            return False
        b = obs.shape[0] if obs.ndim else -1
        shapes = [tuple(v.shape) for v in (actions, rewards, terminated)]
        if (
            nxt.ndim == 0
            or nxt.shape[0] != b
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
        for rows in (obs, nxt):
            if rows.is_floating_point():  # beyond float32's range becomes inf in the cast
                flags.append(rows.float().isfinite().all())
        if masks is not None and masks.is_floating_point():
            flags.append((masks.float().isfinite() & (masks >= 0)).all())
        return bool(torch.stack(flags).all())

    def convert(self, batch: Transitions, device: torch.device) -> Transitions:
        """:meth:`check`'s result for a batch known to pass it (nothing is checked)."""
        b = len(batch.actions)
        return Transitions(
            observations=self._to_device(self._host_rows(host_view(batch.observations)), device),
            next_observations=self._to_device(
                self._host_rows(host_view(batch.next_observations)), device
            ),
            actions=as_device_tensor(batch.actions, device).reshape(b).long(),
            rewards=as_device_tensor(batch.rewards, device).reshape(b).float(),
            terminated=as_device_tensor(batch.terminated, device).reshape(b).float(),
            masks=None if batch.masks is None else as_device_tensor(batch.masks, device).float(),
        )


def one_hot_indices(rows: Any) -> Any | None:
    """int64 ``(n,)`` column of each ``(n, d)`` row's one (``-1``: all zero), numpy or torch;
    ``None`` if some row is neither one-hot nor all zero."""
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


def as_device_tensor(value: Any, device: torch.device) -> torch.Tensor:
    """``value`` (tensor, array or array_like) as a tensor on ``device``, its dtype kept."""
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value).to(device)
    if torch.is_tensor(value):
        return value.to(device)
    return torch.as_tensor(np.asarray(value), device=device)


def box_size(space: Any, name: str) -> int:
    """The numbers in one observation of the Box ``space`` (1 for shape ``()``); a
    ``ValueError`` naming ``name`` if it holds none."""
    size = int(np.prod(space.shape)) if space.shape else 1
    if size == 0:
        raise ValueError(f"{name} must hold at least one number, got a Box of shape {space.shape}")
    return size


def as_column(value: Any, rows: int, name: str) -> Any:
    """``value`` (array_like or tensor, as :func:`~delight_gym._checks.host_view` gives it)
    reshaped ``(rows,)`` from ``(rows,)`` or ``(rows, 1)`` (SB3's replay samples); a
    ``ValueError`` naming ``name`` for any other shape."""
    x = host_view(value)
    if tuple(x.shape) not in ((rows,), (rows, 1)):
        raise ValueError(f"{name} must have shape ({rows},) or ({rows}, 1), got {tuple(x.shape)}")
    return x.reshape(rows)


def _dtype_kind(x: Any) -> str:
    # numpy's dtype kind ("b", "i", "u", "f", "c", ...) of an array or a tensor
    if isinstance(x, np.ndarray):
        return str(x.dtype.kind)
    if x.dtype == torch.bool:
        return "b"
    if x.dtype.is_floating_point:
        return "f"
    if x.dtype.is_complex:
        return "c"
    return "u" if x.dtype == torch.uint8 else "i"


def numbers_kind(x: Any, name: str, kinds: str, what: str) -> str:
    """numpy's dtype kind of ``x`` (an array or a tensor); a ``TypeError`` (``NAME must be
    WHAT, got dtype ...``) unless it is one of ``kinds``."""
    kind = _dtype_kind(x)
    if kind not in kinds:
        raise TypeError(f"{name} must be {what}, got dtype {x.dtype}")
    return kind


def nonnegative_masks(masks: Any) -> Any:
    """``masks`` (an array or a tensor of weights); a ``ValueError`` if one is negative."""
    if bool((masks < 0).any()):
        raise ValueError("masks must be >= 0 (each transition's weight in each head)")
    return masks


def _float32(x: Any, name: str, kinds: str, what: str) -> Any:
    # x (array or tensor) as float32: a TypeError unless its dtype kind is one of kinds, a
    # ValueError unless finite in float32 (beyond its range: inf)
    numbers_kind(x, name, kinds, what)
    out = _cast(x, "float32")
    check_all_finite(out, name, where=" in float32")
    return out


def _cast(x: Any, dtype: str) -> Any:
    # x (array or tensor) as "int64" or "float32", not copied if it already is
    if isinstance(x, np.ndarray):
        if x.dtype == dtype:
            return x
        with np.errstate(over="ignore"):  # beyond float32's range: inf, refused by the caller
            return x.astype(dtype, copy=False)
    return x.to(getattr(torch, dtype))
