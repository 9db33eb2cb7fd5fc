"""Threshold classifiers of SAFARI (flbounds.theory.thresholds): masses, alpha formulas, ERM."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flbounds.theory.thresholds import (
    UniformMixture,
    erm_threshold,
    excess_error,
    labels,
    mixture_alpha,
    paper_alpha,
    pooled_erm_errors,
    sa_fl_mixture,
    uniform,
)


def test_uniform_masses():
    u = uniform(0.2, 0.6)
    assert u.mass(0.0, 1.0) == pytest.approx(1.0)
    assert u.mass(0.4, 0.3) == pytest.approx(0.25)
    assert excess_error(uniform(0, 1), np.array([0.1, 0.9]), 0.5).tolist() == \
        pytest.approx([0.4, 0.4])


def test_alpha_formulas_match_spec_numbers():
    assert paper_alpha(0, 1, 0.4, 0.5) == pytest.approx(0.9)
    assert mixture_alpha(0, 1, 0.4, 0.5, 0.1) == pytest.approx(9.0)
    assert mixture_alpha(0, 1, 0.4, 0.5, 0.5) == pytest.approx(1.0)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.floats(0.01, 0.98), st.floats(0.01, 0.98), st.floats(0.05, 0.95),
       st.floats(-0.5, 1.5), st.floats(0, 1))
def test_mixture_alpha_bounds_every_threshold(u1, u2, weight, t, frac):
    ap, bp = sorted((u1, u2))
    if bp - ap < 1e-3 or t == ap + frac * (bp - ap):
        return
    ts = ap + frac * (bp - ap)
    eps_p = excess_error(uniform(0, 1), t, ts)
    eps_q = excess_error(sa_fl_mixture(0, 1, ap, bp, weight), t, ts)
    assert abs(eps_p - eps_q) <= mixture_alpha(0, 1, ap, bp, weight) * eps_q * (1 + 1e-9) + 1e-15


def test_erm_tie_break_is_pinned():
    assert erm_threshold([0.1, 0.3, 0.5], [0, 1, 1]) == pytest.approx(0.2)
    assert erm_threshold([0.1, 0.3], [0, 0]) == pytest.approx(0.3)     # outer gap: nearest point
    assert erm_threshold([0.1, 0.3], [1, 1]) == pytest.approx(0.1)
    # two equally good cuts: the leftmost minimising gap wins
    assert erm_threshold([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1]) == pytest.approx(0.15)


def test_erm_realizable_is_consistent():
    rng = np.random.default_rng(0)
    x = rng.random(200)
    y = labels(rng, x, 0.37)
    t = erm_threshold(x, y)
    assert np.all((x >= t).astype(int) == y)


def test_pooled_errors_shapes_and_floor():
    rng = np.random.default_rng(1)
    res = pooled_erm_errors(rng, n_client=50, n_server=0, client_dist=uniform(0.2, 0.6),
                            server_dist=uniform(0, 1), target=0.8, n_reps=5)
    assert res["eps_p"].shape == (5,) and np.all(res["eps_p"] >= 0.2)


@pytest.mark.parametrize(("args", "match"), [(([1.0], [0.5], [0.4]), "highs"),
                                             (([0.5], [0.0], [1.0]), "weights")])
def test_mixture_validation(args, match):
    with pytest.raises(ValueError, match=match):
        UniformMixture(*args)


def test_bad_labels_rejected():
    with pytest.raises(ValueError, match="labels"):
        erm_threshold([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="flip"):
        labels(np.random.default_rng(0), [0.1], 0.5, flip=0.6)


def _erm_stable(x, y):
    """erm_threshold with the stable sort throughout (the pinned tie-break)."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order].astype(np.int64)
    pos_left = np.concatenate([[0], np.cumsum(ys)])
    neg_right = np.concatenate([[0], np.cumsum((1 - ys)[::-1])])[::-1]
    j = int(np.argmin(pos_left + neg_right))
    return float(xs[0]) if j == 0 else float(xs[-1]) if j == xs.size else \
        float(0.5 * (xs[j - 1] + xs[j]))


def test_erm_threshold_is_the_stable_sorts_with_and_without_ties():
    from flbounds.theory.thresholds import erm_threshold
    rng = np.random.default_rng(11)
    for n in (1, 2, 7, 200, 5000):
        for tied in (False, True):
            x = rng.random(n)
            if tied:   # few distinct values: many ties with different labels
                x = np.round(x * 5) / 5
            y = (rng.random(n) < 0.5).astype(np.int64)
            assert erm_threshold(x, y) == _erm_stable(x, y)
