"""The statistics guards (verify/stats_checks.py) hold on flbounds.stats and fail on planted
bugs of the kind the mutation catalogue plants (wrong Holm factor, slope, standard error,
Clopper-Pearson upper end)."""

import dataclasses

import numpy as np
import pytest
from scipy.stats import beta

from flbounds import stats
from verify import stats_checks


def _holm_off_by_one(p, alpha=0.05):
    p = np.asarray(p, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - 1 - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return stats.HolmResult(adjusted <= alpha, adjusted, alpha, m)


def _slope_off(*args, **kwargs):
    fit = stats.loglog_slope(*args, **kwargs)
    return dataclasses.replace(fit, slope=1.02 * fit.slope)


def _se_over_n(samples, axis=0):
    est = stats.mc_mean(samples, axis=axis)
    return stats.MeanSE(est.mean, est.se / np.sqrt(est.n), est.n)


def _cp_wrong_upper(k, n, *, confidence=0.99):
    low, _ = stats.clopper_pearson(k, n, confidence=confidence)
    alpha = 1 - confidence
    return low, 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k, n - k + 1))


CASES = {
    "holm": ("holm", _holm_off_by_one, lambda r: stats_checks.holm_evidence(r, 200, 12)),
    "fit": ("loglog_slope", _slope_off, lambda r: stats_checks.fit_evidence(r, 20)),
    "se": ("mc_mean", _se_over_n, lambda r: stats_checks.coverage_evidence(r, 2000, 50)),
    "cp": ("clopper_pearson", _cp_wrong_upper,
           lambda r: stats_checks.clopper_pearson_evidence((1, 7, 40), (0.9, 0.99))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_guard_holds_then_fails_on_the_planted_bug(case, monkeypatch):
    name, buggy, run = CASES[case]
    assert run(np.random.default_rng(0)).verdict() == "holds"
    monkeypatch.setattr(stats_checks, name, buggy)
    assert run(np.random.default_rng(0)).verdict() == "violated"


def test_holm_by_definition_small_cases():
    reject, adjusted = stats_checks.holm_by_definition(np.array([0.01, 0.04, 0.03]), 0.05)
    assert reject.tolist() == [True, False, False]
    assert np.allclose(adjusted, [0.03, 0.06, 0.06])
