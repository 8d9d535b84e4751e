"""Argument validation shared by the whole package: the one home of its checks.

Public entry points check their inputs here, so that bad input raises a ``ValueError`` or
``TypeError`` naming the argument instead of giving a silently wrong answer.
"""

from __future__ import annotations

import functools
import numbers
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

try:
    import resource
except ImportError:  # pragma: no cover - not a POSIX system
    resource = None  # type: ignore[assignment]

from delight_gym._arrays import array_namespace, is_torch

if TYPE_CHECKING:
    import torch

__all__ = [
    "array_bytes",
    "broadcast_named",
    "check_action_batch",
    "check_all_finite",
    "check_binary",
    "check_callable",
    "check_choice",
    "check_device",
    "check_finite_array",
    "check_finite_float",
    "check_flag",
    "check_float_dtype",
    "check_instance",
    "check_magnitude",
    "check_nonnegative_float",
    "check_nonnegative_int",
    "check_positive_float",
    "check_positive_int",
    "check_probabilities",
    "check_probability",
    "check_seed",
    "check_shape",
    "check_unit_interval_array",
    "check_would_fit",
    "format_bytes",
    "host_view",
    "magnitude_limit",
    "memory_size",
]


def broadcast_named(arrays: dict[str, Any]) -> list[Any]:
    """The arrays of ``{name: array}`` (all numpy or all torch) broadcast together, in order; a
    ``ValueError`` naming the arguments and their shapes if they do not broadcast."""
    values = list(arrays.values())
    torch = sys.modules.get("torch")
    try:
        if torch is not None and isinstance(values[0], torch.Tensor):
            return list(torch.broadcast_tensors(*values))
        return list(np.broadcast_arrays(*values))
    except (ValueError, RuntimeError):
        names = list(arrays)
        shapes = [str(tuple(v.shape)) for v in values]
        raise ValueError(
            f"{', '.join(names[:-1])} and {names[-1]} must broadcast together, got shapes "
            f"{', '.join(shapes[:-1])} and {shapes[-1]}"
        ) from None


def check_flag(value: Any, name: str) -> bool:
    """``value`` as a ``bool`` if it is a Python or numpy bool (``0``/``1`` are not); else a
    ``TypeError`` naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
    return bool(value)


def check_positive_int(value: Any, name: str) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= 1``; raise otherwise."""
    return _check_int_at_least(value, name, 1)


def check_nonnegative_int(value: Any, name: str) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= 0``; raise otherwise."""
    return _check_int_at_least(value, name, 0)


def _check_int_at_least(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _as_real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    out = float(value)
    if np.isnan(out):
        raise ValueError(f"{name} must not be NaN")
    return out


def check_positive_float(
    value: Any, name: str, *, allow_inf: bool = False, normal: bool = False
) -> float:
    """``value`` as a ``float`` if it is ``> 0`` (and finite unless ``allow_inf``; at least
    float64's smallest normal number if ``normal``: a scale whose reciprocal stays finite)."""
    out = _check_float_above(value, name, allow_inf=allow_inf, strict=True)
    if normal and out < _SMALLEST_NORMAL:
        raise ValueError(
            f"{name} must be at least {_SMALLEST_NORMAL:.3g} (the smallest normal float64), "
            f"got {value}"
        )
    return out


def check_nonnegative_float(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """``value`` as a ``float`` if it is ``>= 0`` (and finite unless ``allow_inf``)."""
    return _check_float_above(value, name, allow_inf=allow_inf, strict=False)


#: float64's smallest normal number, the least ``check_positive_float(..., normal=True)``.
_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)


def _check_float_above(value: Any, name: str, *, allow_inf: bool, strict: bool) -> float:
    out = _as_real(value, name)
    if not (out > 0 if strict else out >= 0):
        raise ValueError(f"{name} must be {'>' if strict else '>='} 0, got {value}")
    return out if allow_inf else check_finite_float(out, name)


def check_finite_float(value: Any, name: str) -> float:
    """``value`` as a ``float`` if it is a finite real number (bools are not)."""
    out = _as_real(value, name)
    if not np.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value}")
    return out


def check_probability(value: Any, name: str) -> float:
    """``value`` as a ``float`` if it lies in ``[0, 1]``."""
    out = _as_real(value, name)
    if not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value}")
    return out


def check_finite_array(
    value: Any, name: str, *, dtype: Any = np.float64, shape: tuple[int, ...] | None = None
) -> np.ndarray:
    """``value`` as a numpy array of ``dtype``, refused if it holds NaN or inf or (when given)
    its shape is not ``shape``."""
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be array-like of numbers: {exc}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    return arr


