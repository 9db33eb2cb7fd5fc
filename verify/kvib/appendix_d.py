r"""Lemma D.1, the remark after it, and Lemma D.2 of K-Vib (App. D.2, stability of FTRL).

FTRL over :math:`\Delta(p_{\min}) = \{p: \sum_i p_i = K, p_{\min} \le p_i \le 1\}` with
losses :math:`\ell_t(p) = \sum_i \pi_t^2(i)/p_i` and regularizer
:math:`\mathcal R(p) = \sum_i \gamma/p_i` plays
:math:`p^t = \arg\min \sum_i (\pi^2_{1:t-1}(i) + \gamma)/p_i`, i.e. the water-filling
:func:`flbounds.sampling.optimal_isp_probabilities` of :math:`a^t = \sqrt{\pi^2_{1:t-1} +
\gamma}` with floor :math:`p_{\min}`: :math:`p^t_i = \mathrm{clip}(a^t_i/\lambda_t, p_{\min},
1)` for a water level :math:`\lambda_t`. In the paper's notation the middle clients get
:math:`z_t a^t_i / c_t` with :math:`c_t = \sum_{\rm mid} a^t_i` and :math:`z_t` the middle
mass :math:`K - \#\{p_i = 1\} - p_{\min}\#\{p_i = p_{\min}\}`, so :math:`\lambda_t = c_t/z_t`.

Lemma D.2 bounds :math:`1/p_i^t - 1/p_i^{t+1}` (when :math:`p_i` increases) by
:math:`\frac{1}{\min(z_t, z_{t+1})}(c_t/a^t_i - c_{t+1}/a^{t+1}_i)`. Its case 2 uses
:math:`c_t/(z_t a) - c_{t+1}/(z_{t+1} b) \le (c_t/a - c_{t+1}/b)/\min(z_t, z_{t+1})`, which
fails whenever :math:`z_{t+1} > z_t`, i.e. when a capped client leaves the cap. What the
cases do support is :math:`1/p_i^t - 1/p_i^{t+1} \le \lambda_t/a^t_i -
\lambda_{t+1}/a^{t+1}_i` (an identity for middle-to-middle moves, a bound in the others).
"""

from __future__ import annotations

import numpy as np

from flbounds.kernels.isp_round import isp_probabilities
from flbounds.ledger import Tolerance
from flbounds.sampling import optimal_isp_probabilities
from flbounds.sampling.online import Assumption51Feedback
from flbounds.sampling.optimal import COMPILED_MAX_N

ROUNDING = 1e-10  # relative; sums of <= 10^4 terms of magnitude <= 1/p_min
TIE = 1e-12       # relative slack deciding "at the floor" / "at the cap"


def _terms_tolerance(scale):
    return Tolerance(ROUNDING * scale, "rounding", "1e-10 x the summed magnitudes of the "
                     "differenced terms per entry (the differences cancel)")


def _waterfilled(rows, budget, p_min):
    """:func:`optimal_isp_probabilities` of every row (the first row checks the arguments;
    the others go to the same compiled kernel it calls, without repeating the checks)."""
    out = np.empty(rows.shape)
    out[0] = optimal_isp_probabilities(rows[0], budget, p_min=p_min)
    n = rows.shape[1]
    if n > COMPILED_MAX_N:
        out[1:] = [optimal_isp_probabilities(a, budget, p_min=p_min) for a in rows[1:]]
        return out
    s, csum = np.empty(n), np.empty(n + 1)
    for j in range(1, rows.shape[0]):
        isp_probabilities(rows[j], float(budget), float(p_min), s, csum, out[j])
    return out


