r"""K-Vib unbiasedness and variance: Def. 2.1, Lemma 2.1 / B.7, eq. (3), eq. (5), Example 3.1
([003], recipes V3, V4, V6; audit part B item 2)."""

from __future__ import annotations

import itertools

import numpy as np


def _multinomial_moments(z, q, k):
    """Exact mean and variance of (1/K) sum_k z_{i_k}/q_{i_k} by enumerating all N^K draws."""
    n = q.size
    mean, second = np.zeros(z.shape[1]), 0.0
    for seq in itertools.product(range(n), repeat=k):
        prob = float(np.prod(q[list(seq)]))
        d = sum(z[i] / q[i] for i in seq) / k
        mean += prob * d
        second += prob * float(d @ d)
    return mean, second - float(mean @ mean)


