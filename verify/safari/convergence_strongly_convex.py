r"""Theorem 5 / Corollary 2 of SAFARI ([000]) and the local-drift lemma used by Theorem 4.

Theorem 5's q-condition involves G_3 = ||grad F(x_r)||^2 and G_4 = (1/m) sum_{i in S_r}
[F_i(x_r) - F_i(x*)], so it must hold at every round; it is evaluated round by round from the
trajectory, as printed and with the corrected constants (spec 7.A.15), each both as the
printed closed form q <= 1/(1 + N/D) and as the proof's linear form q N <= (1 - q) D. The
theorem is applicable to a run when one of these four readings holds at every round.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.stats import loglog_slope
from verify.safari.closed_forms import (
    ClientQuadratics,
    drift_bound,
    exact_drift,
    thm5_delta_bar,
    thm5_q_condition,
)

from .instances import (
    ELIGIBLE,
    LOCAL_STEPS,
    N_SAMPLED,
    SIGMA,
    SIGMA_S,
    mean_and_se,
    run_seed,
    run_seeds_batched,
    two_group_problem,
)


def _thm5_run(rng, prob, *, q, step_server, n_rounds, x0, eligible, n_sampled, local_steps):
    L, mu = prob.L, prob.mu
    eta_c = 4 * L * step_server / (local_steps * (L + mu))
    eta_bar = eta_c * local_steps * mu / 2
    plan, tr = run_seed(rng, prob, n_rounds=n_rounds, q=q, step_server=step_server,
                        step_client=eta_c, x0=x0, eligible=eligible, n_sampled=n_sampled,
                        local_steps=local_steps)
    xs = tr.x[:-1]
    G3 = np.sum((xs @ prob.A.mean(0).T - prob.b.mean(0)) ** 2, axis=1)
    f_star = prob.client_losses(np.tile(prob.x_star, (prob.n_clients, 1)))
    G4 = np.zeros(n_rounds)
    for c in range(plan.clients.shape[1]):
        idx = plan.clients[:, c]
        G4 += prob.client_losses(xs, clients=idx) - f_star[idx]
    G4 /= plan.clients.shape[1]
    readings = {}
    for corrected in (False, True):
        closed, linear = thm5_q_condition(G3, G4, q=q, eta_bar=eta_bar, L=L, mu=mu,
                                          corrected=corrected)
        tag = "corrected" if corrected else "printed"
        readings[f"{tag}_closed"] = float(closed.mean())
        readings[f"{tag}_linear"] = float(linear.mean())
    err = float(np.sum((tr.x[-1] - prob.x_star) ** 2))
    return err, readings, eta_c, eta_bar


def _final_errors(rngs, prob, *, q, step_server, n_rounds, x0, eligible, n_sampled,
                  local_steps):
    """||x_R - x*||^2 per generator: ``_thm5_run(...)[0]`` for each, bit for bit, with all
    seeds in batched SAFARI calls (and without the per-round q-condition readings)."""
    L, mu = prob.L, prob.mu
    eta_c = 4 * L * step_server / (local_steps * (L + mu))
    errs = []
    for _, tr in run_seeds_batched(rngs, prob, step_server=step_server, step_client=eta_c,
                                   x0=x0, n_rounds=n_rounds, q=q, eligible=eligible,
                                   n_sampled=n_sampled, local_steps=local_steps, dim=prob.dim,
                                   client_noise_std=SIGMA, server_noise_std=SIGMA_S):
        errs.extend(float(np.sum((x[-1] - prob.x_star) ** 2)) for x in tr.x)
    return errs


def _thm5_bound(prob, *, q, eta_c, eta_bar, step_server, n_rounds, x0, n_sampled, local_steps,
                sigma_G2):
    db = thm5_delta_bar(q=q, step_client=eta_c, step_server=step_server,
                        local_steps=local_steps, n_sampled=n_sampled, L=prob.L, mu=prob.mu,
                        sigma2=SIGMA ** 2, sigma_s2=SIGMA_S ** 2, sigma_G2=sigma_G2)
    return (1 - eta_bar) ** n_rounds * float(np.sum((np.asarray(x0) - prob.x_star) ** 2)) + db


@claim("safari.thm5.q_condition_heterogeneous", ref="Thm 5", kind="statement",
       expected="not-applicable",
       statement="Under biased participation (two-group instance, x_0 = (0, 3)), "
                 "E||x_R - x*||^2 <= (1 - eta_bar)^R ||x_0 - x*||^2 + delta_bar provided the "
                 "per-round q-condition holds.",
       quick=dict(qs=[0.8, 0.2], step_server=0.01, n_rounds=4000, n_seeds=3),
       full=dict(qs=[0.8, 0.2], step_server=0.01, n_rounds=40000, n_seeds=10))
def q_condition_heterogeneous(*, rng, qs, step_server, n_rounds, n_seeds):
    """After the transient, x_r sits near the biased point where participants' F_i(x_r) <
    F_i(x*), so G_4 < 0 and the condition fails at almost every round under every reading
    (spec 7.B: holds on <= 0.3% of rounds). The theorem is therefore not applicable -- not
    violated -- although the final error (0.80 at q = 0.8) exceeds delta_bar (0.38): for fixed
    q > 0 the floor does not vanish with eta. Measured: mean final error vs the bound (4 SE);
    the fraction of rounds per reading is in details."""
    prob = two_group_problem()
    x0 = (0.0, 3.0)
    measured, bounds, ses, shares, applicable = [], [], [], {}, True
    for q in qs:
        errs, reads = [], []
        for child in rng.spawn(n_seeds):
            err, readings, eta_c, eta_bar = _thm5_run(
                child, prob, q=q, step_server=step_server, n_rounds=n_rounds, x0=x0,
                eligible=ELIGIBLE, n_sampled=N_SAMPLED, local_steps=LOCAL_STEPS)
            errs.append(err)
            reads.append(readings)
        share = {k: float(np.mean([r[k] for r in reads])) for k in reads[0]}
        applicable &= max(share.values()) == 1.0
        m_, s_ = mean_and_se(errs)
        measured.append(float(m_))
        ses.append(float(s_))
        bounds.append(_thm5_bound(prob, q=q, eta_c=eta_c, eta_bar=eta_bar,
                                  step_server=step_server, n_rounds=n_rounds, x0=x0,
                                  n_sampled=N_SAMPLED, local_steps=LOCAL_STEPS, sigma_G2=2.25))
        shares[f"q={q}"] = share
    return Evidence(measured=measured, theoretical=bounds, relation="<=",
                    tolerance=Tolerance.mc(ses), details={"share_of_rounds": shares},
                    applicable=applicable,
                    reason="" if applicable else "the per-round q-condition fails on some rounds "
                    "under every reading (printed/corrected, closed/linear form)")


def _homogeneous_problem(dim=2):
    return ClientQuadratics.isotropic(np.tile(np.array([[1.0, -0.5]]), (6, 1))[:, :dim])


@claim("safari.thm5.homogeneous_bound", ref="Thm 5", kind="statement", expected="holds",
       statement="With identical clients (sigma_G = 0) the per-round q-condition holds (proof's "
                 "linear form) and E||x_R - x*||^2 <= (1 - eta_bar)^R ||x_0 - x*||^2 + delta_bar.",
       quick=dict(q=0.5, step_server=0.01, rounds=[200, 1000, 4000], n_seeds=40),
       full=dict(q=0.5, step_server=0.01, rounds=[200, 1000, 4000, 20000], n_seeds=400))
def homogeneous_bound(*, rng, q, step_server, rounds, n_seeds):
    """Here G_4 = G_3/2 (isotropic, identical clients), so N < 0 < D and the linear form holds
    for every q at every round; the printed closed form 1/(1 + N/D) is negative because
    1 + N/D < 0 -- it holds on 0% of rounds, recorded as its own finding in
    safari.thm5.printed_closed_form_homogeneous. Applicability here therefore uses the proof's
    linear form, which is what the proof needs. Measured: mean final error over seeds vs the
    bound, 4 SE."""
    prob = _homogeneous_problem()
    x0 = (0.0, 3.0)
    measured, bounds, ses, shares = [], [], [], []
    for R in rounds:
        errs, lin = [], []
        for child in rng.spawn(n_seeds):
            err, readings, eta_c, eta_bar = _thm5_run(
                child, prob, q=q, step_server=step_server, n_rounds=R, x0=x0,
                eligible=np.arange(6), n_sampled=3, local_steps=LOCAL_STEPS)
            errs.append(err)
            lin.append(readings)
        m_, s_ = mean_and_se(errs)
        measured.append(float(m_))
        ses.append(float(s_))
        bounds.append(_thm5_bound(prob, q=q, eta_c=eta_c, eta_bar=eta_bar,
                                  step_server=step_server, n_rounds=R, x0=x0, n_sampled=3,
                                  local_steps=LOCAL_STEPS, sigma_G2=0.0))
        shares.append({k: float(np.mean([r[k] for r in lin])) for k in lin[0]})
    applicable = min(s["printed_linear"] for s in shares) == 1.0
    return Evidence(measured=measured, theoretical=bounds, relation="<=",
                    tolerance=Tolerance.mc(ses), details={"rounds": rounds,
                                                          "share_of_rounds": shares},
                    applicable=applicable, reason="" if applicable else "q-condition failed")


@claim("safari.thm5.printed_closed_form_homogeneous", ref="Thm 5 (q-condition)",
       kind="proof-step", expected="violated",
       statement="The printed closed-form q-condition q <= 1/(1 + N/D) is equivalent to the "
                 "proof's linear condition q N <= (1 - q) D: on the homogeneous instance (where "
                 "the linear form holds at every round) it holds at every round too.",
       quick=dict(q=0.5, step_server=0.01, n_rounds=1000, n_seeds=4),
       full=dict(q=0.5, step_server=0.01, n_rounds=4000, n_seeds=40))
def printed_closed_form_homogeneous(*, rng, q, step_server, n_rounds, n_seeds):
    """From q N <= (1 - q) D with D > 0 one gets q (N + D) <= D, and dividing by N + D gives
    q <= 1/(1 + N/D) only when N + D > 0. With identical isotropic clients G_4 = G_3/2, so
    N < 0 and N + D < 0 at every round: the linear form holds for every q in [0, 1], the
    printed closed form is negative and admits no q. Theorem 5 as printed is thus vacuous on
    the very instance its linear-form proof covers (the bound itself holds there:
    safari.thm5.homogeneous_bound). Measured: share of rounds (over seeds) where the printed
    closed form holds vs where the proof's linear form holds (both exact counts): 0 vs 1,
    violated. The corrected constants (spec 7.A.15) give the same picture (details)."""
    prob = _homogeneous_problem()
    reads = []
    for child in rng.spawn(n_seeds):
        reads.append(_thm5_run(child, prob, q=q, step_server=step_server, n_rounds=n_rounds,
                               x0=(0.0, 3.0), eligible=np.arange(6), n_sampled=3,
                               local_steps=LOCAL_STEPS)[1])
    share = {k: float(np.mean([r[k] for r in reads])) for k in reads[0]}
    return Evidence(measured=share["printed_closed"], theoretical=share["printed_linear"],
                    relation="==", tolerance=Tolerance.exact("shares of rounds are counts"),
                    details={"share_of_rounds": share, "q": q, "n_rounds": n_rounds})


@claim("safari.cor2.rate", ref="Cor. 2", kind="statement", expected="holds",
       statement="With eta_bar = 2 log R / R (homogeneous clients), E||x_R - x*||^2 = "
                 "O~(1/R): log-log slope in R within [-1.15, -0.8].",
       quick=dict(rounds=[300, 1000, 3000, 10000], n_seeds=150, n_boot=300),
       full=dict(rounds=[300, 1000, 3000, 10000, 30000, 100000], n_seeds=600, n_boot=1000))
def cor2_rate(*, rng, rounds, n_seeds, n_boot):
    """(1 - eta_bar)^R ~ R^-2 and delta_bar = O(eta) = O(log R / R), so the slope is -1 up to
    the log factor (spec V6.a window [-1.15, -0.8]); the CI resamples seeds. eta_s follows
    from eta_bar = 2 eta_s L mu/(L + mu) and must satisfy eta_s <= 2/(L + mu)."""
    prob = _homogeneous_problem()
    L, mu = prob.L, prob.mu
    errs = np.empty((n_seeds, len(rounds)))
    for j, R in enumerate(rounds):
        eta_bar = 2 * np.log(R) / R
        eta_s = eta_bar * (L + mu) / (2 * L * mu)
        if eta_s > 2 / (L + mu):
            raise ValueError("step condition eta_s <= 2/(L + mu) fails")
        errs[:, j] = _final_errors(rng.spawn(n_seeds), prob, q=0.5, step_server=eta_s,
                                   n_rounds=R, x0=(0.0, 3.0), eligible=np.arange(6),
                                   n_sampled=2, local_steps=2)
    fit = asdict(loglog_slope(np.asarray(rounds, float), errs, rng=rng, n_boot=n_boot,
                              mean="arithmetic"))
    return Evidence(measured=fit["slope"], theoretical=(-1.15, -0.8), relation="in",
                    tolerance=Tolerance(0.0, "spec V6 window", "rate -1 up to a log factor"),
                    details={"fit": fit, "mean_error": errs.mean(axis=0), "rounds": rounds})


@claim("safari.lemma_drift.bound", ref="Proof of Thm 4 (local-drift lemma)", kind="proof-step",
       expected="holds",
       statement="For eta_c <= 1/(8LK): E||x_r - x^i_{r,k}||^2 <= 5K eta_c^2 (sigma^2 + "
                 "6K sigma_G^2) + 30 K^2 eta_c^2 ||grad F(x_r)||^2 for all i, k <= K.",
       quick=dict(n_instances=20, n_points=20), full=dict(n_instances=300, n_points=100))
def drift_lemma(*, rng, n_instances, n_points):
    """Exact expectations (affine local SGD, isotropic Gaussian noise), no Monte Carlo: on
    random shared-Hessian quadratics (so sigma_G^2 is finite and exact) and the two-group
    instance, at random points x_r, every client, every k <= K, at eta_c = 1/(8LK). Measured
    the largest ratio exact/bound (bound > 0 since sigma^2 > 0); rounding tolerance 1e-12."""
    worst = 0.0
    problems = [two_group_problem()]
    for _ in range(n_instances):
        d, n = int(rng.integers(1, 5)), int(rng.integers(2, 8))
        B = rng.normal(size=(d, d))
        A = B @ B.T / d + 0.1 * np.eye(d)
        problems.append(ClientQuadratics(np.broadcast_to(A, (n, d, d)).copy(),
                                         rng.normal(size=(n, d)) * rng.uniform(0.1, 3)))
    for prob in problems:
        K = int(rng.integers(1, 11))
        eta_c, sigma2, sG2 = 1 / (8 * prob.L * K), float(rng.uniform(0.01, 2)), prob.heterogeneity()
        for x in rng.normal(size=(n_points, prob.dim)) * 3:
            grads = prob.client_gradients(np.tile(x, (prob.n_clients, 1)))
            bound = drift_bound(step_client=eta_c, local_steps=K, sigma2=sigma2, sigma_G2=sG2,
                                grad_norm2=float(np.sum(prob.gradient(x) ** 2)))
            for i in range(prob.n_clients):
                for k in range(1, K + 1):
                    worst = max(worst, exact_drift(prob.A[i], grads[i], step_client=eta_c, k=k,
                                                   sigma2=sigma2) / bound)
    return Evidence(measured=worst, theoretical=1.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "ratio of exact closed forms"),
                    details={"n_problems": len(problems)})


@claim("safari.thm5.delta_bar_dominates_stationary", ref="Thm 5 (delta_bar; spec V6.c)",
       kind="proof-step", expected="holds",
       statement="With identical clients (sigma_G = 0) and eta_c = 4 L eta_s/(K(L + mu)), the "
                 "exact stationary error lim E||x_r - x*||^2 is at most delta_bar, on a grid of "
                 "q, eta_s, K, m, mu.",
       quick=dict(qs=[0.0, 0.2, 0.5, 0.8, 1.0], steps=[0.001, 0.01, 0.1, 0.5], Ks=[1, 5, 20],
                  ms=[1, 5], mus=[0.1, 1.0]),
       full=dict(qs=list(np.linspace(0, 1, 11)), steps=[1e-4, 1e-3, 1e-2, 0.1, 0.3, 0.5, 0.9],
                 Ks=[1, 2, 5, 10, 20, 50], ms=[1, 2, 5, 10], mus=[0.01, 0.1, 1.0, 10.0]))
def delta_bar_dominates_stationary(*, rng, qs, steps, Ks, ms, mus):
    """Exact closed form (verify.safari.closed_forms.homogeneous_stationary_error): as
    R -> infinity Theorem 5's bound tends to delta_bar, so delta_bar must dominate the exact
    limit. Steps are eta_s = c / mu with c in ``steps`` (eta_s <= 2/(L + mu) = 1/mu); the
    noise sigma^2 = sigma_s^2 = 1. Measured: the largest ratio limit / delta_bar (delta_bar > 0
    since sigma^2 > 0); also reported, the ratio delta_bar(eta_s)/delta_bar(eta_s/2) per cell,
    which is 2 to first order (every term of delta_bar is O(eta)). Rounding tolerance 1e-12."""
    from verify.safari.closed_forms import homogeneous_stationary_error
    worst, halving = 0.0, []
    for q in qs:
        for c in steps:
            for K in Ks:
                for m in ms:
                    for mu in mus:
                        vals = []
                        for eta_s in (c / mu, c / (2 * mu)):
                            eta_c = 4 * mu * eta_s / (K * 2 * mu)
                            exact = homogeneous_stationary_error(
                                q=q, step_client=eta_c, step_server=eta_s, local_steps=K,
                                n_sampled=m, mu=mu, sigma2=1.0, sigma_s2=1.0)
                            db = thm5_delta_bar(q=q, step_client=eta_c, step_server=eta_s,
                                                local_steps=K, n_sampled=m, L=mu, mu=mu,
                                                sigma2=1.0, sigma_s2=1.0, sigma_G2=0.0)
                            worst = max(worst, exact / db)
                            vals.append(db)
                        halving.append(vals[0] / vals[1])
    return Evidence(measured=worst, theoretical=1.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-12, "ratio of closed forms"),
                    details={"halving_ratio_range": [min(halving), max(halving)]})
