r"""Theorem 1 of FOCUS: FOCUS's deterministic rates, one result per regime.

Under Assumptions 1 (arbitrary participation) and 2 (L-smoothness):

(a) with Assumption 3 (every f_i mu-strongly convex) and
    :math:`\eta \le \min\{3\mu/(27NL^2), 1/(3L(\tau-1)), q_{\min}^{3/2}/(8L\sqrt N)\}`,
    :math:`E\|\bar x_{R\tau+1} - x^\star\|^2 \le \Psi_R \le (1 - \eta\mu N/2)^R\Psi_0` (23);
(b) with Assumption 4 (F beta-PL) and
    :math:`\eta \le \min\{3q_{\min}/(32N), q_{\min}/(12\beta N), q_{\min}/(16L^2),
    q_{\min}^{3/2}/(8L\sqrt N)\}`,
    :math:`E F(\bar x_{R\tau+1}) - F^\star \le \Phi_R \le (1 - \eta\beta N)^R\Phi_0` (24);
(c) with no extra assumption and
    :math:`\eta \le \min\{1/(2L(\tau-1)), q_{\min}^{3/2}/(8L\sqrt N), q_{\min}/(16L\sqrt{2N}),
    1/(4LN)\}`, :math:`\frac1R\sum_{r<R} E\|\nabla F\|^2 \le 8(F(x_1) - F^\star)/(\eta N R)` (25).

This package is the theorem's home: the results, their parts and hypotheses and the printed
bounds here; the claims in :mod:`.rates` (Monte Carlo rates, the proof steps), :mod:`.limits`
(the limit point at machine precision), :mod:`.worst_case` (PEP tightness) and
:mod:`.exactness` (exact convergence beyond the step). Instances carry ``q`` (exact
averaging weights), ``problem``, ``L``, ``mu`` / ``beta``, ``tau`` and ``step``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, probabilities, result
from flbounds.participation import Bernoulli

from ...predicates import at_most, inv
from ..assumptions import a1, a2, a3, a4


def q_min_of(p) -> float:
    """Exact min_i q_i of Bernoulli(p) participation."""
    return float(Bernoulli(np.asarray(p, dtype=float)).aggregation_weights().min())


def thm1a_conditions(mu, L, n, tau, q_min):
    """Theorem 1(a)'s printed step conditions."""
    return {"3mu/(27NL^2)": 3 * mu / (27 * n * L**2), "1/(3L(tau-1))": inv(3 * L * (tau - 1)),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n))}


def thm1a_proof_conditions(mu, L, n, tau, q_min):
    """The proof-consistent conditions (spec 7.8: (110) re-derived, Lemmas 3-4's own)."""
    return {"q_min/(3N(8L^2/mu + mu/2)) [(110)]": q_min / (3 * n * (8 * L**2 / mu + mu / 2)),
            "1/(3L(tau-1))": inv(3 * L * (tau - 1)),
            "1/(2L sqrt(tau-1)) [(94)]": inv(2 * L * np.sqrt(tau - 1)),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n)),
            "q_min^{3/2}/(8 sqrt2 L(tau-1)) [Lemma 4]":
                inv(8 * np.sqrt(2) * L * (tau - 1) / q_min**1.5),
            "1/(3mu) [Lemma 3]": 1 / (3 * mu)}


def eq110_step(mu, L, n, q_min):
    """The step the proof's (110) asks for, as printed: 2 q_min/(3N(8L^2/mu + mu/2))."""
    return 2 * q_min / (3 * n * (8 * L**2 / mu + mu / 2))


def thm1b_conditions(beta, L, n, tau, q_min):
    """Theorem 1(b)'s printed conditions plus the proof's 1/(4LN), 1/(2(tau-1)LN)."""
    return {"3q_min/(32N)": 3 * q_min / (32 * n), "q_min/(12 beta N)": q_min / (12 * beta * n),
            "q_min/(16L^2)": q_min / (16 * L**2),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n)),
            "1/(4LN) [proof]": 1 / (4 * L * n),
            "1/(2(tau-1)LN) [proof]": inv(2 * (tau - 1) * L * n)}


def thm1c_conditions(L, n, tau, q_min):
    """Theorem 1(c)'s printed conditions."""
    return {"1/(2L(tau-1))": inv(2 * L * (tau - 1)),
            "q_min^{3/2}/(8L sqrt N)": q_min**1.5 / (8 * L * np.sqrt(n)),
            "q_min/(16L sqrt(2N))": q_min / (16 * L * np.sqrt(2 * n)),
            "1/(4LN)": 1 / (4 * L * n)}


