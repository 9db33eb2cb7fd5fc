"""Numba kernel of SAFARI (Algorithm 1 of [000]) on quadratic clients f_i = x'A_i x/2 - b_i'x.

Dumb loop: the random plan (round types, sampled clients, noise) comes in as arrays, outputs
are written into caller-owned arrays. The NumPy twin lives in ``tests/test_safari_algorithm.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False)
def safari_quadratic_rounds(A, b, A_mean, b_mean, x0, client_round, clients, client_noise,
                            server_noise, step_client, step_server, out_x, out_g2):
    """Run ``len(client_round)`` SAFARI rounds; ``out_x`` (R+1, d), ``out_g2`` (R,).

    ``out_g2[r]`` is ||(1/m) sum_i sum_k grad f_i(x^i_{r,k})||^2 (noise-free gradients at the
    local iterates, the quantity in G_2 of Thm 4) on client rounds and NaN on server rounds.
    """
    n_rounds = client_round.shape[0]
    d = x0.shape[0]
    m = clients.shape[1]
    K = client_noise.shape[2]
    x = np.empty(d)
    y = np.empty(d)
    g = np.empty(d)
    acc = np.empty(d)
    gsum = np.empty(d)
    for j in range(d):
        x[j] = x0[j]
        out_x[0, j] = x0[j]
    for r in range(n_rounds):
        if client_round[r]:
            for j in range(d):
                acc[j] = 0.0
                gsum[j] = 0.0
            for c in range(m):
                i = clients[r, c]
                for j in range(d):
                    y[j] = x[j]
                for k in range(K):
                    for j in range(d):
                        s = -b[i, j]
                        for l in range(d):
                            s += A[i, j, l] * y[l]
                        g[j] = s
                    for j in range(d):
                        gsum[j] += g[j]
                        y[j] = y[j] - step_client * (g[j] + client_noise[r, c, k, j])
                for j in range(d):
                    acc[j] += y[j]
            norm2 = 0.0
            for j in range(d):
                x[j] = acc[j] / m
                v = gsum[j] / m
                norm2 += v * v
            out_g2[r] = norm2
        else:
            for j in range(d):
                s = -b_mean[j]
                for l in range(d):
                    s += A_mean[j, l] * x[l]
                g[j] = s
            for j in range(d):
                x[j] = x[j] - step_server * (g[j] + server_noise[r, j])
            out_g2[r] = np.nan
        for j in range(d):
            out_x[r + 1, j] = x[j]