class FTRLPath:
    """FTRL iterates t = 1..T+1 and their water-filling structure (module docstring)."""

    def __init__(self, feedback, budget, gamma, p_min):
        self.feedback = np.asarray(feedback, dtype=float)      # (T, N): pi_t(i)
        n_rounds, n = self.feedback.shape
        acc = np.vstack([np.zeros(n), np.cumsum(self.feedback**2, axis=0)])   # (T+1, N)
        self.a = np.sqrt(acc + gamma)
        self.p = _waterfilled(self.a, budget, p_min)
        self.budget, self.gamma, self.p_min = budget, gamma, p_min
        capped = self.p >= 1 - TIE
        floored = (self.p <= p_min * (1 + TIE)) & ~capped if p_min > 0 else \
            np.zeros_like(capped)
        self.middle = ~capped & ~floored
        self.z = budget - capped.sum(axis=1) - p_min * floored.sum(axis=1)
        self.c = np.where(self.middle, self.a, 0.0).sum(axis=1)

    def losses(self, p):
        """l_t(p) for t = 1..T at one p (N,) or per round (T, N)."""
        return np.sum(self.feedback**2 / p, axis=-1)

    def regularizer(self, p):
        return float(np.sum(self.gamma / p))


def _random_path(rng, n_clients, n_rounds, budget, floor_fraction):
    """Assumption 5.1 feedback (lognormal levels decaying to their limit), gamma = G^2 as in
    Thm D.1, floor a fraction of K/(2N)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    feedback = np.array([fb.values(t) for t in range(1, n_rounds + 1)])
    return FTRLPath(feedback, budget, fb.G**2, floor_fraction * budget / (2 * n_clients))


def _paths(rng, n_paths, n_rounds):
    for k in range(n_paths):
        n = int(rng.integers(3, 12))
        budget = float(rng.integers(1, n))
        yield _random_path(rng, n, n_rounds, budget, floor_fraction=(k % 3) / 2)


def lemma_d2_sides(path, corrected=False):
    """(LHS, RHS, scale) of eq. (47) for every (t, i) with p_i^t < p_i^{t+1}, t = 1..T;
    ``scale`` sums the magnitudes of the terms differenced on each side (both sides are
    differences of O(1/p) numbers, so their rounding error is relative to these)."""
    # every round pair at once: the entries of rising clients in (t, i) order, each from the
    # same elementwise operations as round by round (so the same numbers)
    p0, p1 = path.p[:-1], path.p[1:]
    rising = p0 < p1 * (1 - TIE)
    a0, a1 = path.a[:-1][rising], path.a[1:][rising]
    inv0, inv1 = 1 / p0[rising], 1 / p1[rising]
    c, z = path.c, path.z
    if corrected:
        u0 = np.broadcast_to((c[:-1] / z[:-1])[:, None], rising.shape)[rising] / a0
        u1 = np.broadcast_to((c[1:] / z[1:])[:, None], rising.shape)[rising] / a1
    else:
        zmin = np.broadcast_to(np.minimum(z[:-1], z[1:])[:, None], rising.shape)[rising]
        u0 = np.broadcast_to(c[:-1, None], rising.shape)[rising] / a0 / zmin
        u1 = np.broadcast_to(c[1:, None], rising.shape)[rising] / a1 / zmin
    return inv0 - inv1, u0 - u1, inv0 + inv1 + np.abs(u0) + np.abs(u1)


def smallest_counterexample():
    """N = 3, K = 2, gamma = 1, p_min = 0, feedback sorted and positive as the proof assumes:
    pi_1 = (0.5, 0.5, 2), pi_2 = (0.5, 0.5, 0.5). Client 3 leaves the cap between rounds 2
    and 3 (z: 1 -> 2); clients 1, 2 rise from 0.5 to 0.517 and eq. (47)'s right side is
    negative."""
    path = FTRLPath(np.array([[0.5, 0.5, 2.0], [0.5, 0.5, 0.5]]), 2.0, 1.0, 0.0)
    lhs, rhs, _ = lemma_d2_sides(path)
    return path, dict(feedback=path.feedback, K=2.0, gamma=1.0, p_min=0.0, p=path.p, z=path.z,
                      c=path.c, lhs=lhs, rhs=rhs)


def _has_middle(path):
    return bool(np.all(path.z > 0))


