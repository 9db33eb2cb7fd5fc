"""Claims of the FOCUS paper (``002_d5aeef3645e253f4``): one home per numbered result.

Each home declares its result(s) with ``result(...)`` (parts, hypothesis predicates), the
printed bound as a function, and the claims and attacks attached to its parts:

- ``thm1/`` Theorem 1(a)-(c) (``rates``, ``limits``, ``worst_case``, ``worst_case_pl``,
  ``exactness``, ``attacks``); ``fig4`` Figure 4 (its claim lives in ``thm1/exactness``);
- ``sg_focus`` Algorithm 2, Theorems 2, 4, 5 and the linear-speedup remark; ``thm6``
  Theorem 6; ``thm3/`` Theorem 3 and Corollaries 1-3 (``limits``, ``worst_case``,
  ``attacks``); ``eq3`` eq. (3) and FedAvg's biased limit;
- ``lemma1_2``, ``lemma3``, ``lemma4/`` (``consensus``, ``counterexample``, ``corrected``,
  ``attacks``), ``lemma5_6``;
- ``assumption1`` Assumption 1 and its cases; ``matrices`` eqs. (4)-(5), App. C (33)-(36),
  App. D (41)-(45), Figures 6-7; ``fig1``, ``fig9``, ``table1``, ``tracking`` (Sec. 5.1),
  ``equivalence`` (Algorithm 1, eqs. (6)-(7), Figures 2-3), ``unchecked`` (Figures 5, 8,
  Table 2);
- shared: ``assumptions`` (Assumptions 1-6 as predicates), ``instances`` (step conditions,
  runs, one FOCUS round), ``one_round`` (exact expectation over the participation sets),
  ``stats_guards`` (the statistics the decision rules use).
"""
