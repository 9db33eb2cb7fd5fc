r"""Fast FedAvg / FOCUS round loops for ridge clients, parallel over participants.

The same updates as the generic ridge path of :mod:`flbounds.kernels.focus_local`, arranged so
that the compiler vectorizes every inner loop with ``fastmath=False`` (no reassociation):

- the residual :math:`r = X_i z - y_i` is computed from the client's features transposed to
  (d, n) (copied once per client and round into a thread-local buffer, reused by all
  :math:`\tau` local steps while it sits in L1) as d axpys over the n samples,
  :math:`r \leftarrow r + z_p X_i[:, p]` in coordinate order starting from :math:`-y_i`
  (four coordinates per pass over r, a quarter of its loads and stores). This is the one change
  of summation order against ``focus_local`` (which sums each row dot product in four
  interleaved partial sums, a reduction the compiler cannot vectorize without fastmath), so
  the iterates agree with it to rounding, not bit for bit;
- the gradient :math:`X_i^\top r / n + \lambda z` is a sequence of axpys over the d
  coordinates in the original (n, d) layout, four samples per pass, each added in sample
  order (``((g + r_0 a_0) + r_1 a_1) + ...``, the order of ``focus_local``, with a quarter of
  the loads and stores of ``g``).

Participants of a round are split into contiguous chunks run under ``numba.prange``; every
client writes its result into its own row of a caller-owned buffer and the server sums the
rows serially in client order afterwards. The result is therefore the same for any number of
threads and any chunking. Kernels never draw random numbers and never validate.
"""

import numpy as np
from numba import njit, prange

from flbounds.kernels.focus_local import _sum_rows

# A round runs in parallel only if its participants do at least this many multiply-adds in
# their gradients (m tau n d; ~0.2 ms single-threaded): a parallel region costs tens of
# microseconds, and milliseconds when other processes hold the cores. Same numbers either way.
PARALLEL_MIN_WORK = 1_000_000


@njit(cache=True, fastmath=False)
def transpose_client(features, c, ft):
    """``ft[p, k] = features[c, k, p]``."""
    n, d = features.shape[1], features.shape[2]
    for k in range(n):
        for p in range(d):
            ft[p, k] = features[c, k, p]


@njit(cache=True, fastmath=False)
def ridge_gradient(features, targets, lam, c, ft, z, resid, out):
    r"""Write :math:`X_c^\top (X_c z - y_c)/n + \lambda z` into ``out`` (d,).

    ``ft`` (d, n) must hold ``features[c]`` transposed; ``resid`` (n,) is scratch.
    """
    n = ft.shape[1]
    d = z.shape[0]
    for k in range(n):
        resid[k] = -targets[c, k]
    p = 0  # r = X_c z - y_c as d axpys over the n samples (vectorized), four per pass
    while p + 4 <= d:
        z0, z1, z2, z3 = z[p], z[p + 1], z[p + 2], z[p + 3]
        for k in range(n):
            resid[k] = (((resid[k] + ft[p, k] * z0) + ft[p + 1, k] * z1)
                        + ft[p + 2, k] * z2) + ft[p + 3, k] * z3
        p += 4
    while p < d:
        zp = z[p]
        for k in range(n):
            resid[k] += ft[p, k] * zp
        p += 1
    for q in range(d):
        out[q] = 0.0
    k = 0
    while k + 4 <= n:
        r0, r1, r2, r3 = resid[k], resid[k + 1], resid[k + 2], resid[k + 3]
        for q in range(d):
            out[q] = (((out[q] + r0 * features[c, k, q]) + r1 * features[c, k + 1, q])
                      + r2 * features[c, k + 2, q]) + r3 * features[c, k + 3, q]
        k += 4
    while k < n:
        rk = resid[k]
        for q in range(d):
            out[q] += rk * features[c, k, q]
        k += 1
    for q in range(d):
        out[q] = out[q] / n + lam * z[q]


@njit(cache=True, fastmath=False)
def _fedavg_client(features, targets, lam, c, x, step, local_steps, ft, resid, grad, z):
    """``local_steps`` GD steps of client c from ``x``; the final point goes to ``z``."""
    transpose_client(features, c, ft)
    d = x.shape[0]
    for p in range(d):
        z[p] = x[p]
    for _ in range(local_steps):
        ridge_gradient(features, targets, lam, c, ft, z, resid, grad)
        for p in range(d):
            z[p] -= step * grad[p]


