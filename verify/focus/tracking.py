r"""FOCUS's tracking invariant and fixed point (FOCUS Sec. 5.1, App. E.2 eq. (80)).

After every round the server tracker equals the sum of the clients' stored gradients,
:math:`y = \sum_i g_i` (I1), so :math:`x_{r+1} = x_r - \eta \sum_i \nabla f_i(z_i)` with stale
points :math:`z_i`; at :math:`x = x^\star`, :math:`g_i = \nabla f_i(x^\star)` nothing moves (I4).
Rounding tolerance: y is updated by <= N + 1 additions per round and the sum of g is
recomputed afresh (N additions), each off by eps times the running magnitude, so
:math:`|y - \sum g| \le (R + 1)(2N + 1)\,\epsilon\, G` with G the largest partial sum seen
(bounded by N max|g| + max|y|).
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import fedavg, focus, sg_focus
from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import Bernoulli, Cyclic, MarkovOnOff
from flbounds.problems import random_logistic, random_quadratics
from flbounds.tolerances import EPS


@hypothesis("tau1_full", "tau = 1 and every client participates in every round")
def tau1_full(*, tau, p):
    return tau == 1 and bool(np.all(np.asarray(p) == 1))


SEC5_1 = result(
    "focus.sec5_1", ref="Sec. 5.1", kind="section",
    title="why FOCUS converges exactly: tracking and the fixed point",
    parts={"tracking": "the tracker stays the sum of the stored gradients, y_{r+1} = sum_i "
                       "grad f_i(x_{k+1,i}) (App. E.2 eq. (80)), also with stochastic gradients",
           "fixed_point": "x*, g_i = grad f_i(x*), y = 0 is a fixed point for every step, tau "
                          "and participation set: arbitrary participation becomes an arbitrary "
                          "gradient delay",
           "tau1_gd": "with tau = 1 and full participation FOCUS is gradient descent on F with "
                      "step eta N"},
    hypotheses=(tau1_full.only("tau1_gd"),))


def _processes(n_clients):
    p = np.linspace(0.1, 0.9, n_clients)
    return {"bernoulli": Bernoulli(p), "cyclic": Cyclic(n_clients, 1),
            "markov": MarkovOnOff(p, 0.9)}


@claim("focus.sec5_1.tracking_invariant", ref="Sec. 5.1; App. E.2 eq. (80)", kind="statement",
       expected="holds", result=SEC5_1, parts=("tracking",),
       statement="The server tracker always equals the sum of the latest stored client "
                 "gradients, y_r = sum_i g_i, for deterministic and stochastic gradients (Alg. 2 "
                 "reuses the stored stochastic gradient).",
       quick=dict(n_clients=6, dim=3, n_rounds=300, local_steps=3),
       full=dict(n_clients=16, dim=5, n_rounds=5000, local_steps=5))
def tracking_invariant(*, rng, n_clients, dim, n_rounds, local_steps):
    """Runs FOCUS on quadratics and logistic regression and SG-FOCUS (Gaussian noise,
    sigma = 0.1) under Bernoulli, cyclic and Markov participation; records max_r |y_r -
    sum_i g_i|. Holds by telescoping (line 8 of Alg. 1 adds the new minus the stored gradient);
    tolerance is the rounding bound of the module docstring."""
    quad = random_quadratics(rng, n_clients, dim, mu=1.0, L=5.0)
    logi = random_logistic(rng, n_clients, 10, dim, lam=0.1)
    measured, tolerance, labels = [], [], []
    for name, proc in _processes(n_clients).items():
        plan = proc.plan(rng, n_rounds)
        noise = 0.1 / np.sqrt(dim) * rng.standard_normal((n_rounds, n_clients, local_steps, dim))
        runs = {"quadratic": focus(quad, plan, step=0.5 / (quad.L * n_clients),
                                   local_steps=local_steps, record_sum=True),
                "logistic": focus(logi, plan, step=0.5 / (logi.L * n_clients),
                                  local_steps=local_steps, record_sum=True),
                "sg_quadratic": sg_focus(quad, plan, noise, step=0.5 / (quad.L * n_clients),
                                         local_steps=local_steps, record_sum=True)}
        for kind, tr in runs.items():
            scale = n_clients * np.abs(tr.g_sum).max() + np.abs(tr.y).max() + \
                n_clients * np.abs(tr.g).max()
            measured.append(float(np.abs(tr.y - tr.g_sum).max()))
            tolerance.append((n_rounds + 1) * (2 * n_clients + 1) * EPS * scale)
            labels.append(f"{name}/{kind}")
    return Evidence(measured=measured, theoretical=0.0, relation="==",
                    tolerance=Tolerance(np.array(tolerance), "rounding",
                                        "(R+1)(2N+1) eps G, see module docstring"),
                    details={"runs": labels})


@claim("focus.sec5_1.fixed_point", ref="Sec. 5.1 (exactness); Thm 1", kind="statement",
       expected="holds", result=SEC5_1, parts=("fixed_point",),
       statement="x = x*, g_i = grad f_i(x*), y = 0 is a fixed point of FOCUS for every step, "
                 "tau and participation set.",
       quick=dict(n_clients=6, dim=3, n_sets=40), full=dict(n_clients=16, dim=5, n_sets=400))
def fixed_point(*, rng, n_clients, dim, n_sets):
    """One round from the fixed-point state (x0 = x*, init="gradient": g_i = grad f_i(x*),
    y = sum_i g_i = N grad F(x*) = 0 up to rounding) for random participation sets (empty and
    full included), steps (0.1, 1, 10)/(N L) and tau in {1, 5}: every push is grad f_i(x*) -
    grad f_i(x*) = 0, so x moves only by step * (rounding of y), <= step N eps max|g*| plus
    one ulp of x*. A one-round check on purpose: whether the fixed point is *stable* depends
    on the step (with 10/(N L) and stale gradients it is not, and rounding then grows over
    many rounds); exactness of the fixed point does not. FedAvg from the same start leaves
    x* (reported)."""
    quad = random_quadratics(rng, n_clients, dim, mu=1.0, L=5.0)
    g_star = quad.client_gradients(np.tile(quad.x_star, (n_clients, 1)))
    masks = rng.random((n_sets, n_clients)) < rng.random((n_sets, 1))
    masks[0], masks[1] = False, True
    measured, fedavg_drift, tol = [], [], []
    for scale in (0.1, 1.0, 10.0):
        step = scale / (quad.L * n_clients)
        for tau in (1, 5):
            for mask in masks:
                x1 = focus(quad, mask[None], step=step, local_steps=tau, x0=quad.x_star,
                           init="gradient").x[1]
                measured.append(float(np.abs(x1 - quad.x_star).max()))
                tol.append(4 * EPS * (step * n_clients * np.abs(g_star).max()
                                      + np.abs(quad.x_star).max()))
            fa = fedavg(quad, masks[1:2], step=step, local_steps=tau, x0=quad.x_star).x[1]
            fedavg_drift.append(float(np.abs(fa - quad.x_star).max()))
    return Evidence(measured=measured, theoretical=0.0, relation="==",
                    tolerance=Tolerance(np.array(tol), "rounding",
                                        "4 eps (eta N max|g*| + max|x*|): rounding of y = sum g*"),
                    details={"max_drift": max(measured), "fedavg_one_round_drift": fedavg_drift})


@claim("focus.sec5_1.tau1_full_is_gd", ref="Sec. 5.1 (tau = 1 special case)", kind="remark",
       expected="holds", result=SEC5_1, parts=("tau1_gd",),
       statement="With tau = 1 and full participation FOCUS is gradient descent on F with step "
                 "eta N: x_{r+1} = x_r - eta N grad F(x_r).",
       quick=dict(n_clients=6, dim=3, n_rounds=100), full=dict(n_clients=16, dim=5,
                                                               n_rounds=2000))
def tau1_full_is_gd(*, rng, n_clients, dim, n_rounds):
    """Every client refreshes its stored gradient at x_r each round, so y_{r+1} = sum_i grad
    f_i(x_r) = N grad F(x_r) (Algorithm 1's zero initialization included). Compared with an
    explicit GD loop on quadratics; tolerance: rounding, R N eps max|x| (summation order)."""
    quad = random_quadratics(rng, n_clients, dim, mu=1.0, L=5.0)
    step = 0.5 / (quad.L * n_clients)
    plan = np.ones((n_rounds, n_clients), dtype=bool)
    x0 = rng.standard_normal(dim)
    xs = focus(quad, plan, step=step, local_steps=1, x0=x0).x
    gd = [x0]
    for _ in range(n_rounds):
        gd.append(gd[-1] - step * n_clients * quad.gradient(gd[-1]))
    gd = np.array(gd)
    scale = np.abs(gd).max() + np.abs(quad.x_star).max()
    return Evidence(measured=float(np.abs(xs - gd).max()), theoretical=0.0, relation="==",
                    instance=dict(tau=1, p=plan.mean(axis=0)),
                    tolerance=Tolerance.rounding(n_rounds * n_clients * EPS * scale,
                                                 "R N eps max|x|"))
