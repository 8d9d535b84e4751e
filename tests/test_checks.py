"""Tests of the shared argument checks in ``delight_gym._checks`` that the posteriors use.

References: the values each check must accept are listed by hand; what it must refuse is
named in the error, which is what users read.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from delight_gym._checks import (
    check_device,
    check_finite_array,
    check_finite_float,
    check_float_dtype,
)


def test_check_finite_float() -> None:
    assert check_finite_float(2, "x") == 2.0
    assert isinstance(check_finite_float(np.float32(-0.5), "x"), float)
    with pytest.raises(TypeError, match="x must be a real number"):
        check_finite_float(True, "x")
    with pytest.raises(TypeError, match="x must be a real number"):
        check_finite_float("1", "x")
    with pytest.raises(ValueError, match="x must not be NaN"):
        check_finite_float(math.nan, "x")
    with pytest.raises(ValueError, match="x must be finite"):
        check_finite_float(-math.inf, "x")


def test_check_finite_array_shape() -> None:
    np.testing.assert_array_equal(check_finite_array([1, 2], "r", shape=(2,)), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"r must have shape \(3,\), got \(2,\)"):
        check_finite_array([1, 2], "r", shape=(3,))
    with pytest.raises(ValueError, match=r"r must have shape \(2,\), got \(2, 1\)"):
        check_finite_array([[1], [2]], "r", shape=(2,))
    # Non-finite values are named before the shape is looked at.
    with pytest.raises(ValueError, match="r must be finite"):
        check_finite_array([math.nan], "r", shape=(3,))


def test_check_float_dtype() -> None:
    assert check_float_dtype(torch.float32) is torch.float32
    assert check_float_dtype(torch.float64) is torch.float64
    for bad in (torch.float16, torch.int64, "float64", np.float64):
        with pytest.raises(TypeError, match=r"dtype must be torch\.float32 or torch\.float64"):
            check_float_dtype(bad)


def test_check_device_is_where_tensors_live() -> None:
    assert check_device(None) == torch.empty(0).device
    assert check_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="device 'no-such-device' is not usable"):
        check_device("no-such-device")
    with pytest.raises(ValueError, match=r"where 3\.5 is not usable"):
        check_device(3.5, "where")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_check_device_names_the_cuda_index() -> None:
    dev = check_device("cuda")
    assert dev.index is not None
    assert dev == torch.zeros(1, device="cuda").device
