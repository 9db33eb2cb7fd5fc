r"""K-Vib Lemma B.6 (local drift) and the capped regime of Theorem 5.1 ([003], recipe V9;
spec section 6 items 11 and 12)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.problems import Quadratic
from flbounds.problems.generators import random_ridge
from flbounds.sampling import optimal_isp_objective
from flbounds.sampling.online import Assumption51Feedback, best_fixed_cost


def _ridge_minibatch_drift(rng, problem, x, *, local_steps, step, batch, n_runs):
    """MC of local SGD with minibatches (with replacement) from x for every client.

    Returns the uniformly client-averaged drift sum_i ||x_i^{t,r} - x||^2 / N per (r, run)
    (lambda = 1/N; clients are independent within a run), and the largest minibatch
    variance sigma_l^2 met at x and at the runs' final local points (Assumption 4.2 on the
    visited region).
    """
    feats, targets, lam = problem.features, problem.targets, problem.lam
    n_clients, n_samples, dim = feats.shape
    X = np.broadcast_to(x, (n_runs, n_clients, dim)).copy()
    drift = np.empty((local_steps, n_runs))
    rows = np.arange(n_clients)[None, :, None]
    for r in range(local_steps):
        idx = rng.integers(0, n_samples, size=(n_runs, n_clients, batch))
        a = feats[rows, idx]                                   # (M, N, b, d)
        resid = np.einsum("mnbd,mnd->mnb", a, X) - targets[rows, idx]
        grad = np.einsum("mnbd,mnb->mnd", a, resid) / batch + lam * X
        X = X - step * grad
        drift[r] = np.mean(np.sum((X - x) ** 2, axis=2), axis=1)   # client average, per run
    sigma_l2 = 0.0
    for point in (np.broadcast_to(x, (n_clients, dim)), X[0]):
        per = feats * (np.einsum("ind,id->in", feats, point) - targets)[:, :, None]
        mean = per.mean(axis=1, keepdims=True)
        sigma_l2 = max(sigma_l2, float(np.max(np.mean(np.sum((per - mean) ** 2, 2), 1)))
                       / batch)
    return drift, sigma_l2


@claim("kvib.lemma_b6.averaged", ref="Lemma B.6 (lambda-averaged form)", kind="statement",
       expected="holds",
       statement="sum_i lambda_i E||x_i^{t,r} - x^t||^2 <= 5 R eta_l^2 (sigma_l^2 + 6 R "
                 "sigma_g^2 + 6 R ||grad f(x^t)||^2) for r <= R, eta_l <= 1/(8RL).",
       quick=dict(n_clients=10, n_runs=300, batch=2), full=dict(n_clients=30, n_runs=2000,
                                                                batch=2))
def lemma_b6_averaged(*, rng, n_clients, n_runs, batch):
    r"""V9: ridge clients with minibatch noise; :math:`\eta_l=c/(8RL)`, c in {0.25, 1},
    R in {2, 5, 10}; x^t a random point near x*. sigma_g^2 is exact at x^t; sigma_l^2 the max
    minibatch variance on the visited points. Measured: for every (c, R, r), the MC mean over
    runs of the client-averaged drift minus the RHS; tolerance 4 MC standard errors of that
    mean (computed from the runs, ``Tolerance.mc``). The RHS is treated as exact (sigma_l^2 is
    the max over the visited points, which makes it larger, not smaller). Details: the largest
    ratio mean/RHS and the largest relative SE."""
    problem = random_ridge(rng, n_clients, 12, 4, lam=0.1, noise=0.5, heterogeneity=1.0)
    lam_w = np.full(n_clients, 1.0 / n_clients)
    diffs, ses, ratios, rel_se = [], [], [], []
    for c in (0.25, 1.0):
        for local_steps in (2, 5, 10):
            step = c / (8 * local_steps * problem.L)
            x = problem.x_star + rng.standard_normal(problem.dim)
            g = problem.client_gradients(np.tile(x, (n_clients, 1)))
            gbar = lam_w @ g
            sigma_g2 = float(lam_w @ np.sum((g - gbar) ** 2, axis=1))
            drift, sigma_l2 = _ridge_minibatch_drift(rng, problem, x, local_steps=local_steps,
                                                     step=step, batch=batch, n_runs=n_runs)
            rhs = 5 * local_steps * step**2 * (sigma_l2 + 6 * local_steps * sigma_g2
                                               + 6 * local_steps * float(gbar @ gbar))
            mean = drift.mean(axis=1)
            se = drift.std(axis=1, ddof=1) / np.sqrt(n_runs)
            diffs.append(mean - rhs)
            ses.append(se)
            ratios.append(float(np.max(mean / rhs)))
            rel_se.append(float(np.max(se / mean)))
    return Evidence(measured=np.concatenate(diffs), theoretical=0.0, relation="<=",
                    tolerance=Tolerance.mc(np.concatenate(ses),
                                           what="client-averaged drift over runs"),
                    details={"max_ratio_mean_over_rhs": max(ratios),
                             "max_relative_se": max(rel_se)})


@claim("kvib.lemma_b6.per_client", ref="Lemma B.6 as printed ('for all client i')",
       kind="statement", expected="violated",
       statement="For every client i and r <= R: E||x_i^{t,r} - x^t||^2 <= 5 R eta_l^2 "
                 "(sigma_l^2 + 6 R sigma_g^2 + 6 R ||grad f(x^t)||^2).",
       quick=dict(), full=dict())
def lemma_b6_per_client(*, rng):
    r"""Assumption 4.3 bounds only the :math:`\lambda`-average of
    :math:`\|\nabla f_i-\nabla f\|^2`, so one outlier client can drift far more than the bound.
    Counterexample (deterministic, :math:`\sigma_l=0`): N = 100 clients,
    :math:`f_i(x)=\|x-c_i\|^2/2` in d = 1 with :math:`c_1=100`, :math:`c_i=0` otherwise,
    :math:`\lambda_i=1/N`, L = 1, R = 5, :math:`\eta_l=1/(8R)`, :math:`x^t=\bar c=1`:
    client 1's drift after R steps is 138.6 against the bound 46.4. Expected
    **violated**; the averaged form is ``kvib.lemma_b6.averaged``."""
    n, local_steps = 100, 5
    c = np.zeros((n, 1))
    c[0, 0] = 100.0
    problem = Quadratic(np.tile(np.eye(1), (n, 1, 1)), c)
    step = 1.0 / (8 * local_steps * problem.L)
    x = np.array([c.mean()])
    g = problem.client_gradients(np.tile(x, (n, 1)))
    gbar = g.mean(axis=0)
    sigma_g2 = float(np.mean(np.sum((g - gbar) ** 2, axis=1)))
    X = np.tile(x, (n, 1))
    for _ in range(local_steps):
        X = X - step * problem.client_gradients(X)
    drift = float(np.sum((X[0] - x) ** 2))
    rhs = 5 * local_steps * step**2 * (6 * local_steps * sigma_g2
                                       + 6 * local_steps * float(gbar @ gbar))
    return Evidence(measured=drift, theoretical=rhs, relation="<=",
                    tolerance=Tolerance.exact("deterministic GD"),
                    details={"instance": {"N": n, "c_1": 100.0, "R": local_steps, "eta_l": step},
                             "sigma_g2": sigma_g2})


@claim("kvib.thm5_1.capped_regime", ref="Thm 5.1 (outside the proof's no-cap regime)",
       kind="statement", expected="holds",
       statement="The T_BFP bound of Thm 5.1 also holds when some clients are capped at p = 1 "
                 "(K max pi_t > sum pi_t).",
       quick=dict(n_instances=40, max_rounds=3000), full=dict(n_instances=400, max_rounds=30000))
def thm51_capped(*, rng, n_instances, max_rounds):
    """The statement has no no-cap hypothesis (only the proof needs one, see
    ``kvib.thm5_1.proof_uncapped_minimum``); instances with K drawn up to N so that capping
    occurs. Measured: max T_BFP / bound (<= 1)."""
    worst = 0.0
    capped = 0
    for _ in range(n_instances):
        n = int(rng.integers(3, 60))
        t = int(rng.integers(10, max_rounds + 1))
        fb = Assumption51Feedback.generate(rng, n, profile="lognormal")
        pi1 = fb.values(1)
        k = float(rng.uniform(pi1.sum() / pi1.max(), n)) if pi1.sum() / pi1.max() < n \
            else float(n)
        capped += k * pi1.max() > pi1.sum()
        t_bfp = best_fixed_cost(fb.squared_sums(t), k) - fb.sum_optimal_costs(t, k)
        root = np.sum(np.sqrt(fb.variation(t) / t))
        bound = t / k * root * (2 * np.sum(fb.lam * fb.base) + root)
        worst = max(worst, t_bfp / bound)
    return Evidence(measured=worst, theoretical=1.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-9, "difference of two sums of T terms"),
                    details={"capped_instances": int(capped), "instances": n_instances})


@claim("kvib.thm5_1.proof_uncapped_minimum", ref="Proof of Thm 5.1, App. D.1, eqs. (39)-(40)",
       kind="proof-step", expected="violated",
       statement="min_{p in P_K} sum_i pi(i)^2/p_i = (sum_i pi(i))^2/K.", quick=dict(),
       full=dict())
def thm51_proof_minimum(*, rng):
    """The uncapped value is only a lower bound of the capped minimum; using it as the value
    (to upper-bound min_p sum_t l_t) is invalid once K max pi > sum pi. Counterexample
    pi = (1, 3, 6), K = 2: (sum pi)^2/K = 50, true minimum 16 + 36 = 52. Expected
    **violated**; the theorem itself still held on every instance tried
    (``kvib.thm5_1.capped_regime``)."""
    pi = np.array([1.0, 3.0, 6.0])
    return Evidence(measured=optimal_isp_objective(pi, 2), theoretical=pi.sum() ** 2 / 2,
                    relation="==", tolerance=Tolerance.rounding(1e-12, "a few ulp"),
                    details={"instance": {"pi": pi, "K": 2}})
