r"""Helpers shared by K-Vib results (no claims here): the uncapped random instances of App. C.1
(:mod:`verify.kvib.app_c1`) and the sum of Lemma B.1 (:mod:`verify.kvib.lemma_b1`, and its
attack)."""

from __future__ import annotations

import numpy as np

from .instances import random_budget, random_weights


def _uncapped_instance(rng):
    """Weights and a budget with K max(a) <= sum(a) (no client capped at p = 1)."""
    a = random_weights(rng, 100)
    k = min(random_budget(rng, a.size), a.sum() / a.max())
    return a, max(k, 1.0) if a.sum() / a.max() >= 1.0 else 1.0


def _lemma_b1_sum(c):
    """sum_t c_t^4 / (c^2_{1:t})^{3/2} computed as c_t (c_t^2/c^2_{1:t})^{3/2} (no underflow;
    0/0 := 0)."""
    c2 = np.cumsum(c * c)
    ratio = np.divide(c * c, c2, out=np.zeros_like(c), where=c2 > 0)
    return float(np.sum(c * ratio**1.5))


