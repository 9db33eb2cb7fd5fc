r"""Attack surfaces of K-Vib over hypothesis domains the first attacks leave out: Theorem 5.1's
bound on the best fixed probability (Assumption 5.1 feedback from above or from below, any
budget K in [1, N), capped rounds included, N up to 16, T from 1), and Theorem 4.1's
per-round descent inequality eq. (36), exactly, on one FedAvg round.

The claim attacked, ``kvib.thm5_1.tbfp_bound``, draws its own instances in the proof's regime
(no capping, feedback from above); the statement's hypotheses are only Assumption 5.1 and the
budget, so the attack searches the whole of them: a ratio above 1 would refute the theorem,
not only its proof.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, Simplex
from flbounds.sampling import (
    optimal_factor,
    optimal_isp_probabilities,
    optimal_isp_variance,
)
from flbounds.sampling.online import Assumption51Feedback, best_fixed_cost

from .attacks import _budget, _surface
from .thm4_1 import admissible_instance
from .thm4_1.descent_round import (
    instance_at,
    printed_sides,
    repaired_sides,
    side_ratio,
    terms_at,
)
from .thm5_1 import thm5_1_bound

N_ONLINE = 16
SUMS_T = "rounding: a difference of two sums of T terms, relative 1e-9 (as the claim)"


def _feedback(base, decay, n):
    r""":math:`\pi_t(i)=\lambda_i(b_i+c_i/\sqrt t)`, :math:`c=\mathrm{decay}\,b`,
    decay in [-1, 1]: from above (c > 0) or from below (c < 0, nonnegative since c >= -b)."""
    base = np.asarray(base, dtype=float)[:n]
    return Assumption51Feedback(np.full(n, 1.0 / n), base, np.asarray(decay)[:n] * base)


def _tbfp_instance(*, base, decay, n, T, k_frac):
    """The values Theorem 5.1's predicates read: the feedback, T, K in [1, N) and N."""
    return dict(feedback=_feedback(base, decay, n), n_rounds=T, budget=_budget(n, k_frac),
                n_clients=n)


@_surface("kvib.thm5_1.tbfp_bound",
          space={"base": Box(1e-3, 1e3, log=True, shape=N_ONLINE),
                 "decay": Box(-1, 1, shape=N_ONLINE), "n": Integers(2, N_ONLINE),
                 "T": Integers(1, 2000), "k_frac": Box(0, 1)},
          instance=lambda **point: _tbfp_instance(**point),
          tolerance=1e-9, tolerance_why=SUMS_T,
          fixed=[{"base": 2.0 ** np.arange(N_ONLINE) / 1e3, "decay": np.full(N_ONLINE, 0.5),
                  "n": 4, "T": 100, "k_frac": 0.3}],
          note="Assumption 5.1 feedback from above or below (decay in [-1, 1]), lambda = 1/N, "
               "N up to 16, T up to 2000, K in [1, N), capped rounds allowed")
def tbfp_bound(*, base, decay, n, T, k_frac):
    """Exact T_BFP (best fixed cost minus the per-round optima) over Theorem 5.1's bound."""
    fb, k = _feedback(base, decay, n), _budget(n, k_frac)
    t_bfp = best_fixed_cost(fb.squared_sums(T), k) - fb.sum_optimal_costs(T, k)
    bound = thm5_1_bound(T=T, K=k, Pi_star=float(np.sum(fb.lam * fb.base)), V=fb.variation(T))
    if bound <= 0:  # constant feedback: V = 0, and T_BFP is 0 up to rounding
        return 0.0 if t_bfp <= 1e-9 * best_fixed_cost(fb.squared_sums(T), k) else np.inf
    return t_bfp / bound


def _round_point(*, c, x, n, k_frac, w, R, step_frac, L):
    r"""One FedAvg round of Theorem 4.1's proof at a search point: N clients
    :math:`f_i=\frac L2\|x\|^2-b_i^\top x` (d = 2, shared Hessian, b_i = c_i), R full-batch GD
    steps with :math:`\eta=R\eta_l\le1/(8L)` (fraction ``step_frac`` of the limit,
    :math:`\eta_g=1`), an applied ISP p in P_K water-filled from w with a 0.01 floor."""
    b = np.asarray(c, dtype=float)[:2 * n].reshape(n, 2)
    k = _budget(n, k_frac)
    step = step_frac / (8 * R * L)
    p = optimal_isp_probabilities(np.asarray(w)[:n] + 0.01, k)
    return b, k, step, p, np.asarray(x, dtype=float)


def _round_terms(**point):
    """The round of ``point`` in the terms of :mod:`verify.kvib.thm4_1.descent_round`."""
    b, k, _, p, x = _round_point(**point)
    return dict(centers=b, x=x, p=p, L=point["L"], R=point["R"], step_frac=point["step_frac"],
                budget=k)


