r"""Theorem B.1 of FedALS (App. B, eq. (37)): one round of FedAvg after tau local
mini-batch SGD steps, the result, its parts, its hypotheses and its claims.

Statement: let :math:`l` be mu-strongly convex and L-smooth, the local models computed by
multiple local steps (5) on :math:`S_k` and :math:`\hat\theta = E_{k\sim\mathcal K}\theta_k`.
Then, with :math:`\epsilon_k` the local optimization error,

.. math::
    E\Delta_{\mathcal A}(S) \le E_{k\sim\mathcal K}\Big[\frac{2L\mathcal K(k)^2}{\mu}
    E(\Delta_{\mathcal A_k} + 2\epsilon_k) + \sqrt{\frac{8L}\mu}\mathcal K(k)
    \sqrt{E(\delta_k + \epsilon_k)\,E(\Delta_{\mathcal A_k} + 2\epsilon_k)}\Big].

The bound is evaluated by ``summarize_bound(..., kind="thmB1")`` (the library's one
implementation). Ridge on the sphere; instances carry ``model``, ``w``, ``local`` and
``local_steps``. The three claims read one set of Monte Carlo cells (the same draws, computed
once: ``shared_b1_runs``).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result

from ._local_sgd import B1_FULL, B1_QUICK, b1_instances, shared_b1_runs
from ._predicates import convex_smooth, local_sgd, one_round
from .instances import K_FAMILY

THMB1 = result(
    "fedals.thmB1", ref="Theorem B.1",
    title="local SGD generalization bound, eq. (37), proof eqs. (38)-(50)",
    parts={"bound": "(37): E Delta <= E_{k~K}[(2L K(k)^2/mu) E(Delta_k + 2 eps_k) + sqrt(8L/mu) "
                    "K(k) sqrt(E(delta_k + eps_k) E(Delta_k + 2 eps_k))]",
           "proof": "(38)-(50): E||v||^2 <= (4K(k)^2/mu) E(Delta_k + 2 eps_k) (45), "
                    "||g||^2 <= 2L (excess) per draw (47)-(49), E excess = E(delta_k + eps_k) "
                    "(50), smoothness (16)",
           "tau": "Sec. 4.2 and 5: more local steps lower the bound (through eps_k)"},
    hypotheses=(convex_smooth, local_sgd, one_round))


@claim("fedals.thmB1.bound", ref="Thm B.1, eq. (37)", kind="statement", expected="holds",
       result=THMB1, parts=("bound",),
       statement="With tau local mini-batch SGD steps instead of ERM: E Delta <= sum_k K(k)"
                 "[(2L K(k)^2/mu) E(Delta_k + 2 eps_k) + sqrt(8L/mu) K(k) "
                 "sqrt(E(delta_k + eps_k) E(Delta_k + 2 eps_k))].",
       quick=B1_QUICK, full=B1_FULL)
def thmB1_bound(*, rng, **params):
    r"""V5: K = 4 clients, b = 8, eta = 0.5, from 0, n = 40, zeta in {0, 1}. The constants
    2L/mu and sqrt(8L/mu) were re-derived (spec 3) and the proof is valid, so ``holds`` is
    expected. eps_k uses the closed-form local ERM. Tolerance: 4 SE of (gap - bound).
    """
    runs = shared_b1_runs(rng, **params)
    gaps = [r["summary"].gap for r in runs]
    bounds = [r["summary"].bound for r in runs]
    ses = [np.hypot(r["summary"].gap_se, r["summary"].bound_se) for r in runs]
    rows = [dict(zeta=r["zeta"], tau=r["tau"], gap=r["summary"].gap, bound=r["summary"].bound,
                 G=float(r["draws"].local_gap.mean()), eps=float(r["draws"].opt_error.mean()),
                 D=float(r["draws"].nonid.mean())) for r in runs]
    return Evidence(measured=gaps, theoretical=bounds, relation="<=",
                    instance=b1_instances(runs),
                    tolerance=Tolerance.mc(ses, k=4, what="gap - bound"), details={"rows": rows})


@claim("fedals.thmB1.proof_steps", ref="App. B, eqs. (38)-(50)", kind="proof-step",
       expected="holds", result=THMB1, parts=("proof",),
       statement="E||v||^2 <= (4K(k)^2/mu) E(Delta_k + 2 eps_k) (45); ||g||^2 <= 2L(R_S'k(A(S^(k)))"
                 " - min R_S'k) per draw (47)-(49), whose mean is E(delta_k + eps_k) (50); "
                 "smoothness step (16) per draw.",
       quick=B1_QUICK, full=B1_FULL)
def thmB1_proof_steps(*, rng, **params):
    r"""Intermediate steps of Thm B.1 in every (zeta, tau) cell. Per-draw inequalities: rounding
    tolerance 1e-10 x scale; expectation steps: ``K_FAMILY`` = 5 MC SE of the per-draw
    difference (a family of 4 checks per cell, skewed summands; see ``instances``)."""
    measured, tol, names = [], [], []
    runs = shared_b1_runs(rng, **params)
    for r in runs:
        dr, w, model = r["draws"], r["w"], r["model"]
        tag = f"zeta={r['zeta']},tau={r['tau']}"
        scale = 1.0 + float(np.max(dr.excess_copy) + np.max(dr.g_sq) + np.max(np.abs(dr.loo)))
        diff = dr.v_sq - 4 * w ** 2 * (dr.local_gap + 2 * dr.opt_error) / model.mu
        m, se = diff.mean(0), diff.std(0, ddof=1) / np.sqrt(len(diff))
        # the client with the largest m/se: some client has m > K_FAMILY se iff this one does
        i = int(np.argmax(m / np.maximum(se, 1e-300)))
        measured += [m[i], -dr.pl_slack.min(), -dr.smooth_slack.min()]
        tol += [K_FAMILY * se[i], 1e-10 * scale, 1e-10 * scale]
        ex = dr.excess_copy - dr.nonid - dr.opt_error
        m, se = ex.mean(0), ex.std(0, ddof=1) / np.sqrt(len(ex))
        i = int(np.argmax(np.abs(m) / np.maximum(se, 1e-300)))
        measured.append(abs(m[i]))
        tol.append(K_FAMILY * se[i])
        names += [f"(45) [{tag}]", f"(47)-(49) per draw [{tag}]", f"(16) per draw [{tag}]",
                  f"(50) |E excess - E(delta+eps)| [{tag}]"]
    return Evidence(measured=measured, theoretical=np.zeros(len(measured)), relation="<=",
                    instance=b1_instances(runs),
                    tolerance=Tolerance(np.array(tol), "5 MC SE (family) / rounding",
                                        "K_FAMILY std/sqrt(T) for means; 1e-10 x scale per draw"),
                    details={"checks": names})


@claim("fedals.thmB1.bound_vs_gap_in_tau", ref="Thm B.1; Sec. 4.2 and 5 (more local steps)",
       kind="remark", expected="holds", result=THMB1, parts=("tau",),
       statement="At fixed n the Thm B.1 bound falls with tau (only because eps falls) while "
                 "the true one-round gap rises with tau (more fitting of S_k).",
       quick=B1_QUICK, full=B1_FULL)
def bound_vs_gap_in_tau(*, rng, **params):
    r"""V5 observation for tau in {1, 5, 20} (the same datasets S, S' for every tau, see
    ``_b1_runs``: differences are paired in the data, not in the batch plans). measured <= 0
    element-wise:
    - successive bound increments (tolerance +4 bootstrap SE: noise must not fake a rise),
    - gap(tau=1) - gap(tau=20) per zeta, with tolerance -4 SE of the paired difference: the
      rise of the true gap must be significant.
    The pilot (spec 8) and this engine both show it; ``holds`` is expected. tau = 100 (full
    profile) is reported only: there the bound flattens at the SGD noise floor.
    """
    runs = shared_b1_runs(rng, **params)
    measured, tol, rows = [], [], []
    for z in params["zeta"]:
        sel = [r for r in runs if r["zeta"] == z and r["tau"] <= 20]
        for a, b in zip(sel[:-1], sel[1:], strict=True):
            measured.append(b["summary"].bound - a["summary"].bound)
            tol.append(4 * np.hypot(a["summary"].bound_se, b["summary"].bound_se))
        diff = sel[0]["draws"].gap - sel[-1]["draws"].gap
        measured.append(diff.mean())
        tol.append(-4 * diff.std(ddof=1) / np.sqrt(len(diff)))
        rows += [dict(zeta=z, tau=r["tau"], bound=r["summary"].bound, gap=r["summary"].gap,
                      gap_se=r["summary"].gap_se) for r in runs if r["zeta"] == z]
    return Evidence(measured=measured, theoretical=np.zeros(len(measured)), relation="<=",
                    instance=b1_instances(runs),
                    tolerance=Tolerance(np.array(tol), "+4 SE (bound) / -4 SE (gap rise)",
                                        "bootstrap SE of bound increments; paired MC SE of "
                                        "gap differences, required significant"),
                    details={"rows": rows})
