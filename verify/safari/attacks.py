r"""Attack surfaces of SAFARI's exact probabilities, closed forms and the threshold example
([000]).

The ratios call the library functions the claims call (:mod:`flbounds.pac`,
:mod:`flbounds.safari_closed_forms`, :mod:`flbounds.thresholds`). Integer sizes are searched
directly; steps and curvatures on log scales.
"""

from __future__ import annotations

import math

import numpy as np

from flbounds.falsify import SPD, Box, Integers, attack_surface
from flbounds.theory.impossibility import (
    impossibility_chernoff_bound,
    impossibility_event_probability,
)
from flbounds.theory.thresholds import (
    excess_error,
    mixture_alpha,
    paper_alpha,
    sa_fl_mixture,
    uniform,
)

from .closed_forms import (
    ClientQuadratics,
    drift_bound,
    exact_drift,
    homogeneous_stationary_error,
    thm5_delta_bar,
)

CLOSED = "rounding: ratio of closed forms, relative error < 1e-13; 1e-12 as in the claim"
#: (M - m) n / 6 <= 317 keeps the Chernoff bound exp(-(M-m)n/6) above float64's underflow
PAC_SPACE = {"M": Integers(2, 20), "m": Integers(1, 19), "n": Integers(1, 100)}


def _m_below_M(*, M, m, n):
    return m < M or "m >= M (the theorem needs partial participation)"


@attack_surface("safari.thm1.chernoff_step", space=PAC_SPACE, validator=_m_below_M,
                tolerance=0.0, tolerance_why="binomial CDF vs closed form (as the claim)",
                fixed=[{"M": M, "m": m, "n": n} for M, m, n in
                       [(2, 1, 1), (10, 1, 1), (10, 5, 1), (10, 9, 1), (10, 1, 10),
                        (10, 5, 10), (10, 9, 10), (10, 9, 100)]])
def chernoff_step(*, M, m, n):
    """P[s_hat >= (1-omega)Mn] over min(Chernoff bound, e^-1/6, 17/20)."""
    bound = min(impossibility_chernoff_bound(M, m, n), math.exp(-1 / 6), 17 / 20)
    return (1.0 - impossibility_event_probability(M, m, n)) / bound


@attack_surface("safari.thm1.event_probability", space=PAC_SPACE, validator=_m_below_M,
                tolerance=0.0, tolerance_why="binomial CDF, no sampling (as the claim)",
                fixed=[{"M": 2, "m": 1, "n": 1}, {"M": 10, "m": 9, "n": 100}])
def event_probability(*, M, m, n):
    """3/20 over the exact probability of the indistinguishability event."""
    return (3 / 20) / impossibility_event_probability(M, m, n)


def _drift_problem(A, b, n):
    return ClientQuadratics(np.broadcast_to(A, (n, 2, 2)).copy(), b[:n])


@attack_surface("safari.lemma_drift.bound",
                space={"A": SPD(2, 0.1, 4.0), "b": Box(-3, 3, shape=(6, 2)),
                       "n": Integers(2, 6), "x": Box(-10, 10, shape=2), "K": Integers(1, 10),
                       "k_frac": Box(0, 1), "client": Integers(0, 5),
                       "sigma2": Box(1e-4, 2, log=True)},
                validator=lambda **inst: inst["client"] < inst["n"] or "client >= n",
                tolerance=1e-12, tolerance_why=CLOSED,
                fixed=[{"A": np.eye(2), "b": np.eye(6, 2), "n": 2, "x": [3, 3], "K": 5,
                        "k_frac": 1.0, "client": 0, "sigma2": 1.0}],
                note="shared Hessian (sigma_G^2 finite and exact), eta_c = 1/(8LK)")
def drift(*, A, b, n, x, K, k_frac, client, sigma2):
    """Exact E||x_r - x^i_{r,k}||^2 over the local-drift bound, k = ceil(k_frac K)."""
    prob = _drift_problem(A, b, n)
    eta_c, k = 1 / (8 * prob.L * K), max(1, math.ceil(k_frac * K))
    grads = prob.client_gradients(np.tile(x, (n, 1)))
    bound = drift_bound(step_client=eta_c, local_steps=K, sigma2=sigma2,
                        sigma_G2=prob.heterogeneity(),
                        grad_norm2=float(np.sum(prob.gradient(x) ** 2)))
    return exact_drift(prob.A[client], grads[client], step_client=eta_c, k=k,
                       sigma2=sigma2) / bound


