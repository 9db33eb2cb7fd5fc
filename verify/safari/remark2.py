r"""Remark 2 of SAFARI: the server data may come from P' != P.

The remark says Theorems 2-3 still hold when the server sample T is drawn from a related
distribution P' instead of the target P, as long as the mixture
:math:`Q = \lambda_1\mathcal D + \lambda_2 P'` (client data and server data, weighted by their
sample shares) is :math:`(\alpha, \beta)`-positively related to P. No proof is given
(spec 000, Remark 2). Checked on the threshold family of :mod:`verify.safari._thresholds`:
P = U[0, 1], client data :math:`\mathcal D` = U[0.2, 0.6], realizable labels of
:math:`t^* = 0.8` (outside supp D, so the rate must come from the server data), pooled ERM,
error measured under P while the server samples come from P'.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from flbounds.ledger import Evidence, claim, result
from flbounds.stats import loglog_slope
from flbounds.theory.thresholds import excess_error, pooled_erm_errors, uniform

from ._thresholds import RATE_CI, theorem_rate_gate
from .assumptions import a1_noise_condition, a2_positive_relation

REMARK2 = result(
    "safari.remark2", ref="Remark 2", title="server data from P' != P",
    parts={"extension": "Theorems 2-3 still hold when T ~ P' != P, as long as Q = lambda_1 D "
                        "+ lambda_2 P' is (alpha, beta)-positively related to P"},
    hypotheses=(a1_noise_condition, a2_positive_relation))

TARGET_P = uniform(0.0, 1.0)
CLIENT = uniform(0.2, 0.6)
T_STAR = 0.8
RELATED = uniform(0.1, 0.9)     # P': covers t*, differs from P
UNRELATED = uniform(0.0, 0.5)   # control: misses t*, so Q is not positively related to P
RATIO = 4                       # n_S = RATIO n_T: constant shares lambda_1, lambda_2
WINDOW = (-1.2, -0.8)           # spec V3's window for a 1/n rate (log factors, finite n)


def _alpha(server, grid=2001):
    r""":math:`\sup_t \epsilon_P(h_t)/\epsilon_Q(h_t)` over thresholds t (beta = 1), with
    :math:`\epsilon_Q = \lambda_1\epsilon_{\mathcal D} + \lambda_2\epsilon_{P'}`; inf if some
    threshold has :math:`\epsilon_Q = 0 < \epsilon_P`."""
    t = np.linspace(0.0, 1.0, grid)
    t = t[np.abs(t - T_STAR) > 1e-9]
    lam1 = RATIO / (1 + RATIO)
    eps_q = lam1 * excess_error(CLIENT, t, T_STAR) + (1 - lam1) * excess_error(server, t,
                                                                               T_STAR)
    eps_p = excess_error(TARGET_P, t, T_STAR)
    with np.errstate(divide="ignore"):
        return float(np.max(np.where(eps_q > 0, eps_p / np.maximum(eps_q, 1e-300), np.inf)))


def _slope(rng, server, sizes, n_reps, n_boot):
    """Slope of E eps_P (under P) against n_T + n_S for server samples from ``server``."""
    err = np.empty((n_reps, len(sizes)))
    for j, n_t in enumerate(sizes):
        res = pooled_erm_errors(rng, n_client=RATIO * n_t, n_server=n_t, client_dist=CLIENT,
                                server_dist=server, target=T_STAR, n_reps=n_reps)
        err[:, j] = excess_error(TARGET_P, res["t_hat"], T_STAR)
    total = (1 + RATIO) * np.asarray(sizes, dtype=float)
    return asdict(loglog_slope(total, err, rng=rng, n_boot=n_boot, mean="arithmetic")), err


@claim("safari.remark2.server_data_from_p_prime", ref="Remark 2 (T ~ P' != P)", kind="remark",
       expected="holds", result=REMARK2,
       statement="With server data from P' != P such that Q = lambda_1 D + lambda_2 P' is "
                 "(alpha, 1)-positively related to P, Theorem 2's rate still holds: eps_P of "
                 "pooled ERM falls like 1/(n_T + n_S) at constant shares.",
       quick=dict(sizes=[10, 30, 100, 300], n_reps=100, n_boot=200),
       full=dict(sizes=[10, 30, 100, 300, 1000, 3000], n_reps=500, n_boot=1000))
def server_data_from_p_prime(*, rng, sizes, n_reps, n_boot):
    """P' = U[0.1, 0.9], n_S = 4 n_T. The remark's condition is computed: alpha = sup_t
    eps_P/eps_Q over all thresholds (beta = 1) is finite for P' (the ledger evaluates
    Assumption 2 on it, and Assumption 1: realizable labels). Measured: the lower end of the
    95% bootstrap interval of the slope of E eps_P against n_T + n_S, against Theorem 2's rate
    gate at the smallest n_T + n_S (:func:`verify.safari._thresholds.theorem_rate_gate`: the
    least steep slope a 1/n rate with Lemma 1's log factor allows; the spec's window [-1.2,
    -0.8] is reported). Negative control, which the same check must reject: P'' = U[0, 0.5]
    misses t* = 0.8, alpha is infinite, and eps_P stays near 0.8 - 0.6 (slope ~0: its whole
    interval above the gate; in details). Expected to hold."""
    alpha = _alpha(RELATED)
    fit, err = _slope(rng, RELATED, sizes, n_reps, n_boot)
    control, control_err = _slope(rng, UNRELATED, sizes, n_reps, n_boot)
    gate = theorem_rate_gate((1 + RATIO) * float(min(sizes)))
    control_rejected = control["ci_low"] > gate
    return Evidence(measured=fit["ci_low"], theoretical=gate, relation="<=", tolerance=RATE_CI,
                    details={"fit": fit, "mean_eps_P": err.mean(axis=0), "alpha": alpha,
                             "rate_gate": gate,
                             "in_spec_window": bool(WINDOW[0] <= fit["slope"] <= WINDOW[1]),
                             "n_T": sizes, "n_S_over_n_T": RATIO,
                             "control_P_double_prime": [0.0, 0.5],
                             "control_alpha": _alpha(UNRELATED), "control_fit": control,
                             "control_mean_eps_P": control_err.mean(axis=0),
                             "control_rejected": control_rejected},
                    applicable=control_rejected,
                    reason="" if control_rejected else
                    "the negative control passed the window too: the check cannot tell",
                    instance=dict(flip=0.0, alpha=alpha))
