r"""Statistics for claim checks: log-log slopes with bootstrap CIs, Monte Carlo means with
standard errors, exact binomial (Clopper-Pearson) intervals, linear-rate fits and
Holm's family-wise rule.

References
----------
.. [1] B. Efron, R. J. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall 1993
   (pairs bootstrap, ch. 9; percentile interval, ch. 13).
.. [2] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated in
   the case of the binomial", Biometrika 26(4), 1934.
.. [3] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian
   Journal of Statistics 6(2), 1979.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import beta, binom

from flbounds.tolerances import holm_se_multiplier
from flbounds.validation import as_float_array, check_int, check_rng

__all__ = ["HolmResult", "MeanSE", "RateFit", "SlopeFit", "clopper_pearson", "holm",
           "holm_se_multiplier", "linear_rate_fit", "loglog_slope", "mc_mean",
           "quantile_lower_bound", "slope_from_means"]


@dataclass(frozen=True)
class SlopeFit:
    """Least-squares fit of log y = intercept + slope log x, with a bootstrap CI on slope.

    Attributes
    ----------
    slope, intercept, ci_low, ci_high, r2, n
        The line, the bootstrap interval of its slope, R^2 and the number of points.
    """

    slope: float
    intercept: float
    ci_low: float
    ci_high: float
    r2: float
    n: int


@dataclass(frozen=True)
class MeanSE:
    """Monte Carlo mean and its standard error std(ddof=1) / sqrt(n) (arrays or floats).

    Attributes
    ----------
    mean, se, n
        The sample mean, its standard error and the number of samples.
    """

    mean: float | np.ndarray
    se: float | np.ndarray
    n: int


@dataclass(frozen=True)
class RateFit:
    """Fit of log e_k = const + slope k; ``rate = exp(slope)`` is the per-step factor.

    Attributes
    ----------
    slope, rate, n_used, r2
        The slope of log e_k, exp(slope), the number of points fitted and R^2.
    """

    slope: float
    rate: float
    n_used: int
    r2: float


def _check_level(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {value}")
    return float(value)


def _ols(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Slope, intercept and R^2 of y ~ x (x not constant). R^2 := 1 if y is constant."""
    xc, yc = x - x.mean(), y - y.mean()
    slope = float(xc @ yc / (xc @ xc))
    intercept = float(y.mean() - slope * x.mean())
    ss_res, ss_tot = float(np.sum((yc - slope * xc) ** 2)), float(yc @ yc)
    return slope, intercept, 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0


def _batch_slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise OLS slopes of y[b] on x[b] (2-D, same shape); NaN where x[b] is constant."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    sxx = np.sum(xc * xc, axis=1)
    sxy = np.sum(xc * yc, axis=1)
    return np.divide(sxy, sxx, out=np.full_like(sxx, np.nan), where=sxx > 0)


def _log_positive(values, name: str, ndim: int | None = None) -> np.ndarray:
    arr = as_float_array(values, name, ndim=ndim)
    if np.any(arr <= 0.0):
        raise ValueError(f"{name} must be positive (log-log fit), got min {arr.min()}")
    return np.log(arr)


