r"""Theorem 1(a)-(b) of FOCUS read at the horizon where their bounds reach machine precision.

The rate claims of :mod:`verify.focus.thm1.rates` compare the Monte Carlo mean with the printed
envelope over a few hundred rounds, where the envelope is still of order 1e-2 of its start:
a FOCUS that converges to a point 1e-6 away from x* passes them. A linear rate also says
where the iterates go: after R rounds E F(x_R) - F* <= rho^R Phi_0, so at the R where
rho^R = 10^-decades the theorem pins the limit point to that precision. These claims run
FOCUS (the library's implementation, the proof's initialization) on the Theorem 1 instance
to that horizon and compare the optimality gap with the printed bound at R, plus the
floating-point floor of the run (derived below).

Rounding floor. In exact arithmetic y = sum_i g_i (tracking); in floating point each push
v = h - g and each addition into y rounds, so y drifts from sum_i g_i by at most
delta_y <= eps * sum over rounds and participants of (||h||_1 + ||g||_1 + ||y||_1)
<= 3 eps R N G, with G the largest client-gradient 1-norm seen by the server iterates
(times 2 for the local points, within tau eta ||y|| of them). At a fixed point of the float
iteration y = 0 and g_i = grad f_i(x), so N grad F(x) = -drift and
||x - x*|| <= delta_y / (N mu); the solve of x* adds 4 kappa eps ||x*||. The gap floor is
(lambda_max(mean A)/2) * (that distance)^2. Linear in R, so a worst case; the runs land far
below it.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import focus
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.stats import mc_mean

from ..instances import thm1a_step_printed, thm1b_step
from . import THM1A, THM1B, thm1a, thm1b
from .rates import P_THM1, TAU, X0, _instance, hypotheses_instance

EPS = np.finfo(float).eps


def _gap(problem, xs):
    """F(x) - F* = (x - x*)' mean(A) (x - x*) / 2, exact for quadratics (no cancellation)."""
    e = xs - problem.x_star
    return 0.5 * np.einsum("...i,ij,...j->...", e, problem.A.mean(axis=0), e)


def _floor(problem, n_rounds, grad_scale):
    """The gap's rounding floor of the module docstring (a worst case over R rounds)."""
    a_mean = np.linalg.eigvalsh(problem.A.mean(axis=0))
    n = problem.n_clients
    drift = 3 * EPS * n_rounds * n * 2 * grad_scale
    dist = drift / (n * problem.mu) + 4 * a_mean[-1] / a_mean[0] * EPS * np.linalg.norm(
        problem.x_star)
    return 0.5 * a_mean[-1] * dist**2


def _runs(problem, proc, rng, *, step, n_runs, n_rounds):
    """Final gaps of ``n_runs`` independent runs, and the largest client-gradient 1-norm at
    any server iterate of any run."""
    gaps, scale = np.empty(n_runs), 0.0
    n = problem.n_clients
    for k, child in enumerate(rng.spawn(n_runs)):
        xs = focus(problem, proc.plan(child, n_rounds), step=step, local_steps=TAU, x0=X0,
                   init="gradient").x
        gaps[k] = _gap(problem, xs[-1])
        grads = problem.client_gradients(np.repeat(xs, n, axis=0),
                                          clients=np.tile(np.arange(n), xs.shape[0]))
        scale = max(scale, float(np.abs(grads).sum(axis=1).max()))
    return gaps, scale


def _limit_evidence(problem, proc, rng, *, step, rate, phi0, decades, n_runs, instance):
    """Run to the horizon where rate^R = 10^-decades and compare E gap_R with rate^R Phi_0."""
    n_rounds = int(np.ceil(decades * np.log(10) / -np.log(rate)))
    gaps, scale = _runs(problem, proc, rng, step=step, n_runs=n_runs, n_rounds=n_rounds)
    stats = mc_mean(gaps)
    bound = phi0 * rate**n_rounds
    floor = _floor(problem, n_rounds, scale)
    return Evidence(measured=stats.mean, theoretical=bound, relation="<=",
                    tolerance=Tolerance(4 * stats.se + floor, "4 MC SE + rounding floor",
                                        "k std/sqrt(n), k = 4, plus the float drift of the "
                                        "tracker (3 eps R N 2G / (N mu)) and of x*, squared "
                                        "through mean(A)/2"),
                    details={"step": step, "rate": rate, "n_rounds": n_rounds,
                             "decades": decades, "phi0": phi0, "bound_at_R": bound,
                             "rounding_floor": floor, "max_gap": float(gaps.max()),
                             "gradient_scale": scale},
                    instance=instance)


