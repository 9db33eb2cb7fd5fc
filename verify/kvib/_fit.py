"""Log-log slope with a seed bootstrap (same semantics as ``flbounds.stats.loglog_slope``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Slope(NamedTuple):
    slope: float
    ci_low: float
    ci_high: float
    n_seeds: int


def loglog_slope_seeds(x, y, rng: np.random.Generator, *, n_boot: int = 2000,
                       ci: float = 0.95) -> Slope:
    """Slope of log(mean over seeds of y) against log x; CI by resampling seeds (rows of y)."""
    x = np.log(np.asarray(x, dtype=float))
    y = np.asarray(y, dtype=float)
    if y.ndim == 1:
        y = y[None, :]
    slope = float(np.polyfit(x, np.log(y.mean(axis=0)), 1)[0])
    n = y.shape[0]
    if n < 2:
        return Slope(slope, np.nan, np.nan, n)
    idx = rng.integers(0, n, size=(n_boot, n))
    means = y[idx].mean(axis=1)                      # (n_boot, n_points)
    xc = x - x.mean()
    boots = (np.log(means) - np.log(means).mean(axis=1, keepdims=True)) @ xc / (xc @ xc)
    lo, hi = np.quantile(boots, [(1 - ci) / 2, (1 + ci) / 2])
    return Slope(slope, float(lo), float(hi), n)
