r"""Lemma B.6 of K-Vib (upper bound of the local drift, Reddi et al. 2020): the result, its
parts, its hypotheses and its claims.

Statement: under Assumptions 4.2 and 4.3, for all clients i and :math:`r\in[R]` (the proof
uses :math:`\eta_l\le1/(8RL)` and :math:`(1+\frac1{R-1})^R\le5` for :math:`R>1`),
:math:`\mathbb E\|x_i^{t,r}-x^t\|^2\le5R\eta_l^2(\sigma_l^2+6R\sigma_g^2+6R\|\nabla f(x^t)\|^2)`.
Instances carry the problem, ``lam``, ``L``, ``sigma_g2``, ``sigma_l2``, ``local_noise``,
``R`` and ``step`` (:math:`\eta_l`).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import (
    Evidence,
    Tolerance,
    bound,
    claim,
    hypothesis,
    integer,
    nonnegative,
    positive,
    result,
)
from flbounds.problems import Quadratic
from flbounds.problems.generators import random_ridge

from .drift import _ridge_minibatch_drift
from .thm4_1 import a4_1, a4_2, a4_3, local_step_condition


@hypothesis("R>1", "R > 1 local steps (the proof's (1 + 1/(R-1))^R <= 5)")
def several_local_steps(*, R):
    return bool(np.all(np.asarray(R) > 1))


LEMMA_B6 = result(
    "kvib.lemma_b6", ref="Lemma B.6", title="upper bound of the local drift",
    parts={"per_client": "for all clients i and r in [R]: E||x_i^{t,r} - x^t||^2 <= 5 R eta_l^2"
                         " (sigma_l^2 + 6 R sigma_g^2 + 6 R ||grad f(x^t)||^2)",
           "averaged": "the lambda-average of that bound over the clients (the form eq. (31) "
                       "of Theorem 4.1's proof uses)"},
    hypotheses=(a4_1, a4_2, a4_3, local_step_condition, several_local_steps))


@bound("kvib.lemma_b6", ref="Lemma B.6 (local drift)",
       constants=(integer("R", "local steps"), positive("eta_l", "local step size"),
                  nonnegative("sigma_l2", "local variance"),
                  nonnegative("sigma_g2", "global variance"),
                  nonnegative("grad2", "||grad f(x^t)||^2")),
       quantity="E||x_i^{t,r} - x^t||^2, r <= R")
def drift_bound(*, R, eta_l, sigma_l2, sigma_g2, grad2):
    """5 R eta_l^2 (sigma_l^2 + 6 R sigma_g^2 + 6 R ||grad f(x^t)||^2)."""
    return 5 * R * eta_l**2 * (sigma_l2 + 6 * R * sigma_g2 + 6 * R * grad2)


@claim("kvib.lemma_b6.averaged", ref="Lemma B.6 (lambda-averaged form)", kind="statement",
       expected="not-applicable", result=LEMMA_B6, parts=("averaged",),
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
    ratio mean/RHS and the largest relative SE.

    Expected **not-applicable** (was ``holds`` before the hypotheses became predicates):
    Assumption 4.3 bounds the dissimilarity for all x, and ridge clients with different
    Hessians X_i'X_i/n + lam I have a dissimilarity that grows with ||x||, so predicate A4.3 is
    false on the instance (the bound is still met at every cell: details)."""
    problem = random_ridge(rng, n_clients, 12, 4, lam=0.1, noise=0.5, heterogeneity=1.0)
    lam_w = np.full(n_clients, 1.0 / n_clients)
    diffs, ses, ratios, rel_se, instances = [], [], [], [], []
    for c in (0.25, 1.0):
        for local_steps in (2, 5, 10):
            step = c / (8 * local_steps * problem.L)
            x = problem.x_star + rng.standard_normal(problem.dim)
            g = problem.client_gradients(np.tile(x, (n_clients, 1)))
            gbar = lam_w @ g
            sigma_g2 = float(lam_w @ np.sum((g - gbar) ** 2, axis=1))
            drift, sigma_l2 = _ridge_minibatch_drift(rng, problem, x, local_steps=local_steps,
                                                     step=step, batch=batch, n_runs=n_runs)
            instances.append(dict(problem=problem, lam=lam_w, L=problem.L, sigma_g2=sigma_g2,
                                  sigma_l2=sigma_l2, local_noise=sigma_l2, R=local_steps,
                                  step=step))
            rhs = drift_bound(R=local_steps, eta_l=step, sigma_l2=sigma_l2, sigma_g2=sigma_g2,
                              grad2=float(gbar @ gbar))
            mean = drift.mean(axis=1)
            se = drift.std(axis=1, ddof=1) / np.sqrt(n_runs)
            diffs.append(mean - rhs)
            ses.append(se)
            ratios.append(float(np.max(mean / rhs)))
            rel_se.append(float(np.max(se / mean)))
    return Evidence(measured=np.concatenate(diffs), theoretical=0.0, relation="<=",
                    instance=instances,
                    tolerance=Tolerance.mc(np.concatenate(ses),
                                           what="client-averaged drift over runs"),
                    details={"max_ratio_mean_over_rhs": max(ratios),
                             "max_relative_se": max(rel_se)})