ROUND_SPACE = {"c": Box(-3, 3, shape=2 * N_ONLINE), "x": Box(-10, 10, shape=2),
               "n": Integers(2, N_ONLINE), "k_frac": Box(0, 1), "w": Simplex(N_ONLINE),
               "R": Integers(1, 10), "step_frac": Box(1e-3, 1), "L": Box(1e-2, 1e2, log=True)}
#: the printed claim's witness in the space's coordinates (p = (0.99, 0.01) from w + 0.01)
ROUND_WITNESS = {"c": np.zeros(2 * N_ONLINE), "x": [1.0, 0.0], "n": 2, "k_frac": 0.0,
                 "w": np.r_[0.98, 0.0, 0.02, np.zeros(N_ONLINE - 3)], "R": 1,
                 "step_frac": 1.0, "L": 10.0}
ROUND_NOTE = ("eq. (36) on one round, exactly (shared-Hessian quadratics make E f(x^{t+1}) a "
              "closed form under ISP): N up to 16, K in [1, N), p_i down to ~0.01, R up to 10, "
              "the step up to 1/(8L), L in [0.01, 100]; ")


def _round_judged(**point):
    return instance_at(_round_terms(**point))


@_surface("kvib.thm4_1.descent_round_printed", space=ROUND_SPACE, instance=_round_judged,
          tolerance=1e-12, tolerance_why="rounding: closed-form expectations, a few flops",
          fixed=[ROUND_WITNESS], shrink=True,
          note=ROUND_NOTE + "every reading of Q, gamma and sigma^2 taken for the paper")
def descent_round(**point):
    """Eq. (36)'s left side over its largest right side in one round, both exact."""
    lhs, rhs, _ = printed_sides(terms_at(_round_terms(**point)))
    return side_ratio(lhs, rhs)


@_surface("kvib.thm4_1.descent_round_repaired", space=ROUND_SPACE, instance=_round_judged,
          tolerance=1e-12, tolerance_why="rounding: closed-form expectations, a few flops",
          fixed=[ROUND_WITNESS],
          note=ROUND_NOTE + "every reading taken against the repaired line")
def descent_round_repaired(**point):
    """The repaired line's left side over its smallest right side in one round."""
    return side_ratio(*repaired_sides(terms_at(_round_terms(**point))))


def _round_instance(**point):
    b, k, step, p, _ = _round_point(**point)
    return admissible_instance(L=point["L"], R=point["R"], step=step, centers=b, budget=k)


@_surface("kvib.thm4_1.bound_a_measured",
          space={"c": Box(-3, 3, shape=2 * N_ONLINE), "x": Box(-10, 10, shape=2),
                 "n": Integers(2, N_ONLINE), "k_frac": Box(0, 1), "w": Simplex(N_ONLINE),
                 "R": Integers(1, 10), "step_frac": Box(1e-3, 1), "L": Box(1e-2, 1e2, log=True)},
          instance=lambda **point: _round_instance(**point),
          tolerance=1e-12, tolerance_why="rounding: a few ulp of the ratio (as the claim)",
          fixed=[{"c": np.linspace(-1, 1, 2 * N_ONLINE), "x": [1.0, -1.0], "n": 4,
                  "k_frac": 0.3, "w": np.full(N_ONLINE, 1 / N_ONLINE), "R": 5, "step_frac": 1.0,
                  "L": 1.0}],
          note="one FedAvg round of the shared-Hessian instances of descent_printed: N up to "
               "16, K in [1, N), R up to 10, eta_l up to 1/(8RL), L over 1e-2..1e2; (A) and "
               "gamma^t exact (Def. C.1)")
def bound_a_round(*, c, x, n, k_frac, w, R, step_frac, L):
    """(A) = delta_* + ||sum_i lambda_i g_i||^2 over the corrected bound 5 R^2 gamma^t eta_l^2
    (sigma^2 + 6 ||grad f||^2), sigma^2 = 6 sigma_g^2."""
    b, k, step, _, x = _round_point(c=c, x=x, n=n, k_frac=k_frac, w=w, R=R,
                                    step_frac=step_frac, L=L)
    lam = 1.0 / n
    g = (1 - (1 - step * L) ** R) * (x[None, :] - b / L)       # x - x_i^R, shared Hessian L I
    z = lam * g
    a = np.sqrt(np.sum(z * z, axis=1))
    term_a = optimal_isp_variance(a, k) + float(np.sum(z.sum(axis=0) ** 2))
    alpha = optimal_factor(a, k) if a.sum() > 0 and k < n else 0.0
    gamma = (alpha * (n - k) / k + n) * lam
    grad = L * x - b.mean(axis=0)
    sigma2 = 6 * float(np.mean(np.sum((b - b.mean(axis=0)) ** 2, axis=1)))
    bound = 5 * R**2 * gamma * step**2 * (sigma2 + 6 * float(grad @ grad))
    if bound <= 0:
        return 0.0 if term_a <= 0 else np.inf
    return term_a / bound
