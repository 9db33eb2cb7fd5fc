r"""Replicate-batched online runs of the multinomial bandit baselines Vrb and Mabs (K-Vib,
App. F; :mod:`flbounds.sampling.bandits`) on Assumption 5.1 feedback
(:class:`~flbounds.sampling.online.Assumption51Feedback`).

Each replicate b is one ``run_online(sampler_b, feedback, T, rng_b)``: budget ``budgets[b]``,
its own state row (Vrb's :math:`s`, Mabs's :math:`u`) and its own pre-drawn uniforms
``uniforms[b, t, :K_b]`` (the K_b doubles ``rng_b.choice(N, K_b, p=q)`` draws in round t).
The operations are exact ports of the NumPy ones, in the same order: NumPy's pairwise sums
(:func:`flbounds.kernels.isp_round.numpy_sum`), ``cumsum`` / ``cdf /= cdf[-1]`` /
``searchsorted(side="right")`` of ``Generator.choice``, ``np.unique``'s sorted clients, and
``np.add.at`` in client order. NumPy's ``exp`` and ``power`` (SIMD on this hardware, not
bitwise equal to libm) are not ported: Mabs runs round by round, with the caller applying
``np.exp`` and ``** 3`` to the whole (B, N) block between the compiled steps (elementwise, so
each entry is what the unbatched run computes). Vrb needs only ``sqrt`` and runs all rounds in
one call. No RNG, no validation.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from flbounds.kernels.isp_round import _search, numpy_sum


class BanditRun(NamedTuple):
    """Per-replicate settings and outputs: ``budgets`` int64 (B,), ``mix`` (B,) (Vrb's
    :math:`\\theta`, Mabs's :math:`\\eta`), ``scale`` (B,) (Mabs's :math:`\\delta`, unused by
    Vrb), ``uniforms`` (B, T, K_max), outputs ``costs`` (B, T) and ``capped`` int64 (B, T)."""

    budgets: np.ndarray
    mix: np.ndarray
    scale: np.ndarray
    uniforms: np.ndarray
    costs: np.ndarray
    capped: np.ndarray


@njit(cache=True, fastmath=False, inline="always")
def _feedback(fb, t, pi):
    r""":math:`\pi_t = \lambda(b + c/\sqrt t)` (``Assumption51Feedback.values``)."""
    lam, base, decay = fb
    root = math.sqrt(float(t))
    for i in range(pi.shape[0]):
        pi[i] = lam[i] * (base[i] + decay[i] / root)


@njit(cache=True, fastmath=False, inline="always")
def _mixture(w, mix, q):
    """``(1 - mix) * w / w.sum() + mix / N`` in NumPy's order."""
    n = w.shape[0]
    total = numpy_sum(w, n)
    keep, floor = 1.0 - mix, mix / n
    for i in range(n):
        q[i] = keep * w[i] / total + floor


@njit(cache=True, fastmath=False, inline="always")
def _cost_and_draw(run, b, t, pi, q, work, counts):
    """Round t (1-based) of replicate b at probabilities ``q``: cost
    ``sum(pi * pi / (K q))``, capped count, and the multinomial draw's per-client counts."""
    n, k = q.shape[0], run.budgets[b]
    n_capped = 0
    for i in range(n):
        w = k * q[i]
        work[i] = pi[i] * pi[i] / w
        if w >= 1.0:
            n_capped += 1
    run.costs[b, t - 1] = numpy_sum(work, n)
    run.capped[b, t - 1] = n_capped
    acc = 0.0
    for i in range(n):
        acc += q[i]
        work[i] = acc
    last = work[n - 1]
    for i in range(n):
        work[i] = work[i] / last
    counts[:] = 0
    for j in range(k):
        counts[_search(work, run.uniforms[b, t - 1, j], np.bool_(True))] += 1


@njit(cache=True, fastmath=False)
def vrb_rounds(fb, run, s):
    r"""Vrb for every replicate over all T rounds; ``s`` (B, N) is updated in place
    (:math:`s_i \mathrel{+}= c_i\pi^2/q_i` per drawn client, in client order)."""
    n_reps, n = s.shape
    pi, w, q, work = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    counts = np.empty(n, dtype=np.int64)
    for b in range(n_reps):
        for t in range(1, run.costs.shape[1] + 1):
            _feedback(fb, t, pi)
            for i in range(n):
                w[i] = math.sqrt(s[b, i])
            _mixture(w, run.mix[b], q)
            _cost_and_draw(run, b, t, pi, q, work, counts)
            for i in range(n):
                if counts[i] > 0:
                    s[b, i] = s[b, i] + counts[i] * (pi[i] * pi[i]) / q[i]


@njit(cache=True, fastmath=False)
def mabs_shift(u, out):
    """``out[b] = u[b] - u[b].max()`` (the argument of Mabs's ``np.exp``)."""
    for b in range(u.shape[0]):
        top = u[b, 0]
        for i in range(1, u.shape[1]):
            top = max(top, u[b, i])
        for i in range(u.shape[1]):
            out[b, i] = u[b, i] - top


@njit(cache=True, fastmath=False)
def mabs_draw(fb, run, t, w, q, counts):
    """Round t of every replicate from ``w = np.exp(mabs_shift(u))``: probabilities into
    ``q`` (B, N), costs, capped counts and the draws' per-client ``counts`` (B, N)."""
    n_reps, n = w.shape
    pi, work = np.empty(n), np.empty(n)
    _feedback(fb, t, pi)
    for b in range(n_reps):
        _mixture(w[b], run.mix[b], q[b])
        _cost_and_draw(run, b, t, pi, q[b], work, counts[b])


@njit(cache=True, fastmath=False)
def mabs_update(fb, run, t, u, counts, q_cubed):
    r"""Mabs's update of round t: :math:`u_i \mathrel{+}= c_i\delta\pi_i^2/q_i^3` per drawn
    client, in client order; ``q_cubed`` = ``q ** 3`` computed by NumPy."""
    n_reps, n = u.shape
    pi = np.empty(n)
    _feedback(fb, t, pi)
    for b in range(n_reps):
        delta = run.scale[b]
        for i in range(n):
            if counts[b, i] > 0:
                u[b, i] = u[b, i] + counts[b, i] * delta * (pi[i] * pi[i]) / q_cubed[b, i]
