"""Claims of the SAFARI paper (``000_e0ee0ed9d3888010``): one home per numbered result.

Theorem 1 ``thm1/``, Theorem 2 ``thm2``, Theorem 3 ``thm3``, Lemmas 1-2 ``lemma1``,
``lemma2``, Theorem 4 ``thm4/`` (with the proof's local-drift lemma), Corollary 1 ``cor1``,
Theorem 5 ``thm5/``, Corollary 2 ``cor2``, Algorithm 1 with Remarks 3 and 5 ``alg1``,
Remark 2 ``remark2``, Remark 6 ``remark6``, Remarks 1 and 4 ``remarks``, Assumption 2 and its
example ``assumption2/``, Figure 1 ``figure1``, Definitions 1-4 ``definitions``, Tables 1-11
and Figure 2 ``tables/`` (their printed-number checks in ``paper_checks/safari.py``).
Assumptions 1 and 3-5 are hypotheses (``assumptions``); shared machinery: ``instances``,
``closed_forms``, ``_thresholds``, ``digits_experiment``; library guards: ``stats_guards``.
"""