@claim("focus.thm1b.limit_point", ref="Thm 1(b), eq. (24), at the horizon of machine precision",
       kind="statement", expected="holds",
       statement="Under PL (beta) and Theorem 1(b)'s step, E F(x_R) - F* <= (1 - eta beta N)^R "
                 "Phi_0; at R with (1 - eta beta N)^R = 1e-20 the iterates are at a minimizer "
                 "to that precision.",
       quick=dict(n_runs=8, decades=20), full=dict(n_runs=64, decades=24),
       result=THM1B, parts=("rate",))
def thm1b_limit_point(*, rng, n_runs, decades):
    """Quadratics (PL with beta = lambda_min(mean A)), Bernoulli p = (.3, .5, .7, .9),
    tau = 3, x_0 = (3, 3, 3), step = the printed condition plus the proof's 1/(4LN) and
    1/(2(tau-1)LN); Phi_0 = F(x_0) - F* (all nodes equal at the start). Expected to hold: the
    implementation converges to x* exactly. A FOCUS whose iterate or stored gradients are
    off by a relative 1e-6 stalls at a gap near 1e-12, far above 1e-20 Phi_0 and the floor
    (tests/test_focus_limits). Tolerance: 4 MC SE + the rounding floor of the module
    docstring."""
    problem, proc, q_min = _instance(rng)
    beta, L, n = problem.mu, problem.L, problem.n_clients
    step = thm1b_step(beta, L, n, TAU, q_min)
    return _limit_evidence(problem, proc, rng, step=step,
                           rate=thm1b(beta=beta, L=L, p=P_THM1, tau=TAU, step=step),
                           phi0=float(_gap(problem, X0)), decades=decades, n_runs=n_runs,
                           instance=hypotheses_instance(problem, proc, step, beta=beta))


@claim("focus.thm1a.limit_point", ref="Thm 1(a), eq. (23), at the horizon of machine precision",
       kind="statement", expected="holds",
       statement="Strongly convex f_i and Theorem 1(a)'s step: E||x_R - x*||^2 <= "
                 "(1 - eta mu N/2)^R Psi_0; at R with (1 - eta mu N/2)^R = 1e-20 the iterates "
                 "are at x* to that precision.",
       quick=dict(n_runs=8, decades=20), full=dict(n_runs=64, decades=24),
       result=THM1A, parts=("rate",))
def thm1a_limit_point(*, rng, n_runs, decades):
    """Theorem 1 instance at the printed step (1.05e-3 here); Psi_0 = ||x_0 - x*||^2 (the
    proof's start, consensus part 0). Measured E (x_R - x*)' mean(A) (x_R - x*) / 2 against
    lambda_max(mean A)/2 times the bound, so the module's gap floor applies. Expected to hold.
    Tolerance: 4 MC SE + the rounding floor."""
    problem, proc, q_min = _instance(rng)
    mu, L, n = float(problem.client_mu.min()), problem.L, problem.n_clients
    step = thm1a_step_printed(mu, L, n, TAU, q_min)
    lam_max = float(np.linalg.eigvalsh(problem.A.mean(axis=0))[-1])
    psi0 = float(np.sum((X0 - problem.x_star) ** 2))
    return _limit_evidence(problem, proc, rng, step=step,
                           rate=thm1a(mu=mu, L=L, p=P_THM1, tau=TAU, step=step),
                           phi0=0.5 * lam_max * psi0, decades=decades, n_runs=n_runs,
                           instance=hypotheses_instance(problem, proc, step))
