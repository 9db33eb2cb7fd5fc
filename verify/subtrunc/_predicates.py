r"""Predicates the results of SubTrunc share: set-function properties checked on an instance's
set functions, and the assumptions of Theorem 1 and Lemmas 1-3 checked on its problem.

Each returns a truth value for the named values of an instance; the result modules wrap them
in :func:`flbounds.ledger.hypothesis` with the paper's wording. Set-function properties are
decided exhaustively over all :math:`2^n` subsets (``n <= 14``), with the project's rounding
slack ``1e-9 max(1, |f(N)|)`` (float64 sums of at most n^2 distances).
"""

from __future__ import annotations

import numpy as np

from flbounds.selection import (
    FacilityLocation,
    SubTruncObjective,
    UnionFLObjective,
    all_subsets_values,
    exhaustive_margins,
)

from ..predicates import at_most

#: largest ground set decided exhaustively (2^14 subsets)
N_EXHAUSTIVE = 14


def _slack(f) -> float:
    return 1e-9 * max(1.0, abs(f.value(range(f.n))))


def submodular(f) -> bool:
    """Def. 2: every local diminishing-returns margin >= 0 (exhaustive, rounding slack)."""
    return f.n <= N_EXHAUSTIVE and exhaustive_margins(f).dr_min >= -_slack(f)


def monotone(f) -> bool:
    """Def. 3: f(S + e) >= f(S) for every S and e (exhaustive, rounding slack)."""
    return f.n <= N_EXHAUSTIVE and exhaustive_margins(f).mono_min >= -_slack(f)


def nonnegative_values(f) -> bool:
    """f(S) >= 0 on every subset (exhaustive, rounding slack)."""
    return f.n <= N_EXHAUSTIVE and float(all_subsets_values(f).min()) >= -_slack(f)


def offset_threshold(dissim) -> float:
    r"""The smallest scalar :math:`\bar G(\emptyset)` that keeps G submodular at the empty set:
    :math:`\max_{j \ne e}\sum_i \max(d_{ij}, d_{ie})` (spec 004 s.1.3)."""
    d = np.asarray(dissim, dtype=float)
    n = d.shape[0]
    if n < 2:
        return float(d.sum())
    pair = np.maximum(d[:, :, None], d[:, None, :]).sum(axis=0)
    pair[np.arange(n), np.arange(n)] = -np.inf
    return float(pair.max())


def facility_offset_valid(objective) -> bool:
    r""":math:`G(S) = \bar G(\emptyset) - \bar G(S)` with :math:`\bar G(\emptyset)` read as the
    phantom client (:math:`C_i = \max_j d_{ij}`) or a scalar at least
    :func:`offset_threshold` (DivFL's ``2 max_j sum_i d_ij`` is one)."""
    if not isinstance(objective, FacilityLocation):
        return False
    if isinstance(objective.offset, str):
        return objective.offset == "phantom"
    return at_most(offset_threshold(objective.dissim), objective.offset)


def subtrunc_objective(objective) -> bool:
    """SubTrunc's W of eq. (13): G of (10) (:func:`facility_offset_valid`), lam >= 0,
    b > 0 and phi(f_i) >= 0."""
    return (isinstance(objective, SubTruncObjective) and facility_offset_valid(objective)
            and objective.lam >= 0 and objective.b > 0 and bool(np.all(objective.weights >= 0)))


def unionfl_objective(objective) -> bool:
    """UnionFL's h_t of eq. (14): f_t = G of (10) (:func:`facility_offset_valid`), mu >= 0."""
    return (isinstance(objective, UnionFLObjective) and facility_offset_valid(objective)
            and objective.mu >= 0)


def nondecreasing_lipschitz(phi, points) -> bool:
    """phi is nondecreasing with a finite Lipschitz constant on ``points`` (a grid of its
    domain): differences of consecutive values are >= 0 and bounded by a finite slope."""
    x = np.unique(np.asarray(points, dtype=float))
    y = np.asarray(phi(x), dtype=float)
    if x.size < 2:
        return bool(np.all(np.isfinite(y)))
    slopes = np.diff(y) / np.diff(x)
    return bool(np.all(np.isfinite(slopes)) and np.all(slopes >= -1e-12))


def concave_on(psi, points) -> bool:
    """psi is concave on the convex hull of ``points``: midpoint-concave on a fine grid of it
    (a smooth psi is concave there iff its second differences are <= 0)."""
    x = np.asarray(points, dtype=float)
    grid = np.linspace(x.min(), x.max(), 257) if x.max() > x.min() else x[:1]
    if grid.size < 3:
        return True
    y = np.asarray(psi(grid), dtype=float)
    second = y[:-2] - 2 * y[1:-1] + y[2:]
    return bool(np.all(second <= 1e-9 * max(1.0, float(np.abs(y).max()))))


# --- assumptions of Theorem 1 and Lemmas 1-3 -----------------------------------------------
def l_smooth(problem, L) -> bool:
    """Assumption 1: every f_i is L-smooth (the problem's exact constant is at most L)."""
    return at_most(problem.L, L)


def nonnegative_losses(problem) -> bool:
    """Assumption 2: f_i >= 0, i.e. every client's minimum f_i* >= 0."""
    return bool(np.all(np.asarray(problem.minima()) >= 0))


def step_at_most_third(step, L, local_steps) -> bool:
    """eta L E <= 1/3 (Lemmas 1-3), for every step of the instance."""
    return at_most(np.asarray(step, dtype=float) * L * np.asarray(local_steps), 1 / 3)
