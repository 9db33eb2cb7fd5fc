r"""Theorem 5.1 of K-Vib on feedback that approaches its limit from above, without capping
(the proof's regime; recipe V10)."""

from __future__ import annotations

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling.online import (
    Assumption51Feedback,
    best_fixed_cost,
)

from . import THM5_1, thm5_1_bound


@claim("kvib.thm5_1.tbfp_bound", ref="Thm 5.1 (App. D.1)", kind="statement", expected="holds",
       result=THM5_1, parts=("bound",),
       statement="T_BFP <= (T/K)(sum_i sqrt(V_T(i)/T))(2 Pi_* + sum_i sqrt(V_T(i)/T)) under "
                 "Assumption 5.1.",
       quick=dict(n_instances=30, max_rounds=4000), full=dict(n_instances=300, max_rounds=100000))
def tbfp_bound(*, rng, n_instances, max_rounds):
    r"""V10. :math:`T_{\rm BFP}` is exact (water-filling on :math:`\sqrt{\pi^2_{1:T}}` minus the
    per-round optima). The proof (eqs. 39-41) needs no capping (:math:`K\max\pi_t\le\sum\pi_t`
    for all t) and feedback approaching its limit from above; instances are drawn inside that
    regime (K is lowered until nothing is capped). Measured: max T_BFP / bound (<= 1); the
    spec's pilot found <= 0.017."""
    worst, instances = 0.0, []
    for _ in range(n_instances):
        n = int(rng.integers(5, 200))
        t = int(rng.integers(10, max_rounds + 1))
        fb = Assumption51Feedback.generate(rng, n)
        pi1, pis = fb.values(1), fb.lam * fb.base
        k_max = min(pi1.sum() / pi1.max(), pis.sum() / pis.max())
        k = float(rng.uniform(1.0, max(k_max, 1.0)))
        best = best_fixed_cost(fb.squared_sums(t), k)
        t_bfp = best - fb.sum_optimal_costs(t, k)
        bound = thm5_1_bound(T=t, K=k, Pi_star=pis.sum(), V=fb.variation(t))
        instances.append(dict(feedback=fb, n_rounds=t, budget=k, n_clients=n))
        worst = max(worst, t_bfp / bound)
    return Evidence(measured=worst, theoretical=1.0, relation="<=", instance=instances,
                    tolerance=Tolerance.rounding(1e-9, "difference of two sums of T terms"))
