r"""Theorem D.1 of K-Vib (static regret with full information, App. D.2): the result, its parts,
its hypotheses and its printed bound; its claims are the sibling modules of this folder.

Statement (eq. (51)): under Assumption 5.1, expected size K and :math:`\gamma=G^2`, FTRL
(eq. (10)) has :math:`\sum_t\ell_t(p^t)-\min_p\sum_t\ell_t(p)\le(\frac{22NG}{\bar z}+
\frac{2\sqrt6NG}K)\sum_i\sqrt{\pi^2_{1:T}(i)}+\frac{22NG^2}{\bar z}`, :math:`\bar z=\min_tz_t`
(the printed bound ``kvib.thm_d1``; the derivation gives :math:`22N^2G^2/\bar z`). Its proof:
eq. (49) (the floor price, :math:`1/(1-x)^2-1\le6x` on :math:`[0,1/2]`), eq. (50), and the
choice :math:`p_{\min}=\min\{K/(2N),GK/(\sqrt6\sum_i\sqrt{\pi^2_{1:T}(i)})\}`. Instances carry
``feedback``, ``n_rounds``, ``budget``, ``n_clients``, ``gamma`` and ``G``; the floor step
carries ``x``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, result

from ...predicates import at_most
from ..conditions import assumption_5_1, budget_in_range, feedback_max


@hypothesis("A5.1", "Assumption 5.1: feedback pi_t(i) in [0, G] with |pi_t(i) - pi_*(i)| <= "
                    "O(1/sqrt t) over the T rounds")
def a5_1(*, feedback, n_rounds):
    return assumption_5_1(feedback, n_rounds)


@hypothesis("K", "expected size K in [1, N]")
def budget(*, budget, n_clients):
    return budget_in_range(budget, n_clients)


@hypothesis("gamma", "gamma = G^2, G the largest feedback over the T rounds")
def gamma_is_g2(*, gamma, G, feedback, n_rounds):
    top = feedback_max(feedback, n_rounds)
    return bool(abs(G - top) <= 1e-12 * G and abs(gamma - G * G) <= 1e-12 * G * G)


@hypothesis("x", "x in [0, 1/2] (p_min <= K/(2N), x = N p_min/K)")
def floor_range(*, x):
    x = np.asarray(x, dtype=float)
    return bool(np.all(x >= 0)) and at_most(x, 0.5)


THM_D1 = result(
    "kvib.thm_d1", ref="Theorem D.1", title="static regret of FTRL with full information",
    parts={"bound": "eq. (51): Regret <= (22NG/zbar + 2 sqrt6 NG/K) sum_i sqrt(pi^2_{1:T}(i)) "
                    "+ 22 N G^2/zbar",
           "rate": "Remark after Lemma 5.1: with a proper gamma, Regret_S(T)/T <= O(1/sqrt T)",
           "eq49": "eq. (49): 1/(1-x)^2 - 1 <= 6x on [0, 1/2] (the price of the floor)",
           "eq50_51": "eq. (50) -> (51): (22NG/zbar) sum_i (sqrt(pi^2_{1:T}(i)) + G) = (22NG/"
                      "zbar) sum_i sqrt(pi^2_{1:T}(i)) + 22 N G^2/zbar",
           "pmin": "after eq. (50): with p_min = min{K/(2N), GK/(sqrt6 sum_i sqrt(pi^2_{1:T}"
                   "(i)))}, N G^2/p_min + 6 N p_min (sum_i sqrt(pi^2_{1:T}))^2/K^2 <= 2 sqrt6 NG "
                   "sum_i sqrt(pi^2_{1:T}(i))/K"},
    hypotheses=(a5_1.only("bound", "rate", "eq50_51", "pmin"),
                budget.only("bound", "rate", "eq50_51", "pmin"),
                gamma_is_g2.only("bound", "rate", "eq50_51", "pmin"),
                floor_range.only("eq49")))


def thm_d1_bound_value(*, N, G, zbar, K, root, last_factor=1.0):
    """Eq. (51)'s right side; ``last_factor`` N gives the derivation's 22 N^2 G^2/zbar."""
    return ((22 * N * G / zbar + 2 * np.sqrt(6) * N * G / K) * root
            + 22 * last_factor * N * G**2 / zbar)


@bound("kvib.thm_d1", ref="Thm D.1, eq. (51) (static regret, full information)",
       constants=(integer("N", "clients"), positive("G", "largest feedback"),
                  positive("zbar", "min_t z_t"), positive("K", "expected sample size"),
                  nonnegative("root", "sum_i sqrt(pi^2_{1:T}(i))")),
       quantity="Regret_S(T) of FTRL with gamma = G^2",
       corrected=lambda **c: thm_d1_bound_value(**c, last_factor=c["N"]))
def thm_d1_bound(*, N, G, zbar, K, root):
    """(22NG/zbar + 2 sqrt6 NG/K) root + 22 N G^2/zbar; corrected: 22 N^2 G^2/zbar."""
    return thm_d1_bound_value(N=N, G=G, zbar=zbar, K=K, root=root)
