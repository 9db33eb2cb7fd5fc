r"""Water-filling (the optimal ISP probabilities of K-Vib Lemma 2.2) and the K-Vib online loop
built on it (Algorithm 2 of K-Vib) on Assumption-5.1 feedback.

:func:`kvib_rounds` advances rounds ``t0 .. t0 + n - 1`` given the uniform plan ``uniforms``
(n, N):
per round, water-filling on :math:`\sqrt{\omega+\gamma}` (or :math:`\omega+\gamma`), mixing,
cost :math:`\ell_t(\tilde p)=\sum_i\pi_t(i)^2/\tilde p_i`, ISP draw :math:`U<\tilde p`, and the
update :math:`\omega_i \mathrel{+}= \pi_t(i)^2/\tilde p_i`. ``omega`` is updated in place;
``out = (costs, sizes, capped)`` (clients with :math:`p^t_i = 1` before mixing; length n) is
overwritten. The slow twin is
:class:`flbounds.sampling.KVib` driven by :func:`flbounds.sampling.online.run_online`.
"""

import math

import numpy as np
from numba import njit

from flbounds.kernels._arrays import argsort_into


@njit(cache=True, fastmath=False, inline="always")
def _level(a, k, order, csum, out):
    """Lemma 2.2's water level from ``order`` sorting ``a`` (the part after the sort)."""
    n = a.shape[0]
    acc = 0.0
    for j in range(n):
        acc += a[order[j]]
        csum[j] = acc
    ell = n
    for l1 in range(n, 0, -1):
        if k + l1 - n <= csum[l1 - 1] / a[order[l1 - 1]]:
            ell = l1
            break
    scale = (k + ell - n) / csum[ell - 1]
    for j in range(n):
        i = order[j]
        out[i] = scale * a[i] if j < ell else 1.0


@njit(cache=True, fastmath=False)
def waterfill(a, k, order, csum, out):
    r"""Lemma 2.2 for positive ``a``: largest l with k + l - N <= sum_{i<=l} a_(i) / a_(l).

    ``order`` (int64, N) and ``csum`` (N) are scratch; ``out`` receives p.
    """
    argsort_into(a, order, np.empty(a.shape[0], dtype=np.int64))
    _level(a, k, order, csum, out)


@njit(cache=True, fastmath=False)
def resort_into(a, order, scratch):
    """Reorder the permutation ``order`` so that it sorts ``a`` increasingly, equal values
    in index order: the permutation :func:`~flbounds.kernels._arrays.argsort_into` writes
    (the order by (value, index) is unique), found by insertion from the current order, which
    is fast when ``order`` nearly sorts ``a`` already (the previous round's order of slowly
    changing weights); past 8 N moves the merge sort finishes the job. ``scratch``: int64
    (N,)."""
    n = a.shape[0]
    moves = 0
    for j in range(1, n):
        x = order[j]
        v = a[x]
        i = j - 1
        while i >= 0 and (a[order[i]] > v or (a[order[i]] == v and order[i] > x)):
            order[i + 1] = order[i]
            i -= 1
        moves += j - 1 - i
        order[i + 1] = x
        if moves > 8 * n:
            argsort_into(a, order, scratch)
            return


@njit(cache=True, fastmath=False)
def waterfill_warm(a, k, order, csum, out):
    """:func:`waterfill` with ``order`` holding a permutation (the last call's order) that
    :func:`resort_into` sorts from: the same sort, so the same numbers."""
    resort_into(a, order, np.empty(a.shape[0], dtype=np.int64))
    _level(a, k, order, csum, out)


@njit(cache=True, fastmath=False)
def kvib_rounds(feedback, settings, t0, uniforms, omega, out):
    r"""Advance K-Vib over ``uniforms.shape[0]`` rounds starting at round ``t0`` (1-indexed).

    ``feedback = (lam, base, decay)`` gives :math:`\pi_t(i) = \lambda_i(b_i + c_i/\sqrt t)`;
    ``settings = (k, theta, gamma, use_sqrt)``.
    """
    lam, base, decay = feedback
    k, theta, gamma, use_sqrt = settings
    costs, sizes, capped = out
    n = lam.shape[0]
    w = np.empty(n)
    p = np.empty(n)
    order = np.arange(n)        # each round sorts from the last round's order
    csum = np.empty(n)
    floor = theta * k / n
    for r in range(uniforms.shape[0]):
        for i in range(n):
            w[i] = math.sqrt(omega[i] + gamma) if use_sqrt else omega[i] + gamma
        waterfill_warm(w, k, order, csum, p)
        inv_sqrt_t = 1.0 / math.sqrt(t0 + r)
        cost = 0.0
        size = 0
        n_cap = 0
        for i in range(n):
            if p[i] >= 1.0:
                n_cap += 1
            pt = (1.0 - theta) * p[i] + floor
            pi = lam[i] * (base[i] + decay[i] * inv_sqrt_t)
            cost += pi * pi / pt
            if uniforms[r, i] < pt:
                omega[i] += pi * pi / pt
                size += 1
        costs[r] = cost
        sizes[r] = size
        capped[r] = n_cap


@njit(cache=True, fastmath=False)
def waterfill_objectives(rows, k, out):
    r"""``out[j] = min_{p in P_k} sum_i rows[j, i]^2 / p_i`` for positive rows (Lemma 2.2)."""
    n = rows.shape[1]
    order = np.arange(n)        # each row sorts from the last row's order
    csum = np.empty(n)
    p = np.empty(n)
    for j in range(rows.shape[0]):
        a = rows[j]
        waterfill_warm(a, k, order, csum, p)
        acc = 0.0
        for i in range(n):
            acc += a[i] * a[i] / p[i]
        out[j] = acc


@njit(cache=True, fastmath=False)
def feedback_block(lam, base, decay, t0, out):
    r"""``out[r] = lam * (base + decay / sqrt(t0 + r))`` (:math:`\pi_t` of Assumption 5.1
    feedback, rounds ``t0 .. t0 + out.shape[0] - 1``) in one pass: the division, addition and
    product of :meth:`flbounds.sampling.online.Assumption51Feedback.block`, each rounded
    once, so the same numbers."""
    for r in range(out.shape[0]):
        root = math.sqrt(float(t0 + r))
        for i in range(out.shape[1]):
            v = decay[i] / root
            v += base[i]
            out[r, i] = v * lam[i]
