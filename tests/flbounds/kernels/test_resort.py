"""The warm water-filling sort: from any starting permutation it writes the permutation of
the merge sort (increasing values, ties in index order), and the warm water level equals
the cold one bit for bit."""

import numpy as np
import pytest

from flbounds.kernels._arrays import argsort_into
from flbounds.kernels.waterfill import resort_into, waterfill, waterfill_warm


@pytest.mark.parametrize("n", [1, 2, 7, 64, 301])
def test_resort_from_any_order_is_the_stable_argsort(n):
    rng = np.random.default_rng(n)
    order = np.arange(n)
    for step in range(60):
        kind = step % 4
        if kind == 0:
            a = rng.random(n)                          # far from the last order: falls back
        elif kind == 1:
            a = a + 1e-3 * rng.random(n)               # nearly sorted already
        elif kind == 2:
            a = np.round(4 * a) / 4                    # ties
        else:
            order = rng.permutation(n)                 # any permutation to start from
        resort_into(a, order, np.empty(n, dtype=np.int64))
        cold = np.empty(n, dtype=np.int64)
        argsort_into(a, cold, np.empty(n, dtype=np.int64))
        assert np.array_equal(order, cold)
        assert np.array_equal(order, np.argsort(a, kind="stable"))


def test_warm_water_level_is_the_cold_one():
    rng = np.random.default_rng(3)
    n, order = 40, np.arange(40)
    a = rng.lognormal(0.0, 2.0, n)
    for _ in range(30):
        a = a * (1 + 0.05 * rng.random(n))
        cold, warm = np.empty(n), np.empty(n)
        waterfill(a, 6.0, np.empty(n, dtype=np.int64), np.empty(n), cold)
        waterfill_warm(a, 6.0, order, np.empty(n), warm)
        assert np.array_equal(cold, warm)


def test_feedback_block_is_the_numpy_formula_bit_for_bit():
    from flbounds.sampling.online import Assumption51Feedback

    rng = np.random.default_rng(11)
    for n in (2, 9, 64):
        for sign in (1.0, -1.0):
            lam, base = rng.dirichlet(np.ones(n)), 10.0 ** rng.uniform(-3, 3, n)
            fb = Assumption51Feedback(lam, base, sign * rng.random(n) * base)
            for t0, t1 in ((1, 700), (4097, 5000), (10**6, 10**6 + 50)):
                t = np.arange(t0, t1, dtype=float)[:, None]
                expected = (np.divide(fb.decay, np.sqrt(t)) + fb.base) * fb.lam
                assert np.array_equal(fb.block(t0, t1), expected)
                assert np.array_equal(fb.block(t0, t0 + 1)[0], fb.values(t0))
