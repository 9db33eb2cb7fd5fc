r"""Lemma B.1 of K-Vib (Borsos et al. 2018, Lemma 13): the result, its hypothesis and its
claim. For :math:`c_1,\dots,c_T\in[0,1]`,
:math:`\sum_t c_t^4/(c^2_{1:t})^{3/2}\le44` (0/0 := 0). Instances carry ``c``."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result

from .closed_forms import _lemma_b1_sum


@hypothesis("c", "c_1, ..., c_T in [0, 1]")
def unit_interval(*, c):
    c = np.asarray(c, dtype=float)
    return bool(np.all((c >= 0) & (c <= 1)))


LEMMA_B1 = result(
    "kvib.lemma_b1", ref="Lemma B.1", title="a sum bound (Borsos et al. 2018, Lemma 13)",
    parts={"sum": "sum_t c_t^4/(c^2_{1:t})^{3/2} <= 44"}, hypotheses=(unit_interval,))


@claim("kvib.lemma_b1.sum_bound", ref="Lemma B.1 (Borsos et al. 2018, Lemma 13)",
       kind="statement", expected="holds",
       result=LEMMA_B1,
       statement="For c_t in [0, 1]: sum_t c_t^4/(c^2_{1:t})^{3/2} <= 44.",
       quick=dict(n_sequences=300, length=2000), full=dict(n_sequences=5000, length=20000))
def lemma_b1(*, rng, n_sequences, length):
    """Random uniform, sparse, geometric and front-loaded-tiny sequences. The sum is at most
    sum_t c_t^4 / c_t^3 <= ... and in fact stays below ~3 (spec pilot 2.40); the bound 44 is loose.
    Measured: the maximum over all sequences."""
    worst, sequences = 0.0, [np.ones(length)]
    for j in range(n_sequences):
        kind = j % 4
        if kind == 0:
            c = rng.random(length)
        elif kind == 1:
            c = rng.random(length) * (rng.random(length) < 0.05)
        elif kind == 2:
            c = rng.uniform(0.5, 0.99) ** np.arange(length)[::-1]
        else:
            c = np.r_[np.full(length // 2, 10.0 ** -rng.uniform(1, 8)), np.ones(length // 2)]
        worst = max(worst, _lemma_b1_sum(c))
        sequences.append(c)
    worst = max(worst, _lemma_b1_sum(np.ones(length)))
    return Evidence(instance=[dict(c=c) for c in sequences],
                    measured=worst, theoretical=44.0, relation="<=",
                    tolerance=Tolerance.exact("a float sum far from the bound"))
