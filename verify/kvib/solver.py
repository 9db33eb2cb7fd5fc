r"""K-Vib optimal probabilities: Lemma 2.2, Lemma B.8 (floor), Corollaries B.1/B.2, Lemma 5.1,
and the released code's solver ([003], recipes V1, V2 and spec section 6 items 4-6)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import (
    optimal_isp_objective,
    optimal_isp_probabilities,
)
from flbounds.tolerances import EPS

from .instances import random_budget, random_weights
from .printed_formulas import lemma22_printed_formula


def released_code_solver(a, k):
    """Behavioural transcription of the capped solver in the authors' ``sampler.py``.

    Scans l = 1, 2, ... upward and stops at the first l with k + l - N > sum_{j<=l} a_(j) / a_(l),
    steps back one, then gives the proportional value (k + l - N) a / sum to the sorted entries
    with 0-based position <= l, i.e. to l + 1 entries, and 1 to the rest.
    """
    a = np.asarray(a, dtype=float)
    n = a.size
    order = np.argsort(a)
    ell = 0
    for pos in range(n):
        ell = pos + 1
        if k + ell - n > a[order[:ell]].sum() / a[order[pos]]:
            ell -= 1
            break
    total = a[order[:ell]].sum()
    p = np.ones(n)
    for pos in range(n):
        if pos <= ell:
            p[order[pos]] = (k + ell - n) * a[order[pos]] / total
    return p


def bisection_probabilities(a, k, p_min=0.0, iters=200):
    """Independent solver: bisection on tau for sum clip(a/tau, p_min, 1) = k (V2 reference)."""
    lo, hi = 1e-300, float(a.max()) / max(p_min, 1e-300) * 4 + float(a.sum()) / k * 4
    for _ in range(iters):
        mid = np.sqrt(lo) * np.sqrt(hi) if hi / lo > 4 else 0.5 * (lo + hi)
        if np.clip(a / mid, p_min, 1.0).sum() > k:
            lo = mid
        else:
            hi = mid
    return np.clip(a / hi, p_min, 1.0)


@claim("kvib.lemma2_2.closed_form", ref="Lemma 2.2, eq. (4)", kind="statement", expected="holds",
       statement="With l the largest integer with 0 < K+l-N <= sum_{i<=l} a_(i)/a_(l), "
                 "p_(i) = (K+l-N) a_(i)/sum_{j<=l} a_(j) (i <= l), 1 otherwise, minimizes "
                 "sum a_i^2/p_i over {0 < p <= 1, sum p = K}.",
       quick=dict(n_instances=400, n_random=200), full=dict(n_instances=20000, n_random=1000))
def lemma22_closed_form(*, rng, n_instances, n_random):
    r"""[003, Lemma 2.2]. The printed formula (evaluated literally by
    :func:`lemma22_printed_formula`) is compared with the water-filling solver and with random
    feasible points (Dirichlet times K, rejected if any entry exceeds 1).

    Expected **holds** (audit part B item 1: the formula is right, the off-by-one is only in the
    released code). Measured: max |printed - water-filling|, max |sum p - K|, and the largest
    relative amount by which any random feasible q beats the formula (must be <= 0).
    Tolerance: rounding of sums over N <= 200 terms, 1e3 N eps relative.
    """
    dev, sum_err, beaten = 0.0, 0.0, -np.inf
    for _ in range(n_instances):
        a = random_weights(rng)
        n = a.size
        k = random_budget(rng, n)
        p = lemma22_printed_formula(a, k)
        dev = max(dev, float(np.abs(p - optimal_isp_probabilities(a, k)).max()))
        sum_err = max(sum_err, abs(p.sum() - k) / k)
        best = np.sum(a * a / p)
        q = k * rng.dirichlet(np.ones(n), size=n_random // 10 + 1)
        q = q[np.all(q <= 1, axis=1)]
        if q.size:
            beaten = max(beaten, float(((best - np.sum(a * a / q, axis=1)) / best).max()))
    tol = 1e3 * 200 * EPS
    return Evidence(measured=[dev, sum_err, max(beaten, 0.0)], theoretical=[0.0, 0.0, 0.0],
                    relation="==", tolerance=Tolerance.rounding(tol, "1e3 N eps, N <= 200"),
                    details={"max_abs_dev_vs_waterfilling": dev, "max_rel_sum_error": sum_err,
                             "max_rel_improvement_by_random_q": beaten})


@claim("kvib.lemma2_2.special_cases", ref="Lemma 2.2; Sec. 3 ('RSP is a special case of ISP')",
       kind="statement", expected="holds",
       statement="(1,3,6) with K=2 gives (0.25,0.75,1); K=1 gives a/sum(a) (the RSP optimum "
                 "eq. (5)); K=N gives all ones.",
       quick=dict(n_instances=200), full=dict(n_instances=5000))
def lemma22_special_cases(*, rng, n_instances):
    """Regression instance of spec V1 plus the two limits of Sec. 3; exact up to rounding."""
    worst = float(np.abs(optimal_isp_probabilities([1.0, 3.0, 6.0], 2)
                         - np.array([0.25, 0.75, 1.0])).max())
    for _ in range(n_instances):
        a = random_weights(rng)
        worst = max(worst, float(np.abs(optimal_isp_probabilities(a, 1) - a / a.sum()).max()),
                    float(np.abs(optimal_isp_probabilities(a, a.size) - 1.0).max()))
    return Evidence(measured=worst, theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(1e3 * 200 * EPS, "1e3 N eps, N <= 200"))


@claim("kvib.code.solver_off_by_one", ref="official code sampler.py (KVibSampler.solver, "
       "OptimalSampler.optim_solver)", kind="code", expected="violated",
       statement="The released capped solver returns the Lemma 2.2 probabilities.",
       quick=dict(n_instances=300), full=dict(n_instances=3000))
def code_solver_off_by_one(*, rng, n_instances):
    r"""The released solver gives the proportional value to l + 1 sorted entries instead of l.

    Counterexample: a = (1, 3, 6), K = 2 gives (0.25, 0.75, 1.5) (sum 2.5, p_3 > 1) instead of
    (0.25, 0.75, 1). Expected **violated** (a code defect; Lemma 2.2 itself holds, see
    ``kvib.lemma2_2.closed_form``). Details: the fraction of random integer-K instances on which
    the code returns p > 1 or sum p != K.
    """
    a0 = np.array([1.0, 3.0, 6.0])
    code, paper = released_code_solver(a0, 2), optimal_isp_probabilities(a0, 2)
    bad = 0
    for _ in range(n_instances):
        a = random_weights(rng, 50)
        k = int(rng.integers(1, a.size + 1))
        p = released_code_solver(a, k)
        bad += bool(p.max() > 1 + 1e-12 or abs(p.sum() - k) > 1e-9 * k)
    return Evidence(measured=code, theoretical=paper, relation="==",
                    tolerance=Tolerance.rounding(10 * EPS, "a few ulp on values <= 1.5"),
                    details={"instance": {"a": a0, "K": 2}, "code_output": code,
                             "code_sum": code.sum(), "correct": paper,
                             "fraction_random_instances_wrong": bad / n_instances})


@claim("kvib.code.no_square_root", ref="official code sampler.py (KVibSampler.sample); Alg. 2",
       kind="code", expected="violated",
       statement="The released K-Vib sampler draws with p = argmin sum (omega+gamma)/p, i.e. "
                 "capped p proportional to sqrt(omega+gamma), as Algorithm 2 prints.",
       quick=dict(), full=dict())
def code_no_square_root(*, rng):
    r"""Algorithm 2 / Lemma 5.1 put :math:`p\propto\sqrt{\omega+\gamma}` (capped); the code calls
    its solver on :math:`\omega+\gamma` itself, i.e. :math:`p\propto\omega+\gamma`.

    Instance: omega + gamma = (1, 4, 9, 16), K = 2 (no capping in either variant). Paper:
    (0.2, 0.4, 0.6, 0.8); code form: (1, 4, 9, 16)*2/30. Expected **violated** (code differs
    from paper; the off-by-one is excluded here by using the correct solver for both).
    """
    w = np.array([1.0, 4.0, 9.0, 16.0])
    paper = optimal_isp_probabilities(np.sqrt(w), 2)
    code_form = optimal_isp_probabilities(w, 2)
    return Evidence(measured=code_form, theoretical=paper, relation="==",
                    tolerance=Tolerance.rounding(10 * EPS, "a few ulp"),
                    details={"omega_plus_gamma": w, "paper_p": paper, "code_p": code_form})


@claim("kvib.lemma_b8.floor_solution", ref="Lemma B.8, eqs. (25)-(27) (indices corrected)",
       kind="statement", expected="holds",
       statement="With a floor p_min <= K/N the optimum is p = clip(a/tau, p_min, 1) and its "
                 "value is sum_{i<=l1} a^2/p_min + (sum_{l1<i<=l2} a)^2/(K-N+l2-l1 p_min) "
                 "+ sum_{i>l2} a^2.",
       quick=dict(n_instances=300), full=dict(n_instances=10000))
def lemma_b8_floor_solution(*, rng, n_instances):
    """[003, Lemma B.8]. Our solver is compared with an independent bisection on tau, and the
    optimal value with the corrected eq. (27) (l1 = #floored, l2 = N - #capped). Expected
    **holds**. Tolerance: bisection to 200 halvings reaches machine precision; 1e-9 relative
    covers the difference of two float64 sums of N <= 200 terms with margin."""
    worst_p, worst_val = 0.0, 0.0
    for _ in range(n_instances):
        a = random_weights(rng)
        n = a.size
        k = random_budget(rng, n)
        p_min = float(rng.uniform(0, k / n))
        p = optimal_isp_probabilities(a, k, p_min=p_min)
        worst_p = max(worst_p, float(np.abs(p - bisection_probabilities(a, k, p_min)).max()))
        s = np.sort(a)
        ps = np.sort(p)
        l1 = int(np.sum(ps <= p_min * (1 + 1e-12)))
        l2 = n - int(np.sum(ps >= 1 - 1e-12))
        l1 = min(l1, l2)
        value = (np.sum(s[:l1] ** 2) / p_min if l1 else 0.0) + np.sum(s[l2:] ** 2)
        if l2 > l1:
            value += s[l1:l2].sum() ** 2 / (k - n + l2 - l1 * p_min)
        obj = optimal_isp_objective(a, k, p_min=p_min)
        worst_val = max(worst_val, abs(value - obj) / obj)
    return Evidence(measured=[worst_p, worst_val], theoretical=[0.0, 0.0], relation="==",
                    tolerance=Tolerance.rounding(1e-9, "bisection + sums of N <= 200 terms"),
                    details={"max_abs_dev_vs_bisection": worst_p, "max_rel_eq27_error": worst_val})


@claim("kvib.lemma_b8.eq27_printed_indices", ref="Lemma B.8, eq. (27) as printed",
       kind="proof-step", expected="violated",
       statement="Eq. (27): the optimal value has last term sum_{i >= N-l2} a_i^2.",
       quick=dict(), full=dict())
def lemma_b8_eq27_printed(*, rng):
    r"""The last sum of the printed eq. (27) runs over :math:`i\ge N-l_2`; the capped clients
    are :math:`i>l_2` (there are :math:`N-l_2` of them). Counterexample: a = (1, 3, 6), K = 2,
    p_min = 0: l1 = 0, l2 = 2, printed value 16 + (1+9+36) = 62, true optimum 16 + 36 = 52.
    Expected **violated** (index typo in a proof line; the corrected value is checked by
    ``kvib.lemma_b8.floor_solution``)."""
    a = np.array([1.0, 3.0, 6.0])
    n, k, l2 = 3, 2.0, 2
    printed = a[:l2].sum() ** 2 / (k - n + l2) + np.sum(a[n - l2 - 1:] ** 2)  # 1-indexed i>=N-l2
    true = optimal_isp_objective(a, k)
    return Evidence(measured=printed, theoretical=true, relation="==",
                    tolerance=Tolerance.rounding(10 * EPS * true, "a few ulp"),
                    details={"instance": {"a": a, "K": 2, "p_min": 0}, "printed": printed,
                             "optimum": true})


@claim("kvib.corollary_b1_b2.uncapped_values", ref="Corollaries B.1 and B.2",
       kind="statement", expected="holds",
       statement="If K a_max <= sum a: with p_min = 0 the optimum is (sum a)^2/K; with "
                 "0 < p_min < K/N it is at most K (sum a)^2/(K - N p_min)^2.",
       quick=dict(n_instances=300), full=dict(n_instances=10000))
def corollary_b1_b2(*, rng, n_instances):
    """B.1 is an equality (rounding tolerance); B.2 an inequality that must hold on every
    instance. Measured: max relative error of B.1 and max of (value - B.2 bound)/bound."""
    err_b1, excess_b2, used = 0.0, -np.inf, 0
    for _ in range(n_instances):
        a = random_weights(rng)
        n = a.size
        k = float(rng.uniform(1, n))
        if k * a.max() > a.sum():
            k = a.sum() / a.max() * rng.uniform(0.5, 1.0)
        if k <= 0.05:
            continue
        used += 1
        err_b1 = max(err_b1, abs(optimal_isp_objective(a, k) - a.sum() ** 2 / k)
                     / (a.sum() ** 2 / k))
        p_min = float(rng.uniform(0, k / n)) * 0.999
        bound = k * a.sum() ** 2 / (k - n * p_min) ** 2
        excess_b2 = max(excess_b2, (optimal_isp_objective(a, k, p_min=p_min) - bound) / bound)
    return Evidence(measured=[err_b1, excess_b2], theoretical=[0.0, 0.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "sums of N <= 200 terms"),
                    details={"instances_used": used})


def _lemma51_parts(a_sorted, k, p_min):
    """(l1, l2, c) of the correct Lemma 5.1 solution for sorted weights (sqrt taken inside)."""
    w = np.sqrt(a_sorted)
    p = optimal_isp_probabilities(w, k, p_min=p_min)
    l1 = int(np.sum(p <= p_min * (1 + 1e-12)))
    l2 = a_sorted.size - int(np.sum(p >= 1 - 1e-12))
    return l1, l2, w[l1:l2].sum(), p


@claim("kvib.lemma5_1.printed_z", ref="Lemma 5.1 (eq. 11) as printed", kind="statement",
       expected="violated",
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
                    tolerance=Tolerance.rounding(10 * EPS * k, "a few ulp"),
                    details={"instance": {"a": a, "K": k, "p_min": p_min}, "l1": l1, "l2": l2,
                             "printed_p": p})


def _slsqp_argmin_value(a, k, p_min):
    """min sum a/p over {p_min <= p <= 1, sum p = k} by scipy SLSQP from the uniform point;
    None when SLSQP fails or returns a point infeasible beyond 1e-9."""
    from scipy.optimize import minimize

    res = minimize(lambda x: np.sum(a / x), np.full(a.size, k / a.size), method="SLSQP",
                   jac=lambda x: -a / x**2, bounds=[(max(p_min, 1e-9), 1.0)] * a.size,
                   constraints=[{"type": "eq", "fun": lambda x: x.sum() - k}],
                   options={"ftol": 1e-14, "maxiter": 200})
    if not res.success or abs(res.x.sum() - k) > 1e-9:
        return None
    return float(res.fun)


@claim("kvib.lemma5_1.corrected", ref="Lemma 5.1 / eq. (10), corrected (z_t = K-N+l2-l1 p_min,"
       " conditions on sqrt(a))", kind="statement", expected="holds",
       statement="argmin_p sum_i a_i/p_i over {p_min <= p <= 1, sum p = K} is p_min on the floor,"
                 " (K-N+l2-l1 p_min) sqrt(a_i)/c in the middle, 1 above.",
       quick=dict(n_instances=8), full=dict(n_instances=300))
def lemma51_corrected(*, rng, n_instances):
    """The corrected closed form against two numerical argmins of the FTRL objective: bisection
    on the KKT multiplier (probabilities must agree) and scipy SLSQP from the uniform point
    (objective; runs where SLSQP fails or ends infeasible beyond 1e-9 are skipped and counted in
    details). Tolerance 1e-6: SLSQP's accuracy on these condition numbers; the closed form must
    never be worse than SLSQP beyond it."""
    worst, used = -np.inf, 0
    for _ in range(n_instances):
        n = int(rng.integers(3, 16))
        a = np.sort(rng.lognormal(0, 1.5, n) ** 2)
        k = float(rng.uniform(1, n - 1))
        p_min = float(rng.uniform(0, k / n)) if rng.random() < 0.7 else 0.0
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
    return Evidence(measured=worst, theoretical=0.0, relation="<=",
                    tolerance=Tolerance(1e-6, "optimizer accuracy",
                                        "SLSQP ftol 1e-14; 1e-6 relative covers its "
                                        "constraint slack on these condition numbers"),
                    details={"slsqp_runs_used": used, "instances": n_instances})
