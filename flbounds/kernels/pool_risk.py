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


@njit(cache=True, fastmath=False, error_model="numpy")
def _binary_risk_grad(x, c, theta, lam, grad):
    """Mean two-logit loss of the samples (x (n, d), classes c (n,)) at theta (2 d,) with
    the L2 penalty; its gradient written to ``grad``; returns the risk."""
    n, d = x.shape
    for i in range(2 * d):
        grad[i] = lam * theta[i]
    total = 0.0
    for m in range(n):
        z0, z1 = 0.0, 0.0
        for j in range(d):
            z0 += x[m, j] * theta[j]
            z1 += x[m, j] * theta[d + j]
        gap = z1 - z0 if c[m] == 0 else z0 - z1       # other logit minus the picked one
        total += (gap if gap > 0.0 else 0.0) + np.log1p(np.exp(-abs(gap)))
        p1 = 1.0 / (1.0 + np.exp(z0 - z1))             # P(class 1)
        r1 = p1 - (1.0 if c[m] == 1 else 0.0)          # d loss / d z1 = -(d loss / d z0)
        for j in range(d):
            grad[j] -= r1 * x[m, j] / n
            grad[d + j] += r1 * x[m, j] / n
    sq = 0.0
    for i in range(2 * d):
        sq += theta[i] * theta[i]
    return total / n + 0.5 * lam * sq


@njit(cache=True, fastmath=False, error_model="numpy")
def binary_pool_newton(features, labels, index, lam, tol, max_iter, theta_out):
    r"""The local ERMs of two-class softmax regression on datasets drawn from finite pools
    (``index`` (T, K, n) into client k's pool ``features[k]`` (M, d), ``labels[k]``):
    Newton's method per dataset from 0, each step halved (at most 30 times) while it raises
    the risk by more than 1e-15, until the gradient's norm is at most ``tol``. The Hessian
    of the two-logit loss is :math:`s(1-s)\,[1, -1; -1, 1]\otimes xx^\top/n + \lambda I`
    (s the sigmoid of the logits' difference). ``theta_out`` (T, K, 2 d) is overwritten;
    returns the number of datasets that did not converge within ``max_iter`` steps."""
    T, K, n = index.shape
    d = features.shape[2]
    p = 2 * d
    x, c = np.empty((n, d)), np.empty(n, dtype=np.int64)
    theta, trial = np.empty(p), np.empty(p)
    grad, trial_grad, step = np.empty(p), np.empty(p), np.empty(p)
    block, hess, low = np.empty((d, d)), np.empty((p, p)), np.empty((p, p))
    failed = 0
    for t in range(T):
        for k in range(K):
            for m in range(n):
                c[m] = labels[k, index[t, k, m]]
                for j in range(d):
                    x[m, j] = features[k, index[t, k, m], j]
            for i in range(p):
                theta[i] = 0.0
            risk = _binary_risk_grad(x, c, theta, lam, grad)
            done = False
            for _ in range(max_iter + 1):
                norm = 0.0
                for i in range(p):
                    norm += grad[i] * grad[i]
                if np.sqrt(norm) <= tol:
                    done = True
                    break
                for i in range(d):
                    for j in range(d):
                        block[i, j] = 0.0
                for m in range(n):
                    z = 0.0
                    for j in range(d):
                        z += x[m, j] * (theta[d + j] - theta[j])
                    s = 1.0 / (1.0 + np.exp(-z))
                    wgt = s * (1.0 - s) / n
                    for i in range(d):
                        for j in range(d):
                            block[i, j] += wgt * x[m, i] * x[m, j]
                for i in range(d):
                    for j in range(d):
                        hess[i, j] = block[i, j]
                        hess[d + i, d + j] = block[i, j]
                        hess[i, d + j] = -block[i, j]
                        hess[d + i, j] = -block[i, j]
                for i in range(p):
                    hess[i, i] += lam
                for j in range(p):                      # Cholesky of the Hessian
                    acc = hess[j, j]
                    for q in range(j):
                        acc -= low[j, q] * low[j, q]
                    piv = np.sqrt(acc)
                    low[j, j] = piv
                    for i in range(j + 1, p):
                        acc = hess[i, j]
                        for q in range(j):
                            acc -= low[i, q] * low[j, q]
                        low[i, j] = acc / piv
                for i in range(p):
                    acc = grad[i]
                    for q in range(i):
                        acc -= low[i, q] * step[q]
                    step[i] = acc / low[i, i]
                for i in range(p - 1, -1, -1):
                    acc = step[i]
                    for q in range(i + 1, p):
                        acc -= low[q, i] * step[q]
                    step[i] = acc / low[i, i]
                scale = 1.0
                for _ in range(30):
                    for i in range(p):
                        trial[i] = theta[i] - scale * step[i]
                    trial_risk = _binary_risk_grad(x, c, trial, lam, trial_grad)
                    if not trial_risk > risk + 1e-15:
                        break
                    scale *= 0.5
                for i in range(p):
                    theta[i] = trial[i]
                    grad[i] = trial_grad[i]
                risk = trial_risk
            if not done:
                failed += 1
            for i in range(p):
                theta_out[t, k, i] = theta[i]
    return failed
