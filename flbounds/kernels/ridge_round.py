r"""Compiled loops of the one-round FedAvg Monte Carlo on ridge regression (FedALS Thm 4.1).

A dataset is summarized by its moments ``gram`` :math:`G = X^\top X/n`, ``xy``
:math:`b = X^\top y/n`, ``yy`` :math:`y^\top y/n`; the empirical ridge risk is
:math:`R_S(\theta) = \tfrac12\theta^\top G\theta - \theta^\top b + \tfrac12 y^\top y/n
+ \tfrac\lambda2\|\theta\|^2`. These kernels give the numbers of the NumPy forms
(``np.linalg.solve``, :func:`flbounds.theory.generalization.one_round_batch` on a
:class:`~flbounds.theory.data_models.RidgeModel`) up to rounding (their operations are taken
in another order), in one pass over the draws.
"""

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def ridge_erm_maps(gram, xy, lam, a, c):
    r"""The local ridge ERM as an affine map of the optimum, by a Cholesky factorization per
    dataset: with :math:`H = G + \lambda I` (``gram`` :math:`G` (m, d, d), ``lam`` > 0),
    ``a[s]`` :math:`= H^{-1} G` and ``c[s]`` :math:`= H^{-1} b` (``xy`` :math:`b` (m, d));
    ``a`` (m, d, d) and ``c`` (m, d) are overwritten. The solutions of ``np.linalg.solve``
    (LU with pivoting, one LAPACK call per matrix) up to rounding, at a small fraction of its
    cost on 5 x 5 systems. A matrix that is not positive definite gives NaN rows."""
    m, d, _ = gram.shape
    low, z = np.empty((d, d)), np.empty(d)
    for s in range(m):
        for j in range(d):
            acc = gram[s, j, j] + lam
            for p in range(j):
                acc -= low[j, p] * low[j, p]
            piv = np.sqrt(acc) if acc > 0.0 else np.nan
            low[j, j] = piv
            for i in range(j + 1, d):
                acc = gram[s, i, j]
                for p in range(j):
                    acc -= low[i, p] * low[j, p]
                low[i, j] = acc / piv
        for q in range(d + 1):                   # columns of G, then b
            for i in range(d):
                z[i] = gram[s, i, q] if q < d else xy[s, i]
            for i in range(d):                       # forward: L z = rhs
                acc = z[i]
                for p in range(i):
                    acc -= low[i, p] * z[p]
                z[i] = acc / low[i, i]
            for i in range(d - 1, -1, -1):           # backward: L' x = z
                acc = z[i]
                for p in range(i + 1, d):
                    acc -= low[p, i] * z[p]
                z[i] = acc / low[i, i]
            for i in range(d):
                if q < d:
                    a[s, i, q] = z[i]
                else:
                    c[s, i] = z[i]


@njit(cache=True, fastmath=False, error_model="numpy")
def _risk(G, b, yy, lam, th):
    r"""The empirical ridge risk :math:`R_S(\theta)` of one dataset."""
    d = th.shape[0]
    quad, lin, sq = 0.0, 0.0, 0.0
    for i in range(d):
        row = 0.0
        for j in range(d):
            row += G[i, j] * th[j]
        quad += th[i] * row
        lin += th[i] * b[i]
        sq += th[i] * th[i]
    return 0.5 * quad - lin + 0.5 * yy + 0.5 * lam * sq


@njit(cache=True, fastmath=False, error_model="numpy")
def _population(star, s2, sigma2, lam, th):
    r""":math:`R_k(\theta) = \tfrac{s_2}2\|\theta-\theta^\star_k\|^2 + \tfrac{\sigma^2}2
    + \tfrac\lambda2\|\theta\|^2` (``s2`` the second moment of the covariates)."""
    diff, sq = 0.0, 0.0
    for i in range(th.shape[0]):
        diff += (th[i] - star[i]) ** 2
        sq += th[i] * th[i]
    return 0.5 * s2 * diff + 0.5 * sigma2 + 0.5 * lam * sq


