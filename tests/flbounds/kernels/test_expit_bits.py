"""The kernels' logistic sigmoid: within 2 ulp of the libm form, and the same bits in a scalar
call and in every lane of the vector weights."""

import math

import numba
import numpy as np
import pytest

from flbounds.kernels._simd_exp import block_weights, expit, logistic_weights


def _branching(z):
    """The libm form: branch on the sign, then one of two formulas with ``math.exp``."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _ulps(a, b):
    """Distance in units in the last place of finite doubles of one sign (all here are >= 0)."""
    return np.abs(a.view(np.int64) - b.view(np.int64))


VALUES = np.concatenate([
    np.random.default_rng(0).standard_normal(50_000) * 5,
    np.random.default_rng(1).standard_normal(5_000) * 400,
    np.random.default_rng(2).uniform(-746.0, -700.0, 5_000),    # subnormal exponentials
    np.logspace(-320, 3, 400), -np.logspace(-320, 3, 400),
    [0.0, -0.0, 708.0, -708.0, 745.13, -745.13, 745.2, -745.2, 746.0, -746.0, 1e308, -1e308,
     np.inf, -np.inf]])


@numba.njit
def _scalar(values, out):
    for i in range(values.shape[0]):
        out[i] = expit(values[i])


@numba.njit
def _weights(acc, n, labels):
    logistic_weights(acc, n, labels, 0)


def test_expit_is_within_two_ulp_of_libm():
    """Range reduction, the degree-13 polynomial and the two-factor scaling each round; the
    result stays within 2 ulp of ``math.exp``'s form (most values are the same bits), down to
    the subnormal exponentials, and is exact at the ends."""
    got = np.empty_like(VALUES)
    _scalar(VALUES, got)
    want = np.array([_branching(float(v)) for v in VALUES])
    assert _ulps(got, want).max() <= 2
    assert (_ulps(got, want) == 0).mean() > 0.9
    assert expit(0.0) == 0.5 and expit(np.inf) == 1.0 and expit(-np.inf) == 0.0
    assert expit(-746.0) == 0.0 and expit(-745.13) == _branching(-745.13) > 0.0
    assert math.isnan(expit(math.nan))


@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 20, 33])
def test_vector_weights_are_the_scalar_lanes(n):
    """Every lane of a vector of 8 (the last one masked) is the scalar expression; the
    partial sums past the first n entries are left as they were."""
    rng = np.random.default_rng(n)
    sums = rng.standard_normal(4 * n) * 10
    sums[:4] = [np.inf, -np.inf, np.nan, 800.0]      # margins of +-inf, NaN, 1/(1 + e^800)
    labels = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    acc = sums.copy()
    _weights(acc, n, labels)
    want = np.empty(n)
    with np.errstate(invalid="ignore"):    # inf + -inf: a NaN margin, on purpose
        for k in range(n):
            margin = (sums[k] + sums[n + k]) + (sums[2 * n + k] + sums[3 * n + k])
            want[k] = -labels[k] * expit(-labels[k] * margin)
    assert np.array_equal(acc[:n].view(np.int64), want.view(np.int64))
    assert np.array_equal(acc[n:].view(np.int64), sums[n:].view(np.int64))


@numba.njit
def _block(acc, stride, count, y, dst):
    block_weights(acc, stride, count, y, dst)


@pytest.mark.parametrize("count", [1, 8, 11, 17])
@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_block_weights_are_the_scalar_lanes(count, y):
    """One label for every column of a block gradient: each lane is the scalar expression,
    written at ``dst`` only."""
    rng = np.random.default_rng(count)
    stride = count + 3
    acc = rng.standard_normal(6 * stride) * 10
    acc[:3] = [np.inf, np.nan, -800.0]
    before = acc.copy()
    _block(acc, stride, count, y, 5 * stride)
    want = before.copy()
    with np.errstate(invalid="ignore"):
        for j in range(count):
            margin = (before[j] + before[stride + j]) + (before[2 * stride + j]
                                                       + before[3 * stride + j])
            want[5 * stride + j] = -y * expit(-y * margin)
    assert np.array_equal(acc.view(np.int64), want.view(np.int64))


def test_a_changed_formula_is_seen():
    """The bit comparison can fail: 1 - expit(-z) is the same function, not the same bits."""
    values = np.random.default_rng(1).standard_normal(1_000) * 5
    other = np.array([1.0 - expit(-float(v)) for v in values])
    want = np.array([expit(float(v)) for v in values])
    assert not np.array_equal(other.view(np.int64), want.view(np.int64))
