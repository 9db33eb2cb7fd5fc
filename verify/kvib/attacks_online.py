r"""Attack surfaces of K-Vib's online results over their hypothesis domains: Theorem 5.1's bound
on the best fixed probability (Assumption 5.1 feedback from above or from below, any budget
K in [1, N), capped rounds included, N up to 16, T from 1).

The claim attacked, ``kvib.thm5_1.tbfp_bound``, draws its own instances in the proof's regime
(no capping, feedback from above); the statement's hypotheses are only Assumption 5.1 and the
budget, so the attack searches the whole of them: a ratio above 1 would refute the theorem,
not only its proof.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers
from flbounds.sampling.online import Assumption51Feedback, best_fixed_cost

from .attacks import _budget, _surface
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