def check_unit_interval_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array, refused unless every entry lies in ``[0, 1]``."""
    arr = check_finite_array(value, name)
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got values in [{arr.min()}, {arr.max()}]")
    return arr


def check_instance(value: Any, kind: type | tuple[type, ...], name: str, what: str) -> Any:
    """``value`` if it is an instance of ``kind``; else ``TypeError("NAME must be WHAT, got
    TYPE")``."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value


def check_choice(value: Any, choices: Any, name: str) -> Any:
    """``value`` if it is one of ``choices``; else ``ValueError("NAME must be one of CHOICES,
    got VALUE")`` (``choices`` as the caller wants them shown: a tuple, a sorted list)."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_callable(value: Any, name: str) -> Any:
    """``value`` if it is callable; else ``TypeError("NAME must be callable, got TYPE")``."""
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")
    return value


def check_shape(value: Any, shape: tuple[int | None, ...], name: str, any_size: str = "n") -> Any:
    """``value`` (array or tensor) if its shape is ``shape`` (``None``: any size, shown as
    ``any_size``); else ``ValueError("NAME must have shape SHAPE, got SHAPE'")``."""
    got = tuple(value.shape)
    if len(got) != len(shape) or any(s not in (None, g) for s, g in zip(shape, got, strict=True)):
        want = ", ".join(any_size if s is None else str(s) for s in shape)
        comma = "," if len(shape) == 1 else ""
        raise ValueError(f"{name} must have shape ({want}{comma}), got {got}")
    return value


def check_box_bounds(space: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``(low, high)`` of a 1-D ``Box`` with finite bounds and range, ``high > low``; a
    ``TypeError`` (not a ``Box``) or ``ValueError`` (shape, bounds) naming ``name`` otherwise."""
    from gymnasium import spaces

    if not isinstance(space, spaces.Box):
        raise TypeError(f"{name} must be a gymnasium Box space, got {space!r}")
    if len(space.shape) != 1 or space.shape[0] == 0:
        raise ValueError(f"{name} must be a 1-D Box with at least one coordinate, got {space}")
    if not np.issubdtype(space.dtype, np.floating):
        raise TypeError(
            f"{name} must be a floating-point Box (continuous actions), got dtype {space.dtype}; "
            "an integer Box would truncate every action: use a Discrete or MultiDiscrete space"
        )
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        width = high - low
    if not np.isfinite(width).all():  # finite bounds, and a range that does not overflow
        raise ValueError(f"{name} must have finite bounds and range, got low={low} high={high}")
    if not (high > low).all():
        raise ValueError(f"{name} must have high > low in every coordinate")
    return low, high


def check_probabilities(probs: Any, name: str, *, atol: float = 1e-6) -> None:
    """Raise unless ``probs`` (array or tensor, last axis = actions) is non-negative and sums
    to one."""
    xp = array_namespace(probs)
    if probs.shape[-1:] == (0,) or probs.ndim == 0:
        raise ValueError(f"{name} must have at least one action on its last axis")
    if not bool(xp.all(xp.isfinite(probs))):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if bool(xp.any(probs < 0)):
        raise ValueError(f"{name} must be non-negative")
    total = probs.sum(axis=-1)
    error = xp.abs(total - 1.0)
    if bool(xp.any(error > atol)):
        worst = float(total.reshape(-1)[int(xp.argmax(error.reshape(-1)))])
        raise ValueError(
            f"{name} must sum to 1 along the last axis (found a row summing to {worst})"
        )


def check_action_batch(
    actions: Any, size: int, num_actions: int, name: str = "actions"
) -> NDArray[np.int64]:
    """``actions`` as a new int64 ``(size,)`` array in ``[0, num_actions)``; else a
    ``ValueError`` naming ``name`` and the offending entries (bools and floats are refused,
    never truncated). A GPU tensor is checked there and returned as an int64 tensor."""
    arr = check_shape(host_view(actions), (size,), name)
    dtype, numpy = arr.dtype, isinstance(arr, np.ndarray)
    if numpy:
        integers = dtype.kind in "iu"
    else:  # a tensor
        bool_ = sys.modules["torch"].bool
        integers = not (dtype.is_floating_point or dtype.is_complex or dtype == bool_)
    if not integers:
        raise ValueError(f"{name} must be integers, got dtype {dtype}")
    out = arr.astype(np.int64) if numpy else arr.long()
    # numpy: one comparison catches both ends, negatives wrap to huge values as uint64
    bad = (out.view(np.uint64) >= num_actions) if numpy else (out < 0) | (out >= num_actions)
    if not bool(bad.any()):
        return out
    where = _first_entries((out < 0) | (out >= num_actions))
    raise ValueError(
        f"{name} must lie in [0, {num_actions - 1}]; entries {where.tolist()} "
        f"got {arr[where].tolist()}"
    )


def _first_entries(mask: Any) -> Any:
    """The first ten indices where the 1-D bool array or tensor ``mask`` holds (for messages)."""
    if isinstance(mask, np.ndarray):
        return np.flatnonzero(mask)[:10]
    return mask.nonzero().reshape(-1)[:10]


def check_float_dtype(dtype: Any, name: str = "dtype") -> torch.dtype:
    """``dtype`` if it is ``torch.float32`` or ``torch.float64`` (the torch posteriors'
    precisions); else a ``TypeError`` naming ``name``. Imports torch."""
    import torch

    if dtype not in (torch.float32, torch.float64):
        raise TypeError(f"{name} must be torch.float32 or torch.float64, got {dtype!r}")
    return dtype


def check_device(device: Any, name: str = "device") -> torch.device:
    """The concrete ``torch.device`` torch allocates on for ``device`` (``None``: the default;
    ``"cuda"``: ``cuda:<current>``), equal to its tensors' devices; a ``ValueError`` naming
    ``name`` if torch cannot allocate there. Imports torch."""
    import torch

    try:
        return torch.empty(0, device=device).device
    except (AssertionError, RuntimeError, TypeError, ValueError) as exc:
        # torch raises AssertionError("Torch not compiled with CUDA enabled") for "cuda".
        raise ValueError(f"{name} {device!r} is not usable: {exc}") from None


#: Largest seed both numpy's ``SeedSequence`` and torch's ``Generator.manual_seed`` accept.
_MAX_SEED = 2**64 - 1


def check_seed(value: Any, name: str = "seed") -> int | None:
    """``value`` if it is ``None`` or an integer in ``[0, 2**64 - 1]`` (what numpy's and torch's
    generators both accept); else a ``TypeError``/``ValueError`` naming ``name``."""
    if value is None:
        return None
    seed = check_nonnegative_int(value, name)
    if seed > _MAX_SEED:
        raise ValueError(f"{name} must be <= 2**64 - 1, got {value}")
    return seed


def host_view(value: Any) -> Any:
    """``value`` as a numpy array (a CPU tensor as a zero-copy view), or a GPU tensor (or one of
    a dtype numpy lacks, such as bfloat16) detached: what the checks operate on, so a GPU
    tensor is checked where it lives and everything else in numpy."""
    if is_torch(value):
        if value.device.type == "cpu":
            try:
                return value.detach().numpy()
            except TypeError:  # bfloat16 and other dtypes numpy lacks
                return value.detach()
        return value.detach()
    return np.asarray(value)


def check_all_finite(value: Any, name: str, *, where: str = "") -> None:
    """A ``ValueError`` naming ``name``, the first offending entry and ``where`` (e.g.
    ``" at timestep 25"``) unless every entry of ``value`` (array or tensor, checked where it
    lives) is finite."""
    arr = host_view(value)
    numpy = isinstance(arr, np.ndarray)
    if numpy and arr.dtype.kind not in "fc":
        return
    finite = np.isfinite(arr) if numpy else arr.isfinite()
    if bool(finite.all()):
        return
    first = int(_first_entries(~finite.reshape(-1))[0])
    entry = tuple(int(i) for i in np.unravel_index(first, tuple(arr.shape)))
    shown = f" (entry {entry[0] if len(entry) == 1 else entry}: {arr[entry].item()})"
    raise ValueError(f"{name} must be finite (no NaN or inf){where}; got a non-finite value{shown}")


def check_binary(value: Any, name: str) -> None:
    """A ``ValueError`` naming ``name`` unless every entry of ``value`` (array or tensor) is a
    bool, 0 or 1 (flags are never rounded)."""
    arr = host_view(value)
    if isinstance(arr, np.ndarray):
        if arr.dtype.kind == "b":
            return
        if arr.dtype.kind not in "iuf":
            raise ValueError(f"{name} must be bools or 0/1, got dtype {arr.dtype}")
    elif arr.dtype == sys.modules["torch"].bool:
        return
    bad = (arr != 0) & (arr != 1)
    if not bool(bad.any()):
        return
    where = _first_entries(bad.reshape(-1))
    raise ValueError(
        f"{name} must be bools or 0/1; entries {where.tolist()} got "
        f"{arr.reshape(-1)[where].tolist()} (never rounded)"
    )


def format_bytes(nbytes: float) -> str:
    """``nbytes`` in binary units: ``"1.5 GiB"``."""
    units = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    value = float(nbytes)
    for unit in units[:-1]:
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} {units[-1]}"


