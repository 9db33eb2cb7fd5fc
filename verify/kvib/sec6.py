r"""Section 6.1 of K-Vib (experiments on the synthetic task): the text's assertions, as one
result with its parts and hypotheses. The claims are beside the figures they read:
``kvib.sec6.beats_baselines`` (:mod:`verify.kvib.fig2.beats_baselines`) and
``kvib.sec6.k_exponent_practical_g`` (:mod:`verify.kvib.fig3`).

The online problem stands for the experiments' feedback (Assumption 5.1 feedback, partial
information, App. F hyper-parameters); instances carry ``feedback``, ``n_rounds``,
``budget`` (one K or the grid) and ``n_clients``.
"""

from __future__ import annotations

from flbounds.ledger import result

from .conditions import online_budgets, online_feedback

SEC6 = result(
    "kvib.sec6", ref="Section 6.1", kind="section",
    title="experiments: K-Vib against the baselines",
    parts={"beats_baselines": "'K-Vib outperforms Vrb, Mabs and Avare' (Figs. 2-3)",
           "practical_g": "with the practical G (mean first-round feedback) K-Vib's regret "
                          "still falls with K as Theorem 5.2 predicts"},
    hypotheses=(online_feedback, online_budgets))
