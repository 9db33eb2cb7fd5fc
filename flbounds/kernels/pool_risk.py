r"""The population risk of L2-regularized softmax regression on finite per-client pools
(:class:`flbounds.theory.data_models.SoftmaxPool`), one pass over the pool per parameter.

NumPy forms it as (T, K, M, C) arrays of logits, their maxima, exponentials and sums; this
loop keeps one point's C logits at a time: the same formula (the log-sum-exp shifted by the
largest logit, the picked class's log-probability averaged over the pool in order; with two
classes its closed form, the softplus of the other class's logit minus the picked one's,
one exponential instead of two) with its operations in another order, so the numbers agree
up to rounding.
"""

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def pool_population_risk(features, labels, theta, n_classes, lam, out):
    r"""``out[t, k]`` :math:`= \frac1M\sum_m -\log\mathrm{softmax}(W_{tk} x_{km})_{c_{km}}
    + \tfrac\lambda2\|\theta_{tk}\|^2` with :math:`W_{tk}` the (C, d) reshape of
    ``theta[t, k]``; ``features`` (K, M, d), ``labels`` (K, M) in [0, C), ``theta``
    (T, K, C d); ``out`` (T, K) is overwritten."""
    K, M, d = features.shape
    T = theta.shape[0]
    logits = np.empty(n_classes)
    for t in range(T):
        for k in range(K):
            total = 0.0
            for m in range(M):
                if n_classes == 2:   # -log softmax = softplus(other logit - picked logit)
                    gap = 0.0
                    for j in range(d):
                        gap += features[k, m, j] * (theta[t, k, d + j] - theta[t, k, j])
                    if labels[k, m] == 1:
                        gap = -gap
                    total += (gap if gap > 0.0 else 0.0) + np.log1p(np.exp(-abs(gap)))
                    continue
                top = -np.inf
                for c in range(n_classes):
                    acc = 0.0
                    for j in range(d):
                        acc += features[k, m, j] * theta[t, k, c * d + j]
                    logits[c] = acc
                    if acc > top:
                        top = acc
                s = 0.0
                for c in range(n_classes):
                    s += np.exp(logits[c] - top)
                total += np.log(s) - (logits[labels[k, m]] - top)
            sq = 0.0
            for i in range(theta.shape[2]):
                sq += theta[t, k, i] * theta[t, k, i]
            out[t, k] = total / M + 0.5 * lam * sq