def memory_size(device: Any = "cpu") -> int | None:
    """Total memory of ``device`` in bytes (``"cpu"``: RAM, or the soft ``RLIMIT_AS`` if lower;
    CUDA: the GPU's; ``None``: torch's default device), or ``None`` where it cannot be told
    (then nothing is refused)."""
    if device is None:
        torch = sys.modules.get("torch")
        device = torch.get_default_device() if torch is not None else "cpu"
    if isinstance(device, str):
        kind, _, number = device.partition(":")
        size = _memory_size(kind, int(number) if number.isdigit() else None)
    else:
        kind, size = str(device.type), _memory_size(str(device.type), device.index)
    if kind == "cpu" and size is not None and resource is not None:
        # The soft address-space limit (read each call: it may be set after import).
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            size = min(size, int(soft))
    return size


@functools.lru_cache(maxsize=16)
def _memory_size(kind: str, index: int | None) -> int | None:
    # cached: a device's memory does not change during a run
    if kind == "cuda":
        import torch

        if not torch.cuda.is_available():
            return None
        props = torch.cuda.get_device_properties(
            torch.cuda.current_device() if index is None else index
        )
        return int(props.total_memory)
    if kind != "cpu":
        return None
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not a POSIX system
        return None


def array_bytes(*shape: int, itemsize: int = 8) -> int:
    """Bytes of an array of ``shape`` with ``itemsize``-byte entries, as an exact Python int
    (no overflow for any size)."""
    total = int(itemsize)
    for size in shape:
        total *= int(size)
    return total


