r"""The "1/K^2 in iid" reading of Thm 4.1 (discussion after Thm 4.1, reused in Sec. 7.2); the
OLS closed forms of spec 3.9 that explain why it fails are :mod:`verify.fedals.closed_form`.

The paper: the first term :math:`\kappa\mathcal K(k)^2 G_k` "is the sole term in the iid
setting", so the generalization error improves by :math:`1/K^2`. But the non-iidness
:math:`\delta_k = R_{S_k}(\hat\theta) - R_{S_k}(\theta_k)` is measured on samples and is not 0
in iid (the average of K local ERMs is not client k's ERM): :math:`D_k \approx \tfrac12(1 -
1/K)G_k`, and the true gap is :math:`\approx G/K`.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.ledger.engine.runs import reused_run
from flbounds.stats import slope_from_means
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import one_round_draws, summarize_bound
from verify.replay import generator_at, generator_state, shared_generator

from ..instances import DIM
from . import THM41

#: both claims below read one sweep: the draws of ``fedals.d1.sole_iid_term``
#: (:func:`verify.replay.shared_generator`), computed once (``reused_run``)
D1_STREAM = "fedals.d1.sole_iid_term"
_ROW_FIELDS = ("gap", "gap_se", "G", "D", "first_term", "first_term_se", "bound",
               "gap_K_over_G")


def _iid_sweep(rng, n_clients, n_samples, lam, n_draws):
    """One iid cell per K: (rows of numbers, the instances Thm 4.1's hypotheses read), on the
    shared stream ``D1_STREAM`` of ``rng``'s root seed, computed once for both claims."""
    state = generator_state(shared_generator(rng, D1_STREAM))

    def compute():
        g = generator_at(state)
        theta = g.standard_normal(DIM)
        cols = {f: [] for f in _ROW_FIELDS}
        for K in n_clients:
            model = RidgeModel(np.tile(theta, (K, 1)), 1.0, lam)
            w = np.full(K, 1.0 / K)
            dr = one_round_draws(model, w, n_samples, n_draws, g)
            s = summarize_bound(dr, w, model.mu, model.L, g)
            row = dict(gap=s.gap, gap_se=s.gap_se, G=float(s.G.mean()), D=float(s.D.mean()),
                       first_term=s.first_term, first_term_se=s.first_term_se, bound=s.bound,
                       gap_K_over_G=s.gap * K / float(s.G.mean()))
            for f in _ROW_FIELDS:
                cols[f].append(row[f])
        return dict(theta=theta, **{f: np.array(v, dtype=float) for f, v in cols.items()})

    params = dict(n_clients=[int(K) for K in n_clients], n_samples=int(n_samples),
                  lam=float(lam), n_draws=int(n_draws))
    arrays = reused_run(dict(run="d1_iid_sweep", state=state, **params), compute,
                        code=__name__)
    rows = [dict(K=K, **{f: float(arrays[f][i]) for f in _ROW_FIELDS})
            for i, K in enumerate(n_clients)]
    instances = [dict(model=RidgeModel(np.tile(arrays["theta"], (K, 1)), 1.0, lam),
                      w=np.full(K, 1.0 / K), local="erm") for K in n_clients]
    return rows, instances


D1_QUICK = dict(n_clients=[2, 4, 8, 16], n_samples=40, lam=1.0, n_draws=800)
D1_FULL = dict(n_clients=[2, 4, 8, 16, 32, 64], n_samples=40, lam=0.1, n_draws=4000)


@claim("fedals.d1.sole_iid_term", ref="Discussion after Thm 4.1; Sec. 7.2", kind="remark",
       expected="violated", result=THM41, parts=("iid_sole_term",),
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
    rows, instances = _iid_sweep(rng, n_clients, n_samples, lam, n_draws)
    gap = np.array([r["gap"] for r in rows])
    term = np.array([r["first_term"] for r in rows])
    se = np.hypot([r["gap_se"] for r in rows], [r["first_term_se"] for r in rows])
    below = [r["K"] for r, g, t, e in zip(rows, gap, term, se, strict=True) if t < g - 4 * e]
    return Evidence(measured=gap, theoretical=term, relation="<=", instance=instances,
                    tolerance=Tolerance.mc(se, k=4, what="gap - kappa G/K^2"),
                    details={"kappa": (1 + lam) / lam, "rows": rows,
                             "first_K_term_below_gap": below[0] if below else None})


@claim("fedals.d1.inverse_square_slope", ref="Discussion after Thm 4.1; Sec. 7.2",
       kind="remark", expected="violated", result=THM41, parts=("iid_rate",),
       statement="In iid, the generalization error after one averaging shrinks like 1/K^2 "
                 "(log-log slope -2 in the number of clients K).",
       quick=D1_QUICK, full=D1_FULL)
def inverse_square_slope(*, rng, n_clients, n_samples, lam, n_draws):
    r"""V3. Slope of log(true gap) on log K for K >= 2, with a 95% parametric bootstrap CI
    (each gap perturbed by its MC SE; the gaps are those of ``fedals.d1.sole_iid_term``, its
    sweep read once for both, the bootstrap from this claim's generator). measured: slope;
    theoretical: -2; tolerance: the larger half-width of the CI. Closed form (spec 3.9) and
    pilot give -1, so ``violated``. Details also report D/G -> (1 - 1/K)/2 and gap K / G ~ 1.
    """
    rows, instances = _iid_sweep(rng, n_clients, n_samples, lam, n_draws)
    K = np.array([r["K"] for r in rows], dtype=float)
    slope, lo, hi = slope_from_means(K, [r["gap"] for r in rows], rng,
                                 y_se=[r["gap_se"] for r in rows])
    half = max(slope - lo, hi - slope)
    return Evidence(measured=slope, theoretical=-2.0, relation="==", instance=instances,
                    tolerance=Tolerance(half, "bootstrap 95% CI half-width",
                                        "gaps resampled as N(mean, SE^2), 1000 replicates"),
                    details={"slope_ci": [lo, hi], "rows": rows,
                             "D_over_G": [r["D"] / r["G"] for r in rows],
                             "D_over_G_predicted": list(0.5 * (1 - 1 / K))})