@attack_surface("safari.thm5.delta_bar_dominates_stationary",
                space={"q": Box(0, 1), "c": Box(1e-4, 0.9, log=True), "K": Integers(1, 50),
                       "m": Integers(1, 10), "mu": Box(0.01, 10, log=True)},
                tolerance=1e-12, tolerance_why=CLOSED,
                fixed=[{"q": 0.5, "c": 0.1, "K": 5, "m": 1, "mu": 1.0}],
                note="identical clients (L = mu), eta_s = c/mu, eta_c = 4 L eta_s/(K(L+mu))")
def delta_bar(*, q, c, K, m, mu):
    """Exact stationary error over Theorem 5's delta_bar."""
    eta_s = c / mu
    eta_c = 4 * mu * eta_s / (K * 2 * mu)
    exact = homogeneous_stationary_error(q=q, step_client=eta_c, step_server=eta_s,
                                         local_steps=K, n_sampled=m, mu=mu, sigma2=1.0,
                                         sigma_s2=1.0)
    db = thm5_delta_bar(q=q, step_client=eta_c, step_server=eta_s, local_steps=K,
                        n_sampled=m, L=mu, mu=mu, sigma2=1.0, sigma_s2=1.0, sigma_G2=0.0)
    return exact / db


def _interval(lo, width, t_frac):
    """a' < t* < b' inside [0, 1]: a' = lo (1 - width), b' = a' + width."""
    ap = lo * (1 - width)
    return ap, ap + width, ap + t_frac * width


THRESHOLD_SPACE = {"lo": Box(0, 1), "width": Box(0.01, 0.99), "t_frac": Box(0.01, 0.99),
                   "t": Box(-0.5, 1.5)}


#: smallest eps_Q attacked: masses are cdf differences with absolute error ~1e-16, so a
#: ratio over alpha eps_Q >= 1e-2 x 1e-4 keeps a relative rounding error below 1e-9
EPS_Q_MIN = 1e-4


def _eps_q_resolved(**inst):
    ap, bp, ts = _interval(inst["lo"], inst["width"], inst["t_frac"])
    dist = sa_fl_mixture(0.0, 1.0, ap, bp, inst["weight"]) if "weight" in inst else \
        uniform(ap, bp)
    eps_q = excess_error(dist, np.array([inst["t"]]), ts)[0]
    return eps_q >= EPS_Q_MIN or "eps_Q < 1e-4 (below the resolution of the ratio)"


@attack_surface("safari.assumption2.example_fails_outside", space=THRESHOLD_SPACE,
                validator=_eps_q_resolved, tolerance=1e-9,
                tolerance_why="rounding: masses >= 1e-4 with ~1e-16 error, alpha >= 0.01",
                shrink=True,
                fixed=[{"lo": 0.4 / 0.9, "width": 0.1, "t_frac": 0.9, "t": 1.0}],
                note="P = U[0, 1], Q = U[a', b'], a' < t* < b' (t* strictly inside)")
def example_alpha(*, lo, width, t_frac, t):
    """|eps_P - eps_Q| / (alpha eps_Q) with the example's alpha = 1 - (b'-a')/(b-a)."""
    ap, bp, ts = _interval(lo, width, t_frac)
    tt = np.array([t])
    eps_p = excess_error(uniform(0.0, 1.0), tt, ts)[0]
    eps_q = excess_error(uniform(ap, bp), tt, ts)[0]
    return abs(eps_p - eps_q) / (paper_alpha(0.0, 1.0, ap, bp) * eps_q)


@attack_surface("safari.assumption2.mixture_alpha",
                space={**THRESHOLD_SPACE, "weight": Box(0.01, 0.99),
                       "t_frac": Box(0.0, 1.0)},
                validator=_eps_q_resolved, tolerance=1e-9,
                tolerance_why="rounding: masses >= 1e-4 with ~1e-16 error; weight <= 0.99 "
                "keeps alpha >= 0.01 (at weight 1, Q = P and alpha = 0)",
                fixed=[{"lo": 0.4 / 0.9, "width": 0.1, "t_frac": 0.9, "t": 1.0,
                        "weight": 0.1}],
                note="Q = (1 - l2) U[a', b'] + l2 U[0, 1], t* anywhere in [a', b']")
def mixture(*, lo, width, t_frac, t, weight):
    """|eps_P - eps_Q| / eps_Q over the corrected alpha = max(1 - 1/r_max, 1/r_min - 1)."""
    ap, bp, ts = _interval(lo, width, t_frac)
    tt = np.array([t])
    eps_p = excess_error(uniform(0.0, 1.0), tt, ts)[0]
    eps_q = excess_error(sa_fl_mixture(0.0, 1.0, ap, bp, weight), tt, ts)[0]
    return abs(eps_p - eps_q) / eps_q / mixture_alpha(0.0, 1.0, ap, bp, weight)
