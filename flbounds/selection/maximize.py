r"""Maximizers under a cardinality constraint :math:`|S| \le k`.

- :func:`greedy` (eq. (16) of SubTrunc): k steps, each adding the best marginal gain; always
  returns k elements (Algorithm 1 selects "a subset of size kappa"), ties to the lowest index.
- :func:`lazy_greedy` (Minoux): the same picks as greedy for a submodular f, re-scoring only
  the stale top of a max-heap of upper bounds.
- :func:`stochastic_greedy` (eq. (17); Mirzasoleiman et al. 2015): each step scores a uniform
  random sample R of size r of the remaining elements. The randomness is an explicit plan,
  ``keys`` (k, n) of uniforms from :func:`stochastic_greedy_plan`: R is the r remaining
  elements with the smallest keys. With :math:`r \ge (n/k)\ln(1/\varepsilon)`,
  :math:`E f(S) \ge (1 - 1/e - \varepsilon)\,\mathrm{OPT}` for monotone submodular f.
- :func:`distorted_greedy` (Harshaw et al. 2019) for :math:`h = g - c` with g monotone
  submodular and c a nonnegative modular cost (UnionFL):
  :math:`h(S) \ge (1 - 1/e) g(\mathrm{OPT}) - c(\mathrm{OPT})`.
- :func:`brute_force_max`: exact optimum over all :math:`|S| \le k` (small n).

:func:`greedy_trace` (so :func:`greedy`) and :func:`stochastic_greedy` run the facility-location
objectives and :class:`~flbounds.selection.families.Modular` through the compiled loop of
:mod:`flbounds.selection.fast`: the same selections and gains, bit for bit.
"""

from __future__ import annotations

import heapq
import math
from itertools import combinations
from typing import NamedTuple

import numpy as np

from flbounds.validation import check_positive

from .base import check_k
from .fast import fl_mode, run_compiled


class GreedyTrace(NamedTuple):
    """A greedy run: chosen elements in order, the gain of each step, and the marginal-gain
    evaluations used.

    Attributes
    ----------
    selected : list of int
        The chosen elements, in the order added.
    gains : list of float
        The marginal gain of each step.
    n_evaluations : int
        Marginal-gain evaluations spent.
    """

    selected: list[int]
    gains: list[float]
    n_evaluations: int


def _remaining(n: int, selected: list[int]) -> np.ndarray:
    mask = np.ones(n, dtype=bool)
    mask[selected] = False
    return np.flatnonzero(mask)


def greedy_trace(f, k: int) -> GreedyTrace:
    """Naive greedy with its trace; see :func:`greedy`.

    Parameters
    ----------
    f : SetFunction
        The set function maximised (its ground set is ``range(f.n)``).
    k : int
        The cardinality budget, :math:`0 \\le k \\le n`.

    Returns
    -------
    GreedyTrace
    """
    k = check_k(k, f.n)
    mode = fl_mode(f, k)
    if mode >= 0:  # the same steps compiled (module fast), bit-identical
        return GreedyTrace(*run_compiled(f, k, mode))
    state, gains, evals = f.start(), [], 0
    for _ in range(k):
        cand = _remaining(f.n, state.selected)
        g = f.gains(state, cand)
        evals += cand.size
        best = int(np.argmax(g))  # first maximizer = lowest index
        gains.append(float(g[best]))
        f.push(state, int(cand[best]))
    return GreedyTrace(list(state.selected), gains, evals)


def greedy(f, k: int) -> list[int]:
    r"""Naive greedy, eq. (16): :math:`S \leftarrow S \cup \{\arg\max_{e \notin S} \Delta(e|S)\}`.

    Parameters
    ----------
    f : set function (``n``, ``start``, ``gains``, ``push``)
    k : int, ``0 <= k <= f.n``

    Returns
    -------
    list[int]
        The k chosen elements in the order added.
    """
    return greedy_trace(f, k).selected


def lazy_greedy_trace(f, k: int) -> GreedyTrace:
    """Lazy greedy with its trace; valid (same output as greedy) for submodular f.

    Parameters
    ----------
    f : SetFunction
        The set function maximised (its ground set is ``range(f.n)``).
    k : int
        The cardinality budget, :math:`0 \\le k \\le n`.

    Returns
    -------
    GreedyTrace
    """
    k = check_k(k, f.n)
    state = f.start()
    first = f.gains(state, np.arange(f.n))
    heap = [(-float(g), e) for e, g in enumerate(first)]
    heapq.heapify(heap)
    gains, evals = [], f.n
    for _ in range(k):
        while True:
            _, e = heapq.heappop(heap)
            g = float(f.gains(state, [e])[0])
            evals += 1
            if not heap or (-g, e) <= heap[0]:
                break
            heapq.heappush(heap, (-g, e))
        gains.append(g)
        f.push(state, e)
    return GreedyTrace(list(state.selected), gains, evals)


def lazy_greedy(f, k: int) -> list[int]:
    """Lazy (accelerated) greedy: the greedy set of a submodular f with fewer evaluations.

    Parameters
    ----------
    f : SetFunction
        The set function maximised (its ground set is ``range(f.n)``).
    k : int
        The cardinality budget, :math:`0 \\le k \\le n`.

    Returns
    -------
    list of int
        The k chosen elements in the order added.
    """
    return lazy_greedy_trace(f, k).selected


