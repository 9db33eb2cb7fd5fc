r"""One round of the ISP samplers of K-Vib (uniform ISP, K-Vib, the oracle) for many replicates.

Exact compiled ports of the NumPy/Python operations of the unbatched path, so that the batched
FedAvg-with-sampler run equals it bit for bit:

- :func:`numpy_sum` is NumPy's pairwise summation of a contiguous float64 vector (blocks of at
  most 128 values summed in 8 interleaved partial sums, halves combined recursively), the order
  ``np.sum`` uses (checked against ``np.sum`` in the tests);
- :func:`isp_probabilities` is :func:`flbounds.sampling.optimal_isp_probabilities` step for
  step (sort, sequential cumulative sum, binary search over the breakpoints, the linear
  equation on the bracketing piece, clip);
- :func:`isp_sampler_round` applies, per replicate, the sampler's probabilities, the cost
  terms of :func:`flbounds.algorithms.fedavg_sampler` (optimal cost, ISP cost gap, exact ISP
  variance) and the draw ``U < p``.

No RNG, no validation; the slow twins are the library functions themselves.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from flbounds.kernels._arrays import argsort_into

PAIRWISE_BLOCK = 128  # NumPy's PW_BLOCKSIZE
UNIFORM, KVIB, ORACLE = 0, 1, 2


class IspSettings(NamedTuple):
    """The sampler's settings: kind (UNIFORM, KVIB, ORACLE), budget K, K-Vib's mixing
    ``theta``, regularizer ``gamma`` and square-root rule ``use_sqrt``, the oracle's ``p_min``."""

    kind: int
    budget: float
    theta: float
    gamma: float
    use_sqrt: bool
    p_min: float


class IspRound(NamedTuple):
    """Per-replicate outputs of a round: probabilities ``p`` and draw ``mask`` (B, N), the
    optimal cost ``best``, the cost gap ``q_gap`` and the exact ``variance`` (B,)."""

    p: np.ndarray
    mask: np.ndarray
    best: np.ndarray
    q_gap: np.ndarray
    variance: np.ndarray


