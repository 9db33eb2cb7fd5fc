"""Theorem 5.2's K-rate: the gate is the theorem's -4/3 judged on the slope's interval, a
slope shallower than -4/3 is inconclusive (never violated: eq. (13) is an O~ upper bound far
from tight), and the exact rate of the explicit bound is -4/3 (a planted theta exponent moves
it)."""

import numpy as np
import sympy as sp

from verify.kvib.thm5_2.bound_rate import bound_k_rate, bound_log_slope_limit
from verify.kvib.thm5_2.regret import FOUR_THIRDS, k_rate_evidence

KS = (2, 4, 8, 16)


def _regrets(slope, n_seeds=6, seed=0):
    rng = np.random.default_rng(seed)
    base = np.asarray(KS, float) ** slope
    return base * np.exp(0.01 * rng.normal(size=(n_seeds, len(KS))))


def _evidence(slope):
    return k_rate_evidence(np.random.default_rng(1), KS, {"a": _regrets(slope)},
                           instance=None, margins=np.array([100.0]), details={})


def test_steeper_than_four_thirds_holds():
    assert _evidence(-1.6).verdict() == "holds"


def test_shallower_is_inconclusive_with_what_it_resolves():
    ev = _evidence(-1.0)
    assert ev.verdict() == "inconclusive"
    assert "half-widths" in ev.undecided and "2e+06" in ev.undecided  # 2 * 100^3
    assert ev.theoretical == FOUR_THIRDS


def test_bound_rate_is_four_thirds_and_a_planted_theta_moves_it():
    assert bound_log_slope_limit() == sp.Rational(-4, 3)
    assert bound_k_rate(rng=None).verdict() == "holds"
    assert bound_log_slope_limit(sp.Rational(1, 2)) == sp.Rational(-5, 4)
