r"""Predicates shared by the papers' hypotheses: smoothness, strong convexity, probabilities,
step conditions. Each returns a truth value for the named values of an instance; a paper's
result wraps it in a :func:`flbounds.ledger.hypothesis` with the paper's own wording.

Comparisons of a computed constant with a printed limit allow a relative rounding slack
:data:`RTOL` (the constants are eigenvalues or closed forms in float64): an instance built at
a limit exactly (a step equal to its bound) meets the condition.
"""

from __future__ import annotations

import numpy as np

#: relative slack of a computed constant against a printed limit: eigenvalues of matrices of
#: size <= 64 and closed forms agree to ~1e-13 relative; 1e-10 leaves three decades of room
RTOL = 1e-10


def at_most(value, limit) -> bool:
    """``value <= limit`` up to :data:`RTOL` relative (``limit`` may be ``inf``)."""
    value, limit = np.asarray(value, dtype=float), np.asarray(limit, dtype=float)
    return bool(np.all(value <= limit + RTOL * np.abs(limit)))


def smooth(problem, L) -> bool:
    """Every client's f_i is L-smooth: its (exact or bounding) smoothness constant <= L."""
    return at_most(np.max(problem.client_L), L)


def strongly_convex(problem, mu) -> bool:
    """Every client's f_i is mu-strongly convex (``client_mu`` is exact or a valid lower
    bound); False for a problem without a strong-convexity constant."""
    client_mu = getattr(problem, "client_mu", None)
    if client_mu is None:
        return False
    return at_most(mu, np.min(client_mu))


def positive_probabilities(q) -> bool:
    """Every entry in (0, 1]."""
    q = np.asarray(q, dtype=float)
    return bool(q.size > 0 and np.all((q > 0) & (q <= 1)))


def inv(x: float) -> float:
    """1/x with 1/0 = inf (conditions with a factor tau - 1 at tau = 1)."""
    return np.inf if x == 0 else 1.0 / x
