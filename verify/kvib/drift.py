r"""Helper of Lemma B.6 (:mod:`verify.kvib.lemma_b6`, no claims here): Monte Carlo local drift
of minibatch SGD on ridge clients (K-Vib, recipe V9)."""

from __future__ import annotations

import numpy as np


def _ridge_minibatch_drift(rng, problem, x, *, local_steps, step, batch, n_runs):
    """MC of local SGD with minibatches (with replacement) from x for every client.

    Returns the uniformly client-averaged drift sum_i ||x_i^{t,r} - x||^2 / N per (r, run)
    (lambda = 1/N; clients are independent within a run), and the largest minibatch
    variance sigma_l^2 met at x and at the runs' final local points (Assumption 4.2 on the
    visited region).
    """
    feats, targets, lam = problem.features, problem.targets, problem.lam
    n_clients, n_samples, dim = feats.shape
    X = np.broadcast_to(x, (n_runs, n_clients, dim)).copy()
    drift = np.empty((local_steps, n_runs))
    rows = np.arange(n_clients)[None, :, None]
    for r in range(local_steps):
        idx = rng.integers(0, n_samples, size=(n_runs, n_clients, batch))
        a = feats[rows, idx]                                   # (M, N, b, d)
        resid = np.einsum("mnbd,mnd->mnb", a, X) - targets[rows, idx]
        grad = np.einsum("mnbd,mnb->mnd", a, resid) / batch + lam * X
        X = X - step * grad
        drift[r] = np.mean(np.sum((X - x) ** 2, axis=2), axis=1)   # client average, per run
    sigma_l2 = 0.0
    for point in (np.broadcast_to(x, (n_clients, dim)), X[0]):
        per = feats * (np.einsum("ind,id->in", feats, point) - targets)[:, :, None]
        mean = per.mean(axis=1, keepdims=True)
        sigma_l2 = max(sigma_l2, float(np.max(np.mean(np.sum((per - mean) ** 2, 2), 1)))
                       / batch)
    return drift, sigma_l2


