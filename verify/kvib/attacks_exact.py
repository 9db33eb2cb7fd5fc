r"""Attack surfaces of K-Vib's bounds on expectations over sampling, computed exactly: Theorem
5.2's explicit bound (App. D.3, eqs. (52)-(54)) and Theorem 4.1's final bound on FL runs.

Both bound an expectation over the sampler's independent (ISP) draws, which the claims
estimate from seeds. At small N and T the expectation is a finite sum: every round has
:math:`2^N` participation sets, each with probability :math:`\prod_i p_i^{s_i}(1-p_i)^{1-s_i}`
under the round's :math:`\tilde p^t`, and an adaptive sampler's state (K-Vib's
:math:`\omega`) and the model follow each branch (N = 3, T = 3: 512 leaves).

The attacks enumerate the tree a level at a time: every node of round t is a row (the
models, K-Vib's :math:`\omega`, the probabilities of the histories), the sets are a matrix of
masks, and :class:`KVibLevels` and :func:`waterfill_rows` repeat K-Vib's and the
water-filling's arithmetic on all rows at once; a level's sum is taken in the order a
depth-first walk visits its nodes (:func:`walk_sum`). :func:`expectation_tree` walks the same
tree node by node with the library's own samplers (their ``probabilities`` and ``update``,
a copy per branch): the reference the level enumeration is tested against.
"""

from __future__ import annotations

import copy

import numpy as np

from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.participation import all_masks
from flbounds.sampling import Feedback, KVib, isp_draw
from flbounds.sampling.ftrl import VARIANTS
from flbounds.sampling.online import Assumption51Feedback, best_fixed_cost

from .attacks import _budget
from .conditions import feedback_max
from .thm5_2 import explicit_bound_value

#: the enumeration's cost: at most this many participation patterns per tree
MAX_LEAVES = 4096
EXACT_TREE = ("rounding: an exact sum over <= 4096 participation patterns of products of "
              "<= 12 probabilities, relative error < 1e-12")


def branches(p):
    """Every ISP set of positive probability under inclusion probabilities ``p``: (masks,
    probabilities); a client with p_i = 1 is always in."""
    p = np.asarray(p, dtype=float)
    masks = all_masks(p.size)
    probs = np.prod(np.where(masks, p, 1.0 - p), axis=1)
    keep = probs > 0
    return masks[keep], probs[keep]


def drawn(p, mask):
    """The library's ISP draw of the set ``mask`` (uniforms 0 for the members, 1 for the
    others, so U_i < p_i exactly for the members)."""
    return isp_draw(np.asarray(p, dtype=float), np.where(mask, 0.0, 1.0))


def expectation_tree(sampler, n_rounds, visit, state=None, *, update_last=True):
    r"""Walk every participation history of ``sampler`` over ``n_rounds`` rounds.

    Parameters
    ----------
    sampler
        A fresh ISP sampler (``probabilities()``, ``update(Feedback)``); copied per branch.
    n_rounds : int
        T.
    visit : callable
        ``visit(t, sampler, state, prob) -> (feedback values (N,), child(mask, draw))``: called
        at every node of round t (1-indexed) with the node's probability; returns the round's
        feedback for the sampler and a function giving the next state after the set ``mask``
        (``None`` at t = T: the walk stops).
    state
        The state of round 1 (passed through ``visit``).
    update_last : bool
        Copy and update the sampler for the nodes of round T too; ``False`` when ``visit``
        does not read the sampler there (it then gets the parent's, unchanged).

    Returns
    -------
    int
        The number of nodes visited.
    """
    count = 0
    stack = [(1, sampler, state, 1.0)]
    while stack:
        t, node, st, prob = stack.pop()
        count += 1
        values, child = visit(t, node, st, prob)
        if t == n_rounds:
            continue
        p = node.probabilities()
        last = t + 1 == n_rounds and not update_last
        for mask, pr in zip(*branches(p), strict=True):
            draw = drawn(p, mask)
            nxt = node if last else copy.deepcopy(node)
            if not last:
                nxt.update(Feedback(draw, values[draw.clients]))
            stack.append((t + 1, nxt, child(mask, draw), prob * pr))
    return count


def level_branches(P):
    """The children of one level's nodes: every ISP set of positive probability under each
    row of inclusion probabilities ``P`` (M, N).

    Returns
    -------
    parent : numpy.ndarray of int, shape (M',)
        The row each child comes from (parent-major, the sets in :func:`branches`' order).
    masks : numpy.ndarray of bool, shape (M', N)
    probs : numpy.ndarray, shape (M',)
        The set's probability under its parent's row (:func:`branches`' products).
    """
    masks = all_masks(P.shape[1])
    probs = np.prod(np.where(masks, P[:, None, :], 1.0 - P[:, None, :]), axis=2)
    parent, code = np.nonzero(probs > 0)
    return parent, masks[code], probs[parent, code]


