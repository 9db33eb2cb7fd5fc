"""The vector multiply-add passes: every width, the scalar loop's bits, nothing written past
the outputs (the last vector of a pass is masked)."""

import numba
import numpy as np
import pytest

from flbounds.kernels._simd import madd_rows, madd_rows4


@numba.njit
def _one(acc, width, m, v, count):
    madd_rows(acc, 1, width, m, 2, width + 3, v, 1, count)


@numba.njit
def _four(acc, stride, width, m, v, count):
    madd_rows4(acc, 1, stride, width, m, 2, width + 3, v, 1, count)


def _bits(a):
    return a.view(np.int64)


@pytest.mark.parametrize("width", [1, 4, 7, 8, 9, 16, 17, 20, 24, 25, 32, 33, 50, 65])
def test_madd_rows_is_the_scalar_loop(width):
    rng = np.random.default_rng(width)
    count = 13
    m = rng.standard_normal(2 + count * (width + 3) + 8)
    v = rng.standard_normal(1 + count)
    acc = rng.standard_normal(1 + width + 9)
    want = acc.copy()
    for t in range(count):                    # row after row, mul then add
        for i in range(width):
            want[1 + i] = want[1 + i] + m[2 + t * (width + 3) + i] * v[1 + t]
    _one(acc, width, m, v, count)
    assert np.array_equal(_bits(acc), _bits(want))


@pytest.mark.parametrize("width", [1, 5, 8, 12, 16, 19, 20, 33, 50])
def test_madd_rows4_is_four_scalar_loops(width):
    rng = np.random.default_rng(100 + width)
    count, stride = 6, width + 2              # partial sums 2 apart: the gaps stay untouched
    m = rng.standard_normal(2 + 4 * count * (width + 3) + 8)
    v = rng.standard_normal(1 + 4 * count)
    acc = rng.standard_normal(1 + 4 * stride + 9)
    want = acc.copy()
    for t in range(count):
        for j in range(4):
            row = 4 * t + j
            for i in range(width):
                k = 1 + j * stride + i
                want[k] = want[k] + m[2 + row * (width + 3) + i] * v[1 + row]
    _four(acc, stride, width, m, v, count)
    assert np.array_equal(_bits(acc), _bits(want))