@njit(cache=True, fastmath=False)
def numpy_block_sum(a, lo, n):
    """NumPy's sum of ``a[lo:lo + n]`` for n <= 128 (one block: 8 interleaved partial sums),
    the building block of :func:`numpy_sum` (also for callers whose rows never exceed a
    block, which then skip the halving)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, fastmath=False)
def _pairwise(a, lo, n):
    """NumPy's pairwise sum: blocks of <= 128, halves (multiples of 8) added recursively;
    the recursion runs on an explicit stack (post-order: left sum + right sum)."""
    if n <= PAIRWISE_BLOCK:
        return numpy_block_sum(a, lo, n)
    depth = 128
    s_lo, s_n = np.empty(depth, np.int64), np.empty(depth, np.int64)
    s_stage = np.zeros(depth, np.int64)
    vals = np.empty(depth)
    sp, vp = 1, 0
    s_lo[0], s_n[0], s_stage[0] = lo, n, 0
    while sp > 0:
        top = sp - 1
        cur_lo, cur_n = s_lo[top], s_n[top]
        if cur_n <= PAIRWISE_BLOCK:
            vals[vp] = numpy_block_sum(a, cur_lo, cur_n)
            vp += 1
            sp -= 1
            continue
        n2 = cur_n // 2
        n2 -= n2 % 8
        if s_stage[top] == 0:
            s_stage[top] = 1
            s_lo[sp], s_n[sp], s_stage[sp] = cur_lo, n2, 0
            sp += 1
        elif s_stage[top] == 1:
            s_stage[top] = 2
            s_lo[sp], s_n[sp], s_stage[sp] = cur_lo + n2, cur_n - n2, 0
            sp += 1
        else:
            vals[vp - 2] = vals[vp - 2] + vals[vp - 1]
            vp -= 1
            sp -= 1
    return vals[0]


@njit(cache=True, fastmath=False)
def numpy_sum(a, n):
    """``np.sum(a[:n])`` for contiguous float64 ``a``, bit for bit."""
    return 0.0 + _pairwise(a, np.int64(0), np.int64(n))


@njit(cache=True, fastmath=False, inline="always")
def _search(s, v, right):
    """``np.searchsorted(s, v, side="right" if right else "left")``."""
    lo, hi = 0, s.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if s[mid] < v or (right and s[mid] == v):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, fastmath=False, inline="always")
def _clip_sum(s, csum, tau, p_min):
    n = s.shape[0]
    n_low = _search(s, p_min * tau, np.bool_(True)) if p_min > 0 else 0
    n_high = n - _search(s, tau, np.bool_(False))
    n_high = min(n_high, n - n_low)
    return p_min * n_low + n_high, csum[n - n_high] - csum[n_low]


@njit(cache=True, fastmath=False, inline="always")
def _bracket(s, csum, start, scale, k, p_min):
    """Largest / smallest breakpoint s[start + m] / scale with S >= k / S < k (NaN if none)."""
    lo, hi = -1, s.shape[0] - start
    while hi - lo > 1:
        m = (lo + hi) // 2
        b = s[start + m] / scale if scale != 1.0 else s[start + m]
        c0, c1 = _clip_sum(s, csum, b, p_min)
        if c0 + c1 / b >= k:
            lo = m
        else:
            hi = m
    size = s.shape[0] - start
    b_lo = np.nan
    b_hi = np.nan
    if lo >= 0:
        b_lo = s[start + lo] / scale if scale != 1.0 else s[start + lo]
    if hi < size:
        b_hi = s[start + hi] / scale if scale != 1.0 else s[start + hi]
    return b_lo, b_hi


@njit(cache=True, fastmath=False)
def isp_probabilities(a, k, p_min, s, csum, out):
    """``optimal_isp_probabilities(a, k, p_min=p_min)`` into ``out``; ``s`` (N) and ``csum``
    (N + 1) are scratch."""
    n = a.shape[0]
    p_min = min(p_min, k / n)
    n_pos = 0
    for i in range(n):
        if a[i] > 0:
            n_pos += 1
    if n_pos == 0 or k - p_min * n <= 0:
        for i in range(n):
            out[i] = k / n
        return
    if k >= n_pos + (n - n_pos) * p_min:
        for i in range(n):
            out[i] = 1.0 if a[i] > 0 else (k - n_pos) / (n - n_pos)
        return
    order = np.empty(n, dtype=np.int64)
    argsort_into(a, order, np.empty(n, dtype=np.int64))
    for i in range(n):
        s[i] = a[order[i]]
    csum[0] = 0.0
    acc = 0.0
    for i in range(n):
        acc += s[i]
        csum[i + 1] = acc
    tau_lo, tau_hi = np.nan, np.nan
    for which in range(2 if p_min > 0 else 1):
        lo, hi = _bracket(s, csum, n - n_pos, p_min if which == 1 else 1.0, k, p_min)
        if not math.isnan(lo) and (math.isnan(tau_lo) or lo > tau_lo):
            tau_lo = lo
        if not math.isnan(hi) and (math.isnan(tau_hi) or hi < tau_hi):
            tau_hi = hi
    probe = 2.0 * tau_lo if math.isnan(tau_hi) else 0.5 * (tau_lo + tau_hi)
    c0, c1 = _clip_sum(s, csum, probe, p_min)
    tau = c1 / (k - c0) if (c1 > 0 and k > c0) else tau_lo
    for i in range(n):
        v = a[i] / tau
        if v < p_min:
            v = p_min
        if v > 1.0:
            v = 1.0
        out[i] = v


@njit(cache=True, fastmath=False, inline="always")
def probability_scratch(n):
    """Scratch of :func:`sampler_probabilities` for N = n clients."""
    return np.empty(n), np.empty(n + 1), np.empty(n), np.empty(n)


@njit(cache=True, fastmath=False, inline="always")
def sampler_probabilities(settings, a, omega_row, scratch, out):
    """The sampler's inclusion probabilities for feedback ``a`` into ``out``."""
    n = a.shape[0]
    s, csum, w, p_opt = scratch
    if settings.kind == UNIFORM:
        for i in range(n):
            out[i] = settings.budget / n
    elif settings.kind == ORACLE:
        isp_probabilities(a, settings.budget, settings.p_min, s, csum, out)
    else:
        for i in range(n):
            w[i] = omega_row[i] + settings.gamma
            if settings.use_sqrt:
                w[i] = math.sqrt(w[i])
        isp_probabilities(w, settings.budget, 0.0, s, csum, p_opt)
        floor = settings.theta * settings.budget / n
        for i in range(n):
            out[i] = (1.0 - settings.theta) * p_opt[i] + floor


@njit(cache=True, fastmath=False, inline="always")
def _cost(a, p, terms):
    """NumPy's ``sum(a[a > 0]**2 / p[a > 0])`` (pairwise, over the positive entries)."""
    m = np.int64(0)
    for i in range(a.shape[0]):
        if a[i] > 0:
            terms[m] = a[i] * a[i] / p[i]
            m += 1
    return numpy_sum(terms, m)


@njit(cache=True, fastmath=False)
def isp_sampler_round(settings, pi, omega, uniforms, out):
    """One round for every replicate b (rows of ``pi``, ``omega``, ``uniforms`` (B, N)).

    Writes into ``out`` (:class:`IspRound`) the sampler's probabilities ``p[b]``, the draw
    ``mask[b] = uniforms[b] < p[b]``, ``best[b]`` = min over P_K of sum pi^2/p,
    ``q_gap[b]`` = sum_{pi > 0} pi^2/p[b] - best[b] and ``variance[b]`` = sum (1 - p)/p pi^2,
    in the unbatched path's operation order. ``omega`` is read only (K-Vib's state; the caller
    applies the update after the draw).
    """
    n_reps, n = pi.shape
    scratch = probability_scratch(n)
    s, csum, _, p_opt = scratch
    terms = np.empty(n)
    for rep in range(n_reps):
        a, pr = pi[rep], out.p[rep]
        sampler_probabilities(settings, a, omega[rep], scratch, pr)
        isp_probabilities(a, settings.budget, 0.0, s, csum, p_opt)
        out.best[rep] = _cost(a, p_opt, terms)
        out.q_gap[rep] = _cost(a, pr, terms) - out.best[rep]
        for i in range(n):
            terms[i] = (1 - pr[i]) / pr[i] * a[i] * a[i]
        out.variance[rep] = numpy_sum(terms, n)
        for i in range(n):
            out.mask[rep, i] = uniforms[rep, i] < pr[i]