def walk_sum(values) -> float:
    """The sum of one level's terms in the order :func:`expectation_tree` adds them: its
    depth-first walk visits a level's nodes in the reverse of :func:`level_branches`' order,
    one addition at a time (so the level enumeration gives the walk's bits)."""
    values = np.asarray(values, dtype=float)
    return float(np.add.accumulate(values[::-1])[-1]) if values.size else 0.0


def waterfill_rows(A, k) -> np.ndarray:
    r""":func:`~flbounds.sampling.optimal_isp_probabilities` (no floor) of every row of ``A``
    (M, N) of positive weights, with the solver's own steps: the binary search over the sorted
    weights for the piece of :math:`\tau\mapsto\sum_i\min(a_i/\tau, 1)` that holds ``k``, then
    :math:`\tau` from that piece's linear equation (the same operations, row by row)."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or not np.all(np.isfinite(A)) or not np.all(A > 0):
        raise ValueError("A must be a 2-d array of positive finite weights")
    m, n = A.shape
    k = float(k)
    if not 0 < k <= n:
        raise ValueError(f"k must lie in (0, N = {n}], got {k}")
    if k >= n:                                  # every weight saturates
        return np.ones((m, n))
    s = np.sort(A, axis=1)
    csum = np.concatenate((np.zeros((m, 1)), np.cumsum(s, axis=1)), axis=1)
    rows = np.arange(m)
    # S(b) >= k at each breakpoint b = s_j: clients at or above b capped, the rest a/b
    below = np.sum(s[:, None, :] < s[:, :, None], axis=2)        # searchsorted(s, s_j, left)
    at_least = (n - below) + csum[rows[:, None], below] / s >= k
    lo, hi = np.full(m, -1), np.full(m, n)
    while np.any(hi - lo > 1):
        live = hi - lo > 1
        mid = (lo + hi) // 2
        ok = at_least[rows, np.clip(mid, 0, n - 1)]
        lo = np.where(live & ok, mid, lo)
        hi = np.where(live & ~ok, mid, hi)
    tau_lo = s[rows, lo]
    top = hi >= n
    probe = np.where(top, 2.0 * tau_lo, 0.5 * (tau_lo + s[rows, np.minimum(hi, n - 1)]))
    under = np.sum(s < probe[:, None], axis=1)
    c0, c1 = (n - under).astype(float), csum[rows, under]
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where((c1 > 0) & (k > c0), c1 / (k - c0), tau_lo)
    return np.clip(A / tau[:, None], 0.0, 1.0)


class KVibLevels:
    r"""K-Vib (Algorithm 2, ``variant="paper"``) for every node of a level at once: the state
    :math:`\omega` is a row per node, and the probabilities and the update are
    :class:`~flbounds.sampling.KVib`'s arithmetic on all rows (its :math:`\theta`,
    :math:`\gamma` and K are read from ``sampler``)."""

    def __init__(self, sampler: KVib):
        if getattr(sampler, "variant", None) != VARIANTS[0]:
            raise ValueError("sampler must be a KVib of variant 'paper'")
        self.n_clients, self.budget = sampler.n_clients, sampler.budget
        self.theta, self.gamma = sampler.theta, sampler.gamma
        self.start = np.array(sampler.omega, dtype=float)[None]

    def base(self, omega) -> np.ndarray:
        """:math:`p^t` of every row (before mixing)."""
        return waterfill_rows(np.sqrt(omega + self.gamma), self.budget)

    def mixed(self, base) -> np.ndarray:
        r""":math:`\tilde p^t = (1-\theta)p^t + \theta K/N` of every row."""
        return (1.0 - self.theta) * base + self.theta * self.budget / self.n_clients

    @staticmethod
    def update(omega, P, values, parent, masks) -> np.ndarray:
        r"""The children's :math:`\omega`: the parent's plus :math:`\pi(i)^2/\tilde p_i` for
        the clients of the child's set (``values`` and ``P`` per parent row)."""
        return omega[parent] + np.where(masks, values[parent] ** 2 / P[parent], 0.0)