@njit(cache=True, fastmath=False)
def _focus_client(features, targets, lam, c, r, x, step, local_steps, noise, use_noise, g,
                  ft, resid, z, h, g_old, v):
    """FOCUS local phase of client c in round r: updates ``g[c]``, writes the push to ``v``."""
    transpose_client(features, c, ft)
    d = x.shape[0]
    for p in range(d):
        z[p] = x[p]
        g_old[p] = g[c, p]
    for t in range(local_steps):
        if t > 0:
            for p in range(d):
                z[p] -= step * v[p]
        ridge_gradient(features, targets, lam, c, ft, z, resid, h)
        if use_noise:
            for p in range(d):
                h[p] += noise[r, c, t, p]
        for p in range(d):
            v[p] = h[p] - g_old[p]
    for p in range(d):
        g[c, p] = h[p]


@njit(cache=True, fastmath=False)
def _fedavg_range(features, targets, lam, clients, lo, hi, x, step, local_steps, finals):
    n, d = features.shape[1], features.shape[2]
    ft = np.empty((d, n))
    resid = np.empty(n)
    grad = np.empty(d)
    for j in range(lo, hi):
        _fedavg_client(features, targets, lam, clients[j], x, step, local_steps, ft, resid,
                       grad, finals[j])


@njit(cache=True, fastmath=False)
def _focus_range(features, targets, lam, clients, lo, hi, r, x, step, local_steps, noise,
                 use_noise, g, pushes):
    n, d = features.shape[1], features.shape[2]
    ft = np.empty((d, n))
    resid = np.empty(n)
    z, h, g_old = np.empty(d), np.empty(d), np.empty(d)
    for j in range(lo, hi):
        _focus_client(features, targets, lam, clients[j], r, x, step, local_steps, noise,
                      use_noise, g, ft, resid, z, h, g_old, pushes[j])


