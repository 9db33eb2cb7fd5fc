r"""Attack surfaces of K-Vib's bounds on expectations over sampling, computed exactly: Theorem
5.2's explicit bound (App. D.3, eqs. (52)-(54)) and Theorem 4.1's final bound on FL runs.

Both bound an expectation over the sampler's independent (ISP) draws, which the claims
estimate from seeds. At small N and T the expectation is a finite sum: every round has
:math:`2^N` participation sets, each with probability :math:`\prod_i p_i^{s_i}(1-p_i)^{1-s_i}`
under the round's :math:`\tilde p^t`, and an adaptive sampler's state (K-Vib's
:math:`\omega`) and the model follow each branch. :func:`expectation_tree` walks that tree
with the library's own samplers (their ``probabilities`` and ``update``), so the ratio of the
exact expectation to the bound is exact up to rounding (N = 3, T = 3: 512 leaves).
"""

from __future__ import annotations

import copy

import numpy as np

from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.participation import all_masks
from flbounds.sampling import Feedback, KVib, isp_draw
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


def kvib_expected_costs(feedback, n_rounds, budget, G):
    r"""Exact :math:`\mathbb E\,\ell_t(\tilde p^t)` per round of K-Vib (Algorithm 2 with the
    theory's :math:`\theta`, :math:`\gamma=G^2N/(K\theta)`), partial feedback, and
    :math:`\min z_t` over every reachable history (:math:`z_t = K -` the clients capped before
    mixing).

    Returns
    -------
    costs : numpy.ndarray, shape (T,)
    zbar : float
    nodes : int
    """
    costs = np.zeros(n_rounds)
    zbar = [np.inf]

    def visit(t, sampler, _, prob):
        pi = feedback.values(t)
        costs[t - 1] += prob * float(np.sum(pi * pi / sampler.inclusion_weights()))
        capped = int(np.sum(sampler.base_probabilities() >= 1.0))
        zbar[0] = min(zbar[0], float(budget) - capped)
        return pi, lambda mask, draw: None

    sampler = KVib(feedback.n_clients, budget, n_rounds, G=G)
    nodes = expectation_tree(sampler, n_rounds, visit)
    return costs, zbar[0], nodes


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
