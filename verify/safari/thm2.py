r"""Theorem 2 of SAFARI: the result, its parts and hypotheses, and its claims on
realizable / Massart thresholds (spec V3; setting in :mod:`verify.safari._thresholds`).

Statement: for an SA-FL system under Assumptions 1 and 2, for any delta in (0, 1), with
probability >= 1 - delta, eps_P(h_hat*_Q) = O~((d_H/(n_T + n_S))^{1/(2 - beta_Q)} +
(d_H/(n_T + n_S))^{beta/(2 - beta_Q)}) (Eq. (1)); the O~ hides logs, alpha and alpha_Q.
Instances: one per sweep point (sample sizes, ``flip``, Assumption 2's ``alpha`` computed on
the pooled Q, and the sweep's ``alphas``).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.stats import loglog_slope

from ._thresholds import (
    CLIENT_DENSITY,
    F_SIZES,
    Q_SIZES,
    RATE_CI,
    _errors,
    sweep_instances,
    theorem_rate_gate,
)
from .assumptions import a1_noise_condition, a2_positive_relation
from .instances import mean_and_se


@hypothesis("alpha_constant", "the discussion's premise: alpha constant (Eq. (1)'s O~ hides "
                              "alpha, so rates in n_T + n_S compare at a fixed alpha): alpha "
                              "equal at every point of the sweep (relative 1e-9)")
def alpha_constant(*, alphas):
    alphas = np.asarray(alphas, dtype=float)
    return bool(np.all(np.isfinite(alphas))
                and np.ptp(alphas) <= 1e-9 * float(np.max(np.abs(alphas))))


THM2 = result(
    "safari.thm2", ref="Theorem 2", title="generalization error bound for SA-FL, Eq. (1)",
    parts={"rate": "Eq. (1): eps_P(h_hat*_Q) = O~((d/(n_T + n_S))^{1/(2 - beta_Q)} + "
                   "(d/(n_T + n_S))^{beta/(2 - beta_Q)}) with probability >= 1 - delta",
           "matches_centralized": "discussion: with beta >= 1 the first term dominates and "
                                  "SA-FL matches centralized learning on n_T + n_S samples",
           "beta_below_1": ("discussion: with 0 < beta < 1 the rate improves on server-only "
                            "O~((1/n_T)^{1/(2 - beta_Q)})",
                            "no Tsybakov-noise instance with beta < 1 is built (spec V3.iv "
                            "optional)"),
           "beta_to_0": ("discussion: as beta -> 0 SA-FL may not beat server-only training",
                         "the motivation of Theorem 3, whose claims check the conditions")},
    hypotheses=(a1_noise_condition, a2_positive_relation,
                alpha_constant.only("matches_centralized")))

@claim("safari.thm2.pooled_rate", ref="Thm 2, Eq. (1)", kind="statement", expected="holds",
       result=THM2, parts=("rate",),
       statement="With the boundary inside supp D (t* = 0.4), pooled ERM has eps_P = "
                 "O~(1/(n_T + n_S)) (beta = beta_Q = 1): at fixed n_T = 10, log-log slope -1 "
                 "against the effective size n_T + 2.5 n_S as n_S grows, realizable and Massart "
                 "(flip 0.1) labels (server-only ERM would give slope 0 here), and the pooled "
                 "mean error never exceeds server-only ERM's at the same n_T.",
       quick=dict(sizes=Q_SIZES, fixed_server=10, n_reps=100, n_boot=200),
       full=dict(sizes=F_SIZES[:6], fixed_server=10, n_reps=500, n_boot=1000))
def pooled_rate(*, rng, sizes, fixed_server, n_reps, n_boot):
    """n_T is held fixed and only n_S varies, so a pooled rate and a server-only rate give
    different slopes (-1 vs 0); a sweep with n_S proportional to n_T could not tell them apart.
    Near t* = 0.4 the pooled density is n_T + 2.5 n_S (D = U[0.2, 0.6] has density 2.5), and
    threshold ERM errs by O(1/density) (beta = 1 for realizable and Massart noise), so the
    expected slope against n_T + 2.5 n_S is -1. Gate from the theorem (:func:`theorem_rate_gate`
    at the sweep's smallest effective size, beta_Q = 1): the lower end of each slope's 95%
    bootstrap interval must not exceed it (the spec's window [-1.2, -0.8] is reported, not
    gated). Level gate against the server-only curve: at every n_S the pooled mean error must
    not exceed the server-only mean error at the same n_T, tolerance 4 MC SEs of the
    difference (independent samples)."""
    eff = np.array([fixed_server + CLIENT_DENSITY * n for n in sizes], dtype=float)
    fits, levels, diffs, diff_se, instances = {}, {}, [], [], []
    for name, flip in (("realizable", 0.0), ("massart", 0.1)):
        err = _errors(rng, sizes, n_reps, client_ratio=1, fixed_server=fixed_server,
                      target=0.4, flip=flip)
        instances += sweep_instances(sizes, target=0.4, flip=flip, client_ratio=1,
                                     fixed_server=fixed_server)
        fits[name] = asdict(loglog_slope(eff, err, rng=rng, n_boot=n_boot, mean="arithmetic"))
        server = _errors(rng, [fixed_server], n_reps, client_ratio=0, target=0.4, flip=flip)
        mp, sp = mean_and_se(err)
        ms, ss = mean_and_se(server)
        diffs.extend(mp - ms)
        diff_se.extend(np.sqrt(sp ** 2 + ss ** 2))
        levels[name] = {"pooled_mean": mp, "server_only_mean": float(ms[0])}
    lows = [fits["realizable"]["ci_low"], fits["massart"]["ci_low"]]
    gate = theorem_rate_gate(float(eff.min()))
    tol = Tolerance(np.concatenate([[0.0, 0.0], 4 * np.asarray(diff_se)]),
                    "slope CI against the theorem's gate; 4 MC SEs on level differences",
                    "slopes: lower end of the 95% bootstrap interval <= the rate's least steep "
                    "slope; levels: 4 sqrt(se_pooled^2 + se_server^2)")
    return Evidence(measured=lows + diffs, theoretical=[gate] * 2 + [0.0] * len(diffs),
                    relation="<=", tolerance=tol,
                    details={"fits": fits, "levels": levels, "n_T": fixed_server,
                             "n_S": sizes, "effective_size": eff, "rate_gate": gate,
                             "in_spec_window": [bool(-1.2 <= f["slope"] <= -0.8)
                                                for f in fits.values()]},
                    instance=instances)


@claim("safari.thm2.rate_when_boundary_missed", ref="Thm 2", kind="remark",
       expected="holds", result=THM2, parts=("rate",),
       statement="With t* = 0.8 outside supp D, pooled ERM improves at rate 1/n_T in the server "
                 "sample (slope -1) and not at all in the client sample (slope ~0).",
       quick=dict(sizes=Q_SIZES, fixed=1000, n_reps=100, n_boot=200),
       full=dict(sizes=F_SIZES[:6], fixed=3000, n_reps=500, n_boot=1000))
def rate_when_boundary_missed(*, rng, sizes, fixed, n_reps, n_boot):
    """Only server points fall near 0.8, so eps_P ~ 1/n_T: the slope's bootstrap interval must
    reach the rate gate of Theorem 2 (:func:`theorem_rate_gate`, server sample); and the slope
    against n_S at fixed n_T is exactly 0 in expectation (the client points all lie left of
    0.6 and carry label 0, so they never move the ERM): its 95% interval must contain 0.
    Measured: [lower end (n_T), lower end (n_S), minus upper end (n_S)] against
    [gate, 0, 0]. The spec's windows ([-1.2, -0.8], [-0.1, 0.1]) are reported, not gated."""
    x = np.asarray(sizes, dtype=float)
    err_t = _errors(rng, sizes, n_reps, client_ratio=0, fixed_client=fixed, target=0.8)
    err_s = _errors(rng, sizes, n_reps, client_ratio=1, fixed_server=fixed // 10, target=0.8)
    fit_t = asdict(loglog_slope(x, err_t, rng=rng, n_boot=n_boot, mean="arithmetic"))
    fit_s = asdict(loglog_slope(x, err_s, rng=rng, n_boot=n_boot, mean="arithmetic"))
    gate = theorem_rate_gate(float(x.min()))
    return Evidence(measured=[fit_t["ci_low"], fit_s["ci_low"], -fit_s["ci_high"]],
                    theoretical=[gate, 0.0, 0.0], relation="<=", tolerance=RATE_CI,
                    details={"vs_n_T": fit_t, "vs_n_S": fit_s, "rate_gate": gate,
                             "fixed_n_S": fixed, "fixed_n_T": fixed // 10},
                    instance=sweep_instances(sizes, target=0.8, client_ratio=0,
                                             fixed_client=fixed)
                    + sweep_instances(sizes, target=0.8, client_ratio=1,
                                      fixed_server=fixed // 10))


@claim("safari.thm2.gain_matches_centralized", ref="Thm 2 (discussion after Eq. (1))",
       kind="remark", expected="not-applicable", result=THM2, parts=("matches_centralized",),
       statement="With beta >= 1 SA-FL matches centralized learning on n_T + n_S samples, read "
                 "as: at fixed n_T, eps_P falls like 1/n_S (slope -1 in n_S). This reading lets "
                 "alpha = n_S/n_T grow without bound (t* = 0.8 outside supp D), outside the "
                 "discussion's implicit 'alpha constant' premise.",
       quick=dict(sizes=Q_SIZES, fixed_server=100, n_reps=100, n_boot=200),
       full=dict(sizes=F_SIZES[:6], fixed_server=300, n_reps=500, n_boot=1000))
def gain_matches_centralized(*, rng, sizes, fixed_server, n_reps, n_boot):
    """Instance t* = 0.8, D = U[0.2, 0.6], P = U[0, 1], realizable: Assumption 1 holds with
    beta_Q = 1, alpha_Q = 1, and Assumption 2 holds with beta = 1 but alpha = 1/l2 - 1 =
    n_S/n_T (see safari.assumption2.mixture_alpha). The O~ of Eq. (1) hides that alpha, so
    Theorem 2 itself is not contradicted.

    Expected `not-applicable` (it was `violated` before the hypotheses became predicates):
    the discussion's premise 'alpha constant' is now a hypothesis of this part
    (``alpha_constant``), evaluated on the sweep's instances, and it is false there: alpha =
    n_S/n_T runs from 0.1 to 10 (quick) as n_S grows at fixed n_T (reported per point as
    alpha_needed). The earlier argument for `violated` -- the remark says something beyond
    the server-only rate only when n_S/n_T varies, and alpha constant while n_S grows fails
    for every D whose support misses part of supp P, the paper's own setting (spec 7.A.9) --
    is a reading of the remark's intent; the ledger accuses only on instances meeting the
    printed premise, and with alpha constant (safari.thm2.gain_constant_ratio) the remark's
    rate holds, the constant (1 + alpha) absorbing the gain. The finding stays in the
    numbers: the slope in n_S at fixed n_T is ~0, its whole interval above the rate gate
    (:func:`theorem_rate_gate`; the spec's window [-1.2, -0.8] is reported)."""
    x = np.asarray(sizes, dtype=float)
    err = _errors(rng, sizes, n_reps, client_ratio=1, fixed_server=fixed_server, target=0.8)
    fit = asdict(loglog_slope(x, err, rng=rng, n_boot=n_boot, mean="arithmetic"))
    return Evidence(measured=fit["ci_low"], theoretical=theorem_rate_gate(float(x.min())),
                    relation="<=", tolerance=RATE_CI,
                    details={"fit": fit, "n_T": fixed_server,
                             "alpha_needed": [n / fixed_server for n in sizes]},
                    instance=sweep_instances(sizes, target=0.8, client_ratio=1,
                                             fixed_server=fixed_server))


@claim("safari.thm2.gain_constant_ratio", ref="Thm 2 (discussion after Eq. (1))",
       kind="remark", expected="holds", result=THM2, parts=("matches_centralized",),
       statement="Under the discussion's premise of a constant alpha (n_S = 10 n_T, so alpha = "
                 "10 with t* = 0.8 outside supp D), eps_P falls with slope -1 in n_T + n_S, as "
                 "the remark says (the constant 1 + alpha is reported, not gated).",
       quick=dict(sizes=Q_SIZES, ratio=10, n_reps=100, n_boot=200),
       full=dict(sizes=F_SIZES[:6], ratio=10, n_reps=500, n_boot=1000))
def gain_constant_ratio(*, rng, sizes, ratio, n_reps, n_boot):
    """With n_S = 10 n_T the client points (all left of 0.6, label 0) barely move the ERM near
    0.8, so pooled ERM errs ~1/n_T = 11/(n_T + n_S): slope -1 in n_T + n_S, the lower end of
    its 95% interval against the rate gate (:func:`theorem_rate_gate` at the smallest
    n_T + n_S; the spec's window [-1.2, -0.8] is reported), so the remark's rate is not
    contradicted when alpha is constant.
    Details show what the O~ hides: the pooled mean error is close to server-only ERM on n_T
    samples (ratio 0.91 / 0.96 at n_T = 10 / 100 with 3000 runs, 0.8-1.2 in quick: clients
    only pin the left end of the gap) and ~8-12 ~ (1 + alpha) times
    that of centralized ERM on n_T + n_S samples from P; see
    safari.thm2.gain_matches_centralized for the regime where alpha grows."""
    total = np.array([(1 + ratio) * n for n in sizes], dtype=float)
    pooled = _errors(rng, sizes, n_reps, client_ratio=ratio, target=0.8)
    server = _errors(rng, sizes, n_reps, client_ratio=0, target=0.8)
    central = _errors(rng, [int(t) for t in total], n_reps, client_ratio=0, target=0.8)
    fit = asdict(loglog_slope(total, pooled, rng=rng, n_boot=n_boot, mean="arithmetic"))
    mp, ms, mc = pooled.mean(axis=0), server.mean(axis=0), central.mean(axis=0)
    return Evidence(measured=fit["ci_low"], theoretical=theorem_rate_gate(float(total.min())),
                    relation="<=", tolerance=RATE_CI,
                    details={"fit": fit, "pooled_mean": mp, "server_only_mean": ms,
                             "centralized_mean": mc, "pooled_over_server_only": mp / ms,
                             "pooled_over_centralized": mp / mc, "n_T": sizes, "alpha": ratio},
                    instance=sweep_instances(sizes, target=0.8, client_ratio=ratio))