def _q(q):
    q = np.asarray(q, dtype=float)
    return float(q.min()), q.size


@hypothesis("step", "eta <= min{3mu/(27NL^2), 1/(3L(tau-1)), q_min^{3/2}/(8L sqrt N)}")
def step_1a(*, step, q, mu, L, tau):
    q_min, n = _q(q)
    return at_most(step, min(thm1a_conditions(mu, L, n, tau, q_min).values()))


@hypothesis("step", "eta <= min{3q_min/(32N), q_min/(12 beta N), q_min/(16L^2), "
                    "q_min^{3/2}/(8L sqrt N)} (as printed; the claims add the proof's "
                    "1/(4LN), 1/(2(tau-1)LN), which only shrink it)")
def step_1b(*, step, q, beta, L, tau):
    q_min, n = _q(q)
    printed = {k: v for k, v in thm1b_conditions(beta, L, n, tau, q_min).items()
               if "[proof]" not in k}
    return at_most(step, min(printed.values()))


@hypothesis("step", "eta <= min{1/(2L(tau-1)), q_min^{3/2}/(8L sqrt N), q_min/(16L sqrt(2N)), "
                    "1/(4LN)}")
def step_1c(*, step, q, L, tau):
    q_min, n = _q(q)
    return at_most(step, min(thm1c_conditions(L, n, tau, q_min).values()))


@hypothesis("bounded_below", "F is bounded below: f_low is a finite lower bound of F (0 for "
                             "logistic losses plus a nonnegative penalty)")
def bounded_below(*, f_low):
    return bool(np.isfinite(f_low))


THM1A = result(
    "focus.thm1a", ref="Theorem 1(a)", title="FOCUS, strongly convex: linear rate",
    parts={"rate": "eq. (23): E||x_{R tau+1} - x*||^2 <= Psi_R <= (1 - eta mu N/2)^R Psi_0",
           "proof_110": "proof (E.5): the printed step implies (110), "
                        "eta <= 2 q_min/(3N(8L^2/mu + mu/2))",
           "exact": "remark after Thm 1 (and Abstract, Sec. 5.1): FOCUS converges to x* "
                    "exactly, without a decaying step"},
    hypotheses=(a1, a2, a3, step_1a))

THM1B = result(
    "focus.thm1b", ref="Theorem 1(b)", title="FOCUS, PL: linear rate",
    parts={"rate": "eq. (24): E F(x_{R tau+1}) - F* <= Phi_R <= (1 - eta beta N)^R Phi_0",
           "proof_113": "proof (E.6), eq. (113): -(eta N/2 - eta^2 N^2 L)||grad F||^2 <= "
                        "-eta N ||grad F||^2 under eta <= min{1/(4LN), 1/(2(tau-1)LN)}",
           "repaired": "eq. (24) with the rate 1 - eta beta N/4 and eta <= 3 q_min/(128 N) "
                       "(what the proof supports once (113) is fixed; audit)"},
    hypotheses=(a1, a2, a4, step_1b))

THM1C = result(
    "focus.thm1c", ref="Theorem 1(c)", title="FOCUS, general non-convex: 1/R rate",
    parts={"rate": "eq. (25) / (129): (1/R) sum_{r<R} E||grad F(x_r)||^2 <= "
                   "8 (F(x_1) - F*)/(eta N R)",
           "no_floor": "remark after Thm 1: exact convergence, no O(eta) floor (||grad F|| -> 0)"},
    hypotheses=(a1, a2, bounded_below, step_1c))


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
    return thm1a(mu=mu, L=L, p=p, tau=tau, step=step)


def thm1b_repaired(*, beta, L, p, tau, step):
    """1 - eta beta N / 4 (the rate the repaired proof supports, with eta <= 3 q_min/(128 N))."""
    return 1 - step * beta * len(p) / 4


@bound("focus.thm1b", ref="Thm 1(b), eq. (24)",
       constants=(positive("beta", "PL constant of F"), positive("L"), probabilities("p"),
                  integer("tau")),
       quantity="per-round contraction of Phi_r = E F(x_r) - F* + consensus",
       steps=lambda beta, L, p, tau: thm1b_conditions(beta, L, len(p), tau, q_min_of(p)),
       corrected=thm1b_repaired)
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
