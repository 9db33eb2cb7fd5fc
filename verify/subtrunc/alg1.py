r"""Algorithm 1 of [004] ("Fairness-Aware FL Algorithms"): the result and its parts.

Lines 5-8 select :math:`S_k` of size :math:`\kappa` by (stochastic) greedy on (13) or (14),
each step adding the element of largest marginal gain
:math:`\Delta(e \mid S) = \mathrm{obj}(S \cup \{e\}) - \mathrm{obj}(S)` (eq. (16)); lines
9-19 run E local SGD steps on the selected clients and average their updates with weight
:math:`1/\kappa`. The claim on the selection step is the library guard
``subtrunc.alg1.greedy_gains_are_increments`` (:mod:`verify.subtrunc.guards`).
"""

from __future__ import annotations

from flbounds.ledger import result

ALG1 = result(
    "subtrunc.alg1", ref="Algorithm 1", title="fairness-aware FL with SubTrunc / UnionFL "
    "selection",
    parts={"selection": "lines 5-8 with eq. (16): each greedy step adds an element of largest "
                        "marginal gain obj(S + e) - obj(S), until |S_k| = kappa",
           "training": ("lines 9-19: E local SGD steps on each selected client, then "
                        "w_{k+1} = w_k - (1/kappa) sum_{i in S_k} (w_k - w^(i)_{k,E})",
                        "the cleaned loop (spec 004 s.2.8) is what the Lemma 1 and Theorem 1 "
                        "claims simulate; the printed indexing slips (S_i for S_k, 1/r for "
                        "1/kappa in (28)) are notational")})