def loglog_slope(x, y, *, n_boot: int = 2000, ci: float = 0.95, rng,
                 mean: str = "geometric") -> SlopeFit:
    r"""Slope of :math:`\log y` on :math:`\log x` with a percentile bootstrap interval.

    Two input forms (the bootstrap: Efron and Tibshirani 1993, chapters 9 and 13):

    * ``y`` of shape (n,): the fit uses the n pairs; the bootstrap resamples pairs
      :math:`(x_k, y_k)` with replacement (resamples with constant x are dropped).
    * ``y`` of shape (n_seeds, n): replicates at shared x. The curve fitted is the mean over
      seeds of :math:`\log y` (``mean="geometric"``) or the log of the mean over seeds of
      :math:`y` (``mean="arithmetic"``: the right curve when the theory bounds an
      expectation :math:`E[y]`); the bootstrap resamples seeds (rows) with replacement, which
      keeps the dependence along x inside a seed.

    Parameters
    ----------
    x, y : array_like, shapes (n,) and (n,) or (n_seeds, n)
        Positive values; x at least 3 points, not all equal.
    n_boot, ci : int and float, default 2000 and 0.95
        Bootstrap resamples (0 skips the bootstrap: ``ci_low = ci_high = nan``) and the
        two-sided confidence level of the percentile interval.
    rng : numpy.random.Generator
        Source of the resampling (may be None when ``n_boot == 0``).
    mean : {"geometric", "arithmetic"}, default "geometric"
        How replicates are averaged (2-D ``y`` only).

    Returns
    -------
    SlopeFit
    """
    if mean not in ("geometric", "arithmetic"):
        raise ValueError(f"mean must be 'geometric' or 'arithmetic', got {mean!r}")
    lx = _log_positive(x, "x", ndim=1)
    y = as_float_array(y, "y")
    ly = _log_positive(y, "y")
    n = lx.size
    if n < 3:
        raise ValueError(f"x must hold at least 3 points, got {n}")
    if np.ptp(lx) == 0.0:
        raise ValueError("x must not be constant")
    if ly.ndim not in (1, 2) or ly.shape[-1] != n:
        raise ValueError(f"y must have shape ({n},) or (n_seeds, {n}), got {ly.shape}")
    n_boot = check_int(n_boot, "n_boot", minimum=0)
    ci = _check_level(ci, "ci")
    # the values averaged over seeds: log y (geometric) or y itself (arithmetic)
    avg = y if mean == "arithmetic" and ly.ndim == 2 else ly
    curve = _seeds_curve(avg, mean, axis=0)
    slope, intercept, r2 = _ols(lx, curve)
    low = high = float("nan")
    if n_boot > 0:
        check_rng(rng)
        boot = _bootstrap_slopes(lx, avg, n_boot, rng, mean)
        low, high = (float(v) for v in np.nanquantile(boot, [(1 - ci) / 2, (1 + ci) / 2]))
    return SlopeFit(slope, intercept, low, high, r2, n)


def _seeds_curve(avg: np.ndarray, mean: str, axis: int) -> np.ndarray:
    """The log curve: ``avg`` (1-D pairs), mean log y (geometric) or log mean y over seeds."""
    if avg.ndim == 1:
        return avg
    if mean == "arithmetic":
        return np.log(avg.mean(axis=axis))
    return avg.mean(axis=axis)


def _bootstrap_slopes(lx: np.ndarray, avg: np.ndarray, n_boot: int, rng,
                      mean: str) -> np.ndarray:
    if avg.ndim == 1:  # pairs bootstrap
        idx = rng.integers(0, lx.size, size=(n_boot, lx.size))
        return _batch_slopes(lx[idx], avg[idx])
    rows = rng.integers(0, avg.shape[0], size=(n_boot, avg.shape[0]))  # seeds bootstrap
    curves = _seeds_curve(avg[rows], mean, axis=1)
    return _batch_slopes(np.broadcast_to(lx, curves.shape), curves)


def mc_mean(samples, axis: int = 0) -> MeanSE:
    r"""Monte Carlo mean and standard error :math:`s / \sqrt{n}`, :math:`s` = std(ddof=1).

    Parameters
    ----------
    samples : array_like
        Finite values; at least 2 along ``axis``.
    axis : int, default 0
        The replicate axis.

    Returns
    -------
    MeanSE
        ``mean`` and ``se`` (floats for 1-D input, arrays otherwise) and ``n``.
    """
    arr = as_float_array(samples, "samples")
    axis = check_int(axis, "axis", minimum=-arr.ndim, maximum=arr.ndim - 1) if arr.ndim else 0
    if arr.ndim == 0 or arr.shape[axis] < 2:
        raise ValueError("samples must hold at least 2 replicates along axis")
    n = arr.shape[axis]
    mean = arr.mean(axis=axis)
    se = arr.std(axis=axis, ddof=1) / np.sqrt(n)
    if mean.ndim == 0:
        return MeanSE(float(mean), float(se), n)
    return MeanSE(mean, se, n)