def kvib_expected_costs(feedback, n_rounds, budget, G):
    r"""Exact :math:`\mathbb E\,\ell_t(\tilde p^t)` per round of K-Vib (Algorithm 2 with the
    theory's :math:`\theta`, :math:`\gamma=G^2N/(K\theta)`), partial feedback, and
    :math:`\min z_t` over every reachable history (:math:`z_t = K -` the clients capped before
    mixing), by levels of the tree.

    Returns
    -------
    costs : numpy.ndarray, shape (T,)
    zbar : float
    nodes : int
    """
    kvib = KVibLevels(KVib(feedback.n_clients, budget, n_rounds, G=G))
    omega, prob = kvib.start, np.ones(1)
    costs, zbar, nodes = np.zeros(n_rounds), np.inf, 0
    for t in range(1, n_rounds + 1):
        pi = feedback.values(t)
        base = kvib.base(omega)
        P = kvib.mixed(base)
        costs[t - 1] = walk_sum(prob * np.sum(pi * pi / P, axis=1))
        zbar = min(zbar, float(np.min(float(budget) - np.sum(base >= 1.0, axis=1))))
        nodes += prob.size
        if t < n_rounds:
            parent, masks, pr = level_branches(P)
            omega = kvib.update(omega, P, np.broadcast_to(pi, P.shape), parent, masks)
            prob = prob[parent] * pr
    return costs, zbar, nodes


# ---- Theorem 5.2: K-Vib's expected static regret against App. D.3's explicit bound ----

N_TREE, T_TREE = 4, 4


def _regret_point(*, base, decay, lam, n, T, k_frac, g_factor):
    """Feedback pi_t(i) = lam_i (b_i + c_i/sqrt t), c = decay b (from above or below), the
    budget K in [1, N] and G = g_factor x the largest feedback (Thm 5.2: G bounds it)."""
    lam = np.asarray(lam, dtype=float)[:n]
    base = np.asarray(base, dtype=float)[:n]
    fb = Assumption51Feedback(lam / lam.sum(), base, np.asarray(decay)[:n] * base)
    return fb, _budget(n, k_frac), g_factor * feedback_max(fb, T)


def _regret_instance(**point) -> dict:
    """The values Theorem 5.2's predicates read at a point."""
    fb, k, G = _regret_point(**point)
    return dict(feedback=fb, n_rounds=point["T"], budget=k, n_clients=point["n"], G=G)


def expected_regret(fb, n_rounds, budget, G):
    """Exact E Regret_S(T) of K-Vib, min z_t over the reachable histories, and the nodes."""
    costs, zbar, nodes = kvib_expected_costs(fb, n_rounds, budget, G)
    return float(costs.sum() - best_fixed_cost(fb.squared_sums(n_rounds), budget)), zbar, nodes


@attack_surface("kvib.thm5_2.explicit_bound",
          space={"base": Box(1e-3, 1e3, log=True, shape=N_TREE),
                 "decay": Box(-1, 1, shape=N_TREE), "lam": Simplex(N_TREE, floor=1e-3),
                 "n": Integers(2, N_TREE), "T": Integers(1, T_TREE), "k_frac": Box(0, 1),
                 "g_factor": Box(1, 10, log=True)},
          instance=lambda **point: _regret_instance(**point),
          tolerance=1e-12, tolerance_why=EXACT_TREE, budget={"quick": 100, "full": 2000},
          fixed=[{"base": [1.0, 2.0, 0.5, 3.0], "decay": [0.5, 0.5, 0.5, 0.5],
                  "lam": [0.25] * 4, "n": 3, "T": 3, "k_frac": 0.5, "g_factor": 1.0}],
          note="exact expectation over K-Vib's ISP draws (every participation history, "
               "K-Vib's state along each): N <= 4, T <= 4, Assumption 5.1 feedback from above "
               "or below, any lambda, K in [1, N] with TK >= N, G >= the largest feedback; "
               "zbar = min z_t over the reachable histories (the lenient reading: the largest "
               "bound)")
def thm5_2_exact(*, base, decay, lam, n, T, k_frac, g_factor):
    """Exact E Regret_S(T) over eqs. (52)-(54) at the theory's theta and gamma."""
    fb, k, G = _regret_point(base=base, decay=decay, lam=lam, n=n, T=T, k_frac=k_frac,
                             g_factor=g_factor)
    regret, zbar, _ = expected_regret(fb, T, k, G)
    if zbar <= 0:
        return np.nan  # every round capped: the bound is +inf (vacuous)
    root = float(np.sum(np.sqrt(fb.squared_sums(T))))
    return regret / explicit_bound_value(N=n, T=T, K=k, G=G, zbar=zbar, root=root)
