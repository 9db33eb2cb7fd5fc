r"""[002]'s printed rates and bounds as functions of their constants (``flbounds bound``).

The step-size conditions are dicts ``{printed term: largest step}``; ``instances``'
``thm1a_step_printed`` & co. are their minima, so the claims, the worst-case SDPs
(``flbounds.pep``) and the calculator share one formula. ``p`` are Bernoulli participation
probabilities; ``q_min`` is the exact minimum aggregation weight
:math:`\min_i E[1\{i \in S\}/|S|]` (Assumption 1).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, integer, nonnegative, positive, probabilities
from flbounds.participation import Bernoulli


def _inv(x):
    return np.inf if x == 0 else 1.0 / x


def q_min_of(p) -> float:
    """Exact min_i q_i of Bernoulli(p) participation."""
    return float(Bernoulli(np.asarray(p, dtype=float)).aggregation_weights().min())


def thm1a_conditions(mu, L, n, tau, q_min):
    """Theorem 1(a)'s printed step conditions."""
    return {"3mu/(27NL^2)": 3 * mu / (27 * n * L**2), "1/(3L(tau-1))": _inv(3 * L * (tau - 1)),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n))}


def thm1a_proof_conditions(mu, L, n, tau, q_min):
    """The proof-consistent conditions (spec 7.8: (110) re-derived, Lemmas 3-4's own)."""
    return {"q_min/(3N(8L^2/mu + mu/2)) [(110)]": q_min / (3 * n * (8 * L**2 / mu + mu / 2)),
            "1/(3L(tau-1))": _inv(3 * L * (tau - 1)),
            "1/(2L sqrt(tau-1)) [(94)]": _inv(2 * L * np.sqrt(tau - 1)),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n)),
            "q_min^{3/2}/(8 sqrt2 L(tau-1)) [Lemma 4]":
                _inv(8 * np.sqrt(2) * L * (tau - 1) / q_min**1.5),
            "1/(3mu) [Lemma 3]": 1 / (3 * mu)}


def eq110_step(mu, L, n, q_min):
    """The step the proof's (110) asks for, as printed: 2 q_min/(3N(8L^2/mu + mu/2))."""
    return 2 * q_min / (3 * n * (8 * L**2 / mu + mu / 2))


def lemma3_rhs(*, mu, L, n, step, dist, gap, consensus):
    """Right side of Lemma 3, eq. (87): (1 - eta mu N/2) dist - 2 eta N (1 - 2 eta N L) gap
    + (8 eta L^2 N/mu) consensus."""
    return ((1 - step * mu * n / 2) * dist - 2 * step * n * (1 - 2 * step * n * L) * gap
            + 8 * step * L**2 * n / mu * consensus)


def lemma4_rhs(*, q_min, n, step, consensus, grad, constant):
    """Right side of Lemma 4, eq. (97), with gradient constant ``constant`` (16/(3 q_min) as
    printed): (1 - q_min/3) consensus + constant eta^2 N^2 grad."""
    return (1 - q_min / 3) * consensus + constant * step**2 * n**2 * grad


def thm1b_conditions(beta, L, n, tau, q_min):
    """Theorem 1(b)'s printed conditions plus the proof's 1/(4LN), 1/(2(tau-1)LN)."""
    return {"3q_min/(32N)": 3 * q_min / (32 * n), "q_min/(12 beta N)": q_min / (12 * beta * n),
            "q_min/(16L^2)": q_min / (16 * L**2),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n)),
            "1/(4LN) [proof]": 1 / (4 * L * n),
            "1/(2(tau-1)LN) [proof]": _inv(2 * (tau - 1) * L * n)}


def thm1c_conditions(L, n, tau, q_min):
    """Theorem 1(c)'s printed conditions."""
    return {"1/(2L(tau-1))": _inv(2 * L * (tau - 1)),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n)),
            "q_min/(16L sqrt(2N))": q_min / (16 * L * np.sqrt(2 * n)),
            "1/(4LN)": 1 / (4 * L * n)}


def thm3_conditions(L, tau):
    """Theorem 3 (FedAvg): min{1/(3L), 1/(4(tau-1)L)}."""
    return {"1/(3L)": 1 / (3 * L), "1/(4(tau-1)L)": _inv(4 * (tau - 1) * L)}


def _mu_le_L(*, mu, L, **_):
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")


_SC = (positive("mu", "strong convexity of every f_i"), positive("L", "smoothness of every f_i"),
       probabilities("p", "Bernoulli participation probabilities, one per client"),
       integer("tau", "local steps"))


@bound("focus.thm1a", ref="Thm 1(a), eq. (23)", constants=_SC, check=_mu_le_L,
       quantity="per-round contraction of Psi_r = E||x_r - x*||^2 + consensus",
       steps=lambda mu, L, p, tau: thm1a_conditions(mu, L, len(p), tau, q_min_of(p)))
def thm1a(*, mu, L, p, tau, step):
    """1 - eta mu N / 2."""
    return 1 - step * mu * len(p) / 2


@bound("focus.thm1a.proof", ref="Thm 1(a), proof E.5 (corrected step conditions)",
       constants=_SC, check=_mu_le_L,
       quantity="per-round contraction of Psi under the proof-consistent step",
       steps=lambda mu, L, p, tau: thm1a_proof_conditions(mu, L, len(p), tau, q_min_of(p)))
def thm1a_proof(*, mu, L, p, tau, step):
    """1 - eta mu N / 2 (same rate, the step the proof supports)."""
    return 1 - step * mu * len(p) / 2


@bound("focus.thm1b", ref="Thm 1(b), eq. (24)",
       constants=(positive("beta", "PL constant of F"), positive("L"), probabilities("p"),
                  integer("tau")),
       quantity="per-round contraction of Phi_r = E F(x_r) - F* + consensus",
       steps=lambda beta, L, p, tau: thm1b_conditions(beta, L, len(p), tau, q_min_of(p)),
       corrected=lambda beta, L, p, tau, step: 1 - step * beta * len(p) / 4)
def thm1b(*, beta, L, p, tau, step):
    """1 - eta beta N (corrected: 1 - eta beta N / 4 with eta <= 3 q_min/(128 N), audit)."""
    return 1 - step * beta * len(p)


@bound("focus.thm1c", ref="Thm 1(c), eq. (25) / (129)",
       constants=(positive("L"), probabilities("p"), integer("tau"),
                  integer("R", "number of rounds"),
                  nonnegative("gap0", "F(x_0) - F*")),
       quantity="(1/R) sum_{r<R} E||grad F(x_r)||^2",
       steps=lambda L, p, tau, R, gap0: thm1c_conditions(L, len(p), tau, q_min_of(p)))
def thm1c(*, L, p, tau, R, gap0, step):
    """8 (F(x_0) - F*) / (eta N R)."""
    return 8 * gap0 / (step * len(p) * R)


def _thm3_printed(*, mu, L, tau, delta_q2, sigma_g2, step):
    from .fedavg_limit import thm3_printed
    return thm3_printed(step, tau, mu, L, delta_q2, sigma_g2)


def _thm3_corrected(*, mu, L, tau, delta_q2, sigma_g2, step):
    from .fedavg_limit import thm3_corrected
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