def clopper_pearson(k: int, n: int, *, confidence: float = 0.99) -> tuple[float, float]:
    r"""Exact (Clopper-Pearson) two-sided interval for a binomial proportion.

    .. math:: \mathrm{low} = B^{-1}(\alpha/2; k, n - k + 1), \qquad
              \mathrm{high} = B^{-1}(1 - \alpha/2; k + 1, n - k),

    with :math:`\alpha = 1 - \mathrm{confidence}`, low = 0 if k = 0 and high = 1 if k = n.

    Parameters
    ----------
    k, n : int
        Successes and trials, 0 <= k <= n, n >= 1.
    confidence : float, default 0.99

    Returns
    -------
    (low, high) : tuple of float

    References
    ----------
    Clopper and Pearson (1934).
    """
    n = check_int(n, "n", minimum=1)
    k = check_int(k, "k", minimum=0, maximum=n)
    alpha = 1.0 - _check_level(confidence, "confidence")
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def quantile_lower_bound(samples, p: float, *, confidence: float = 0.99) -> float:
    r"""Distribution-free lower confidence bound for the ``p``-quantile :math:`\xi_p`.

    Parameters
    ----------
    samples : array_like
        Finite values (flattened), at least 1.
    p, confidence : float
        Quantile level in (0, 1); confidence level in (0, 1), default 0.99.

    Returns
    -------
    float
        :math:`X_{(j)}` for the largest j with :math:`P(\mathrm{Bin}(n, p) \ge j) \ge`
        ``confidence`` (-inf if none): the count of samples :math:`\le \xi_p` is
        :math:`\mathrm{Bin}(n, p')`, :math:`p' \ge p` (= for continuous laws), so
        :math:`X_{(j)} \le \xi_p` with probability at least ``confidence``.
    """
    x = np.sort(as_float_array(samples, "samples").ravel())
    if x.size == 0:
        raise ValueError("samples must hold at least one value")
    p = _check_level(p, "p")
    confidence = _check_level(confidence, "confidence")
    j = np.arange(1, x.size + 1)
    ok = binom.sf(j - 1, x.size, p) >= confidence      # P(Bin >= j)
    if not ok.any():
        return -np.inf
    return float(x[j[ok].max() - 1])


def linear_rate_fit(errors, *, window: tuple[float, float] = (1e-12, 1.0)) -> RateFit:
    r"""Per-step linear rate of a (geometrically) decaying error sequence.

    Fits :math:`\log e_k = c + \mathrm{slope}\, k` by least squares over the steps k with
    :math:`\mathrm{lo} \le e_k / e_0 \le \mathrm{hi}`; ``rate = exp(slope)``, so
    :math:`e_k \approx e_0\, \mathrm{rate}^k` (rate < 1 means linear convergence).

    Parameters
    ----------
    errors : array_like, shape (n_steps,)
        Finite, nonnegative, ``errors[0] > 0``.
    window : (lo, hi), default (1e-12, 1.0)
        Relative-error window, 0 < lo < hi; it keeps the transient and the floating-point
        floor out of the fit.

    Returns
    -------
    RateFit
        ``slope``, ``rate``, ``n_used`` (steps in the window) and ``r2``.
    """
    e = as_float_array(errors, "errors", ndim=1)
    if e.size == 0 or e[0] <= 0.0 or np.any(e < 0.0):
        raise ValueError("errors must be nonnegative with errors[0] > 0")
    lo, hi = _check_window(window)
    ratio = e / e[0]
    steps = np.flatnonzero((ratio >= lo) & (ratio <= hi))
    if steps.size < 3:
        raise ValueError(f"window {window} holds {steps.size} < 3 points of errors / errors[0]")
    slope, _, r2 = _ols(steps.astype(np.float64), np.log(e[steps]))
    return RateFit(slope, float(np.exp(slope)), int(steps.size), r2)


