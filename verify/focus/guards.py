r"""Assumption 1 of [002]: the exact participation moments agree with the plans drawn.

Every process of :mod:`flbounds.participation` reports :math:`\pi_i = P(i \in S)` and
:math:`q_i = E[1\{i \in S\}/|S|; S \ne \emptyset]` exactly (closed forms, recursions,
quadrature) and also draws the plans the algorithms run on. Assumption 1 (and every FOCUS
limit built on q) needs the two to describe the same process; this claim compares them, the
exact numbers against the frequencies of independently drawn plans.
"""

from __future__ import annotations

import math

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import (
    Bernoulli,
    Cyclic,
    MarkovOnOff,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
)
from flbounds.pep.witness import fedavg_witness, witness_tolerance
from flbounds.stats import holm

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
    """Round DEPTH of ``n_plans`` independent plans: i.i.d. draws of one round's set."""
    return np.array([process.plan(rng, DEPTH + 1)[DEPTH] for _ in range(n_plans)])


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
       kind="statement", expected="holds",
       statement="For each participation process, q_i = E[1{i in S}/|S|; S nonempty] and "
                 "pi_i = P(i in S) are the moments of the participating sets it draws.",
       quick=dict(n_instances=3, n_plans=4000), full=dict(n_instances=12, n_plans=40000))
def moments_match_plans(*, rng, n_instances, n_plans):
    """Random N in 3..7; per instance a Bernoulli, a uniform and a weighted m-of-N, a Markov
    on/off process (round 4 of each plan, so its transitions count) and a round-robin. For the
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


@claim("focus.cor3.worst_case_attained", ref="Cor. 3 / eq. (66), with the PEP rate",
       kind="tightness", expected="holds",
       statement="The exact one-round worst case of FedAvg with a common minimizer (PEP) is "
                 "attained: the project's FedAvg on identical quadratics a x^2/2, a in "
                 "{mu, L} the extremal curvature, contracts E||x_1 - x*||^2 by that factor.",
       quick=dict(n_cases=3), full=dict(n_cases=12))
def worst_case_attained(*, rng, n_cases):
    """Random N in 2..3 (Bernoulli p in [0.2, 0.9]), tau in 1..3, mu = 1, L = 2 and a step in
    (0, 1/L]. The PEP value is a maximum over a class that contains the witness, and for
    gradient steps on a shared quadratic the extremal curvature attains it; so the replay
    (exact over every participation set, ``flbounds.algorithms.fedavg``) and the SDP must
    agree. A PEP round builder or a FedAvg kernel that takes a different step than the other
    breaks the equality. Measured: |replayed - PEP| per case. Tolerance: the SDP acceptance
    bound (flbounds.pep.witness.witness_tolerance)."""
    gaps, tols, cases = [], [], []
    for r in rng.spawn(n_cases):
        n, tau = int(r.integers(2, 4)), int(r.integers(1, 4))
        process = Bernoulli(r.uniform(0.2, 0.9, size=n))
        step = float(r.uniform(0.05, 1.0)) / 2.0
        wit = fedavg_witness(1.0, 2.0, process, tau, step)
        gaps.append(abs(wit.replayed - wit.pep))
        tols.append(witness_tolerance(wit))
        cases.append(dict(N=n, tau=tau, step=step, replayed=wit.replayed, pep=wit.pep))
    return Evidence(measured=gaps, theoretical=np.zeros(n_cases), relation="<=",
                    tolerance=Tolerance(np.array(tols), "SDP acceptance bound",
                                        "the solver's gap tolerance (relative 1e-6) of the "
                                        "PEP value; the replay is exact enumeration"),
                    details={"cases": cases})
