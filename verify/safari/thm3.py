r"""Theorem 3 of SAFARI: the result, its parts and hypotheses, and its claims on the
threshold family (spec V4; setting in :mod:`verify.safari._thresholds`), at beta_P = 1
(realizable labels) and beta_P = 1/2 (Tsybakov noise, :mod:`verify.safari.thm3_tsybakov`).

Statement: under Assumption 1 and (i) R_hat_P(h_hat*_Q) <= R_hat_P(h*_Q) (empirical risks on
the server sample), (ii) eps_P(h*_Q) = O(A(n_T, delta)), for any delta in (0, 1), with
probability >= 1 - delta, eps_P(h_hat*_Q) = O~((d_H/n_T)^{1/(2 - beta_P)}): SA-FL is no worse
than centralized learning on the server data. Instances carry ``flip``, the share of runs
meeting (i), and eps_P(h*_Q) with A(n_T, delta) at delta = 0.05.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.theory.thresholds import lemma1_complexity, pooled_erm_errors

from ._thresholds import (
    CLIENT,
    F_SIZES,
    Q_SIZES,
    SERVER,
    _errors,
    q90_slope_interval,
    theorem_rate_gate,
)
from .instances import mean_and_se

DELTA = 0.05  # the confidence at which condition (ii)'s A(n_T, delta) is read


@hypothesis("i", "(i) R_hat_P(h_hat*_Q) <= R_hat_P(h*_Q) on the server sample (every run)")
def condition_i(*, condition_i_share):
    return float(np.min(condition_i_share)) == 1.0


@hypothesis("ii", "(ii) eps_P(h*_Q) = O(A(n_T, delta)), read with constant 1 at delta = 0.05: "
                  "eps_P(h*_Q) <= A(n_T, delta)")
def condition_ii(*, eps_P_hQ, A):
    return eps_P_hQ <= A


@hypothesis("A1", "Assumption 1 for P (Bernstein): P(h != h*_P) <= alpha_P eps_P(h)^beta_P for "
                  "every threshold, beta_P in (0, 1]; beta_P and the smallest alpha_P are "
                  "computed on the instance (1/(1 - 2 flip) for Massart labels, beta_P = 1)")
def a1_bernstein(*, beta_P, bernstein_alpha):
    return 0.0 < beta_P <= 1.0 and bool(np.isfinite(bernstein_alpha)) and bernstein_alpha > 0


def instances(sizes, *, eps_P_hQ, flip=0.0, condition_i_share=None, beta_P=1.0,
              bernstein_alpha=None) -> list[dict]:
    """One instance per n_T (the complexity A(n_T, 0.05) of Lemma 1, standard form)."""
    out = []
    alpha = 1.0 / (1.0 - 2.0 * flip) if bernstein_alpha is None else bernstein_alpha
    for j, n in enumerate(sizes):
        inst = dict(n_T=int(n), flip=flip, eps_P_hQ=float(eps_P_hQ), beta_P=beta_P,
                    bernstein_alpha=float(alpha), A=float(lemma1_complexity(int(n), DELTA)))
        if condition_i_share is not None:
            inst["condition_i_share"] = condition_i_share[j]
        out.append(inst)
    return out


THM3 = result(
    "safari.thm3", ref="Theorem 3", title="conditions under which SA-FL is no worse than "
    "centralized learning",
    parts={"rate": "eps_P(h_hat*_Q) = O~((d_H/n_T)^{1/(2 - beta_P)}) with probability "
                   ">= 1 - delta: no worse than centralized learning on the server data"},
    hypotheses=(a1_bernstein, condition_i, condition_ii))


def _q90(err, rng, n_boot):
    q = np.quantile(err, 0.9, axis=0)
    boots = np.array([np.quantile(err[rng.integers(0, len(err), len(err))], 0.9, axis=0)
                      for _ in range(n_boot)])
    return q, boots.std(axis=0, ddof=1)


@claim("safari.thm3.no_worse_than_centralized", ref="Thm 3, Lemma 2", kind="statement",
       expected="holds", result=THM3, parts=("rate",),
       statement="Under covariate shift (h*_Q = h*_P, so eps_P(h*_Q) = 0) and condition (i), "
                 "the 90% quantile of eps_P(pooled ERM) is no larger than that of server-only "
                 "ERM, and it falls at least as fast as Theorem 3's rate allows in n_T (log "
                 "factor included).",
       quick=dict(sizes=Q_SIZES, n_reps=100, n_boot=100),
       full=dict(sizes=F_SIZES[:6], n_reps=500, n_boot=300))
def no_worse_than_centralized(*, rng, sizes, n_reps, n_boot):
    """Realizable t* = 0.4 inside supp D, n_S = 10 n_T. Condition (i) R_T(ERM_Q) <= R_T(h*_Q)
    is checked per run (the pooled ERM is consistent, so both are 0); the ledger evaluates it
    and (ii) (eps_P(h*_Q) = 0 here) on each n_T's instance. Measured: q90(pooled) -
    q90(server-only) <= 0 with 4 bootstrap SEs of the difference; the lower end of the 95%
    bootstrap interval of q90(pooled)'s slope against the least steep slope Theorem 3's rate
    allows from the smallest n_T (:func:`verify.safari._thresholds.theorem_rate_gate`,
    beta_P = 1; it replaces the spec's -1/(2 - beta_P) + 0.2 = -0.8)."""
    res_pooled, cond = np.empty((n_reps, len(sizes))), []
    for j, n in enumerate(sizes):
        res = pooled_erm_errors(rng, n_client=10 * n, n_server=n, client_dist=CLIENT,
                                server_dist=SERVER, target=0.4, n_reps=n_reps)
        res_pooled[:, j] = res["eps_p"]
        cond.append(float(np.mean(res["server_risk_erm"] <= res["server_risk_target"])))
    server = _errors(rng, sizes, n_reps, client_ratio=0, target=0.4)
    q_pool, se_pool = _q90(res_pooled, rng, n_boot)
    q_srv, se_srv = _q90(server, rng, n_boot)
    slope, (lo, hi) = q90_slope_interval(res_pooled, sizes, rng, n_boot)
    gate = theorem_rate_gate(float(min(sizes)))
    diff_tol = 4 * np.sqrt(se_pool ** 2 + se_srv ** 2)
    measured = list(q_pool - q_srv) + [lo]
    theoretical = [0.0] * len(sizes) + [gate]
    tol = Tolerance(np.concatenate([diff_tol, [0.0]]),
                    "4 bootstrap SEs (quantiles); slope interval vs the rate gate",
                    "bootstrap of the 90% quantile over seeds; the slope's lower 95% end is "
                    "compared with the least steep slope of Theorem 3's rate")
    return Evidence(measured=measured, theoretical=theoretical, relation="<=", tolerance=tol,
                    details={"q90_pooled": q_pool, "q90_server": q_srv, "slope_q90": slope,
                             "slope_ci95": [lo, hi], "rate_gate": gate,
                             "condition_i_share": cond, "n_T": sizes},
                    instance=instances(sizes, eps_P_hQ=0.0, condition_i_share=cond))


@claim("safari.thm3.negative_control", ref="Thm 3, condition (ii)", kind="remark",
       expected="holds", result=THM3, parts=("rate",),
       outside={"ii": "the negative control: condition (ii) fails on purpose (eps_P(h*_Q) = "
                      "0.1 > A(n_T, delta)), and the rate must then fail"},
       statement="When condition (ii) fails (label shift: clients label by t = 0.5, the server "
                 "by t* = 0.4, so eps_P(h*_Q) = 0.1), pooled ERM keeps a floor while server-only "
                 "ERM does not.",
       quick=dict(sizes=[100, 1000], n_reps=100), full=dict(sizes=[100, 1000, 10000],
                                                            n_reps=500))
def negative_control(*, rng, sizes, n_reps):
    """Clients (density 2.5 n_S on [0.4, 0.5)) outvote the server there, so ERM sits near 0.5
    and eps_P -> 0.1. Measured: mean pooled eps_P >= 0.05 at every n_T, and server-only mean
    <= 0.05; 4 MC SEs."""
    pooled = _errors(rng, sizes, n_reps, client_ratio=10, target=0.4, client_target=0.5)
    server = _errors(rng, sizes, n_reps, client_ratio=0, target=0.4)
    mp, sp = mean_and_se(pooled)
    ms, ss = mean_and_se(server)
    return Evidence(measured=list(mp) + list(-ms), theoretical=[0.05] * len(sizes)
                    + [-0.05] * len(sizes), relation=">=",
                    tolerance=Tolerance.mc(np.concatenate([sp, ss])),
                    details={"pooled_mean": mp, "server_mean": ms, "n_T": sizes},
                    instance=instances(sizes, eps_P_hQ=0.1))


