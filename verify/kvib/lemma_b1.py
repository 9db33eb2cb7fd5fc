"""TODO."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from .closed_forms import _lemma_b1_sum


@claim("kvib.lemma_b1.sum_bound", ref="Lemma B.1 (Borsos et al. 2018, Lemma 13)",
       kind="statement", expected="holds",
       statement="For c_t in [0, 1]: sum_t c_t^4/(c^2_{1:t})^{3/2} <= 44.",
       quick=dict(n_sequences=300, length=2000), full=dict(n_sequences=5000, length=20000))
def lemma_b1(*, rng, n_sequences, length):
    """Random uniform, sparse, geometric and front-loaded-tiny sequences. The sum is at most
    sum_t c_t^4 / c_t^3 <= ... and in fact stays below ~3 (spec pilot 2.40); the bound 44 is loose.
    Measured: the maximum over all sequences."""
    worst = 0.0
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
    worst = max(worst, _lemma_b1_sum(np.ones(length)))
    return Evidence(measured=worst, theoretical=44.0, relation="<=",
                    tolerance=Tolerance.exact("a float sum far from the bound"))
