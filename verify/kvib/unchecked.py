r"""The numbered results of K-Vib that no claim checks: a definition and three assumptions
(they enter the checked results as hypothesis predicates). Each is declared with the
reason; Figures 4 and 5 are :mod:`verify.kvib.fig45`."""

from __future__ import annotations

from flbounds.ledger import result

ASSUMPTION = "an assumption: a hypothesis predicate of Theorem 4.1 and Lemma B.6 ({})"

DEF4_1 = result(
    "kvib.def4_1", ref="Definition 4.1", title="sampling quality Q(S^t)",
    not_checked="a definition (eq. (6)); Theorem 4.1's parts eq33, beta1 and descent read it",
    parts={"quality": "Q(S^t) = E||sum_{S^t} lambda_i g_i/p_i^t - sum_{S_*^t} lambda_i g_i/"
                      "p_i^*||^2, S_*^t ~ p^* (eq. (4)), E|S^t| = E|S_*^t| = K"})
ASSUMPTION4_1 = result(
    "kvib.assumption4_1", ref="Assumption 4.1", title="smoothness",
    not_checked=ASSUMPTION.format("A4.1, verify.kvib.thm4_1.a4_1"))
ASSUMPTION4_2 = result(
    "kvib.assumption4_2", ref="Assumption 4.2",
    title="unbiased local gradients with bounded variance",
    not_checked=ASSUMPTION.format("A4.2, verify.kvib.thm4_1.a4_2"))
ASSUMPTION4_3 = result(
    "kvib.assumption4_3", ref="Assumption 4.3", title="bounded global variance",
    not_checked=ASSUMPTION.format("A4.3, verify.kvib.thm4_1.a4_3"))
