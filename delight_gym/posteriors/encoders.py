"""State encoders of the tabular posteriors: a batch of Discrete or one-hot observations ->
state indices; :func:`encoder_for_space` picks the encoder of a Gymnasium space."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from delight_gym._checks import check_shape

__all__ = ["DiscreteEncoder", "OneHotEncoder", "encoder_for_space", "required_encoder"]


class DiscreteEncoder:
    """Observations of a ``Discrete(n, start)`` space -> int64 indices ``obs − start``
    (``name`` names the argument in errors; ``allow_blank`` is ignored)."""

    def __init__(self, num_states: int, start: int = 0) -> None:
        self.num_states = num_states
        self.start = start

    def __call__(self, obs: Any, name: str, allow_blank: np.ndarray | None = None) -> np.ndarray:
        arr = np.asarray(obs)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"{name} must be a batch of Discrete observations (integers of shape (n,)), "
                f"got dtype {arr.dtype} and shape {arr.shape}"
            )
        idx = arr.astype(np.int64) - self.start
        if np.any(idx < 0) or np.any(idx >= self.num_states):
            raise ValueError(f"{name} must lie in [{self.start}, {self.start + self.num_states})")
        return idx


class OneHotEncoder:
    """One-hot observations of shape ``obs_shape`` -> the int64 flat index of their single 1;
    rows marked in ``allow_blank`` (bool ``(n,)``) may be all zeros (index ``-1``)."""

    def __init__(self, obs_shape: tuple[int, ...]) -> None:
        self.obs_shape = tuple(obs_shape)
        self.num_states = int(np.prod(self.obs_shape))

    def __call__(self, obs: Any, name: str, allow_blank: np.ndarray | None = None) -> np.ndarray:
        arr = check_shape(np.asarray(obs), (None, *self.obs_shape), name)
        flat = arr.reshape(arr.shape[0], self.num_states)
        # argmax finds each row's first nonzero entry; a one-hot row has one, equal to 1.
        nonzero = np.count_nonzero(flat, axis=1)
        idx = np.argmax(flat != 0, axis=1)
        valid = (nonzero == 1) & (flat[np.arange(flat.shape[0]), idx] == 1)
        if allow_blank is not None:
            valid |= (nonzero == 0) & allow_blank
        if not np.all(valid):
            raise ValueError(
                f"{name} must be one-hot (one entry 1, the rest 0) for the tabular posterior; "
                f"row {int(np.flatnonzero(~valid)[0])} is not"
            )
        return np.where(nonzero == 1, idx, -1)


def encoder_for_space(space: Any) -> DiscreteEncoder | OneHotEncoder | None:
    """The encoder of a ``Discrete`` or one-hot-shaped ``Box`` space (bounds ``[0, 1]``), or
    ``None`` for any other space."""
    if isinstance(space, spaces.Discrete):
        return DiscreteEncoder(int(space.n), int(space.start))
    if (
        isinstance(space, spaces.Box)
        and len(space.shape) >= 1
        and np.all(space.low == 0)
        and np.all(space.high == 1)
    ):
        return OneHotEncoder(space.shape)
    return None


def required_encoder(space: Any, refusal: str) -> DiscreteEncoder | OneHotEncoder:
    """The encoder of ``space`` (:func:`encoder_for_space`); for a space without one, a
    ``ValueError`` whose message is ``refusal`` with ``{space}`` replaced by the space's repr."""
    encoder = encoder_for_space(space)
    if encoder is None:
        raise ValueError(refusal.format(space=repr(space)))
    return encoder
