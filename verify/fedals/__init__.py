"""Claims of FedALS (Gholami & Seferoglu): generalization bounds and adaptive local steps.

One home per numbered result (its statement split into parts, its hypotheses as predicates,
its printed bound, its claims and attacks):

- Theorem 4.1 and Theorem A.2: ``thm4_1/`` (bound, proof steps, iid discussion, attacks)
- Remark 4.2: ``remark4_2/`` (Case I with Lemma C.1 as (72) uses it, Case II and (70))
- Theorem 4.3 and Theorem B.2: ``thm4_3/`` (the R-round steps (55)-(56))
- Theorem B.1: ``thmB1.py``; Lemma A.1: ``lemmaA1.py``; Lemmas C.1, C.2: ``lemmaC1.py``,
  ``lemmaC2.py``; Definition (7): ``def7.py``; Remark 5.1: ``remark5_1.py``
- attacks beside their results (``thm4_1/``, ``remark4_2/``, ``thm4_3/attacks.py``) and per paper:
  ``attacks.py`` (Lemmas C.1, C.2), ``attacks_mc.py`` (the Monte Carlo bounds),
  ``attacks_steps.py`` (the proof steps of Theorems 4.1 and B.1)
- Algorithms 1-4: ``alg1.py`` ... ``alg4.py``; Tables 1-3: ``table1.py`` ... ``table3.py``
  (the printed numbers of Tables 2-3 are checked in ``paper_checks/fedals.py``);
  Example 1 and Figure 1: ``example1.py``; Figures 2-3 (not checked): ``figure2.py``,
  ``figure3.py``
- not in the paper: the released code (``released_code.py``) and the OLS closed form
  (``closed_form.py``)

Shared: ``_predicates.py`` (hypotheses several results state), ``_local_sgd.py``,
``_scaffold.py``, ``instances.py``, ``mlp*.py``.
"""
