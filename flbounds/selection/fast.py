r"""Compiled greedy and stochastic greedy for the facility-location family and Modular.

:func:`fl_greedy_run` runs every step of :func:`~flbounds.selection.maximize.greedy` or
:func:`~flbounds.selection.maximize.stochastic_greedy` on a :class:`FacilityLocation`,
:class:`SubTruncObjective` or :class:`UnionFLObjective` in one numba call. It performs the
same floating-point operations in the same order as the objectives' ``gains``/``push``
(the per-candidate sum of :func:`~flbounds.kernels.submodular_gains.fl_gain_one`, then the
shift, the truncated term or the penalty, elementwise; for :class:`Modular`,
:math:`f(S + e) - f(S)` with both values summed left to right from 0.0 in the order added, as
NumPy sums fewer than 8 terms), draws nothing, and breaks ties the
same way (the first maximizer in ascending index; the sample of a stochastic step is the
``r`` remaining elements with the smallest keys, equal keys to the lower index), so the
selections and gains are bit-identical to the generic path.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from flbounds.kernels.submodular_gains import fl_gain_one, fl_update

from .facility import FacilityLocation, SubTruncObjective, UnionFLObjective
from .families import Modular

MODE_FL, MODE_SUBTRUNC, MODE_UNIONFL, MODE_MODULAR = 0, 1, 2, 3
#: the largest k of the compiled :class:`Modular` path: the generic path's gains are NumPy
#: sums of at most k weights, summed left to right from 0.0 below 8 terms (then pairwise)
MODULAR_MAX_K = 7


@njit(cache=True, fastmath=False)
def _gain(dissim_t, cur, e, first, shift, mode, modular, weights, lam, b, cost):
    g = fl_gain_one(dissim_t, cur, e)
    if first:
        g = g + shift
    if mode == 1:
        before = 0.0 if first else min(b, modular)
        g = g + lam * (min(b, modular + weights[e]) - before)
    elif mode == 2:
        g = g - cost[e]
    return g


@njit(cache=True, fastmath=False)
def fl_greedy_run(dissim_t, offsets, shift, mode, weights, lam, b, cost, keys, r, sampled,
                  selected_out, gains_out):
    """Run ``selected_out.shape[0]`` greedy steps in place.

    Parameters
    ----------
    dissim_t : numpy.ndarray, shape (n, n)
        The transposed dissimilarity (``FacilityLocation.dissim_t``).
    offsets : numpy.ndarray, shape (n,)
        The phantom offsets :math:`C_i` (the starting coverage).
    shift : float
        Added to the gains of the first step (the scalar offset's shift).
    mode : int
        0 facility location, 1 SubTrunc (``weights``, ``lam``, ``b``), 2 UnionFL (``cost``),
        3 :class:`Modular` (``weights``; ``dissim_t``, ``offsets`` and ``shift`` unused).
    weights, cost : numpy.ndarray, shape (n,)
        SubTrunc's :math:`\\phi(f_i)` or the modular weights, and UnionFL's penalties
        (ignored by other modes).
    lam, b : float
        SubTrunc's weight and truncation level.
    keys : numpy.ndarray, shape (k, n)
        The stochastic plan (read only when ``sampled``).
    r : int
        The sample size of a stochastic step.
    sampled : bool
        Stochastic greedy (True) or greedy over every remaining element (False).
    selected_out : numpy.ndarray of int64, shape (k,)
        Receives the elements in the order added.
    gains_out : numpy.ndarray, shape (k,)
        Receives the gain of each step.

    Returns
    -------
    int
        The marginal-gain evaluations spent.
    """
    n = offsets.shape[0]
    cur = offsets.copy()
    taken = np.zeros(n, dtype=np.bool_)
    in_sample = np.zeros(n, dtype=np.bool_)
    modular = 0.0
    evals = 0
    for step in range(selected_out.shape[0]):
        first = step == 0
        if sampled:
            _sample(keys[step], r, taken, in_sample)
        best_e = -1
        best_g = 0.0
        for e in range(n):
            if taken[e] or (sampled and not in_sample[e]):
                continue
            if mode == 3:  # Modular: f(S + e) - f(S), each summed from 0.0 in push order
                total = 0.0
                for j in range(step):
                    total += weights[selected_out[j]]
                g = (total + weights[e]) - modular
            else:
                g = _gain(dissim_t, cur, e, first, shift, mode, modular, weights, lam, b,
                          cost)
            evals += 1
            if best_e < 0 or g > best_g:
                best_e, best_g = e, g
        selected_out[step] = best_e
        gains_out[step] = best_g
        taken[best_e] = True
        if mode == 3:
            modular = 0.0
            for j in range(step + 1):
                modular += weights[selected_out[j]]
        else:
            fl_update(dissim_t, cur, best_e)
        if mode == 1:
            modular += weights[best_e]
    return evals


@njit(cache=True, fastmath=False)
def _sample(keys, r, taken, in_sample):
    """Mark the r untaken elements with the smallest keys (equal keys: the lower index)."""
    in_sample[:] = False
    for _ in range(r):
        pick = -1
        for e in range(keys.shape[0]):
            if taken[e] or in_sample[e]:
                continue
            if pick < 0 or keys[e] < keys[pick]:
                pick = e
        in_sample[pick] = True


def fl_mode(f, k: int) -> int:
    """The :func:`fl_greedy_run` mode of ``f``, or -1 when it has no compiled path.

    Parameters
    ----------
    f : SetFunction
        A set function; only the exact classes :class:`FacilityLocation`,
        :class:`SubTruncObjective`, :class:`UnionFLObjective` and (for
        ``k <= MODULAR_MAX_K``) :class:`Modular` have a compiled path (not subclasses, which
        may override ``gains``).
    k : int
        The steps.

    Returns
    -------
    int
        0, 1, 2 or -1.
    """
    mode = {FacilityLocation: MODE_FL, SubTruncObjective: MODE_SUBTRUNC,
            UnionFLObjective: MODE_UNIONFL, Modular: MODE_MODULAR}.get(type(f), -1)
    return -1 if mode == MODE_MODULAR and k > MODULAR_MAX_K else mode


def run_compiled(f, k: int, mode: int, keys=None, r: int = 0) -> tuple[list, list, int]:
    """Greedy (``keys`` None) or stochastic greedy on ``f`` by :func:`fl_greedy_run`.

    Parameters
    ----------
    f : FacilityLocation, SubTruncObjective or UnionFLObjective
        The objective (``mode = fl_mode(f)``, not -1).
    k : int
        The steps, already validated.
    mode : int
        :func:`fl_mode` of ``f``.
    keys : numpy.ndarray, shape (k, n), optional
        The stochastic plan, finite and validated.
    r : int
        The sample size (stochastic greedy only).

    Returns
    -------
    selected : list of int
        The elements in the order added.
    gains : list of float
        The gain of each step.
    n_evaluations : int
        Marginal-gain evaluations spent.
    """
    zeros = np.zeros(f.n)
    weights = f.weights if mode in (MODE_SUBTRUNC, MODE_MODULAR) else zeros
    cost = f.cost if mode == MODE_UNIONFL else zeros
    lam = float(f.lam) if mode == MODE_SUBTRUNC else 0.0
    b = float(f.b) if mode == MODE_SUBTRUNC else 0.0
    sampled = keys is not None
    plan = np.ascontiguousarray(keys, dtype=np.float64) if sampled else np.zeros((1, 1))
    selected = np.empty(k, dtype=np.int64)
    gains = np.empty(k)
    if mode == MODE_MODULAR:
        dissim_t, offsets, shift = np.zeros((1, 1)), zeros, 0.0
    else:
        dissim_t, offsets, shift = f.dissim_t, f.row_offsets, float(f.shift)
    evals = fl_greedy_run(dissim_t, offsets, shift, mode,
                          np.ascontiguousarray(weights, dtype=np.float64), lam, b,
                          np.ascontiguousarray(cost, dtype=np.float64), plan, int(r), sampled,
                          selected, gains)
    return selected.tolist(), gains.tolist(), int(evals)
