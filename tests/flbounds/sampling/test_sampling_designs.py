"""Property and regression tests of flbounds.sampling (K-Vib Lemma 2.2 / B.8, App. C.1)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flbounds.sampling import (
    isp_estimate,
    isp_variance,
    mix_uniform,
    multinomial_estimate,
    multinomial_variance,
    optimal_isp_objective,
    optimal_isp_probabilities,
    optimal_isp_variance,
    rsp_uniform_variance,
    uniform_isp_variance,
)
from flbounds.sampling.exact import design_moments, isp_moments, uniform_subset_design
from verify.kvib.printed_formulas import lemma22_printed_formula

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def instances(draw, allow_zero=False, max_n=40):
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    sigma = draw(st.floats(0.0, 2.5))
    a = rng.lognormal(0.0, sigma, n)
    if draw(st.booleans()):  # ties
        a = np.round(a, 1) + 0.1
    if allow_zero and draw(st.booleans()):
        a[rng.random(n) < 0.3] = 0.0
    if draw(st.booleans()):
        k = float(draw(st.integers(1, n)))
    else:
        k = draw(st.floats(0.05, float(n)))
    frac = draw(st.sampled_from([0.0, 0.0, 0.3, 0.9, 1.0]))
    return a, k, frac * k / n


def test_regression_off_by_one():
    np.testing.assert_allclose(optimal_isp_probabilities([1.0, 3.0, 6.0], 2),
                               [0.25, 0.75, 1.0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(optimal_isp_probabilities([6.0, 1.0, 3.0], 2),
                               [1.0, 0.25, 0.75], rtol=0, atol=1e-15)


@SETTINGS
@given(instances(allow_zero=True))
@example((np.array([1.0]), 1.0, 0.0))
@example((np.array([2.0, 2.0, 2.0]), 3.0, 1.0))
@example((np.array([0.0, 0.0, 1.0]), 2.0, 0.0))
def test_solver_feasible_and_kkt(inst):
    a, k, p_min = inst
    p = optimal_isp_probabilities(a, k, p_min=p_min)
    assert abs(p.sum() - k) <= 1e-9 * max(k, 1)
    assert np.all(p >= p_min - 1e-15) and np.all(p <= 1.0)
    pos = a > 0
    free = pos & (p > p_min + 1e-12) & (p < 1 - 1e-12)
    if free.any():  # one tau: a_i / p_i constant on the free set
        tau = a[free] / p[free]
        assert np.ptp(tau) <= 1e-9 * tau.max()
        assert np.all(a[pos & (p >= 1 - 1e-12)] >= tau.min() * (1 - 1e-9))
        assert np.all(a[pos & (p <= p_min + 1e-12)] <= p_min * tau.max() * (1 + 1e-9))
    order = np.argsort(a, kind="stable")  # monotone in a
    assert np.all(np.diff(p[order]) >= -1e-12)


@SETTINGS
@given(instances(), st.integers(0, 2**32 - 1))
def test_solver_beats_random_feasible(inst, seed):
    a, k, p_min = inst
    n = a.size
    p = optimal_isp_probabilities(a, k, p_min=p_min)
    best = np.sum(a * a / p)
    rng = np.random.default_rng(seed)
    for _ in range(50):
        q = p_min + (k - n * p_min) * rng.dirichlet(np.ones(n))
        if np.all(q <= 1):
            assert best <= np.sum(a * a / q) * (1 + 1e-12)


@SETTINGS
@given(instances(max_n=30))
def test_printed_lemma22_equals_solver(inst):
    a, k, _ = inst
    if k < 1:
        return
    np.testing.assert_allclose(lemma22_printed_formula(a, k), optimal_isp_probabilities(a, k),
                               rtol=1e-10, atol=1e-12)


def test_special_cases():
    rng = np.random.default_rng(1)
    a = rng.lognormal(size=17)
    np.testing.assert_allclose(optimal_isp_probabilities(a, 1), a / a.sum(), rtol=1e-12)
    np.testing.assert_array_equal(optimal_isp_probabilities(a, 17), np.ones(17))
    vals = [optimal_isp_variance(a, k) for k in range(1, 18)]
    assert np.all(np.diff(vals) <= 1e-9) and vals[-1] == 0.0


def test_cvxpy_cross_check():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(2)
    for _ in range(6):
        n = int(rng.integers(3, 15))
        a = rng.lognormal(0, 1.5, n)
        k = float(rng.uniform(1, n - 0.5))
        p_min = float(rng.uniform(0, k / n))
        x = cp.Variable(n)
        prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(a**2, cp.inv_pos(x)))),
                          [cp.sum(x) == k, x >= p_min, x <= 1])
        prob.solve()
        ours = optimal_isp_objective(a, k, p_min=p_min)
        # the conic solver meets constraints to ~1e-8, so its value may undercut ours slightly
        assert abs(ours - prob.value) <= 1e-6 * prob.value


@pytest.mark.parametrize("bad", [
    dict(a=[1.0, -1.0], k=1), dict(a=[1.0, np.nan], k=1), dict(a=[1.0, 2.0], k=0),
    dict(a=[1.0, 2.0], k=2.5), dict(a=[1.0, 2.0], k=-1), dict(a=[1.0, 2.0], k=1, p_min=0.6),
    dict(a=[1.0, 2.0], k=1, p_min=-0.1), dict(a=[], k=1), dict(a=[[1.0]], k=1),
])
def test_solver_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        optimal_isp_probabilities(bad["a"], bad["k"], p_min=bad.get("p_min", 0.0))


@pytest.mark.parametrize("p", [[0.0, 1.0], [0.5, 1.5], [np.nan, 0.5], [-0.2, 0.5]])
def test_isp_variance_rejects_bad_p(p):
    with pytest.raises(ValueError, match="p"):
        isp_variance(p, [1.0, 1.0])


@SETTINGS
@given(st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_isp_enumeration_matches_closed_form(n, seed):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 3))
    p = rng.uniform(0.05, 1.0, n)
    mom = isp_moments(z, p)
    np.testing.assert_allclose(mom.mean, z.sum(axis=0), atol=1e-10 * (1 + np.abs(z).sum()))
    var = isp_variance(p, np.linalg.norm(z, axis=1))
    assert abs(mom.variance - var) <= 1e-9 * (1 + var)
    assert abs(mom.size_probs @ np.arange(n + 1) - p.sum()) <= 1e-12 * n


def test_uniform_rsp_enumeration():
    rng = np.random.default_rng(3)
    for n, k in [(5, 2), (7, 3), (8, 8), (6, 1)]:
        z = rng.standard_normal((n, 2))
        mom = design_moments(z, *uniform_subset_design(n, k))
        np.testing.assert_allclose(mom.mean, z.sum(axis=0), atol=1e-12)
        assert abs(mom.variance - rsp_uniform_variance(z, k)) <= 1e-10 * (1 + mom.variance)


def test_multinomial_estimator_exact():
    # enumerate K=2 ordered draws from q on N=4 clients
    rng = np.random.default_rng(4)
    q = rng.dirichlet(np.ones(4))
    z = rng.standard_normal((4, 3))
    mean, second = np.zeros(3), 0.0
    for i in range(4):
        for j in range(4):
            c = np.bincount([i, j], minlength=4)
            d = multinomial_estimate(z, q, c)
            mean += q[i] * q[j] * d
            second += q[i] * q[j] * d @ d
    np.testing.assert_allclose(mean, z.sum(axis=0), atol=1e-12)
    assert abs(second - mean @ mean - multinomial_variance(q, z, 2)) < 1e-10


def test_isp_estimate_and_mixing():
    z = np.arange(6.0).reshape(3, 2)
    p = np.array([0.5, 1.0, 0.25])
    np.testing.assert_allclose(isp_estimate(z, p, [True, False, True]), z[0] / 0.5 + z[2] / 0.25)
    pt = mix_uniform(optimal_isp_probabilities([1.0, 3.0, 6.0], 2), 0.3)
    assert abs(pt.sum() - 2) < 1e-12 and pt.min() >= 0.3 * 2 / 3 - 1e-15
    assert uniform_isp_variance([1.0, 1.0], 1) == 2.0
