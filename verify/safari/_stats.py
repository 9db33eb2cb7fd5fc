"""Statistics helpers of the SAFARI checks that differ from :mod:`flbounds.stats` on purpose.

- :func:`loglog_slope` fits log of the *arithmetic* mean over seeds (Theorems 2-5 and the
  corollaries bound expectations), whereas ``flbounds.stats.loglog_slope`` fits the mean of
  log y (a geometric mean); both bootstrap over seeds.
- :func:`clopper_pearson` is vectorised over cells (the foundation's takes scalars).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats


def clopper_pearson(k, n, *, confidence: float = 0.99) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided exact binomial interval for ``k`` successes out of ``n`` (elementwise)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    a = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)
        hi = np.where(k < n, stats.beta.ppf(1 - a, k + 1, n - k), 1.0)
    return lo, hi


class Slope(NamedTuple):
    slope: float
    intercept: float
    ci_low: float
    ci_high: float
    n_boot: int


def _ols(x, y):
    A = np.column_stack([x, np.ones_like(x)])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return coef


def loglog_slope(x, y_seeds, *, rng: np.random.Generator, n_boot: int = 400,
                 ci: float = 0.95, log_x: bool = True) -> Slope:
    """OLS slope of log(mean over seeds of y) against log x (or x), CI by resampling seeds.

    ``y_seeds`` has shape (n_seeds, n_points); the seed rows are resampled with replacement.
    """
    x = np.asarray(x, dtype=float)
    y = np.atleast_2d(np.asarray(y_seeds, dtype=float))
    lx = np.log(x) if log_x else x
    slope, intercept = _ols(lx, np.log(y.mean(axis=0)))
    n_seeds = y.shape[0]
    boots = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, n_seeds, size=n_seeds)
        boots[b] = _ols(lx, np.log(y[idx].mean(axis=0)))[0]
    a = (1 - ci) / 2
    lo, hi = np.quantile(boots, [a, 1 - a])
    return Slope(float(slope), float(intercept), float(lo), float(hi), n_boot)


def mean_se(samples, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo mean and its standard error std(ddof=1)/sqrt(n) along ``axis``."""
    s = np.asarray(samples, dtype=float)
    n = s.shape[axis]
    return s.mean(axis=axis), s.std(axis=axis, ddof=1) / np.sqrt(n)


def quantile_lower_bound(samples, p: float, *, confidence: float = 0.99) -> float:
    r"""Distribution-free lower confidence bound for the ``p``-quantile of ``samples``.

    Returns the order statistic :math:`X_{(j)}` with the largest ``j`` such that
    :math:`P(\mathrm{Bin}(n, p) \ge j) \ge` ``confidence``: since #{X_i <= xi_p} is
    Bin(n, p') with p' >= p (equality for continuous laws), :math:`X_{(j)} \le \xi_p` with
    probability at least ``confidence``. Returns -inf when no order statistic qualifies.
    """
    x = np.sort(np.asarray(samples, dtype=float).ravel())
    n = x.size
    j = np.arange(1, n + 1)
    ok = stats.binom.sf(j - 1, n, p) >= confidence      # P(Bin >= j)
    if not ok.any():
        return -np.inf
    return float(x[j[ok].max() - 1])