def outlier_ratio(n_clients: int, local_steps: int) -> float:
    """Drift of the outlier client of :func:`lemma_b6_per_client`'s instance (c_1 = 100, the
    others 0, d = 1, eta_l = 1/(8R)) over the bound, at N clients and R local steps."""
    c = np.zeros(n_clients)
    c[0] = 100.0
    x, step = c.mean(), 1.0 / (8 * local_steps)
    g = x - c
    sigma_g2 = float(np.mean((g - g.mean()) ** 2))
    xi = x
    for _ in range(local_steps):
        xi = xi - step * (xi - c[0])
    return (xi - x) ** 2 / drift_bound(R=local_steps, eta_l=step, sigma_l2=0.0,
                                       sigma_g2=sigma_g2, grad2=float(g.mean()) ** 2)


def smallest_outlier_n(local_steps: int, n_max: int = 1000) -> int:
    """The fewest clients at which the outlier breaks the per-client bound."""
    return next(n for n in range(2, n_max) if outlier_ratio(n, local_steps) > 1)


@claim("kvib.lemma_b6.per_client", ref="Lemma B.6 as printed ('for all client i')",
       kind="statement", expected="violated", result=LEMMA_B6, parts=("per_client",),
       statement="For every client i and r <= R: E||x_i^{t,r} - x^t||^2 <= 5 R eta_l^2 "
                 "(sigma_l^2 + 6 R sigma_g^2 + 6 R ||grad f(x^t)||^2).",
       quick=dict(), full=dict())
def lemma_b6_per_client(*, rng):
    r"""Assumption 4.3 bounds only the :math:`\lambda`-average of
    :math:`\|\nabla f_i-\nabla f\|^2`, so one outlier client can drift far more than the bound.
    Counterexample (deterministic, :math:`\sigma_l=0`): N = 100 clients,
    :math:`f_i(x)=\|x-c_i\|^2/2` in d = 1 with :math:`c_1=100`, :math:`c_i=0` otherwise,
    :math:`\lambda_i=1/N`, L = 1, R = 5, :math:`\eta_l=1/(8R)`, :math:`x^t=\bar c=1`:
    client 1's drift after R steps is 138.6 against the bound 46.4 (ratio 2.99). Shrunk: the
    same outlier breaks the bound from N = 33 clients at R = 2 (N = 35 at R = 5; details).
    Expected
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
    rhs = drift_bound(R=local_steps, eta_l=step, sigma_l2=0.0, sigma_g2=sigma_g2,
                      grad2=float(gbar @ gbar))
    instance = dict(problem=problem, lam=np.full(n, 1.0 / n), L=problem.L, sigma_g2=sigma_g2,
                    sigma_l2=0.0, local_noise=0.0, R=local_steps, step=step)
    return Evidence(measured=drift, theoretical=rhs, relation="<=", instance=instance,
                    tolerance=Tolerance.exact("deterministic GD"),
                    details={"instance": {"N": n, "c_1": 100.0, "R": local_steps, "eta_l": step},
                             "sigma_g2": sigma_g2, "ratio": drift / rhs,
                             "smallest_N": {f"R={r}": smallest_outlier_n(r) for r in (2, 5)}})
