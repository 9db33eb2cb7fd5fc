r"""Assumption 1 of FOCUS (arbitrary client participation) and its cases: the averaging
weights q each case prints, against the exact ones; the participation processes' exact moments
against the plans they draw (a guard); and the attacks on the two cases found wrong.

Notation: :math:`p_i = P(i \in S)` (inclusion), :math:`q_i = E[1\{i\in S\}/|S|]` (averaging
weight, 0/0 := 0). Exact values come from :mod:`flbounds.participation`; Monte Carlo means use
independent rounds drawn from the claim's ``rng``, and tolerances are 4 MC standard errors.
"""

from __future__ import annotations

import math

import numpy as np

from flbounds.falsify import Integers, Simplex, attack_surface
from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import (
    Bernoulli,
    Cyclic,
    MarkovOnOff,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
)
from flbounds.stats import holm, mc_mean


@hypothesis("case2", "Case 2: independent Bernoulli(p_i) participation, p_i in (0, 1]")
def case2(*, p):
    p = np.asarray(p, dtype=float)
    return bool(p.size > 0 and np.all((p > 0) & (p <= 1)))


@hypothesis("case3", "Case 3: m of N clients drawn without replacement with categorical "
                     "weights w_i > 0, sum w = 1")
def case3(*, w, m):
    w = np.asarray(w, dtype=float)
    return bool(np.all(w > 0) and abs(w.sum() - 1) < 1e-12 and 1 <= m <= w.size)


@hypothesis("case3a", "Case 3a: m of N clients drawn uniformly without replacement, 1 <= m <= N")
def case3a(*, n_clients, m):
    return 1 <= m <= n_clients


ASSUMPTION1 = result(
    "focus.assumption1", ref="Assumption 1", title="arbitrary client participation and its cases",
    parts={"case2": "Case 2 (active): q_i ~ p_i / sum_j p_j for close p_i (exactly q_i = p_i "
                    "int_0^1 prod_{j != i}(1 - p_j + p_j t) dt, and q_i <= p_i)",
           "case3": "Case 3 (passive): the categorical sampling weights are the averaging "
                    "weights q_i",
           "case3a": "Case 3a (uniform): p_i = m/N and q_i = 1/m",
           "definition": "q_i = E[1_i / sum_j 1_j] for every case's participation process"},
    hypotheses=(case2.only("case2"), case3.only("case3"), case3a.only("case3a")))

P_EQ5 = np.array([0.3, 0.5, 0.7, 0.9])  # the spec's / audit's instance
# Figure 4's "arbitrary" sampling weights in the reference notebook (np.random.seed(5), N = 16)
NOTEBOOK_WEIGHTS = np.array([.0297, .1126, .0277, .1187, .0637, .0795, .0992, .0676, .0392,
                             .0253, .0116, .0957, .0577, .0215, .1138, .0363])


def _mc_weights(plan):
    sizes = plan.sum(axis=1, keepdims=True)
    return mc_mean(np.divide(plan, sizes, out=np.zeros(plan.shape), where=sizes > 0))


@claim("focus.assumption1.case2_bernoulli_q", ref="Assumption 1, Case 2", kind="statement",
       expected="holds", result=ASSUMPTION1, parts=("case2",),
       statement="Under independent Bernoulli(p_i) participation, q_i = E[1_i / sum_j 1_j] = "
                 "p_i * int_0^1 prod_{j != i}(1 - p_j + p_j t) dt (two clients: "
                 "q_1 = p_1 (1 - p_2/2)), and q_i <= p_i.",
       quick=dict(n_draws=50000), full=dict(n_draws=1000000))
