r"""Lemma 5.1 of K-Vib (solution of the FTRL step, eq. (10)): the result, its parts, its
hypotheses and its claims.

Statement (eq. (11)): with :math:`a_i^t=\pi^2_{1:t-1}(i)+\gamma`, :math:`0<a_1^t\le\dots\le
a_N^t` and :math:`0<K\le N`, the minimiser of eq. (10) is :math:`p_i=1` (:math:`i\ge l_2`),
:math:`z_t\sqrt{a_i^t}/c_t` (:math:`l_1<i<l_2`), :math:`p_{\min}` (:math:`i\le l_1`), with
:math:`c_t=\sum_{(l_1,l_2)}\sqrt{a_i^t}` and :math:`z_t=K-(N-l_2)+l_1p_{\min}` as printed.
Instances carry ``a`` (the :math:`a_i^t`), ``budget`` and ``p_min``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.tolerances import EPS

from .conditions import positive
from .lemma_b8 import budget_range, floor_feasible
from .solver import _lemma51_parts, _slsqp_argmin_value, bisection_probabilities


@hypothesis("weights", "0 < a_1^t <= ... <= a_N^t, a_i^t = pi^2_{1:t-1}(i) + gamma")
def ftrl_weights(*, a):
    return positive(a)


LEMMA5_1 = result(
    "kvib.lemma5_1", ref="Lemma 5.1", title="closed-form solution of the FTRL step (eq. (11))",
    parts={"solution": "eq. (11): p_i = 1 (i >= l2), z_t sqrt(a_i^t)/c_t (l1 < i < l2), p_min "
                       "(i <= l1), c_t = sum_{(l1, l2)} sqrt(a_i^t), z_t = K - (N - l2) + "
                       "l1 p_min",
           "interval": ("the indices: p_min sum a/z_t < a_i^t < sum a/z_t on (l1, l2)",
                        "the interval is read on sqrt(a) in the corrected claim; its printed "
                        "form follows from the printed z_t")},
    hypotheses=(ftrl_weights, budget_range, floor_feasible))


@claim("kvib.lemma5_1.printed_z", ref="Lemma 5.1 (eq. 11) as printed", kind="statement",
       expected="violated", result=LEMMA5_1, parts=("solution",),
       statement="The FTRL solution is p_i = z_t sqrt(a_i)/c_t on the middle set with "
                 "z_t = K - (N - l2) + l1 p_min, p_min on the floor, 1 above.",
       quick=dict(), full=dict())
def lemma51_printed(*, rng):
    r"""The printed :math:`z_t` has :math:`+l_1p_{\min}`; eq. (26) and App. D.2 eq. (46) have
    :math:`-l_1p_{\min}` (the mass left after the floor). Counterexample: a = (1e-4, 1, 4, 9, 16,
    25), K = 2, p_min = 0.2: the correct solution floors l1 = 2 clients, and the printed
    :math:`z_t` makes the probabilities sum to 2.8 instead of 2. With the algorithm's
    :math:`p_{\min}=0` both forms coincide. Expected **violated**; the corrected form is
    ``kvib.lemma5_1.corrected``."""
    a = np.array([1e-4, 1.0, 4.0, 9.0, 16.0, 25.0])
    k, p_min, n = 2.0, 0.2, 6
    l1, l2, c, _ = _lemma51_parts(a, k, p_min)
    z_printed = k - (n - l2) + l1 * p_min
    p = np.concatenate([np.full(l1, p_min), z_printed * np.sqrt(a[l1:l2]) / c,
                        np.ones(n - l2)])
    return Evidence(measured=p.sum(), theoretical=k, relation="==",
                    instance=dict(a=a, budget=k, p_min=p_min),
                    tolerance=Tolerance.rounding(10 * EPS * k, "a few ulp"),
                    details={"instance": {"a": a, "K": k, "p_min": p_min}, "l1": l1, "l2": l2,
                             "printed_p": p,
                             "smallest_instance": {
                                 "a": [1e-4, 1.0], "K": 1.0, "p_min": 0.2,
                                 "printed_p": [0.2, 1.2], "sum": 1.4,
                                 "why": "the printed sum is K + 2 l1 p_min: one floored and "
                                        "one middle client suffice (N = 2)"}})


@claim("kvib.lemma5_1.corrected", ref="Lemma 5.1 / eq. (10), corrected (z_t = K-N+l2-l1 p_min,"
       " conditions on sqrt(a))", kind="statement", expected="holds",
       corrects="kvib.lemma5_1.printed_z",
       result=LEMMA5_1, parts=("solution",),
       statement="argmin_p sum_i a_i/p_i over {p_min <= p <= 1, sum p = K} is p_min on the floor,"
                 " (K-N+l2-l1 p_min) sqrt(a_i)/c in the middle, 1 above.",
       quick=dict(n_instances=8), full=dict(n_instances=300))
def lemma51_corrected(*, rng, n_instances):
    """The corrected closed form against two numerical argmins of the FTRL objective: bisection
    on the KKT multiplier (probabilities must agree) and scipy SLSQP from the uniform point
    (objective; runs where SLSQP fails or ends infeasible beyond 1e-9 are skipped and counted in
    details). Tolerance 1e-6: SLSQP's accuracy on these condition numbers; the closed form must
    never be worse than SLSQP beyond it."""
    worst, used, instances = -np.inf, 0, []
    for _ in range(n_instances):
        n = int(rng.integers(3, 16))
        a = np.sort(rng.lognormal(0, 1.5, n) ** 2)
        k = float(rng.uniform(1, n - 1))
        p_min = float(rng.uniform(0, k / n)) if rng.random() < 0.7 else 0.0
        instances.append(dict(a=a, budget=k, p_min=p_min))
        l1, l2, c, p_solver = _lemma51_parts(a, k, p_min)
        z = k - n + l2 - l1 * p_min
        p = np.concatenate([np.full(l1, p_min), z * np.sqrt(a[l1:l2]) / c, np.ones(n - l2)])
        ours = np.sum(a / p)
        numeric = bisection_probabilities(np.sqrt(a), k, p_min)
        worst = max(worst, float(np.abs(p - p_solver).max()), float(np.abs(p - numeric).max()))
        res_fun = _slsqp_argmin_value(a, k, p_min)
        if res_fun is not None:
            used += 1
            worst = max(worst, (ours - res_fun) / res_fun)
    return Evidence(measured=worst, theoretical=0.0, relation="<=", instance=instances,
                    tolerance=Tolerance(1e-6, "optimizer accuracy",
                                        "SLSQP ftol 1e-14; 1e-6 relative covers its "
                                        "constraint slack on these condition numbers"),
                    details={"slsqp_runs_used": used, "instances": n_instances})