def stochastic_sample_size(n: int, k: int, eps: float) -> int:
    r""":math:`r = \lceil (n/k) \ln(1/\varepsilon) \rceil` (capped at n), the size giving
    :math:`E f(S) \ge (1 - 1/e - \varepsilon)\mathrm{OPT}`.

    Parameters
    ----------
    n : int
        The ground set's size.
    k : int
        The cardinality budget.
    eps : float
        :math:`\varepsilon > 0`.

    Returns
    -------
    int
        r, between 1 and n.
    """
    k = check_k(k, n)
    eps = check_positive(eps, "eps")
    if k == 0 or eps >= 1:
        return 1
    return min(n, math.ceil(n / k * math.log(1.0 / eps)))


def stochastic_greedy_plan(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """The random plan of stochastic greedy: uniform keys, one row per step.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of the keys.
    n : int
        The ground set's size.
    k : int
        The cardinality budget (the steps).

    Returns
    -------
    numpy.ndarray, shape (k, n)
        The ``keys`` of :func:`stochastic_greedy`.
    """
    return rng.random((check_k(k, n), n))


def stochastic_greedy(f, k: int, *, sample_size: int, keys: np.ndarray) -> list[int]:
    r"""Stochastic greedy, eq. (17), with R drawn from :math:`N \setminus S` via ``keys``.

    Parameters
    ----------
    f : SetFunction
        The set function maximised.
    k : int
        The cardinality budget.
    sample_size : int
        r, the number of remaining elements scored per step (``1 <= r <= n``).
    keys : (k, n) array
        The plan: R at step j is the r remaining elements with the smallest ``keys[j]``
        (:func:`stochastic_greedy_plan`).

    Returns
    -------
    list of int
        The k chosen elements in the order added.

    References
    ----------
    .. [1] A. C. Castillo J., E. C. Kaya, L. Ye, A. Hashemi. Submodular Maximization
       Approaches for Equitable Client Selection in Federated Learning. arXiv:2408.13683
       (2024), eq. (17).
    """
    k = check_k(k, f.n)
    r = check_k(sample_size, f.n, "sample_size")
    if r < 1:
        raise ValueError("sample_size must be >= 1")
    keys = np.asarray(keys, dtype=float)
    if keys.shape != (k, f.n):
        raise ValueError(f"keys must have shape ({k}, {f.n}), got {keys.shape}")
    mode = fl_mode(f, k)
    if mode >= 0 and np.isfinite(keys).all():  # compiled, bit-identical (module fast)
        return run_compiled(f, k, mode, keys=keys, r=r)[0]
    state = f.start()
    for step in range(k):
        cand = _remaining(f.n, state.selected)
        sample = np.sort(cand[np.argsort(keys[step, cand], kind="stable")[:r]])
        g = f.gains(state, sample)
        f.push(state, int(sample[int(np.argmax(g))]))
    return list(state.selected)


def distorted_greedy(f, k: int) -> list[int]:
    r"""Distorted greedy for :math:`h = g - c` (``f.submodular_part`` = g, ``f.cost`` = c).

    Step :math:`j = 0..k-1` maximizes :math:`(1-1/k)^{k-j-1}\Delta_g(e|S) - c_e` and adds the
    element only if that is positive, so it may return fewer than k elements.

    Parameters
    ----------
    f : set function with ``submodular_part`` and ``cost``
        For example :class:`UnionFLObjective`.
    k : int
        The cardinality budget.

    Returns
    -------
    list of int
        At most k elements, in the order added.
    """
    k = check_k(k, f.n)
    g, cost = f.submodular_part, np.asarray(f.cost, dtype=float)
    state = g.start()
    for step in range(k):
        cand = _remaining(f.n, state.selected)
        if cand.size == 0:
            break
        score = (1.0 - 1.0 / k) ** (k - step - 1) * g.gains(state, cand) - cost[cand]
        best = int(np.argmax(score))
        if score[best] > 0:
            g.push(state, int(cand[best]))
    return list(state.selected)


def brute_force_max(f, k: int, *, chunk: int = 20000) -> tuple[float, list[int]]:
    """Exact :math:`\\max_{|S| \\le k} f(S)` by enumeration (the empty set included).

    Parameters
    ----------
    f : SetFunction
        The set function maximised (its ground set is ``range(f.n)``).
    k : int
        The cardinality budget, :math:`0 \\le k \\le n`.
    chunk : int
        Sets evaluated per batch.

    Returns
    -------
    value : float
        The optimal value.
    best : list of int
        The first optimal set in (size, lexicographic) order.
    """
    k = check_k(k, f.n)
    best_val = f.value([])
    best_set: list[int] = []
    for size in range(1, k + 1):
        it = combinations(range(f.n), size)
        while True:
            block = np.array(list(_take(it, chunk)), dtype=np.int64).reshape(-1, size)
            if block.shape[0] == 0:
                break
            vals = f.values(block, np.full(block.shape[0], size, dtype=np.int64))
            m = int(np.argmax(vals))
            if vals[m] > best_val:
                best_val, best_set = float(vals[m]), block[m].tolist()
    return best_val, best_set


def _take(iterator, count):
    for _, item in zip(range(count), iterator, strict=False):
        yield item
