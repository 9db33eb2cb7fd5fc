r"""Corollary 1 of SAFARI ([000]): linear speed-up O(1/sqrt(mKR)) with homogeneous clients.

Identical clients f_i = (mu/2)||x - c||^2 with L = mu = 0.1 (so sigma_G = 0 and there is no
participation bias), client noise E||xi||^2 = sigma^2 = 1, server noise sigma_s^2 =
sigma^2/(mK) (Cor. 1's condition), q = 0.5, eta_s = sqrt(mK/R) (the coupling the O(1/sqrt(mKR))
claim needs, spec 7.A.13), eta_c = 2 eta_s / K <= 1/(4 sqrt(30) L K) checked for every run.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from flbounds.algorithms.safari import safari, safari_plan
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.stats import loglog_slope
from verify.safari.closed_forms import ClientQuadratics, thm4_q_max, thm4_rhs

from .instances import mean_and_se

MU, N_CLIENTS, CENTER, Q, SIGMA2 = 0.1, 16, np.array([1.0, -0.5]), 0.5, 1.0


def _problem():
    return ClientQuadratics(np.tile(MU * np.eye(2), (N_CLIENTS, 1, 1)),
                            np.tile(MU * CENTER, (N_CLIENTS, 1)))


def _avg_grad_norm(rng, prob, *, m, K, R):
    """(1/R) sum_{r=1}^R ||grad F(x_r)||^2 of one run, and the per-seed G_1, G_2 (max)."""
    eta_s = np.sqrt(m * K / R)
    eta_c = 2 * eta_s / K
    if eta_c > 1 / (4 * np.sqrt(30) * prob.L * K):
        raise ValueError("step-size condition of Thm 4 fails; increase R")
    plan = safari_plan(rng, n_rounds=R, q=Q, eligible=np.arange(N_CLIENTS), n_sampled=m,
                       local_steps=K, dim=2, client_noise_std=np.sqrt(SIGMA2),
                       server_noise_std=np.sqrt(SIGMA2 / (m * K)))
    tr = safari(prob, plan, step_client=eta_c, step_server=eta_s, x0=np.zeros(2))
    g2 = np.sum((MU * (tr.x - CENTER)) ** 2, axis=1)
    G1 = g2[:-1][~plan.client_round].max() if (~plan.client_round).any() else np.inf
    G2 = tr.local_grad_norm2[plan.client_round].max()
    return float(g2[1:].mean()), float(G1), float(G2), eta_s


def _sweep(rng, configs, n_seeds):
    prob = _problem()
    vals = np.empty((n_seeds, len(configs)))
    for j, (m, K, R) in enumerate(configs):
        for i, child in enumerate(rng.spawn(n_seeds)):
            vals[i, j] = _avg_grad_norm(child, prob, m=m, K=K, R=R)[0]
    return vals


@claim("safari.cor1.linear_speedup", ref="Cor. 1", kind="statement", expected="holds",
       statement="With eta_s = sqrt(mK/R) and sigma_s^2 = sigma^2/(mK), the average squared "
                 "gradient norm is O(1/sqrt(mKR)): log-log slopes -1/2 against mK (fixed R) "
                 "and against R (fixed mK), homogeneous clients.",
       quick=dict(ms=[1, 2, 4, 8, 16], K=4, R_fixed=4096, Rs=[1024, 2048, 4096, 8192, 16384],
                  m_fixed=2, n_seeds=12, n_boot=300),
       full=dict(ms=[1, 2, 4, 8, 16], K=4, R_fixed=32768,
                 Rs=[1024, 4096, 16384, 65536, 262144], m_fixed=2, n_seeds=50, n_boot=1000))
def linear_speedup(*, rng, ms, K, R_fixed, Rs, m_fixed, n_seeds, n_boot):
    """Both the transient 2 Delta F/(R eta_s) and the noise floor ~ eta_s sigma^2/(mK) scale
    as 1/sqrt(mKR) on a quadratic, so both slopes should be -1/2; pass window [-0.6, -0.4]
    (spec V5.a), bootstrap CIs over seeds reported."""
    by_mk = _sweep(rng, [(m, K, R_fixed) for m in ms], n_seeds)
    by_r = _sweep(rng, [(m_fixed, K, R) for R in Rs], n_seeds)
    fit_mk = asdict(loglog_slope(np.array(ms, float) * K, by_mk, rng=rng, n_boot=n_boot,
                                 mean="arithmetic"))
    fit_r = asdict(loglog_slope(np.array(Rs, float), by_r, rng=rng, n_boot=n_boot,
                                mean="arithmetic"))
    return Evidence(measured=[fit_mk["slope"], fit_r["slope"]], theoretical=[(-0.6, -0.4)] * 2,
                    relation="in",
                    tolerance=Tolerance(0.0, "spec V5 window", "exponent -1/2 +- 0.1"),
                    details={"vs_mK": fit_mk, "vs_R": fit_r, "mK": [m * K for m in ms],
                             "R": Rs, "mean_vs_mK": by_mk.mean(0), "mean_vs_R": by_r.mean(0)})


@claim("safari.thm4.homogeneous_bound", ref="Thm 4", kind="statement", expected="holds",
       statement="With identical clients (sigma_G = 0, no participation bias) Theorem 4's bound "
                 "holds, its q-condition being met on every seed.",
       quick=dict(configs=[(1, 4, 4096), (4, 4, 4096), (2, 4, 16384)], n_seeds=12),
       full=dict(configs=[(1, 4, 4096), (4, 4, 4096), (16, 4, 32768), (2, 4, 262144)],
                 n_seeds=50))
def homogeneous_bound(*, rng, configs, n_seeds):
    """sigma_G = 0 makes X = -4 G_2 (1/(2K^2) - 2 L eta_s/K^2) <= 0, so the proof's linear
    q-condition holds for any q; the bound then must hold. Measured: mean over seeds of the
    average squared gradient norm vs the RHS with Delta F = F(0) - F*, 4 SE."""
    prob = _problem()
    delta_f = prob.loss(np.zeros(2)) - prob.loss(prob.x_star)
    measured, rhs, ses, ok = [], [], [], True
    for m, K, R in configs:
        runs = [_avg_grad_norm(child, prob, m=m, K=K, R=R) for child in rng.spawn(n_seeds)]
        avg = [r[0] for r in runs]
        eta_s = runs[0][3]
        q_max, linear = thm4_q_max(np.array([r[1] for r in runs]), np.array([r[2] for r in runs]),
                                   sigma_G2=0.0, local_steps=K, L=prob.L, step_server=eta_s,
                                   printed=False)
        ok &= bool(np.all(linear & (Q <= q_max) | (~linear)))
        m_, s_ = mean_and_se(avg)
        measured.append(float(m_))
        ses.append(float(s_))
        rhs.append(thm4_rhs(delta_f=delta_f, n_rounds=R, step_server=eta_s, q=Q, L=prob.L,
                            sigma2=SIGMA2, sigma_s2=SIGMA2 / (m * K), sigma_G2=0.0,
                            local_steps=K, n_sampled=m))
    return Evidence(measured=measured, theoretical=rhs, relation="<=",
                    tolerance=Tolerance.mc(ses), details={"configs": configs},
                    applicable=ok, reason="" if ok else "q-condition failed on a seed")
