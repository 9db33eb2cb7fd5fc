r"""Library guards of [004]: Algorithm 1 as the project runs it (the greedy's marginal gains
are eq. (16)'s; part ``selection`` of :data:`~verify.subtrunc.alg1.ALG1`) and eq. (17)'s
sampling (part ``sampling`` of :data:`~verify.subtrunc.sec3c.SEC3C`).

Eq. (16) adds, at every step, the element of largest marginal gain
:math:`\Delta(e \mid S) = W(S \cup \{e\}) - W(S)`. The maximizers compute gains
incrementally (a compiled kernel for the facility-location part, a running modular sum for
the truncation); this claim re-derives every step's gain from set values and checks both the
reported gain and the choice.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binomtest

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.stats import holm
from flbounds.submodular import (
    Modular,
    facility_location,
    greedy_trace,
    stochastic_greedy,
    stochastic_greedy_plan,
    subtrunc,
)

from .alg1 import ALG1
from .instances import random_dissim, random_losses
from .sec3c import SEC3C

ALPHA = 1e-4  # family-wise level of the Holm rule over the (instance, step, element) cells

ROUNDING = Tolerance.rounding(1e-9, "gains and values are divided by max(1, |f(N)|); each "
                              "is a float64 sum of <= n^2 terms, error ~n^2 eps << 1e-9")


def _objectives(rng, n):
    """Facility location and SubTrunc on one instance; b is drawn below the modular total so
    the truncation binds within the greedy's first steps."""
    dissim, losses = random_dissim(rng, n), random_losses(rng, n)
    total = float(np.log1p(losses).sum())
    lam = float(rng.uniform(0.5, 4.0)) * float(dissim.max())
    b = float(rng.uniform(0.1, 0.6)) * total
    return (facility_location(dissim), subtrunc(dissim, losses, lam=lam, b=b))


def _step_errors(f, k):
    """Per greedy step: |reported gain - value increment| and the margin by which some other
    remaining element's increment beats the pick (0 when the pick is a maximizer)."""
    trace = greedy_trace(f, k)
    scale = max(1.0, abs(f.value(list(range(f.n)))))
    gain_err, choice_err, chosen = 0.0, 0.0, []
    for e, gain in zip(trace.selected, trace.gains, strict=True):
        base = f.value(chosen)
        rest = [c for c in range(f.n) if c not in chosen]
        increments = np.array([f.value(chosen + [c]) - base for c in rest])
        picked = increments[rest.index(e)]
        gain_err = max(gain_err, abs(gain - picked) / scale)
        choice_err = max(choice_err, (increments.max() - picked) / scale)
        chosen.append(e)
    return gain_err, choice_err


@claim("subtrunc.alg1.greedy_gains_are_increments", ref="Alg. 1; eq. (16)", kind="algorithm",
       expected="holds", result=ALG1, parts=("selection",),
       statement="Each greedy step adds an element maximizing W(S + e) - W(S), and that "
                 "difference is the step's gain (facility location G and SubTrunc's W).",
       quick=dict(n_instances=12, n_max=14), full=dict(n_instances=200, n_max=30))
def greedy_gains_are_increments(*, rng, n_instances, n_max):
    """Random n in 4..n_max, k = n // 2 greedy steps on G and W (lambda, b drawn so the
    truncation binds). Measured: the largest scaled |gain - increment| and the largest scaled
    amount by which a remaining element's increment beats the pick (ties count as 0).
    Tolerance: rounding."""
    gain_err, choice_err = 0.0, 0.0
    for r in rng.spawn(n_instances):
        n = int(r.integers(4, n_max + 1))
        for f in _objectives(r, n):
            g, c = _step_errors(f, n // 2)
            gain_err, choice_err = max(gain_err, g), max(choice_err, c)
    worst = max(gain_err, choice_err)
    return Evidence(measured=worst, theoretical=0.0, relation="<=", tolerance=ROUNDING,
                    details={"max_gain_error": gain_err, "max_choice_error": choice_err,
                             "n_instances": n_instances})


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
