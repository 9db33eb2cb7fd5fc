r"""Named numerical tolerances: machine constants, the k-standard-error rule, rounding bounds.

Every tolerance a check or a validator uses is built from the names here, so a reader finds
its derivation in one place.

- :data:`EPS` is the float64 machine epsilon :math:`2^{-52}`; :data:`UNIT_ROUNDOFF` is
  :math:`u = \epsilon/2`, the relative error of one correctly rounded operation.
- Monte Carlo comparisons allow :data:`SE_RULE` standard errors: for a mean of many
  independent draws the estimate is close to normal, and a two-sided miss at 4 SE has
  probability about :math:`6.3 \cdot 10^{-5}` per comparison.
- A float64 recursive sum of ``n`` terms errs by at most :math:`(n - 1) u \sum_i |x_i|
  \le n \epsilon \sum_i |x_i|` to first order; :func:`summation_bound` returns that bound.

References
----------
.. [1] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM 2002,
   sections 2.2 (unit roundoff) and 4.2 (recursive summation).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "CONDITION_LIMIT",
    "EPS",
    "PROBABILITY_SUM_ATOL",
    "SE_RULE",
    "SE_RULE_FAMILY",
    "TINY",
    "UNIT_ROUNDOFF",
    "holm_se_multiplier",
    "probability_sum_tolerance",
    "se_halfwidth",
    "summation_bound",
]

#: float64 machine epsilon, 2**-52
EPS = float(np.finfo(np.float64).eps)
#: unit roundoff u = eps / 2 (relative error of one rounded operation)
UNIT_ROUNDOFF = EPS / 2
#: smallest positive normal float64 (guards divisions by a scale that may be 0)
TINY = float(np.finfo(np.float64).tiny)
#: the k of "k Monte Carlo standard errors" (two-sided normal miss rate ~6.3e-5 at k = 4)
SE_RULE = 4.0
#: the k for a FAMILY of up to ~50 expectation checks of one claim with skewed (chi-square-
#: like) summands: 5 SE keeps the family-wise false-alarm rate below ~1e-4 even with the
#: heavier-than-normal tails of means of a few hundred skewed draws
SE_RULE_FAMILY = 5.0
#: floor of the "sums to one" check: a probability vector given to 12 digits passes
PROBABILITY_SUM_ATOL = 1e-12
#: a linear system whose condition number exceeds this loses all but ~2 of its 16 digits
CONDITION_LIMIT = 1e14


def se_halfwidth(se, k: float = SE_RULE):
    """``k`` standard errors (elementwise for an array of standard errors)."""
    return k * np.asarray(se, dtype=float)


def holm_se_multiplier(n_cells: int, k: float = SE_RULE) -> float:
    r"""Standard-error multiple for a family of ``n_cells`` Monte Carlo comparisons.

    One comparison at ``k`` SE misses with two-sided probability
    :math:`\alpha = 2(1 - \Phi(k))` (6.3e-5 at k = 4). Holm's rule
    (:func:`flbounds.stats.holm`) over m cells at family-wise level :math:`\alpha` rejects
    some cell exactly when the smallest p-value is at most :math:`\alpha/m`, i.e. when some
    cell is more than
    :math:`k_m = \Phi^{-1}(1 - \alpha/(2m))` SE off. A claim that fails when any cell fails
    therefore allows :math:`k_m` SE per cell (4.0 for one cell, 4.5 for 10, 5.3 for 1000).

    Parameters
    ----------
    n_cells : int
        Family size m >= 1.
    k : float
        The one-cell rule (default :data:`flbounds.tolerances.SE_RULE`).

    Returns
    -------
    float
        :math:`k_m \ge k`.
    """
    if isinstance(n_cells, bool) or not isinstance(n_cells, int | np.integer) or n_cells < 1:
        raise ValueError(f"n_cells must be a positive integer, got {n_cells!r}")
    if not np.isfinite(k) or k <= 0:
        raise ValueError(f"k must be positive and finite, got {k!r}")
    from scipy.stats import norm  # here, not at import: scipy.stats takes ~1 s to load

    alpha = 2 * norm.sf(k)
    return float(norm.isf(alpha / (2 * n_cells)))


def summation_bound(n_terms: int, abs_total: float) -> float:
    r"""First-order bound :math:`n\,\epsilon \sum_i |x_i|` on the rounding error of a float64
    sum of ``n_terms`` terms whose absolute values add up to ``abs_total``."""
    return float(n_terms) * EPS * float(abs_total)


def probability_sum_tolerance(n_terms: int) -> float:
    r"""How far a probability vector of ``n_terms`` entries may sum from 1:
    :math:`\max(10^{-12}, 4 n \epsilon)` (summation rounding, with a 12-digit floor)."""
    return max(PROBABILITY_SUM_ATOL, 4 * n_terms * EPS)