def case2_bernoulli_q(*, rng, n_draws):
    """The paper only says q_i ~ p_i / sum_j p_j for close p_i; the exact value is the
    integral (spec 1.5), computed by Gauss-Legendre in flbounds.participation. Checked against
    MC (4 SE) for p = (.1,.2,.3,.5,.6,.8,.9,1) and against the two-client closed form
    (rounding tolerance 1e-15). Also q_i <= p_i (appended as p - q >= 0)."""
    p = np.array([.1, .2, .3, .5, .6, .8, .9, 1.0])
    proc = Bernoulli(p)
    q = proc.aggregation_weights()
    mc = _mc_weights(proc.plan(rng, n_draws))
    two = Bernoulli([0.3, 0.8]).aggregation_weights()
    two_formula = np.array([0.3 * (1 - 0.8 / 2), 0.8 * (1 - 0.3 / 2)])
    measured = np.concatenate([np.abs(mc.mean - q), np.abs(two - two_formula), q - p])
    tol = np.concatenate([4 * mc.se, np.full(2, 1e-15), np.zeros(p.size)])
    return Evidence(measured=measured, theoretical=np.zeros(measured.size), relation="<=",
                    tolerance=Tolerance(tol, "4 MC SE / rounding 1e-15 / exact",
                                        "|MC - exact| <= 4 std/sqrt(n); two-client formula: the "
                                        "Gauss rule is exact for degree N-1 polynomials, rounding "
                                        "~1e-16; q - p <= 0: exact inequality"),
                    instance=[dict(p=p), dict(p=np.array([0.3, 0.8]))],
                    details={"p": p, "q_exact": q, "q_mc": mc.mean, "q_mc_se": mc.se})


@claim("focus.assumption1.case3a_printed", ref="Assumption 1, Case 3a", kind="remark",
       expected="violated", result=ASSUMPTION1, parts=("case3a",),
       statement="Uniform sampling of m of N clients without replacement gives p_i = m/N and "
                 "q_i = 1/m, q_i read as Assumption 1 defines it, E[1_i / sum_j 1_j] (the same "
                 "conditioned on a non-empty round, as |S| = m >= 1).",
       quick=dict(n_clients=8, m=2), full=dict(n_clients=16, m=4))
def case3a_printed(*, rng, n_clients, m):
    """|S| = m always, so q_i = E[1_i]/m = (m/N)/m = 1/N, not 1/m (the q_i would then sum to
    N/m > 1). Exact q of flbounds.participation against the printed 1/m, on the claim's
    instance and on the smallest one, N = 2, m = 1 (q_i = 1/2 vs 1; margin: q m = m/N).
    Readings: Assumption 1's q and q conditioned on a non-empty round coincide here (never
    empty) and both fail; only the weight a participant receives within its round,
    E[1/|S| | i in S] = 1/m, matches the printed value, and that is not Assumption 1's q.
    Tolerance: rounding."""
    cases = [(n_clients, m), (2, 1)]
    qs = [UniformWithoutReplacement(n, k).aggregation_weights() for n, k in cases]
    return Evidence(measured=np.concatenate(qs),
                    theoretical=np.concatenate([np.full(n, 1.0 / k) for n, k in cases]),
                    relation="==", instance=[dict(n_clients=n, m=k) for n, k in cases],
                    tolerance=Tolerance.rounding(1e-15, "exact weights 1/N"),
                    details={"cases": [dict(n_clients=n, m=k, q=q, printed=1.0 / k,
                                            ratio_q_over_printed=float(q.max() * k))
                                       for (n, k), q in zip(cases, qs, strict=True)],
                             "smallest_instance": {"n_clients": 2, "m": 1},
                             "reading_that_holds": "E[1/|S| | i in S] = 1/m (the per-round "
                                                   "weight of a participant)"})


@claim("focus.assumption1.case3a_corrected", ref="Assumption 1, Case 3a, corrected",
       kind="remark", expected="holds",
       corrects="focus.assumption1.case3a_printed", result=ASSUMPTION1, parts=("case3a",),
       statement="Corrected: uniform m-of-N sampling gives q_i = 1/N (and p_i = m/N).",
       quick=dict(n_clients=8, m=2, n_draws=20000), full=dict(n_clients=16, m=4, n_draws=400000))
def case3a_corrected(*, rng, n_clients, m, n_draws):
    """Same draws; MC means of 1_i/|S| and 1_i against 1/N and m/N (4 SE)."""
    plan = UniformWithoutReplacement(n_clients, m).plan(rng, n_draws)
    mc, incl = _mc_weights(plan), mc_mean(plan.astype(float))
    return Evidence(measured=np.concatenate([mc.mean, incl.mean]),
                    theoretical=np.concatenate([np.full(n_clients, 1 / n_clients),
                                                np.full(n_clients, m / n_clients)]),
                    relation="==", tolerance=Tolerance.mc(np.concatenate([mc.se, incl.se])),
                    instance=dict(n_clients=n_clients, m=m))


