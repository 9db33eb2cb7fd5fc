r"""Theorem 5.1 of K-Vib (bound of the best fixed probability): the result, its parts, its
hypotheses and its printed bound; its claims are the sibling modules of this folder.

Statement: under Assumption 5.1, sampling with expected size K, for every :math:`T\ge1`,
:math:`T_{\rm BFP}\le\frac TK(\sum_i\sqrt{V_T(i)/T})(2\Pi_*+\sum_i\sqrt{V_T(i)/T})` (the
printed bound ``kvib.thm5_1``). The proof (App. D.1) uses the uncapped minimum (eqs.
(39)-(40)) and eq. (41), :math:`\Pi_*^2=\sum_i\pi_*^2(i)` with "the average assumption"
:math:`\Pi_*\le\frac1T\sum_t\Pi_t`. Instances carry ``feedback`` (an Assumption 5.1 sequence),
``n_rounds``, ``budget`` and ``n_clients``; the proof step on one round carries ``pi``.
Assumption 5.1 and the budget apply to every part, the proof steps included: a ``violated``
proof step rests on a feedback sequence and a budget that meet the statement's hypotheses.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, result, vector

from ..conditions import assumption_5_1, budget_in_range
from ..conditions import nonnegative as nonnegative_values


@hypothesis("A5.1", "Assumption 5.1: feedback pi_t(i) in [0, G] with |pi_t(i) - pi_*(i)| <= "
                    "O(1/sqrt t) over the T rounds")
def a5_1(*, feedback, n_rounds):
    return assumption_5_1(feedback, n_rounds)


@hypothesis("K", "sampling with expected size K in [1, N] (Remark 2.1)")
def budget(*, budget, n_clients):
    return budget_in_range(budget, n_clients)


@hypothesis("feedback", "one round's feedback pi(i) >= 0 and K in [1, N]")
def one_round(*, pi, budget):
    return nonnegative_values(pi) and budget_in_range(budget, np.size(pi))


THM5_1 = result(
    "kvib.thm5_1", ref="Theorem 5.1", title="bound of the best fixed probability",
    parts={"bound": "T_BFP <= (T/K)(sum_i sqrt(V_T(i)/T))(2 Pi_* + sum_i sqrt(V_T(i)/T))",
           "eq39_40": "proof, eqs. (39)-(40): min_p sum_i pi(i)^2/p_i = (sum_i pi(i))^2/K",
           "eq41_square": "proof, eq. (41): Pi_*^2 = sum_i pi_*^2(i), so that Pi_*^2 <= (K/T) "
                          "sum_t min_p l_t(p)",
           "eq41_average": "proof, eq. (41) ('the average assumption'): Pi_* <= (1/T) "
                           "sum_t Pi_t"},
    hypotheses=(a5_1, budget, one_round.only("eq39_40")))


@bound("kvib.thm5_1", ref="Thm 5.1 (best fixed probability)",
       constants=(integer("T", "rounds"), positive("K", "expected sample size"),
                  nonnegative("Pi_star", "sum_i pi_*(i)"),
                  vector("V", "V_T(i), one per client")),
       quantity="T_BFP (regret of the best fixed probability)")
def thm5_1_bound(*, T, K, Pi_star, V):
    """(T/K) (sum_i sqrt(V_T(i)/T)) (2 Pi_* + sum_i sqrt(V_T(i)/T))."""
    s = float(np.sum(np.sqrt(np.asarray(V) / T)))
    return T / K * s * (2 * Pi_star + s)