@njit(cache=True, fastmath=False, error_model="numpy")
def ridge_one_round(gram, xy0, yy0, a, c, gram_c, xy0_c, yy0_c, a_c, c_c, star, w, ref,
                    lam, s2, sigma2, L, mu, gap, out):
    r"""One FedAvg round of local ridge ERMs, every draw: the fields of
    :class:`~flbounds.theory.generalization.OneRoundDraws` but ``gap`` and ``opt_error``
    (zero: the local outputs are the ERMs) as ``out`` (10, T, K), in the order local_gap,
    nonid, loo, v_sq, g_sq, g_dot_v, excess_copy, smooth_slack, sc_slack, pl_slack; ``gap``
    (T,). The datasets (S and its copy S', ``_c``) are given by the moments of their noise
    alone (``gram`` (T, K, d, d), ``xy0`` (T, K, d), ``yy0`` (T, K)); with the client optima
    ``star`` (K, d) their targets' moments are :math:`b = G\theta^\star_k + b_0`,
    :math:`y^\top y/n = \theta^{\star\top}_k G\theta^\star_k + 2\theta^{\star\top}_k b_0 +
    y_0^\top y_0/n`, and their local ERMs :math:`A\theta^\star_k + c` (``a``, ``c`` from
    :func:`ridge_erm_maps`). ``w`` (K,) the weights, ``ref`` (K, d) the control variates'
    fixed points (the average's is :math:`\sum_k w_k \mathrm{ref}_k`), ``s2`` the covariates'
    second moment, ``sigma2`` the noise variance, ``L`` and ``mu`` the smoothness and strong
    convexity constants."""
    T, K, d = xy0.shape
    theta, theta_c = np.empty((K, d)), np.empty((K, d))
    b, b_c, yy, yy_c = np.empty((K, d)), np.empty((K, d)), np.empty(K), np.empty(K)
    avg, ref_avg, rep, g, v = np.empty(d), np.zeros(d), np.empty(d), np.empty(d), np.empty(d)
    pop_ref = np.empty(K)
    for k in range(K):
        pop_ref[k] = _population(star[k], s2, sigma2, lam, ref[k])
        for i in range(d):
            ref_avg[i] += w[k] * ref[k, i]
    for t in range(T):
        for i in range(d):
            avg[i] = 0.0
        for k in range(K):
            quad, quad_c, lin, lin_c = 0.0, 0.0, 0.0, 0.0
            for i in range(d):
                gs, gs_c, th, th_c = 0.0, 0.0, c[t, k, i], c_c[t, k, i]
                for j in range(d):
                    gs += gram[t, k, i, j] * star[k, j]
                    gs_c += gram_c[t, k, i, j] * star[k, j]
                    th += a[t, k, i, j] * star[k, j]
                    th_c += a_c[t, k, i, j] * star[k, j]
                b[k, i] = gs + xy0[t, k, i]
                b_c[k, i] = gs_c + xy0_c[t, k, i]
                quad += star[k, i] * gs
                quad_c += star[k, i] * gs_c
                lin += star[k, i] * xy0[t, k, i]
                lin_c += star[k, i] * xy0_c[t, k, i]
                theta[k, i], theta_c[k, i] = th, th_c
                avg[i] += w[k] * th
            yy[k] = quad + 2.0 * lin + yy0[t, k]
            yy_c[k] = quad_c + 2.0 * lin_c + yy0_c[t, k]
        total = 0.0
        for k in range(K):
            G, G_c = gram[t, k], gram_c[t, k]
            risk_avg = _risk(G, b[k], yy[k], lam, avg)
            risk_loc = _risk(G, b[k], yy[k], lam, theta[k])
            cv_avg = _population(star[k], s2, sigma2, lam, ref_avg) - \
                _risk(G, b[k], yy[k], lam, ref_avg)
            cv_loc = pop_ref[k] - _risk(G, b[k], yy[k], lam, ref[k])
            total += w[k] * (_population(star[k], s2, sigma2, lam, avg) - risk_avg - cv_avg)
            out[0, t, k] = _population(star[k], s2, sigma2, lam, theta[k]) - risk_loc - cv_loc
            out[1, t, k] = risk_avg - risk_loc
            v_sq, g_sq, g_dot_v, diff_sq = 0.0, 0.0, 0.0, 0.0
            for i in range(d):
                rep[i] = avg[i] + w[k] * (theta_c[k, i] - theta[k, i])
                v[i] = avg[i] - rep[i]
                diff_sq += (theta[k, i] - theta_c[k, i]) ** 2
            for i in range(d):
                gi = -b_c[k, i] + lam * rep[i]
                for j in range(d):
                    gi += G_c[i, j] * rep[j]
                g[i] = gi
                v_sq += v[i] * v[i]
                g_sq += gi * gi
                g_dot_v += gi * v[i]
            risk_rep = _risk(G_c, b_c[k], yy_c[k], lam, rep)
            min_copy = _risk(G_c, b_c[k], yy_c[k], lam, theta_c[k])
            loo = _risk(G_c, b_c[k], yy_c[k], lam, avg) - risk_rep
            excess = risk_rep - min_copy
            out[2, t, k] = loo
            out[3, t, k] = v_sq
            out[4, t, k] = g_sq
            out[5, t, k] = g_dot_v
            out[6, t, k] = excess
            out[7, t, k] = g_dot_v + 0.5 * L * v_sq - loo
            out[8, t, k] = (_risk(G_c, b_c[k], yy_c[k], lam, theta[k]) - min_copy
                            - 0.5 * mu * diff_sq)
            out[9, t, k] = 2.0 * L * excess - g_sq
        gap[t] = total
