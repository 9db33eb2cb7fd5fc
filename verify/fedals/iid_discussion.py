r"""The "1/K^2 in iid" reading of Thm 4.1 (discussion after Thm 4.1, reused in Sec. 7.2) and
the OLS closed forms of spec 3.9 that explain why it fails.

The paper: the first term :math:`\kappa\mathcal K(k)^2 G_k` "is the sole term in the iid
setting", so the generalization error improves by :math:`1/K^2`. But the non-iidness
:math:`\delta_k = R_{S_k}(\hat\theta) - R_{S_k}(\theta_k)` is measured on samples and is not 0
in iid (the average of K local ERMs is not client k's ERM): :math:`D_k \approx \tfrac12(1 -
1/K)G_k`, and the true gap is :math:`\approx G/K`.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.stats import slope_from_means
from flbounds.theory.data_models import RidgeModel, ols_averaged_gap, ols_local_gap, ols_nonidness
from flbounds.theory.generalization import one_round_draws, summarize_bound

from .instances import DIM


def _iid_sweep(rng, n_clients, n_samples, lam, n_draws):
    theta = rng.standard_normal(DIM)
    rows = []
    for K in n_clients:
        model = RidgeModel(np.tile(theta, (K, 1)), 1.0, lam)
        w = np.full(K, 1.0 / K)
        dr = one_round_draws(model, w, n_samples, n_draws, rng)
        s = summarize_bound(dr, w, model.mu, model.L, rng)
        rows.append(dict(K=K, gap=s.gap, gap_se=s.gap_se, G=float(s.G.mean()),
                         D=float(s.D.mean()), first_term=s.first_term,
                         first_term_se=s.first_term_se, bound=s.bound,
                         gap_K_over_G=s.gap * K / float(s.G.mean())))
    return rows


D1_QUICK = dict(n_clients=[2, 4, 8, 16], n_samples=40, lam=1.0, n_draws=800)
D1_FULL = dict(n_clients=[2, 4, 8, 16, 32, 64], n_samples=40, lam=0.1, n_draws=4000)


@claim("fedals.d1.sole_iid_term", ref="Discussion after Thm 4.1; Sec. 7.2", kind="remark",
       expected="violated",
       statement="In the iid setting the first term (L/mu) K(k)^2 G_k of Thm 4.1 is the sole "
                 "term, so E Delta <= sum_k K(k) (L/mu) K(k)^2 G_k = kappa G / K^2.",
       quick=D1_QUICK, full=D1_FULL)
def sole_iid_term(*, rng, n_clients, n_samples, lam, n_draws):
    r"""V3. iid ridge on the sphere (hypotheses of Thm 4.1 met). measured: true gap per K;
    theoretical: the "sole iid term" :math:`\kappa G/K^2`. Expected ``violated``: D_k is not 0
    in iid, the true gap is about G/K, so :math:`\kappa G/K^2` falls below it once
    :math:`K > \kappa` (quick: lambda = 1, kappa = 2; full: lambda = 0.1, kappa = 11). The
    full Thm 4.1 bound still holds (``fedals.thm41.bound``). Tolerance: 4 SE of
    (gap - term), the term's SE by bootstrap; details give the first K where the term drops
    below gap - 4 SE.
    """
    rows = _iid_sweep(rng, n_clients, n_samples, lam, n_draws)
    gap = np.array([r["gap"] for r in rows])
    term = np.array([r["first_term"] for r in rows])
    se = np.hypot([r["gap_se"] for r in rows], [r["first_term_se"] for r in rows])
    below = [r["K"] for r, g, t, e in zip(rows, gap, term, se, strict=True) if t < g - 4 * e]
    return Evidence(measured=gap, theoretical=term, relation="<=",
                    tolerance=Tolerance.mc(se, k=4, what="gap - kappa G/K^2"),
                    details={"kappa": (1 + lam) / lam, "rows": rows,
                             "first_K_term_below_gap": below[0] if below else None})


@claim("fedals.d1.inverse_square_slope", ref="Discussion after Thm 4.1; Sec. 7.2",
       kind="remark", expected="violated",
       statement="In iid, the generalization error after one averaging shrinks like 1/K^2 "
                 "(log-log slope -2 in the number of clients K).",
       quick=D1_QUICK, full=D1_FULL)
def inverse_square_slope(*, rng, n_clients, n_samples, lam, n_draws):
    r"""V3. Slope of log(true gap) on log K for K >= 2, with a 95% parametric bootstrap CI
    (each gap perturbed by its MC SE). measured: slope; theoretical: -2; tolerance: the
    larger half-width of the CI. Closed form (spec 3.9) and pilot give -1, so ``violated``.
    Details also report D/G -> (1 - 1/K)/2 and gap K / G ~ 1.
    """
    rows = _iid_sweep(rng, n_clients, n_samples, lam, n_draws)
    K = np.array([r["K"] for r in rows], dtype=float)
    slope, lo, hi = slope_from_means(K, [r["gap"] for r in rows], rng,
                                 y_se=[r["gap_se"] for r in rows])
    half = max(slope - lo, hi - slope)
    return Evidence(measured=slope, theoretical=-2.0, relation="==",
                    tolerance=Tolerance(half, "bootstrap 95% CI half-width",
                                        "gaps resampled as N(mean, SE^2), 1000 replicates"),
                    details={"slope_ci": [lo, hi], "rows": rows,
                             "D_over_G": [r["D"] / r["G"] for r in rows],
                             "D_over_G_predicted": list(0.5 * (1 - 1 / K))})


@claim("fedals.closed_form.ols_iid", ref="spec 3.9 (derived; not in the paper)",
       kind="remark", expected="holds",
       statement="OLS, iid Gaussian x, one averaging: G = s^2 d[1/(2m)+1/(2n)], D_k = "
                 "(s^2 d/2)[(K-1)/(K^2 m)+(1-1/K)^2/n], gap = s^2 d[1/(2K^2 m)+(2K-1)/(2nK^2)], "
                 "m = n-d-1.",
       quick=dict(n_clients=[1, 2, 4, 8], n_samples=40, n_draws=3000),
       full=dict(n_clients=[1, 2, 4, 8, 16], n_samples=40, n_draws=40000))
def ols_closed_form(*, rng, n_clients, n_samples, n_draws):
    r"""Not a result of the paper: a reference check of the toolkit's Monte Carlo engine
    against closed forms derived for this project (spec 3.9), kept as a ``remark`` because
    it is the exact counterpart of the paper's iid discussion (D1): in closed form the
    averaged gap is about G/K and D_k about (1 - 1/K) G/2, not the "1/K^2, sole term" reading
    (``fedals.d1.*``). It stays a ledger claim rather than a unit test because its
    value is the reported numbers (MC vs formula per K, details) and the issue asks for them;
    the pure formula identities are unit-tested in ``tests/test_fedals_engine.py``.
    The engine's MC estimates of (gap, G, D) against the closed forms, per K, validate the
    estimators and the 1/K scaling (OLS itself is outside Thm 4.1's hypotheses: no strong
    convexity per sample, unbounded smoothness). Tolerance 4 MC SE.
    """
    theta = rng.standard_normal(DIM)
    meas, theo, ses, rows = [], [], [], []
    for K in n_clients:
        model = RidgeModel(np.tile(theta, (K, 1)), 1.0, 0.0, covariates="gaussian")
        w = np.full(K, 1.0 / K)
        dr = one_round_draws(model, w, n_samples, n_draws, rng)
        sq = np.sqrt(n_draws)
        est = [dr.gap.mean(), dr.local_gap.mean(), dr.nonid.mean()]
        se = [dr.gap.std(ddof=1) / sq, dr.local_gap.mean(1).std(ddof=1) / sq,
              dr.nonid.mean(1).std(ddof=1) / sq]
        ref = [ols_averaged_gap(DIM, n_samples, K), ols_local_gap(DIM, n_samples),
               ols_nonidness(DIM, n_samples, K)]
        meas += est
        theo += ref
        ses += se
        rows.append(dict(K=K, gap=est[0], gap_formula=ref[0], G=est[1], G_formula=ref[1],
                         D=est[2], D_formula=ref[2]))
    return Evidence(measured=meas, theoretical=theo, relation="==",
                    tolerance=Tolerance.mc(ses, k=4, what="MC mean vs closed form"),
                    details={"rows": rows})