def _check_window(window) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in window)
    except (TypeError, ValueError) as err:
        raise ValueError(f"window must be a pair (lo, hi), got {window!r}") from err
    if not (np.isfinite(lo) and np.isfinite(hi) and 0.0 < lo < hi):
        raise ValueError(f"window must satisfy 0 < lo < hi (finite), got {window!r}")
    return lo, hi


@dataclass(frozen=True)
class HolmResult:
    """Holm-Bonferroni decisions (:func:`holm`).

    Attributes
    ----------
    reject, adjusted, alpha, m
        Per hypothesis (input order) the decision and the adjusted p-value; level, family size.
    """

    reject: np.ndarray
    adjusted: np.ndarray
    alpha: float
    m: int


def holm(pvalues, alpha: float = 0.05) -> HolmResult:
    r"""Holm's step-down rule: family-wise error rate at most ``alpha`` for ``m`` tests.

    Sort the p-values :math:`p_{(1)} \le \dots \le p_{(m)}`; reject :math:`H_{(1)}, \dots,
    H_{(k)}` for the largest k with :math:`p_{(j)} \le \alpha / (m - j + 1)` for every
    :math:`j \le k`. Equivalently, reject where the adjusted p-value
    :math:`\tilde p_{(j)} = \max_{i \le j} \min(1, (m - i + 1) p_{(i)})` is at most alpha.
    Valid under any dependence between the tests.

    Parameters
    ----------
    pvalues : array_like, shape (m,)
        p-values in [0, 1], m >= 1.
    alpha : float, default 0.05
        Family-wise level in (0, 1).

    Returns
    -------
    HolmResult
        ``reject`` (bool, input order), ``adjusted`` (input order), ``alpha`` and ``m``.

    References
    ----------
    Holm (1979).
    """
    p = as_float_array(pvalues, "pvalues", ndim=1)
    if p.size == 0:
        raise ValueError("pvalues must hold at least one p-value")
    if np.any((p < 0.0) | (p > 1.0)):
        raise ValueError("pvalues must lie in [0, 1]")
    alpha = _check_level(alpha, "alpha")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return HolmResult(adjusted <= alpha, adjusted, alpha, m)


def slope_from_means(x, y, rng: np.random.Generator, *, n_boot: int = 1000,
                     y_se=None) -> tuple[float, float, float]:
    """Least-squares slope of log y on log x for MC means y with standard errors ``y_se``.

    Parameters
    ----------
    x, y : array_like
        Positive abscissae and MC means at them (single draws may be negative, gaps: unlike
        :func:`loglog_slope`, which resamples positive replicates).
    rng : numpy.random.Generator
    n_boot : int, default 1000
        Replicates of the parametric bootstrap of the 95% interval: each y plus a normal of
        sd ``y_se``, floored at 1e-300.
    y_se : array_like, optional
        Standard errors of ``y``; without them the interval is the point itself.

    Returns
    -------
    (slope, ci_low, ci_high) : tuple of float
    """
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    slope = float(np.polyfit(lx, ly, 1)[0])
    if y_se is None:
        return slope, slope, slope
    y_rep = np.asarray(y)[None, :] + rng.standard_normal((n_boot, len(lx))) * np.asarray(y_se)
    ly_rep = np.log(np.maximum(y_rep, 1e-300))
    xc = lx - lx.mean()
    slopes = (ly_rep - ly_rep.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)
    lo, hi = np.percentile(slopes, [2.5, 97.5])
    return slope, float(lo), float(hi)
