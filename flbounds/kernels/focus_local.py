r"""Round loops of FedAvg and FOCUS for quadratic and ridge clients ([002], Alg. 1 and (2a)-(2c)).

The whole run (all rounds, all participants, all local steps) happens inside one compiled
call, so the cost per round is the gradient arithmetic only. Two client models share the
kernels, selected by ``kind``:

- ``QUADRATIC`` (0): :math:`\nabla f_i(z) = A_i z - b_i`; ``A`` (N, d, d), ``b`` (N, d);
- ``RIDGE`` (1): :math:`\nabla f_i(z) = X_i^\top (X_i z - y_i)/n + \lambda z`;
  ``features`` (N, n, d), ``targets`` (N, n), ``lam``;
- ``LOGISTIC`` (2): logistic loss with labels ``targets`` in {-1, +1}, plus
  :math:`\tfrac{\lambda}{2}\|z\|^2 + \rho\sum_p z_p^2/(1 + z_p^2)` (as
  :mod:`flbounds.kernels.losses`);
- ``SCALAR_PL`` (3): :math:`f_i'(z) = 2z + 3\sin 2z + c_i` (d = 1), with :math:`c_i` = ``b[i, 0]``.

The unused model's arrays may be any (dummy) arrays of the right number of dimensions.
Kernels never draw random numbers: participation is the bool ``plan`` (R, N) and the gradient
noise of SG-FOCUS the array ``noise`` (R, N, tau, d) (``use_noise = False`` ignores it).
"""

import math

from numba import njit

from flbounds.kernels.losses import _expit

QUADRATIC = 0
RIDGE = 1
LOGISTIC = 2
SCALAR_PL = 3


@njit(cache=True, fastmath=False)
def _dot(M, c, k, z):
    """``M[c, k, :] @ z`` with four independent partial sums (a fixed summation order that
    keeps the floating-point pipeline busy; fastmath stays off)."""
    d = z.shape[0]
    s0 = s1 = s2 = s3 = 0.0
    p = 0
    while p + 4 <= d:
        s0 += M[c, k, p] * z[p]
        s1 += M[c, k, p + 1] * z[p + 1]
        s2 += M[c, k, p + 2] * z[p + 2]
        s3 += M[c, k, p + 3] * z[p + 3]
        p += 4
    while p < d:
        s0 += M[c, k, p] * z[p]
        p += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, fastmath=False)
def client_gradient(kind, A, b, features, targets, lam, rho, c, z, out):
    """Write :math:`\\nabla f_c(z)` into ``out`` (shape (d,))."""
    d = z.shape[0]
    if kind == QUADRATIC:
        for p in range(d):
            out[p] = _dot(A, c, p, z) - b[c, p]
    elif kind == SCALAR_PL:
        out[0] = 2.0 * z[0] + 3.0 * math.sin(2.0 * z[0]) + b[c, 0]
    elif kind == LOGISTIC:
        n = features.shape[1]
        for p in range(d):
            out[p] = 0.0
        for k in range(n):
            m = _dot(features, c, k, z)
            y = targets[c, k]
            w = -y * _expit(-y * m)
            for p in range(d):
                out[p] += w * features[c, k, p]
        for p in range(d):
            g = out[p] / n + lam * z[p]
            if rho != 0.0:
                s = 1.0 + z[p] * z[p]
                g += 2.0 * rho * z[p] / (s * s)
            out[p] = g
    else:
        n = features.shape[1]
        for p in range(d):
            out[p] = 0.0
        for k in range(n):
            r = _dot(features, c, k, z) - targets[c, k]
            for p in range(d):
                out[p] += r * features[c, k, p]
        for p in range(d):
            out[p] = out[p] / n + lam * z[p]


@njit(cache=True, fastmath=False)
def fedavg_rounds(kind, A, b, features, targets, lam, rho, plan, step, local_steps, x0, xs):
    r"""FedAvg: each participant runs ``local_steps`` GD steps from the server model, the server
    takes their mean; an empty round leaves the model unchanged. ``xs`` (R + 1, d) receives
    the server iterates (``xs[0] = x0``)."""
    n_rounds, n_clients = plan.shape
    d = x0.shape[0]
    z = x0.copy()
    grad = x0.copy()
    acc = x0.copy()
    for p in range(d):
        xs[0, p] = x0[p]
    for r in range(n_rounds):
        count = 0
        for p in range(d):
            acc[p] = 0.0
        for i in range(n_clients):
            if not plan[r, i]:
                continue
            count += 1
            for p in range(d):
                z[p] = xs[r, p]
            for _ in range(local_steps):
                client_gradient(kind, A, b, features, targets, lam, rho, i, z, grad)
                for p in range(d):
                    z[p] -= step * grad[p]
            for p in range(d):
                acc[p] += z[p]
        for p in range(d):
            xs[r + 1, p] = acc[p] / count if count > 0 else xs[r, p]


@njit(cache=True, fastmath=False)
def focus_rounds(kind, A, b, features, targets, lam, rho, plan, step, local_steps, noise,
                 use_noise, x, y, g, xs, ys, record_sum, g_sums):
    r"""FOCUS / SG-FOCUS (Algorithms 1-2 of [002]) in place.

    State: server model ``x`` (d,), server tracker ``y`` (d,), stored client gradients ``g``
    (N, d), all updated in place. Per round, participant i starts from the server model,
    evaluates ``local_steps`` gradients :math:`h_t` (plus ``noise[r, i, t]``), makes
    ``local_steps - 1`` local moves :math:`z \leftarrow z - \eta (h_t - g_i^{old})`, stores its
    last gradient and pushes :math:`v_i = h_{\tau-1} - g_i^{old}`; then
    :math:`y \leftarrow y + \sum_{i \in S_r} v_i` and :math:`x \leftarrow x - \eta y` (also when
    :math:`S_r` is empty). ``xs``, ``ys`` (R + 1, d) receive the server iterates; if
    ``record_sum``, ``g_sums`` (R + 1, d) receives :math:`\sum_i g_i` after every round
    (summed afresh, for checking the tracking invariant :math:`y = \sum_i g_i`).
    """
    n_rounds, n_clients = plan.shape
    d = x.shape[0]
    z = x.copy()
    h = x.copy()
    v = x.copy()
    g_old = x.copy()
    for p in range(d):
        xs[0, p] = x[p]
        ys[0, p] = y[p]
    if record_sum:
        _sum_rows(g, g_sums, 0)
    for r in range(n_rounds):
        for i in range(n_clients):
            if not plan[r, i]:
                continue
            for p in range(d):
                z[p] = x[p]
                g_old[p] = g[i, p]
            for t in range(local_steps):
                if t > 0:
                    for p in range(d):
                        z[p] -= step * v[p]
                client_gradient(kind, A, b, features, targets, lam, rho, i, z, h)
                if use_noise:
                    for p in range(d):
                        h[p] += noise[r, i, t, p]
                for p in range(d):
                    v[p] = h[p] - g_old[p]
            for p in range(d):
                g[i, p] = h[p]
                y[p] += v[p]
        for p in range(d):
            x[p] -= step * y[p]
            xs[r + 1, p] = x[p]
            ys[r + 1, p] = y[p]
        if record_sum:
            _sum_rows(g, g_sums, r + 1)


@njit(cache=True, fastmath=False)
def _sum_rows(g, out, row):
    for p in range(g.shape[1]):
        out[row, p] = 0.0
    for i in range(g.shape[0]):
        for p in range(g.shape[1]):
            out[row, p] += g[i, p]
