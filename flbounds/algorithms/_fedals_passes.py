"""Compiled passes of :func:`flbounds.algorithms.fedals.fedals` over large parameter arrays:
the local step, a group's model averaging and SCAFFOLD's control refresh, each giving the
numbers of the NumPy expression it replaces (the same products, sums and quotients, in the
same order; no contraction), in one pass over memory instead of one per operation.

Each applies to C-contiguous float64 arrays of at least :data:`FUSED_STEP_MIN` entries
(below it, loading the compiled loop, about 0.4 s of CPU once per process, costs more than
the passes it saves); smaller or strided arrays take the NumPy form.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: parameter arrays at least this large take the compiled passes
FUSED_STEP_MIN = 1 << 18


def weighted_average(theta: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """sum_k w_k theta[..., k, :], accumulated client by client in index order."""
    out = weights[0] * theta[..., 0, :]
    for k in range(1, theta.shape[-2]):
        out = out + weights[k] * theta[..., k, :]
    return out


def _fits(*arrays) -> bool:
    return all(isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous
               for a in arrays) and arrays[0].size >= FUSED_STEP_MIN


@njit(cache=True, fastmath=False)
def _step_in_place(theta, step, direction):
    """``theta -= step * direction`` for C-contiguous float64 arrays of one shape, one pass
    over memory instead of two (the product and the difference, each rounded as numpy
    rounds them: the same numbers)."""
    t, g = theta.reshape(-1), direction.reshape(-1)
    for i in range(t.size):
        t[i] = t[i] - step * g[i]


def _descend(theta, step, direction):
    """``theta -= step * direction`` in place: the fused loop when both are C-contiguous
    float64 arrays of one shape with at least :data:`FUSED_STEP_MIN` entries, else numpy."""
    if _fits(theta, direction) and direction.shape == theta.shape:
        _step_in_place(theta, float(step), direction)
    else:
        theta -= step * direction


@njit(cache=True, fastmath=False)
def _wsum(weights, rows):
    """:func:`weighted_average` of the rows (K, n) of one replicate."""
    avg = weights[0] * rows[0]
    for k in range(1, rows.shape[0]):
        avg = avg + weights[k] * rows[k]
    return avg


@njit(cache=True, fastmath=False)
def _average_in_place(theta, weights, start, stop):
    """Columns start:stop of every client of the (R, K, P) ``theta`` replaced by their
    :func:`weighted_average`."""
    for r in range(theta.shape[0]):
        theta[r, :, start:stop] = _wsum(weights, theta[r, :, start:stop])


def _average_group(theta, weights, sl):
    """Group ``sl`` of every client replaced by the clients' weighted average, in place."""
    if _fits(theta) and sl.step in (None, 1):
        start, stop, _ = sl.indices(theta.shape[-1])
        _average_in_place(theta.reshape(-1, *theta.shape[-2:]), weights, start, stop)
    else:
        theta[..., sl] = weighted_average(theta[..., sl], weights)[..., None, :]


@njit(cache=True, fastmath=False)
def _refresh_in_place(c_k, c, theta, prev, weights, scale, start, stop):
    for r in range(theta.shape[0]):
        own = c_k[r, :, start:stop]
        bar = _wsum(weights, own)
        for k in range(own.shape[0]):
            drift = (prev[r, k, start:stop] - theta[r, k, start:stop]) / scale
            own[k] = 1.0 * (own[k] - bar) + drift
        c[r, start:stop] = _wsum(weights, own)


def _refresh_mean(c_k, c, theta, prev, sl, weights, scale) -> bool:
    """SCAFFOLD's control refresh on group ``sl`` (c_k <- (c_k - cbar) + (prev - theta) /
    scale, then c = the weighted mean of c_k, cbar the one before) in place, compiled;
    False, having done nothing, where the arrays do not fit (the caller's NumPy form)."""
    if not (_fits(theta, c_k, c, prev) and sl.step in (None, 1)):
        return False
    start, stop, _ = sl.indices(theta.shape[-1])
    shape = (-1, *theta.shape[-2:])
    _refresh_in_place(c_k.reshape(shape), c.reshape(-1, theta.shape[-1]),
                      theta.reshape(shape), prev.reshape(shape), weights, float(scale),
                      start, stop)
    return True