@claim("focus.assumption1.case3_weights_are_q", ref="Assumption 1, Case 3; Fig. 4 (code)",
       kind="remark", expected="violated", result=ASSUMPTION1, parts=("case3",),
       statement="Passive participation: when the server samples m clients without replacement "
                 "with categorical weights w_i, the averaging weights q_i are those w_i.",
       quick=dict(), full=dict())
def case3_weights_are_q(*, rng):
    """Without replacement, q_i = pi_i / m with pi_i the exact inclusion probability of
    successive sampling, which differs from w_i. Instances: the reference notebook's weights
    (seed 5, N = 16, m = 4): |q_i - w_i| reaches ~8e-3 (q in [.0132, .1106] vs w in
    [.0116, .1187]); and the smallest, N = 3, m = 2, w = (0.2, 0.3, 0.5) (m = 1 gives q = w).
    Exact (subset recursion), so the tolerance is rounding only (1e-12)."""
    w = NOTEBOOK_WEIGHTS / NOTEBOOK_WEIGHTS.sum()
    q = WeightedWithoutReplacement(w, 4).aggregation_weights()
    small_w = np.array([0.2, 0.3, 0.5])
    small_q = WeightedWithoutReplacement(small_w, 2).aggregation_weights()
    return Evidence(measured=np.concatenate([q, small_q]),
                    theoretical=np.concatenate([w, small_w]), relation="==",
                    instance=[dict(w=w, m=4), dict(w=small_w, m=2)],
                    tolerance=Tolerance.rounding(1e-12, "subset DP over 2^16 sets, sums of "
                                                 "<= 2^16 positive terms: << 1e-12"),
                    details={"max_abs_diff": float(np.max(np.abs(q - w))),
                             "max_ratio_q_over_w": float(np.max(q / w)),
                             "min_ratio_q_over_w": float(np.min(q / w)),
                             "smallest_instance": {"w": small_w, "m": 2, "q": small_q,
                                                   "note": "m = 1 gives q = w exactly; N = 3, "
                                                           "m = 2 is the smallest failing size "
                                                           "with m < N"}})


ALPHA = 1e-3  # family-wise level of the Holm rule over every (process, client, moment) cell
DEPTH = 4  # the round sampled from each plan: Markov chains have made 4 transitions by then


def _processes(rng, n):
    rates = rng.uniform(0.15, 0.85, size=n)
    m = int(rng.integers(1, n))
    return {
        "bernoulli": Bernoulli(rng.uniform(0.05, 0.9, size=n)),
        "uniform_m_of_n": UniformWithoutReplacement(n, m),
        "weighted_m_of_n": WeightedWithoutReplacement(rng.uniform(0.2, 3.0, size=n), m),
        "markov_on_off": MarkovOnOff(rates, np.maximum(rng.uniform(0.3, 0.95, size=n),
                                                       (2 * rates - 1) / rates + 0.05)),
    }


def _round_samples(process, rng, n_plans):
    """``n_plans`` i.i.d. draws of one round's set. A memoryless process draws its rounds
    i.i.d., so they are the rounds of one plan; a Markov on/off process (clients independent
    chains) gives round DEPTH of ``n_plans`` independent chains per client, drawn as one
    plan of the process with its clients repeated ``n_plans`` times (block k of N clients is
    plan k)."""
    if isinstance(process, MarkovOnOff):
        n = process.n_clients
        chains = MarkovOnOff(np.tile(process.rates, n_plans), np.tile(process.stay_on, n_plans))
        return chains.plan(rng, DEPTH + 1)[DEPTH].reshape(n_plans, n)
    return process.plan(rng, n_plans)


def _pvalues(samples, exact):
    """Two-sided z-test p-values of the sample means of ``samples`` (n, N) against ``exact``."""
    n = samples.shape[0]
    mean, se = samples.mean(axis=0), samples.std(axis=0, ddof=1) / math.sqrt(n)
    z = np.divide(np.abs(mean - exact), se, out=np.where(mean == exact, 0.0, np.inf),
                  where=se > 0)
    return np.array([math.erfc(v / math.sqrt(2)) for v in z]), mean


