"""The branch-free logistic sigmoid of the kernels gives the bits of the branching form."""

import math

import numpy as np

from flbounds.kernels.losses import _expit


def _branching(z):
    """The form the kernels used before: branch on the sign, then one of two formulas."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def test_expit_equals_the_branching_form_bit_for_bit():
    rng = np.random.default_rng(0)
    values = np.concatenate([
        rng.standard_normal(20_000) * 5, rng.standard_normal(2_000) * 400,
        np.logspace(-320, 3, 400), -np.logspace(-320, 3, 400),
        [0.0, -0.0, 708.0, -708.0, 745.2, -745.2, 1e308, -1e308, np.inf, -np.inf]])
    got = np.array([_expit(v) for v in values])
    want = np.array([_branching(float(v)) for v in values])
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
    assert math.isnan(_expit(math.nan))


def test_a_changed_formula_is_seen():
    """The comparison can fail: 1 - expit(-z) is the same function, not the same bits."""
    values = np.random.default_rng(1).standard_normal(1_000) * 5
    other = np.array([1.0 - _branching(-float(v)) for v in values])
    want = np.array([_branching(float(v)) for v in values])
    assert not np.array_equal(other.view(np.int64), want.view(np.int64))
