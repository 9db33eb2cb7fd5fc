r"""Corollary 2 of SAFARI: the result, its hypotheses and its claim.

Statement: if eta_c = Omega(log R / R) and eta_s = Omega(log R / R), SAFARI achieves
O~(1/R) (read, as the proof intends, as eta_bar = Theta(log R / R), spec 7.A). The corollary
inherits Theorem 5's hypotheses (:mod:`verify.safari.thm5`).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.stats import loglog_slope

from .assumptions import a3_smooth, a4_noise, a5_dissimilarity, strong_convexity
from .instances import mean_and_se
from .thm5 import coupling, q_condition, step_condition
from .thm5.anisotropic import X0, anisotropic_problem
from .thm5.runs import (
    _final_errors,
    _homogeneous_problem,
    _thm5_bound,
    _thm5_run,
    run_instance,
)

COR2 = result(
    "safari.cor2", ref="Corollary 2", title="strongly convex rate with tuned steps",
    parts={"rate": "with eta_c, eta_s = Omega(log R / R) (read: eta_bar = Theta(log R / R)), "
                   "E||x_R - x*||^2 = O~(1/R)"},
    hypotheses=(a3_smooth, a4_noise, a5_dissimilarity, strong_convexity, step_condition,
                coupling, q_condition))


def _rate_evidence(rng, rounds, means, ses, bounds, errs_or_none, n_boot, instances, extra,
                   applicable=True):
    """Measured mean errors against Theorem 5's bound at eta_bar = 2 log R / R, R by R; the
    log-log slope and the bound's R/log R-scaled values are reported, not gated."""
    details = {"rounds": rounds, "mean_error": means, "bound": bounds,
               "ratio_mean_over_bound": (np.asarray(means) / np.asarray(bounds)).tolist(),
               "bound_times_R_over_logR": [b * R / np.log(R) for b, R in
                                           zip(bounds, rounds, strict=True)]} | extra
    if errs_or_none is not None:
        fit = asdict(loglog_slope(np.asarray(rounds, float), errs_or_none, rng=rng,
                                  n_boot=n_boot, mean="arithmetic"))
        details["fit"] = fit
        details["slope_ci_contains_minus_1"] = bool(fit["ci_low"] <= -1.0 <= fit["ci_high"])
    return Evidence(measured=means, theoretical=bounds, relation="<=",
                    tolerance=Tolerance.mc(ses), details=details, instance=instances,
                    applicable=applicable,
                    reason="" if applicable else "q-condition failed (linear form)")


@claim("safari.cor2.rate", ref="Cor. 2", kind="statement", expected="holds", result=COR2,
       statement="With eta_bar = 2 log R / R (homogeneous clients, L = mu), E||x_R - x*||^2 is "
                 "at most Theorem 5's bound (1 - eta_bar)^R ||x_0 - x*||^2 + delta_bar = "
                 "O(log R / R) at every R of the grid.",
       quick=dict(rounds=[300, 1000, 3000, 10000], n_seeds=150, n_boot=300),
       full=dict(rounds=[300, 1000, 3000, 10000, 30000, 100000], n_seeds=100, n_boot=1000))
