r"""Theorem 3 of FOCUS (FedAvg under arbitrary activation) and its Corollaries 1-3.

Theorem 3: under Assumptions 1, 2, 3 and 5, with :math:`\eta \le \min\{1/(3L),
1/(4(\tau-1)L)\}`,

.. math:: \limsup_K E\|\bar x_K - x^\star\|^2 \le 80\eta^2\kappa^2L^2(\tau-1)^2(\delta_q^2 +
          \sigma_G^2) + 10\kappa\delta_q^2 + 16\eta\tau^2(\delta_q^2 + \sigma_G^2)/\mu ,

:math:`\bar x_k = q^\top\mathbf x_k`, :math:`\kappa = L/\mu`, :math:`\delta_q^2` of (37).
Corollary 1: uniform sampling (:math:`\delta_q = 0`); Corollary 2: also :math:`\tau = 1`;
Corollary 3: homogeneous functions (:math:`\sigma_G = 0`), exact convergence.

This package is their home: results, predicates and printed bounds here; the claims on
FedAvg's exact stationary error in :mod:`.limits`, the worst-case (PEP) rate of Corollary 3 in
:mod:`.worst_case`, the attacks in :mod:`.attacks`. Instances carry ``problem``, ``q`` (and
``q_hat``, q conditioned on a non-empty round), ``L``, ``mu``, ``tau``, ``step``,
``delta_q2`` and ``sigma_g2``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, result
from flbounds.problems import Quadratic

from ...predicates import at_most, inv
from ..assumptions import a1, a2, a3, a5, eq37, heterogeneity


def thm3_conditions(L, tau):
    """Theorem 3 (FedAvg): min{1/(3L), 1/(4(tau-1)L)}."""
    return {"1/(3L)": 1 / (3 * L), "1/(4(tau-1)L)": inv(4 * (tau - 1) * L)}


@hypothesis("step", "eta <= min{1/(3L), 1/(4(tau-1)L)}")
def thm3_step(*, step, L, tau):
    return at_most(step, min(thm3_conditions(L, tau).values()))


@hypothesis("uniform", "uniform sampling: q = u (every q_i = 1/N, so delta_q = 0)")
def uniform(*, q_hat):
    q_hat = np.asarray(q_hat, dtype=float)
    return bool(np.allclose(q_hat, 1 / q_hat.size, rtol=1e-12, atol=0))


@hypothesis("homogeneous", "homogeneous functions: every f_i is the same (sigma_G = 0)")
def homogeneous(*, problem):
    return heterogeneity(problem) == 0 and bool(np.allclose(problem.b, problem.b[0], rtol=0,
                                                            atol=0))


THM3 = result(
    "focus.thm3", ref="Theorem 3", title="FedAvg under arbitrary activation: limsup error",
    parts={"bound": "eq. (67): limsup E||x_bar_K - x*||^2 <= 80 eta^2 kappa^2 L^2 (tau-1)^2 "
                    "(delta_q^2 + sigma_G^2) + 10 kappa delta_q^2 + 16 eta tau^2 (delta_q^2 "
                    "+ sigma_G^2)/mu",
           "corrected": "the proof's own B/alpha of (64)-(66): 80 eta^2 kappa^2 (tau-1)^2 "
                        "(delta_q^2 + sigma_G^2) + 10 delta_q^2/mu^2 + 16 eta tau^2 "
                        "(delta_q^2 + sigma_G^2)/mu"},
    hypotheses=(a1, a2, a3, a5, eq37, thm3_step))

COR1 = result(
    "focus.cor1", ref="Corollary 1", title="FedAvg under uniform sampling",
    parts={"bound": "eq. (68): limsup E||x_bar - x*||^2 <= 80 eta^2 kappa^2 L^2 (tau-1)^2 "
                    "sigma_G^2 + 16 eta tau^2 sigma_G^2/mu",
           "linear_in_step": "remark after Thm 3 / Cor. 1: under uniform sampling the error "
                             "vanishes linearly in eta"},
    hypotheses=(a1, a2, a3, a5, uniform, thm3_step))

COR2 = result(
    "focus.cor2", ref="Corollary 2", title="FedAvg, uniform sampling, one local update",
    parts={"bound": "eq. (69), tau = 1: limsup E||x_bar - x*||^2 <= 16 eta sigma_G^2/mu"},
    hypotheses=(a1, a2, a3, a5, uniform, thm3_step))

COR3 = result(
    "focus.cor3", ref="Corollary 3", title="FedAvg with homogeneous functions",
    parts={"exact": "eq. (70): with identical f_i FedAvg converges to x* under any sampling",
           "rate": "the proof of Thm 3, (66) with delta_q = sigma_G = 0: E||x_r - x*||^2 "
                   "contracts by (1 - eta mu/2)^tau per round"},
    hypotheses=(a1, a2, a3, homogeneous, thm3_step.only("rate")))


def _mu_le_L(*, mu, L, **_):
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")


def _thm3_printed(*, mu, L, tau, delta_q2, sigma_g2, step):
    return thm3_printed(step, tau, mu, L, delta_q2, sigma_g2)


def _thm3_corrected(*, mu, L, tau, delta_q2, sigma_g2, step):
    return thm3_corrected(step, tau, mu, L, delta_q2, sigma_g2)


bound("focus.thm3", ref="Thm 3, eq. (67) (FedAvg)",
      constants=(positive("mu"), positive("L"), integer("tau"),
                 nonnegative("delta_q2", "sampling bias delta_q^2"),
                 nonnegative("sigma_g2", "heterogeneity sigma_G^2")),
      check=_mu_le_L, quantity="limsup E||x_k - x*||^2 of FedAvg",
      steps=lambda mu, L, tau, delta_q2, sigma_g2: thm3_conditions(L, tau),
      corrected=_thm3_corrected)(_thm3_printed)


@bound("focus.cor3.rate", ref="Cor. 3 via the proof of Thm 3, eq. (66) with delta_q = sigma_G = 0",
       constants=(positive("mu"), positive("L"), integer("tau")), check=_mu_le_L,
       quantity="per-round contraction of E||x_r - x*||^2 of FedAvg, identical clients",
       steps=lambda mu, L, tau: thm3_conditions(L, tau))
def cor3_rate(*, mu, L, tau, step):
    """(1 - eta mu / 2)^tau: (66) with B = C = 0, over the tau local iterations of a round."""
    return (1 - step * mu / 2) ** tau


def cor1_bound(*, step, tau, mu, L, sigma_g2):
    """Corollary 1, eq. (68): 80 eta^2 kappa^2 L^2 (tau-1)^2 sigma_G^2 + 16 eta tau^2
    sigma_G^2/mu (Corollary 2, eq. (69), is its tau = 1 value 16 eta sigma_G^2/mu)."""
    kappa = L / mu
    return (80 * step**2 * kappa**2 * L**2 * (tau - 1) ** 2 * sigma_g2
            + 16 * step * tau**2 * sigma_g2 / mu)


def thm3_instance(a, b, process, step, tau, delta_q2, sigma_g2):
    """The values Theorem 3's hypotheses read for f_i = (a/2)||x||^2 - b_i'x."""
    n, d = b.shape
    q = process.aggregation_weights()
    return dict(problem=Quadratic(np.broadcast_to(a * np.eye(d), (n, d, d)).copy(), b), q=q,
                q_hat=q / q.sum(), L=a, mu=a, tau=tau, step=step, delta_q2=delta_q2,
                sigma_g2=sigma_g2)


def thm3_printed(step, tau, mu, L, delta_q, sigma_g):
    """(67) as printed: 80 eta^2 kappa^2 L^2 (tau-1)^2 (d+s) + 10 kappa d
    + 16 eta tau^2 (d+s)/mu."""
    kappa = L / mu
    return (80 * step**2 * kappa**2 * L**2 * (tau - 1) ** 2 * (delta_q + sigma_g)
            + 10 * kappa * delta_q + 16 * step * tau**2 * (delta_q + sigma_g) / mu)


def thm3_corrected(step, tau, mu, L, delta_q, sigma_g):
    """The proof's own B/alpha: 80 eta^2 kappa^2 (tau-1)^2 (d+s) + 10 d/mu^2
    + 16 eta tau^2 (d+s)/mu."""
    kappa = L / mu
    return (80 * step**2 * kappa**2 * (tau - 1) ** 2 * (delta_q + sigma_g)
            + 10 * delta_q / mu**2 + 16 * step * tau**2 * (delta_q + sigma_g) / mu)



