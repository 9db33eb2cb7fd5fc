r"""Sec. III-C of SubTrunc (greedy solutions): the result, its parts and its hypotheses; the
claims are in the sibling modules ``greedy_w`` (SubTrunc's W: greedy and stochastic greedy
ratios, spec V5), ``greedy_h`` (UnionFL's h_t: the implied ratio and its repair, spec V4-V5)
and ``sampling`` (eq. (17)'s sampling of R, a library guard).

Sec. III-C: "Finding a solution for the best clients that can maximize the utility score of
both (13) and (14) can be done with the naive greedy algorithm, due to the submodular nature
given by Proposition 3 and Proposition 4 [32]", then stochastic greedy (17) "while still
maintaining high-confidence in the solution". No ratio is printed; [32]
(Nemhauser-Wolsey-Fisher) gives :math:`f(S_{greedy}) \ge (1 - (1-1/k)^k)\,\mathrm{OPT}`
(at least :math:`1 - 1/e`) for a *monotone* normalized submodular f, which W is (Prop 3) and
h_t is not. The parts are that implied guarantee on (13), on (14), and (17)'s.

Instances carry the objective (``objective``: a :class:`~flbounds.selection.SubTruncObjective`
or :class:`~flbounds.selection.UnionFLObjective`), the budget ``k`` and, for (14), the
window (``window``), the greedy's and the optimum's sets (``greedy_set``, ``opt_set``) and
the reading of the cardinality constraint (``reading``).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis, result

from .._predicates import nonnegative_values, subtrunc_objective, unionfl_objective

#: the guarantee [32] gives greedy on a monotone normalized submodular function
E_BOUND = 1.0 - np.exp(-1.0)


@hypothesis("W", "eq. (13): W = G + lam min(b, sum_S phi(f_i)) with G of eq. (10), lam >= 0, "
                 "b in R^+, phi(f_i) >= 0 (Prop 3 as corrected; its printed phi class is "
                 "subtrunc.prop3's)")
def w_objective(*, objective):
    return subtrunc_objective(objective)


@hypothesis("budget", "a budget 1 <= K_t <= |N|")
def budget(*, objective, k):
    return 1 <= k <= objective.n


@hypothesis("sample", "stochastic greedy (17): R of size 1 <= r <= |N|")
def sample_size(*, objective, r):
    return 1 <= r <= objective.n


@hypothesis("h_t", "eq. (14): h_t = f_t - mu g_t with f_t: 2^N -> R^+ the facility location "
                   "of (10) and mu >= 0")
def h_objective(*, objective):
    return unionfl_objective(objective) and nonnegative_values(objective.submodular_part)


@hypothesis("U_t", "U_t = union of the past selections S_i, i in u_t (each of size K_t): "
                   "|U_t| <= |u_t| K_t")
def window_union(*, objective, window, k):
    return window >= 1 and int(objective.recent.sum()) <= window * k


@hypothesis("cardinality", "eq. (14) maximizes over |S_t| <= K_t and greedy (16) in Alg. 1 "
                           "returns a subset of size K_t; read also with Alg. 1's 'subset of "
                           "size kappa' as the feasible set (|S_t| = K_t): reading 'at_most' "
                           "or 'exactly' says which the instance's optimum ranges over")
def cardinality(*, k, greedy_set, opt_set, reading):
    if len(greedy_set) != k:
        return False
    return {"at_most": len(opt_set) <= k, "exactly": len(opt_set) == k}.get(reading, False)


SEC3C = result(
    "subtrunc.sec3c", ref="Section III-C", title="greedy and stochastic greedy maximization, "
    "eqs. (16)-(17)",
    parts={"greedy_w": "greedy (16) on (13) is backed by Prop 3 and [32]: W(S_greedy) >= "
                       "(1 - (1 - 1/k)^k) max_{|S| <= k} W(S)",
           "stochastic": "stochastic greedy (17) keeps 'high confidence' ([33]): "
                         "E W(S) >= (1 - 1/e - exp(-r k/n)) OPT, R uniform in N minus S",
           "sampling": "eq. (17): each step searches a random subset R of size r (drawn "
                       "uniformly from N minus S_k, as in [33] and DivFL's code)",
           "greedy_h": "greedy (16) / stochastic greedy (17) on (14) are backed by Prop 4 and "
                       "[32]: h_t(S_greedy) >= (1 - 1/e) max_{|S| <= K_t} h_t(S)"},
    hypotheses=(w_objective.only("greedy_w", "stochastic"), budget,
                sample_size.only("stochastic", "sampling"), h_objective.only("greedy_h"),
                window_union.only("greedy_h"), cardinality.only("greedy_h")))
