r"""Theorem 5.1 of K-Vib, its proof in App. D.1: the uncapped minimum of eqs. (39)-(40), the
:math:`\Pi_*^2` typo of eq. (41) and its "average assumption" (spec section 6 items 11-12)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import optimal_isp_objective
from flbounds.sampling.online import (
    Assumption51Feedback,
)

from ..proof_gaps_online import _uncapped_budget
from . import THM5_1


@claim("kvib.thm5_1.proof_uncapped_minimum", ref="Proof of Thm 5.1, App. D.1, eqs. (39)-(40)",
       kind="proof-step", expected="violated", result=THM5_1, parts=("eq39_40",),
       statement="min_{p in P_K} sum_i pi(i)^2/p_i = (sum_i pi(i))^2/K.", quick=dict(),
       full=dict())
def thm51_proof_minimum(*, rng):
    r"""The uncapped value is only a lower bound of the capped minimum; using it as the value
    (to upper-bound min_p sum_t l_t) is invalid once K max pi > sum pi. Counterexample
    pi = (1, 3, 6), K = 2: (sum pi)^2/K = 50, true minimum 16 + 36 = 52. It is the first
    round of a constant feedback sequence (:math:`\lambda=1/3`, :math:`b=3\pi`, c = 0), which
    meets Assumption 5.1, with K = 2 in [1, N]. Smallest instance (``details``): the gap
    needs :math:`K\max_i\pi(i)>\sum_i\pi(i)`, impossible at K = 1; N = 2 already fails for
    any K in (1, 2), e.g. :math:`\pi=(1,3)`, K = 3/2: uncapped 32/3, true minimum 11 (the
    kept N = 3 instance has an integer budget). Expected **violated**; the theorem itself
    still held on every instance tried (``kvib.thm5_1.capped_regime``)."""
    pi = np.array([1.0, 3.0, 6.0])
    fb = Assumption51Feedback(np.full(3, 1 / 3), 3 * pi, np.zeros(3))   # pi_t = pi, t >= 1
    return Evidence(measured=optimal_isp_objective(pi, 2), theoretical=pi.sum() ** 2 / 2,
                    relation="==", tolerance=Tolerance.rounding(1e-12, "a few ulp"),
                    instance=dict(pi=fb.values(1), budget=2.0, feedback=fb, n_rounds=1,
                                  n_clients=3),
                    details={"instance": {"pi": pi, "K": 2},
                             "smallest": {"pi": [1.0, 3.0], "K": 1.5,
                                          "true_min": optimal_isp_objective(
                                              np.array([1.0, 3.0]), 1.5),
                                          "uncapped": 16 / 1.5}})


@claim("kvib.thm5_1.proof_pi_star_squared_printed", ref="Proof of Thm 5.1, App. D.1 eq. (41) "
       "('Pi_*^2 = sum_i pi_*^2(i)')", kind="proof-step", expected="violated",
       result=THM5_1, parts=("eq41_square",),
       statement="Pi_*^2 = sum_i pi_*(i)^2, where Pi_* = sum_i pi_*(i).",
       quick=dict(), full=dict())
def pi_star_squared_printed(*, rng):
    r"""A typo: :math:`\Pi_*^2=(\sum_i\pi_*(i))^2`, which exceeds :math:`\sum_i\pi_*^2(i)` as
    soon as two limits are positive. The printed chain :math:`\sum_i\pi_*^2\le(\frac1T
    \sum_t\Pi_t)^2` is true but too weak: eq. (42) needs :math:`\frac TK\Pi_*^2\le\sum_t
    \min_p\ell_t(p)` to cancel the :math:`\Pi_*^2` of eq. (40). Instance: N = 2,
    :math:`\lambda=(1/2,1/2)`, :math:`b=(1,1)` (:math:`\pi_*=(1/2,1/2)`). Measured
    :math:`\Pi_*^2=1` against the printed :math:`\sum\pi_*^2=1/2` ("=="). Expected
    **violated**; the corrected chain is ``kvib.thm5_1.proof_pi_star_squared_corrected``."""
    fb = Assumption51Feedback(np.full(2, 0.5), np.ones(2), np.full(2, 0.5))
    pi_star = fb.lam * fb.base
    return Evidence(measured=float(pi_star.sum() ** 2), theoretical=float(np.sum(pi_star**2)),
                    relation="==", tolerance=Tolerance.rounding(1e-15, "two flops"),
                    instance=dict(feedback=fb, n_rounds=100, budget=1.0, n_clients=2),
                    details={"pi_star": pi_star,
                             "smallest_instance": "N = 2 (for one client Pi_*^2 = pi_*^2 "
                                                  "holds); the gap needs no rounds, T = 100 "
                                                  "only fixes Assumption 5.1's horizon"})


@claim("kvib.thm5_1.proof_pi_star_squared_corrected", ref="Proof of Thm 5.1, App. D.1 eq. (41) "
       "(corrected: Pi_*^2 = (sum_i pi_*(i))^2)", kind="proof-step", expected="holds",
       corrects="kvib.thm5_1.proof_pi_star_squared_printed",
       result=THM5_1, parts=("eq41_square",),
       statement="For feedback approaching its limit from above: Pi_*^2 <= "
                 "((1/T) sum_t Pi_t)^2 <= (1/T) sum_t Pi_t^2 <= (K/T) sum_t min_p l_t(p).",
       quick=dict(n_instances=30, max_rounds=2000), full=dict(n_instances=500,
                                                              max_rounds=50000))
def pi_star_squared_corrected(*, rng, n_instances, max_rounds):
    r"""Companion of ``kvib.thm5_1.proof_pi_star_squared_printed``, in the proof's regime
    (the one of ``kvib.thm5_1.tbfp_bound``). Random Assumption 5.1 instances (decreasing
    feedback, N in [2, 100], T in [1, max_rounds], K below the capping threshold).
    Measured: the largest of :math:`\Pi_*^2/\bar\Pi^2-1`, :math:`\bar\Pi^2/\overline{\Pi^2}-1`
    and :math:`\overline{\Pi^2}/(\frac KT\sum_t\min\ell_t)-1` (all <= 0 up to rounding; the
    last is an equality in rounds without capping, eq. 39, and an inequality otherwise, since
    capping only raises the minimum). Expected **holds**. Tolerance: rounding of sums of T
    terms (1e-9 relative)."""
    worst, instances = -np.inf, []
    for _ in range(n_instances):
        fb = Assumption51Feedback.generate(rng, int(rng.integers(2, 101)))
        t = int(rng.integers(1, max_rounds + 1))
        instances.append(dict(feedback=fb, n_rounds=t))
        k = _uncapped_budget(rng, fb)
        totals = fb.block(1, t + 1).sum(axis=1)
        mean, mean_sq = float(totals.mean()), float(np.mean(totals**2))
        pi_star = float(np.sum(fb.lam * fb.base))
        opt = fb.sum_optimal_costs(t, k)
        worst = max(worst, pi_star**2 / mean**2 - 1, mean**2 / mean_sq - 1,
                    mean_sq / (k / t * opt) - 1)
    return Evidence(measured=worst, theoretical=0.0, relation="<=", instance=instances,
                    tolerance=Tolerance.rounding(1e-9, "sums of T terms"))


@claim("kvib.thm5_1.proof_average_from_above", ref="Proof of Thm 5.1, App. D.1 eq. (41) "
       "('the average assumption'); Sec. 5.2 ('sum_t Pi_t >= Pi_* as FL converges')",
       kind="proof-step", expected="violated", result=THM5_1, parts=("eq41_average",),
       statement="Under Assumption 5.1, Pi_* <= (1/T) sum_{t<=T} Pi_t.",
       quick=dict(n_rounds=4), full=dict(n_rounds=4))
def proof_average_from_above(*, rng, n_rounds):
    r"""Assumption 5.1 bounds :math:`|\pi_t-\pi_*|` only, so feedback may rise to its limit.
    Instance: N = 2, :math:`\lambda=(1/2,1/2)`, :math:`\pi_t(i)=\frac12(1-\frac1{2\sqrt t})`
    (:math:`|\pi_t-\pi_*|=\frac1{4\sqrt t}`), T = 4: :math:`\Pi_*=1` while
    :math:`\frac1T\sum_t\Pi_t=1-\frac18\sum_{t\le4}t^{-1/2}\approx0.652`. Measured
    :math:`\Pi_*` against that mean ("<="). Expected **violated** (it fails for every T with
    rising feedback). The statement of Theorem 5.1 still holds on rising feedback on every
    instance tried (``kvib.thm5_1.rising_feedback``). Exact to rounding."""
    fb = Assumption51Feedback(np.full(2, 0.5), np.ones(2), np.full(2, -0.5))
    mean = float(fb.block(1, n_rounds + 1).sum(axis=1).mean())
    return Evidence(measured=float(np.sum(fb.lam * fb.base)), theoretical=mean, relation="<=",
                    tolerance=Tolerance.rounding(1e-15, "a few flops"),
                    instance=dict(feedback=fb, n_rounds=n_rounds, budget=1.0, n_clients=2),
                    details={"T": n_rounds, "mean_Pi_t": mean,
                             "smallest_instance": {"N": 1, "T": 1, "Pi_star": 1.0,
                                                   "mean_Pi_t": 0.5,
                                                   "why": "rising feedback is below its "
                                                          "limit from the first round"}})