def _cyclic_gap(rng, n):
    """Largest |exact - average over one period| of a round-robin (deterministic)."""
    per_round = int(rng.integers(1, n + 1))
    proc = Cyclic(n, per_round, offset=int(rng.integers(0, n)))
    plan = proc.plan(None, proc.period).astype(float)
    weights = plan / plan.sum(axis=1, keepdims=True)
    return max(float(np.abs(plan.mean(axis=0) - proc.inclusion_probabilities()).max()),
               float(np.abs(weights.mean(axis=0) - proc.aggregation_weights()).max()))


@claim("focus.assumption1.moments_match_plans", ref="Assumption 1; Cases 2, 3, 3a",
       kind="statement", expected="holds", result=ASSUMPTION1, parts=("definition",),
       statement="For each participation process, q_i = E[1{i in S}/|S|; S nonempty] and "
                 "pi_i = P(i in S) are the moments of the participating sets it draws.",
       quick=dict(n_instances=3, n_plans=4000), full=dict(n_instances=12, n_plans=40000))
def moments_match_plans(*, rng, n_instances, n_plans):
    """Random N in 3..7; per instance a Bernoulli, a uniform and a weighted m-of-N (n_plans
    rounds of one plan: i.i.d. sets), a Markov on/off process (round 4 of n_plans independent
    chains per client, so its transitions count) and a round-robin. For the
    random processes each (process, client, moment) cell is a z-test of the plan frequency
    against the exact value, Holm-Bonferroni at family-wise level 1e-3 over all cells
    (``flbounds.stats.holm``); measured: the number of rejected cells. The round-robin is
    deterministic: one period's average must equal its exact moments to rounding (1e-12),
    counted as one more rejection if not."""
    pvalues, cells, cyclic_gap = [], [], 0.0
    for r in rng.spawn(n_instances):
        n = int(r.integers(3, 8))
        for name, proc in _processes(r, n).items():
            sets = _round_samples(proc, r, n_plans).astype(float)
            size = sets.sum(axis=1, keepdims=True)
            weights = np.divide(sets, size, out=np.zeros_like(sets), where=size > 0)
            for moment, samples, exact in (("pi", sets, proc.inclusion_probabilities()),
                                           ("q", weights, proc.aggregation_weights())):
                p, mean = _pvalues(samples, exact)
                pvalues += p.tolist()
                cells.append(dict(process=name, n=n, moment=moment, min_p=float(p.min()),
                                  max_abs_dev=float(np.abs(mean - exact).max())))
        cyclic_gap = max(cyclic_gap, _cyclic_gap(r, n))
    decision = holm(np.array(pvalues), ALPHA)
    rejected = int(decision.reject.sum()) + int(cyclic_gap > 1e-12)
    return Evidence(measured=rejected, theoretical=0, relation="<=",
                    tolerance=Tolerance.exact("a count of Holm rejections"),
                    details={"family_size": decision.m, "alpha": ALPHA,
                             "rule": "two-sided z-test per cell, Holm-Bonferroni",
                             "cyclic_max_gap": cyclic_gap, "cells": cells})


@attack_surface("focus.assumption1.case3_weights_are_q",
                space={"w": Simplex(8, floor=1e-3), "n": Integers(2, 8), "m": Integers(1, 4)},
                instance=lambda *, w, n, m: dict(w=np.asarray(w)[:n] / np.sum(w[:n]), m=m),
                tolerance=0.0,
                tolerance_why="the residual is divided by the claim's rounding tolerance 1e-12",
                shrink=True,
                fixed=[{"w": [.1, .2, .3, .4, 0, 0, 0, 0], "n": 4, "m": 2}])
def weights_are_q(*, w, n, m):
    """max_i |q_i - w_i| / 1e-12 for m-of-N successive sampling with weights w (exact q)."""
    w = w[:n] / w[:n].sum()
    return float(np.abs(WeightedWithoutReplacement(w, m).aggregation_weights() - w).max()) / 1e-12


@attack_surface("focus.assumption1.case3a_printed",
                space={"n": Integers(2, 16), "m": Integers(1, 16)},
                instance=lambda *, n, m: dict(n_clients=n, m=m), tolerance=0.0,
                tolerance_why="the residual is divided by a rounding tolerance of 1e-12",
                shrink=True, fixed=[{"n": 8, "m": 2}])
def case3a(*, n, m):
    """max_i |q_i - 1/m| / 1e-12 for uniform m-of-N sampling (exact q)."""
    q = UniformWithoutReplacement(n, m).aggregation_weights()
    return float(np.abs(q - 1.0 / m).max()) / 1e-12