def check_would_fit(
    nbytes: int | Mapping[str, int], what: str, device: Any = "cpu", *, share: float = 1.0
) -> None:
    """Refuse up front what would exhaust memory, before anything is allocated or looped over.

    Parameters
    ----------
    nbytes : int or Mapping[str, int]
        The bytes needed, or every buffer's bytes by name (:func:`array_bytes`); the sum counts.
    what : str
        The arguments that decide the size (``"num_heads=1000000000000"``).
    device, share : torch.device or str, float
        Where the buffers live (:func:`memory_size`), and the share of its memory they may take.

    Raises
    ------
    ValueError
        Naming ``what``, the total and the largest buffer, beyond ``share`` of the memory.
    """
    parts = dict(nbytes) if isinstance(nbytes, Mapping) else {}
    need = sum(parts.values()) if parts else int(nbytes)  # type: ignore[arg-type]
    total = memory_size(device)
    if total is None or need <= share * total:
        return
    largest = ""
    if parts:
        name = max(parts, key=lambda k: parts[k])
        largest = f" (the largest buffer, {name}, {format_bytes(parts[name])})"
    room = "" if share == 1.0 else f" {share:.0%} of"
    raise ValueError(
        f"{what} would need {format_bytes(need)}{largest} on {device}, more than{room} its "
        f"{format_bytes(total)} of memory"
    )


def magnitude_limit(dtype: Any, power: int) -> float:
    """``finfo(dtype).max ** (1/power)``: the largest magnitude whose ``power``-th power is
    finite in the numpy or torch float ``dtype`` (``power = 2``: ``1.3e154`` in float64)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        biggest = float(torch.finfo(dtype).max)
    else:
        biggest = float(np.finfo(dtype).max)
    return float(biggest ** (1.0 / power))


def check_magnitude(value: Any, name: str, limit: float, *, why: str = "") -> None:
    """A ``ValueError`` naming ``name``, its largest entry and ``limit`` if any entry of the
    finite ``value`` (array or tensor) exceeds ``limit`` in magnitude; ``why`` (e.g. ``"so that
    its square stays finite"``) ends the message."""
    arr = host_view(value)
    if 0 in tuple(arr.shape) or (isinstance(arr, np.ndarray) and arr.dtype.kind not in "iuf"):
        return
    biggest = float(abs(arr).max())
    if biggest > limit:
        reason = f" {why}" if why else ""
        raise ValueError(
            f"{name} must be at most {limit:.3g} in magnitude{reason}; got {biggest:.3g}"
        )
