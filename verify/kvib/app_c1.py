r"""Appendix C.1 of K-Vib (the optimal ISP variance and its ratio to the uniform one): the
result, its parts, its hypotheses and its claims.

With :math:`\tilde g_i=\lambda_ig_i` (here :math:`a_i=\|\tilde g_i\|`): :math:`\delta_*^t=
\frac1{K-(N-l)}(\sum_{i\le l}a_{(i)})^2-\sum_{i\le l}a_{(i)}^2`; without capping
(:math:`Ka_N\le\sum_ia_i`), :math:`\delta_*^t\le\frac{N-K}{NK}(\sum_ia_i)^2`; the text then
writes ":math:`\delta^t/\delta_{\mathbb U}<0`". Instances carry ``a`` and ``budget``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling import (
    isp_variance,
    optimal_factor,
    optimal_isp_probabilities,
    optimal_isp_variance,
    uniform_isp_variance,
)

from .closed_forms import _uncapped_instance
from .conditions import budget_below_n, positive_weights, uncapped
from .def_c1 import DEF_C1
from .instances import random_budget, random_weights
from .printed_formulas import lemma22_split

APP_C1 = result(
    "kvib.app_c1", ref="Appendix C.1", kind="section",
    title="the optimal ISP variance and its ratio to the uniform one",
    parts={"delta_star": "delta_*^t = (sum_{i<=l} a_(i))^2/(K - (N - l)) - sum_{i<=l} a_(i)^2",
           "uncapped": "if K a_N <= sum_i a_i: delta_* <= (sum a)^2/K - sum a^2 <= (N-K)/(NK) "
                       "(sum a)^2",
           "sign": "the text: 'delta^t/delta_U < 0'"},
    hypotheses=(positive_weights, budget_below_n, uncapped.only("uncapped")))


@claim("kvib.appC1.delta_star_closed_form", ref="App. C.1 (optimal ISP variance)",
       kind="statement", expected="holds",
       result=APP_C1, parts=("delta_star",),
       statement="delta_* = (sum_{i<=l} a_(i))^2/(K-N+l) - sum_{i<=l} a_(i)^2 equals "
                 "sum (1-p*_i) a_i^2/p*_i.",
       quick=dict(n_instances=500), full=dict(n_instances=20000))
def delta_star_closed_form(*, rng, n_instances):
    """V7 first item. The closed form is evaluated with l from the printed Lemma 2.2 rule,
    computed independently in the claim (:func:`lemma22_split`, a sorted scan), and compared
    with the ISP variance at the library solver's p*; equality up to rounding (1e-10 relative,
    cancellation between two sums of N <= 200 terms of similar size). Details: the library's
    closed-form helper agrees too."""
    worst, lib, instances = 0.0, 0.0, []
    for _ in range(n_instances):
        a = random_weights(rng)
        k = random_budget(rng, a.size)
        if k >= a.size:
            continue
        instances.append(dict(a=a, budget=k))
        direct = isp_variance(optimal_isp_probabilities(a, k), a)
        srt, l = lemma22_split(a, k)
        closed = srt[:l].sum() ** 2 / (k - a.size + l) - np.sum(srt[:l] ** 2)
        scale = max(direct, np.sum(a * a) * 1e-12)
        worst = max(worst, abs(direct - closed) / scale)
        lib = max(lib, abs(optimal_isp_variance(a, k) - closed) / scale)
    return Evidence(instance=instances,
                    measured=worst, theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(1e-10, "cancellation in sum^2/z - sum a^2"),
                    details={"library_helper_max_rel_gap": lib})


@claim("kvib.appC1.uncapped_bounds", ref="App. C.1; Def. C.1, eq. (29)", kind="statement",
       expected="holds", corrects="kvib.appC1.alpha_printed_sign",
       parts=(APP_C1.part("uncapped"), DEF_C1.part("alpha_bound")),
       statement="If K max a <= sum a: delta_* <= (N-K)/(NK) (sum a)^2 and alpha_* = "
                 "delta_*/delta_U <= (sum a)^2/(N sum a^2) <= 1.",
       quick=dict(n_instances=1000), full=dict(n_instances=20000))
def uncapped_bounds(*, rng, n_instances):
    """V7 items 2-4. Measured: max relative excess over each bound (must be <= 0)."""
    ex1, ex2, ex3, instances = -np.inf, -np.inf, -np.inf, []
    for _ in range(n_instances):
        a, k = _uncapped_instance(rng)
        n = a.size
        if k >= n:
            continue
        instances.append(dict(a=a, budget=k))
        ds = optimal_isp_variance(a, k)
        b1 = (n - k) / (n * k) * a.sum() ** 2
        cs = a.sum() ** 2 / (n * np.sum(a * a))
        ex1 = max(ex1, (ds - b1) / b1)
        ex2 = max(ex2, optimal_factor(a, k) - cs)
        ex3 = max(ex3, cs - 1.0)
    return Evidence(instance=instances,
                    measured=[ex1, ex2, ex3], theoretical=[0.0, 0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "sums of N <= 100 terms"))


@claim("kvib.appC1.alpha_printed_sign", ref="App. C.1 ('delta^t/delta_U < 0')",
       kind="remark", expected="violated",
       result=APP_C1, parts=("sign",),
       statement="The ratio of the optimal to the uniform ISP variance is negative.",
       quick=dict(), full=dict())
def alpha_printed_sign(*, rng):
    """Both variances are nonnegative, so the printed "< 0" cannot hold (intended: <= 1, checked
    by ``kvib.appC1.uncapped_bounds``). Instance a = (1, 3, 6), K = 2: delta_* = 6,
    delta_U = 23, ratio 0.26. Expected **violated** (typo). Kind ``remark``: a slip in the
    running text, not a step the proof uses (the proof uses alpha <= 1)."""
    a = np.array([1.0, 3.0, 6.0])
    ratio = optimal_isp_variance(a, 2) / uniform_isp_variance(a, 2)
    return Evidence(instance=dict(a=a, budget=2.0),
                    measured=ratio, theoretical=0.0, relation="<=",
                    tolerance=Tolerance.exact(), details={
                        "instance": {"a": a, "K": 2},
                        "smallest_instance": {"a": [1.0, 1.0], "K": 1,
                                              "ratio": optimal_isp_variance(np.ones(2), 1)
                                              / uniform_isp_variance(np.ones(2), 1),
                                              "why": "any N = 2, K = 1 with both a_i > 0 "
                                                     "(N = 1: both variances 0)"}})