@njit(cache=True, fastmath=False, parallel=True)
def _fedavg_parallel(features, targets, lam, clients, m, x, step, local_steps, finals,
                     n_chunks):
    for chunk in prange(n_chunks):
        _fedavg_range(features, targets, lam, clients, chunk * m // n_chunks,
                      (chunk + 1) * m // n_chunks, x, step, local_steps, finals)


@njit(cache=True, fastmath=False, parallel=True)
def _focus_parallel(features, targets, lam, clients, m, r, x, step, local_steps, noise,
                    use_noise, g, pushes, n_chunks):
    for chunk in prange(n_chunks):
        _focus_range(features, targets, lam, clients, chunk * m // n_chunks,
                     (chunk + 1) * m // n_chunks, r, x, step, local_steps, noise, use_noise,
                     g, pushes)


@njit(cache=True, fastmath=False)
def _participants(plan, r, clients):
    """Write the indices of round r's participants (increasing) into ``clients``; count."""
    m = 0
    for i in range(plan.shape[1]):
        if plan[r, i]:
            clients[m] = i
            m += 1
    return m


@njit(cache=True, fastmath=False)
def _n_chunks(m, n_threads):
    return min(m, 4 * n_threads)


@njit(cache=True, fastmath=False)
def fedavg_ridge_rounds(features, targets, lam, plan, step, local_steps, x0, xs, clients,
                        finals, n_threads, min_work):
    r"""FedAvg on ridge clients (as ``focus_local.fedavg_rounds`` with ``kind = RIDGE``).

    ``xs`` (R + 1, d) receives the server iterates; ``clients`` (N,) int64 and ``finals``
    (at least the largest round's participant count, d) are caller-owned scratch
    (participant indices and final local models);
    ``n_threads`` (``numba.get_num_threads()`` of the caller) only sets the chunking;
    a round runs in parallel only if its participants' gradient work ``m tau n d`` is at
    least ``min_work``; ``min_work < 0`` never opens a parallel region (for callers already
    inside one).
    """
    n_rounds = plan.shape[0]
    d = x0.shape[0]
    for p in range(d):
        xs[0, p] = x0[p]
    for r in range(n_rounds):
        m = _participants(plan, r, clients)
        x = xs[r]
        if 0 <= min_work <= m * local_steps * features.shape[1] * features.shape[2]:
            _fedavg_parallel(features, targets, lam, clients, m, x, step, local_steps, finals,
                             _n_chunks(m, n_threads))
        else:
            _fedavg_range(features, targets, lam, clients, 0, m, x, step, local_steps, finals)
        for p in range(d):
            acc = 0.0
            for j in range(m):  # serial, in client order: independent of the threads
                acc += finals[j, p]
            xs[r + 1, p] = acc / m if m > 0 else x[p]


@njit(cache=True, fastmath=False)
def focus_ridge_rounds(features, targets, lam, plan, step, local_steps, noise, use_noise, x, y,
                       g, xs, ys, record_sum, g_sums, clients, pushes, n_threads, min_work):
    r"""FOCUS / SG-FOCUS on ridge clients (as ``focus_local.focus_rounds`` with
    ``kind = RIDGE``; same state and outputs). ``clients`` (N,) int64 and ``pushes``
    (largest round's participant count, d) are caller-owned scratch; ``n_threads`` and
    ``min_work`` as in :func:`fedavg_ridge_rounds`."""
    n_rounds = plan.shape[0]
    d = x.shape[0]
    for p in range(d):
        xs[0, p] = x[p]
        ys[0, p] = y[p]
    if record_sum:
        _sum_rows(g, g_sums, 0)
    for r in range(n_rounds):
        m = _participants(plan, r, clients)
        if 0 <= min_work <= m * local_steps * features.shape[1] * features.shape[2]:
            _focus_parallel(features, targets, lam, clients, m, r, x, step, local_steps, noise,
                            use_noise, g, pushes, _n_chunks(m, n_threads))
        else:
            _focus_range(features, targets, lam, clients, 0, m, r, x, step, local_steps, noise,
                         use_noise, g, pushes)
        for j in range(m):  # serial, in client order
            for p in range(d):
                y[p] += pushes[j, p]
        for p in range(d):
            x[p] -= step * y[p]
            xs[r + 1, p] = x[p]
            ys[r + 1, p] = y[p]
        if record_sum:
            _sum_rows(g, g_sums, r + 1)



@njit(cache=True, fastmath=False, parallel=True)
def fedavg_ridge_batch(features, targets, lam, plans, step, local_steps, x0, xs, max_m):
    """:func:`fedavg_ridge_rounds` for each replicate ``plans[b]`` (n_reps, R, N) in parallel
    over replicates (each replicate serial, so bit-identical to the unbatched call);
    ``xs`` (n_reps, R + 1, d); ``max_m`` >= every round's participant count."""
    n_clients, d = plans.shape[2], x0.shape[0]
    for rep in prange(plans.shape[0]):
        clients = np.empty(n_clients, dtype=np.int64)
        finals = np.empty((max_m, d))
        fedavg_ridge_rounds(features, targets, lam, plans[rep], step, local_steps, x0, xs[rep],
                            clients, finals, 1, -1)


@njit(cache=True, fastmath=False, parallel=True)
def focus_ridge_batch(features, targets, lam, plans, step, local_steps, x, y, g, xs, ys,
                      max_m):
    """:func:`focus_ridge_rounds` (no noise, no recorded sums) for each replicate in parallel;
    state ``x``, ``y`` (n_reps, d) and ``g`` (n_reps, N, d) in place, ``xs``, ``ys``
    (n_reps, R + 1, d); ``max_m`` >= every round's participant count."""
    n_clients, d = plans.shape[2], x.shape[1]
    noise = np.zeros((1, 1, 1, d))
    sums = np.zeros((1, d))
    for rep in prange(plans.shape[0]):
        clients = np.empty(n_clients, dtype=np.int64)
        pushes = np.empty((max_m, d))
        focus_ridge_rounds(features, targets, lam, plans[rep], step, local_steps, noise, False,
                           x[rep], y[rep], g[rep], xs[rep], ys[rep], False, sums, clients,
                           pushes, 1, -1)
