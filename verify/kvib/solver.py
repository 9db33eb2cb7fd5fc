r"""Helpers of the K-Vib probability results (no claims here): the released code's solver,
an independent bisection solver and Lemma 5.1's pieces, used by :mod:`verify.kvib.lemma_b8`,
:mod:`verify.kvib.lemma5_1` and :mod:`verify.kvib.released_code`."""

from __future__ import annotations

import numpy as np

from flbounds.sampling import (
    optimal_isp_probabilities,
)


def released_code_solver(a, k):
    """Behavioural transcription of the capped solver in the authors' ``sampler.py``.

    Scans l = 1, 2, ... upward and stops at the first l with k + l - N > sum_{j<=l} a_(j) / a_(l),
    steps back one, then gives the proportional value (k + l - N) a / sum to the sorted entries
    with 0-based position <= l, i.e. to l + 1 entries, and 1 to the rest.
    """
    a = np.asarray(a, dtype=float)
    n = a.size
    order = np.argsort(a)
    ell = 0
    for pos in range(n):
        ell = pos + 1
        if k + ell - n > a[order[:ell]].sum() / a[order[pos]]:
            ell -= 1
            break
    total = a[order[:ell]].sum()
    p = np.ones(n)
    for pos in range(n):
        if pos <= ell:
            p[order[pos]] = (k + ell - n) * a[order[pos]] / total
    return p


def bisection_probabilities(a, k, p_min=0.0, iters=200):
    """Independent solver: bisection on tau for sum clip(a/tau, p_min, 1) = k (V2 reference)."""
    lo, hi = 1e-300, float(a.max()) / max(p_min, 1e-300) * 4 + float(a.sum()) / k * 4
    for _ in range(iters):
        mid = np.sqrt(lo) * np.sqrt(hi) if hi / lo > 4 else 0.5 * (lo + hi)
        if np.clip(a / mid, p_min, 1.0).sum() > k:
            lo = mid
        else:
            hi = mid
    return np.clip(a / hi, p_min, 1.0)


def bisection_probabilities_rows(rows, ks, p_mins, iters=200):
    """:func:`bisection_probabilities` of every row of ``rows`` (m, n) with its own budget and
    floor, the same numbers: each row's halving sequence takes the same elementwise steps,
    and its sum runs over the row's own n contiguous entries, as the one-row call sums."""
    rows = np.asarray(rows, dtype=float)
    ks, p_mins = np.asarray(ks, dtype=float), np.asarray(p_mins, dtype=float)
    if rows.ndim != 2 or ks.shape != (rows.shape[0],) or p_mins.shape != ks.shape:
        raise ValueError("rows must be (m, n) with one budget and one floor per row")
    lo = np.full(rows.shape[0], 1e-300)
    hi = rows.max(axis=1) / np.maximum(p_mins, 1e-300) * 4 + rows.sum(axis=1) / ks * 4
    floors = p_mins[:, None]
    with np.errstate(over="ignore"):      # hi / lo may overflow to inf, as a float does
        for _ in range(iters):
            mid = np.where(hi / lo > 4, np.sqrt(lo) * np.sqrt(hi), 0.5 * (lo + hi))
            above = np.clip(rows / mid[:, None], floors, 1.0).sum(axis=1) > ks
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
    return np.clip(rows / hi[:, None], floors, 1.0)


def _lemma51_parts(a_sorted, k, p_min):
    """(l1, l2, c) of the correct Lemma 5.1 solution for sorted weights (sqrt taken inside)."""
    w = np.sqrt(a_sorted)
    p = optimal_isp_probabilities(w, k, p_min=p_min)
    l1 = int(np.sum(p <= p_min * (1 + 1e-12)))
    l2 = a_sorted.size - int(np.sum(p >= 1 - 1e-12))
    return l1, l2, w[l1:l2].sum(), p


def _slsqp_argmin_value(a, k, p_min):
    """min sum a/p over {p_min <= p <= 1, sum p = k} by scipy SLSQP from the uniform point;
    None when SLSQP fails or returns a point infeasible beyond 1e-9."""
    from scipy.optimize import minimize

    res = minimize(lambda x: np.sum(a / x), np.full(a.size, k / a.size), method="SLSQP",
                   jac=lambda x: -a / x**2, bounds=[(max(p_min, 1e-9), 1.0)] * a.size,
                   constraints=[{"type": "eq", "fun": lambda x: x.sum() - k}],
                   options={"ftol": 1e-14, "maxiter": 200})
    if not res.success or abs(res.x.sum() - k) > 1e-9:
        return None
    return float(res.fun)


