r"""Sec. III-C of SubTrunc, eq. (17)'s sampling (part ``sampling`` of :data:`SEC3C`): a library
guard that stochastic greedy draws, at every step, R as a uniform r-subset of the remaining
elements, independently of the earlier steps."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binomtest

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.stats import holm
from flbounds.submodular import Modular, stochastic_greedy, stochastic_greedy_plan

from . import SEC3C

ALPHA = 1e-4  # family-wise level of the Holm rule over the (instance, step, element) cells


def _pick_distribution(weights, k, r):
    """P(element e is added at step j) for every step j < k and element e, exactly, when each
    step's R is a uniform r-subset of the remaining elements and the pick is R's largest
    weight (a modular function with distinct weights): the element of rank rho (0 = largest)
    among c remaining is picked with probability C(c - 1 - rho, r - 1) / C(c, r)."""
    n = weights.size
    marginal = np.zeros((k, n))

    def walk(remaining, step, prob):
        if step == k:
            return
        c, rr = len(remaining), min(r, len(remaining))
        ranked = sorted(remaining, key=lambda e: -weights[e])
        for rho, e in enumerate(ranked):
            q = prob * math.comb(c - 1 - rho, rr - 1) / math.comb(c, rr)
            if q > 0:
                marginal[step, e] += q
                walk([x for x in remaining if x != e], step + 1, q)

    walk(list(range(n)), 0, 1.0)
    return marginal


@claim("subtrunc.eq17.sample_uniform_each_step", ref="Sec. III-C, eq. (17) and [33]",
       kind="algorithm", expected="holds", result=SEC3C, parts=("sampling",),
       statement="Stochastic greedy draws, at every step, R as a uniform r-subset of the "
                 "remaining elements, independently of the earlier steps: on a modular "
                 "function the step-by-step pick frequencies over plans match the exact "
                 "distribution this implies.",
       quick=dict(n_plans=3000), full=dict(n_plans=30000))
def sample_uniform_each_step(*, rng, n_plans):
    """Instances (n, k, r) = (6, 3, 2), (7, 4, 3), (8, 3, 2) with random distinct weights;
    ``n_plans`` plans each (``stochastic_greedy_plan``). Each (instance, step, element) cell
    with a nonzero exact probability is an exact two-sided binomial test of its pick count,
    Holm at family-wise level 1e-4 over all cells; a pick in a cell of probability 0 counts
    as a rejection. Measured: the number of rejections."""
    pvalues, impossible, cells, instances = [], 0, [], []
    for (n, k, r), sub in zip(((6, 3, 2), (7, 4, 3), (8, 3, 2)), rng.spawn(3), strict=True):
        weights = sub.permutation(n) + sub.uniform(0.0, 0.5, size=n)
        f = Modular(weights)
        instances.append(dict(objective=f, k=k, r=r))
        counts = np.zeros((k, n))
        for _ in range(n_plans):
            picks = stochastic_greedy(f, k, sample_size=r, keys=stochastic_greedy_plan(sub, n, k))
            counts[np.arange(k), picks] += 1
        exact = _pick_distribution(weights, k, r)
        impossible += int(np.sum(counts[exact == 0]))
        for j, e in zip(*np.nonzero(exact > 0), strict=True):
            pvalues.append(binomtest(int(counts[j, e]), n_plans, float(exact[j, e])).pvalue)
        cells.append(dict(n=n, k=k, r=r, max_abs_freq_dev=float(
            np.abs(counts / n_plans - exact).max())))
    decision = holm(np.array(pvalues), ALPHA)
    return Evidence(measured=int(decision.reject.sum()) + impossible, theoretical=0,
                    relation="<=", tolerance=Tolerance.exact("a count of rejections"),
                    instance=instances,
                    details={"family_size": decision.m, "alpha": ALPHA,
                             "rule": "exact binomial test per cell, Holm-Bonferroni",
                             "picks_of_probability_zero": impossible, "instances": cells})
