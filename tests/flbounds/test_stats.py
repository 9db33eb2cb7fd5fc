"""flbounds.stats: exact fits on synthetic data, interval coverage, validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from flbounds.stats import (
    MeanSE,
    RateFit,
    SlopeFit,
    clopper_pearson,
    linear_rate_fit,
    loglog_slope,
    mc_mean,
    quantile_lower_bound,
)

PROPERTY = settings(max_examples=50, deadline=None, derandomize=True)


# ---------------------------------------------------------------------------- loglog_slope
def test_exact_power_law_slope():
    x = np.geomspace(1.0, 1e3, 12)
    fit = loglog_slope(x, 3.0 * x**-1.5, rng=np.random.default_rng(0))
    assert isinstance(fit, SlopeFit) and fit.n == 12
    np.testing.assert_allclose([fit.slope, fit.intercept, fit.r2], [-1.5, np.log(3.0), 1.0],
                               rtol=1e-12)
    np.testing.assert_allclose([fit.ci_low, fit.ci_high], -1.5, rtol=1e-10)


def test_exact_power_law_with_replicates():
    x = np.array([2.0, 4.0, 8.0, 16.0])
    y = np.array([[1.0], [2.0], [5.0]]) * x**0.5  # seeds differ by a constant factor
    fit = loglog_slope(x, y, n_boot=200, rng=np.random.default_rng(1))
    np.testing.assert_allclose([fit.slope, fit.ci_low, fit.ci_high], 0.5, rtol=1e-10)
    assert fit.n == 4


def test_noisy_power_law_ci_covers_truth():
    rng = np.random.default_rng(2024)
    x = np.geomspace(1.0, 100.0, 25)
    y = 2.0 * x**-0.5 * np.exp(0.2 * rng.standard_normal(x.size))
    fit = loglog_slope(x, y, ci=0.999, rng=rng)  # a single data set: miss rate 0.1%
    assert fit.ci_low < -0.5 < fit.ci_high
    assert fit.ci_low < fit.slope < fit.ci_high and 0.0 < fit.r2 < 1.0


def test_pairs_bootstrap_coverage_is_near_nominal():
    # 200 independent noisy data sets; a 95% interval should cover the true slope in
    # roughly 95% of them (pairs bootstrap undercovers slightly at n = 20; binomial SE 1.5%).
    rng = np.random.default_rng(7)
    x = np.geomspace(1.0, 10.0, 20)
    hits = 0
    for _ in range(200):
        y = x**-1.0 * np.exp(0.1 * rng.standard_normal(x.size))
        fit = loglog_slope(x, y, n_boot=400, rng=rng)
        hits += fit.ci_low <= -1.0 <= fit.ci_high
    assert hits / 200 >= 0.85


def test_replicate_bootstrap_covers_truth():
    rng = np.random.default_rng(3)
    x = np.geomspace(1.0, 1e4, 9)
    noise = np.exp(0.3 * rng.standard_normal((20, x.size)))
    fit = loglog_slope(x, x**-2.0 * noise, rng=rng)
    assert fit.ci_low < -2.0 < fit.ci_high


def test_no_bootstrap_gives_nan_interval():
    x = np.array([1.0, 2.0, 3.0])
    fit = loglog_slope(x, x, n_boot=0, rng=None)
    assert fit.slope == pytest.approx(1.0) and np.isnan(fit.ci_low) and np.isnan(fit.ci_high)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"x": [1.0, 2.0, 0.0], "y": [1.0, 2.0, 3.0]}, "^x "),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, -2.0, 3.0]}, "^y "),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, np.nan, 3.0]}, "^y "),
        ({"x": [1.0, np.nan, 3.0], "y": [1.0, 2.0, 3.0]}, "^x "),
        ({"x": [1.0, 2.0], "y": [1.0, 2.0]}, "^x "),
        ({"x": [2.0, 2.0, 2.0], "y": [1.0, 2.0, 3.0]}, "^x "),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, 2.0]}, "^y "),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, 2.0, 3.0], "ci": 1.0}, "^ci "),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, 2.0, 3.0], "n_boot": -1}, "^n_boot "),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, 2.0, 3.0], "rng": None}, "^rng "),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, 2.0, 3.0], "mean": "median"}, "^mean "),
    ],
)
def test_loglog_slope_bad_input(kwargs, pattern):
    kwargs = {"rng": np.random.default_rng(0), **kwargs}
    with pytest.raises(ValueError, match=pattern):
        loglog_slope(**kwargs)


# ---------------------------------------------------------------------------- mc_mean
def test_mc_mean_known_values():
    est = mc_mean([1.0, 2.0, 3.0, 4.0])
    assert isinstance(est, MeanSE) and est.n == 4
    assert est.mean == 2.5 and est.se == pytest.approx(np.sqrt(5.0 / 3.0) / 2.0, rel=1e-15)
    est = mc_mean(np.array([[1.0, 10.0], [3.0, 10.0]]), axis=0)
    np.testing.assert_allclose(est.mean, [2.0, 10.0])
    np.testing.assert_allclose(est.se, [1.0, 0.0])
    est = mc_mean(np.array([[1.0, 3.0], [10.0, 10.0]]), axis=-1)
    np.testing.assert_allclose(est.mean, [2.0, 10.0])


@pytest.mark.parametrize(("samples", "axis"), [([1.0], 0), ([1.0, np.nan], 0), (3.0, 0),
                                               ([[1.0, 2.0]], 0), ([1.0, 2.0], 1)])
def test_mc_mean_bad_input(samples, axis):
    with pytest.raises(ValueError, match="^(samples|axis) "):
        mc_mean(samples, axis=axis)


# ---------------------------------------------------------------------------- Clopper-Pearson
def test_clopper_pearson_known_values():
    low, high = clopper_pearson(5, 10, confidence=0.95)
    np.testing.assert_allclose([low, high], [0.18708602, 0.81291398], atol=1e-8)
    assert clopper_pearson(0, 10, confidence=0.95) == (0.0, pytest.approx(1 - 0.025**0.1))
    assert clopper_pearson(10, 10, confidence=0.95) == (pytest.approx(0.025**0.1), 1.0)
    low, high = clopper_pearson(0, 1)
    assert low == 0.0 and high == pytest.approx(0.995)


def test_clopper_pearson_monotone_in_k_and_confidence():
    bounds = np.array([clopper_pearson(k, 30) for k in range(31)])
    assert np.all(np.diff(bounds[:, 0]) > 0) and np.all(np.diff(bounds[:, 1]) > 0)
    assert np.all(bounds[:, 0] <= np.arange(31) / 30) and np.all(np.arange(31) / 30 <= bounds[:, 1])
    wide, narrow = clopper_pearson(7, 30, confidence=0.99), clopper_pearson(7, 30, confidence=0.9)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]


@PROPERTY
@given(st.integers(1, 40), st.floats(0.0, 1.0), st.sampled_from([0.8, 0.95, 0.99]))
def test_clopper_pearson_exact_coverage(n, p, confidence):
    # exact coverage P_p(p in CI(K)), K ~ Binomial(n, p), is at least the nominal level
    ks = np.arange(n + 1)
    covers = np.array([lo <= p <= hi for lo, hi in (clopper_pearson(k, n, confidence=confidence)
                                                     for k in ks)])
    assert binom.pmf(ks, n, p) @ covers >= confidence - 1e-12


@pytest.mark.parametrize(("k", "n", "confidence", "pattern"),
                         [(3, 2, 0.9, "^k "), (-1, 2, 0.9, "^k "), (0, 0, 0.9, "^n "),
                          (1, 2, 1.0, "^confidence "), (1.5, 2, 0.9, "^k ")])
def test_clopper_pearson_bad_input(k, n, confidence, pattern):
    with pytest.raises(ValueError, match=pattern):
        clopper_pearson(k, n, confidence=confidence)


# ---------------------------------------------------------------------------- linear rate
def test_linear_rate_on_geometric_sequence():
    errors = 5.0 * 0.9 ** np.arange(300)
    fit = linear_rate_fit(errors)
    assert isinstance(fit, RateFit)
    assert fit.n_used == int(np.floor(np.log(1e-12) / np.log(0.9))) + 1
    np.testing.assert_allclose([fit.rate, fit.slope, fit.r2], [0.9, np.log(0.9), 1.0],
                               rtol=1e-12)


def test_linear_rate_window_excludes_transient_and_floor():
    k = np.arange(200)
    errors = np.maximum(0.5**k, 1e-15)  # geometric, then a floating-point floor
    errors[:3] = [1.0, 0.9, 0.8]  # slow transient
    fit = linear_rate_fit(errors, window=(1e-13, 0.3))
    np.testing.assert_allclose(fit.rate, 0.5, rtol=1e-12)
    assert fit.n_used == np.count_nonzero((errors >= 1e-13) & (errors <= 0.3))


@pytest.mark.parametrize(
    ("errors", "window", "pattern"),
    [([1.0, 0.5, 0.25], (1e-12, 1.0), None),
     ([1.0, 0.5], (1e-12, 1.0), "^window "),
     ([1.0, 1e-20, 1e-21, 1e-22], (1e-12, 1.0), "^window "),
     ([0.0, 1.0, 1.0], (1e-12, 1.0), "^errors "),
     ([1.0, -0.5, 0.25], (1e-12, 1.0), "^errors "),
     ([1.0, np.nan, 0.25], (1e-12, 1.0), "^errors "),
     ([1.0, 0.5, 0.25], (0.0, 1.0), "^window "),
     ([1.0, 0.5, 0.25], (0.5, 0.1), "^window "),
     ([1.0, 0.5, 0.25], 0.5, "^window ")],
)
def test_linear_rate_validation(errors, window, pattern):
    if pattern is None:
        assert linear_rate_fit(errors, window=window).rate == pytest.approx(0.5)
        return
    with pytest.raises(ValueError, match=pattern):
        linear_rate_fit(errors, window=window)


# ---------------------------------------------------------------------- quantile_lower_bound
def test_quantile_lower_bound_is_an_order_statistic_with_coverage():
    rng = np.random.default_rng(3)
    samples = rng.standard_normal(500)
    low = quantile_lower_bound(samples, 0.5, confidence=0.99)
    assert low in samples and low < np.median(samples)
    j = np.searchsorted(np.sort(samples), low) + 1          # its rank
    assert binom.sf(j - 1, 500, 0.5) >= 0.99 > binom.sf(j, 500, 0.5)
    # coverage of the true median 0 over repeated draws: miss rate <= 1%
    misses = sum(quantile_lower_bound(rng.standard_normal(200), 0.5) > 0.0 for _ in range(400))
    assert misses <= 12   # Bin(400, 0.01) exceeds 12 with probability < 0.001


def test_quantile_lower_bound_too_few_samples_and_bad_input():
    assert quantile_lower_bound([1.0, 2.0], 0.5) == -np.inf   # P(Bin(2, .5) >= 1) = 0.75
    for kwargs, pattern in [({"p": 1.0}, "^p "), ({"confidence": 0.0}, "^confidence "),
                            ({"samples": []}, "^samples ")]:
        with pytest.raises(ValueError, match=pattern):
            quantile_lower_bound(**{"samples": [1.0, 2.0], "p": 0.5, **kwargs})


def test_arithmetic_mean_fits_log_of_mean():
    # two seeds, y = c_s x^-1: the arithmetic mean is (c_1 + c_2)/2 x^-1, the geometric
    # sqrt(c_1 c_2) x^-1; both have slope -1 but different intercepts.
    x = np.array([1.0, 2.0, 4.0, 8.0])
    y = np.array([1.0, 9.0])[:, None] / x
    arith = loglog_slope(x, y, n_boot=50, rng=np.random.default_rng(0), mean="arithmetic")
    geo = loglog_slope(x, y, n_boot=50, rng=np.random.default_rng(0))
    assert arith.slope == pytest.approx(-1.0, abs=1e-12)
    assert arith.intercept == pytest.approx(np.log(5.0), abs=1e-12)
    assert geo.intercept == pytest.approx(np.log(3.0), abs=1e-12)
    # seed-dependent exponents: the arithmetic curve is dominated by the flatter seed at large x
    y2 = np.vstack([x**-1.0, x**-3.0])
    fit = loglog_slope(x, y2, n_boot=200, rng=np.random.default_rng(1), mean="arithmetic")
    assert fit.slope == pytest.approx(np.polyfit(np.log(x), np.log(y2.mean(axis=0)), 1)[0])
    assert fit.ci_low <= fit.slope <= fit.ci_high


def test_holm_known_values_and_step_down():
    from flbounds.stats import holm
    # sorted p: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06 -> monotone), 0.5 (x1)
    res = holm([0.03, 0.5, 0.01, 0.02], alpha=0.05)
    np.testing.assert_allclose(res.adjusted, [0.06, 0.5, 0.04, 0.06])
    assert res.reject.tolist() == [False, False, True, False]
    assert res.m == 4 and res.alpha == 0.05
    # Holm stops at the first non-rejection even if a later scaled p-value is small
    assert holm([0.001, 0.04, 0.04], alpha=0.05).reject.tolist() == [True, False, False]
    assert holm([0.2], alpha=0.25).reject.tolist() == [True]


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20), st.floats(0.01, 0.5))
@PROPERTY
def test_holm_between_bonferroni_and_unadjusted(pvalues, alpha):
    from flbounds.stats import holm
    p = np.asarray(pvalues)
    res = holm(p, alpha)
    bonferroni = p * p.size <= alpha
    assert np.all(res.reject >= bonferroni) and np.all(res.reject <= (p <= alpha))
    assert np.all(res.adjusted >= p) and np.all(res.adjusted <= 1.0)


@pytest.mark.parametrize("pvalues, alpha, pattern", [
    ([], 0.05, "pvalues"), ([0.1, 1.2], 0.05, "pvalues"), ([0.1, np.nan], 0.05, "pvalues"),
    ([0.1], 0.0, "alpha"), ([0.1], 1.5, "alpha")])
def test_holm_bad_input(pvalues, alpha, pattern):
    from flbounds.stats import holm
    with pytest.raises(ValueError, match=pattern):
        holm(pvalues, alpha)


def test_holm_se_multiplier_is_holms_first_step():
    """A family of m z-scores has a Holm rejection (two-sided, at the one-cell 4-SE level)
    exactly when some |z| exceeds holm_se_multiplier(m)."""
    from scipy.stats import norm

    from flbounds.stats import holm, holm_se_multiplier

    alpha = 2 * norm.sf(4.0)
    for m in (1, 3, 50):
        k_m = holm_se_multiplier(m)
        for top in (k_m * 0.999, k_m * 1.001):
            z = np.concatenate([[top], np.zeros(m - 1)])
            rejected = holm(2 * norm.sf(np.abs(z)), alpha).reject.any()
            assert rejected == (top > k_m)
    assert holm_se_multiplier(1) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="n_cells"):
        holm_se_multiplier(0)
