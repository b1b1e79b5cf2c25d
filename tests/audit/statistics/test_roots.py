"""judge_transfer_audit.statistics.roots.brentq takes scipy.optimize.brentq's steps: the same root to the last bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize as so

from judge_transfer_audit.statistics.roots import brentq

FUNCTIONS = [
    (lambda x: x**3 - 2 * x - 5, 2.0, 3.0),
    (lambda x: math.cos(x) - x, 0.0, 1.0),
    (lambda x: math.exp(x) - 1e3, 0.0, 10.0),
    (lambda x: x - 1e-9, -1.0, 1.0),
    (lambda x: math.tanh(50 * (x - 0.3)), -1.0, 2.0),  # flat far from the root: bisection steps
    (lambda x: (x - 0.7) ** 3, 0.0, 1.0),  # a triple root: slow convergence
    (lambda x: 1.0 if x > 0.25 else -1.0, 0.0, 1.0),  # a jump: bisection to the tolerance
    (lambda x: np.float64(x) - 0.5, 0.0, 1.0),  # a numpy scalar value
]
TOLERANCES = [(2e-12, 4 * np.finfo(float).eps), (1e-7, 1e-10), (1e-3, 1e-6)]


@pytest.mark.parametrize("f, a, b", FUNCTIONS)
@pytest.mark.parametrize("xtol, rtol", TOLERANCES)
def test_same_root_as_scipy(f, a, b, xtol, rtol):
    ours = brentq(f, a, b, xtol=xtol, rtol=rtol)
    theirs = so.brentq(f, a, b, xtol=xtol, rtol=rtol)
    assert np.float64(ours).view(np.uint64) == np.float64(theirs).view(np.uint64)
    reversed_ours = brentq(f, b, a, xtol=xtol, rtol=rtol)
    assert reversed_ours == so.brentq(f, b, a, xtol=xtol, rtol=rtol)


def test_an_endpoint_root_is_returned_as_given():
    assert brentq(lambda x: x, 0.0, 1.0) == so.brentq(lambda x: x, 0.0, 1.0) == 0.0
    assert brentq(lambda x: x - 1.0, 0.0, 1.0) == 1.0


def test_errors_as_scipy():
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x * x + 1.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        brentq(lambda x: math.nan if x > 0.5 else -1.0, 0.0, 1.0)
    with pytest.raises(RuntimeError, match="converge"):
        brentq(lambda x: (x - 0.7) ** 3, 0.0, 1.0, maxiter=3)
    with pytest.raises(ValueError, match="rtol"):
        brentq(lambda x: x, -1.0, 1.0, rtol=1e-17)