def cor2_rate(*, rng, rounds, n_seeds, n_boot):
    """(1 - eta_bar)^R ~ R^-2 and delta_bar = O(eta) = O(log R / R): the corollary's O~(1/R)
    is Theorem 5's bound at these steps, so the gate is that bound, R by R (4 MC SEs, Holm
    over R); an O~ statement has no finite-R exponent to gate, so the fitted slope (about
    -0.9: -1 + 1/ln R from the log factor) and its bootstrap interval are reported only.
    eta_s follows from eta_bar = 2 eta_s L mu/(L + mu); the ledger checks eta_s <= 2/(L + mu)
    (and the other hypotheses) on each R's instance. The per-round q-condition is not
    recorded by the batched runs (not evaluated). The plans draw only what the runs read
    (:func:`verify.safari.instances.lean_plan`: SAFARI's law, half the Gaussian draws at
    q = 0.5).

    Size and power (full): 100 seeds per R (the spec asks for 50). The tolerance (4.41 SEs,
    Holm over 6 R) is then 8-15% of the bound (200 seeds gave 6-10%, 600 seeds 3-6%), while
    the measured mean sits at 17-35% of it: the bound holds with over four tolerances to
    spare at every R, and an excess of 15% of the bound over it would be rejected."""
    prob = _homogeneous_problem()
    L, mu = prob.L, prob.mu
    errs, instances, bounds = np.empty((n_seeds, len(rounds))), [], []
    for j, R in enumerate(rounds):
        eta_bar = 2 * np.log(R) / R
        eta_s = eta_bar * (L + mu) / (2 * L * mu)
        instances.append(run_instance(prob, sigma_G2=0.0, step_server=float(eta_s),
                                      local_steps=2))
        errs[:, j] = _final_errors(rng.spawn(n_seeds), prob, q=0.5, step_server=eta_s,
                                   n_rounds=R, x0=(0.0, 3.0), eligible=np.arange(6),
                                   n_sampled=2, local_steps=2, lean=True)
        bounds.append(float(_thm5_bound(prob, q=0.5, step_server=eta_s, n_rounds=R,
                                        x0=(0.0, 3.0), n_sampled=2, local_steps=2,
                                        sigma_G2=0.0)))
    stats = [mean_and_se(errs[:, j]) for j in range(len(rounds))]
    return _rate_evidence(rng, rounds, [float(m) for m, _ in stats],
                          [float(s) for _, s in stats], bounds, errs, n_boot, instances, {})


@claim("safari.cor2.rate_anisotropic", ref="Cor. 2", kind="statement", expected="holds",
       result=COR2,
       outside={"q": "the printed closed form is negative at every round with identical clients "
                     "(safari.thm5.printed_closed_form_homogeneous); the proof's linear form is "
                     "required at every round of every seed instead"},
       statement="With eta_bar = 2 log R / R, L = 2 > mu = 1/2, identical clients and noise, "
                 "E||x_R - x*||^2 is at most Theorem 5's bound O(log R / R) at every R.",
       quick=dict(rounds=[1000, 3000, 10000], n_seeds=96),
       full=dict(rounds=[1000, 3000, 10000, 30000], n_seeds=50))
def cor2_rate_anisotropic(*, rng, rounds, n_seeds):
    """The L > mu companion of safari.cor2.rate, on the anisotropic instance of
    :mod:`verify.safari.thm5.anisotropic` (q = 0.5, m = 3 of 6, K = 5): eta_s = eta_bar
    (L + mu)/(2 L mu) and eta_c = 4 L eta_s/(K(L + mu)). R starts at 1000 so that the proof's
    linear q-condition holds at every round (the printed G_3 coefficient is below 2/(L mu)
    for eta_s <= 0.03; R = 1000 gives eta_s = 0.017). Applicability requires the linear form
    on every round of every seed. Gate: Theorem 5's bound per R, 4 MC SEs (Holm). Size and
    power (full): 50 seeds per R; 200 seeds left the bound's margin at 9 to 29 tolerances,
    100 at 7.5 to 18, and 50 (tolerance 8-14% of the bound, means at 9-20% of it) leave
    5.5 to 11 at every R: a mean above the bound by 15% of it would still be rejected."""
    prob = anisotropic_problem(False)
    L, mu = prob.L, prob.mu
    means, ses, bounds, instances, shares = [], [], [], [], []
    for R in rounds:
        eta_bar = 2 * np.log(R) / R
        eta_s = float(eta_bar * (L + mu) / (2 * L * mu))
        errs = []
        for child in rng.spawn(n_seeds):
            err, readings, *_, inst = _thm5_run(
                child, prob, q=0.5, step_server=eta_s, n_rounds=R, x0=X0,
                eligible=np.arange(prob.n_clients), n_sampled=3, local_steps=5, sigma_G2=0.0)
            errs.append(err)
            shares.append(readings["printed_linear"])
            instances.append(inst)
        m_, s_ = mean_and_se(errs)
        means.append(float(m_))
        ses.append(float(s_))
        bounds.append(float(_thm5_bound(prob, q=0.5, step_server=eta_s, n_rounds=R, x0=X0,
                                        n_sampled=3, local_steps=5, sigma_G2=0.0)))
    return _rate_evidence(rng, rounds, means, ses, bounds, None, 0, instances,
                          {"linear_q_condition_share": float(min(shares))},
                          applicable=min(shares) == 1.0)
