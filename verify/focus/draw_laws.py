r"""The participation processes draw the law they state (Assumption 1's cases of FOCUS): the
plans the library draws against the exact inclusion probabilities, pairwise inclusions, and
the Markov chains' first round and transitions.

Every process of :mod:`flbounds.participation` draws plans through its public ``plan(rng,
n_rounds)`` and reports its law exactly (``inclusion_probabilities``; the law over subsets
``subset_distribution`` gives the pairwise inclusions). Rounds of a memoryless process are
i.i.d., so each client's and each pair's inclusion count over n rounds is binomial under the
law. A Markov on/off process is tested on many independent chains (its clients are
independent: a process over the client rates tiled M times draws M chains per client in one
plan): the first round against the stationary law, and the transitions on/on and off/on
against the chain's probabilities (binomial given the visits, by the Markov property).
A round-robin is deterministic and is compared with its schedule exactly.

Each claim tests every cell with an exact binomial test under Holm's rule, one family per
process, the families combined by Bonferroni, at :data:`ALPHA` for the whole claim, fixed
before any draw (:mod:`flbounds.draw_laws`, :func:`verify.stats_checks.law_evidence`); the
number of rounds is derived from
:data:`BIAS`, so that a relative bias of 1% in any client's inclusion probability is detected
with probability :data:`POWER`.
"""

from __future__ import annotations

import numpy as np

from flbounds.draw_laws import inclusion_cells, law_test, transition_cells, trials_to_detect
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import (
    Bernoulli,
    Cyclic,
    Excluding,
    MarkovOnOff,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
    subset_distribution,
)

from ..stats_checks import law_evidence
from .assumption1 import ASSUMPTION1

#: family-wise level of each claim's Holm rule, fixed before the draws
ALPHA = 1e-3
#: the relative bias of one client's inclusion probability each claim must detect ...
BIAS = 0.01
#: ... with this probability
POWER = 0.9
N = 5
RATES = np.array([0.3, 0.45, 0.6, 0.75, 0.9])

PROCESSES = {
    "bernoulli": lambda: Bernoulli(RATES),
    "uniform_m_of_n": lambda: UniformWithoutReplacement(N, 2),
    "weighted_m_of_n": lambda: WeightedWithoutReplacement(np.array([1.0, 1.5, 2.0, 3.0, 4.0]),
                                                          2),
    "excluding": lambda: Excluding(Bernoulli(RATES[1:]), [0], N),
}


def exact_law(process):
    """(inclusion (N,), pairwise (N, N)) of ``process`` from its exact law over subsets."""
    masks, probs = subset_distribution(process)
    m = masks.astype(float)
    return process.inclusion_probabilities(), m.T @ (probs[:, None] * m)


@claim("focus.draw_law.memoryless_processes", ref="Assumption 1, cases 2-3",
       kind="algorithm", expected="holds", result=ASSUMPTION1, parts=("definition",),
       statement="Bernoulli, uniform and weighted m-of-N sampling and a process excluding "
                 "some clients draw each client, and each pair, with their exact "
                 "probabilities.",
       quick=dict(processes=tuple(PROCESSES)), full=dict(processes=tuple(PROCESSES)))
def memoryless_processes(*, rng, processes):
    """Per process: one plan of n rounds, every client's and pair's inclusion count against
    the exact law; n from the 1% target over the inclusion cells with probability in (0, 1)
    (a never-included client is a cell of probability 0: one inclusion rejects it)."""
    families = {}
    for name in processes:
        process = PROCESSES[name]()
        inclusion, pairwise = exact_law(process)
        n_cells = N + N * (N - 1) // 2
        n = trials_to_detect(inclusion, BIAS, alpha_cell=ALPHA / (len(processes) * n_cells),
                             power=POWER)
        names, succ, prob = inclusion_cells(process.plan(rng, n), inclusion, pairwise)
        test = law_test(names, succ, n, prob, alpha=ALPHA, power=POWER)
        families[name] = test, {"rounds": n, "inclusion": inclusion.tolist()}
    return law_evidence(families, "processes", {})


@claim("focus.draw_law.markov_on_off", ref="Assumption 1, case 1 (Markov participation)",
       kind="algorithm", expected="holds", result=ASSUMPTION1, parts=("definition",),
       statement="A Markov on/off process starts from its stationary law (round 0 includes "
                 "client i w.p. its rate) and moves with P(on | on) = a_i and P(on | off) = "
                 "b_i.",
       quick=dict(n_rounds=3), full=dict(n_rounds=6))
def markov_on_off(*, rng, n_rounds):
    """M independent chains per client (the rates tiled M times, one plan): round 0's
    inclusion per client against the rates, and the transitions of every round against
    stay_on and switch_on. M from the 1% target on round 0's cells."""
    stay_on = np.array([0.7, 0.6, 0.8, 0.9, 0.95])
    base = MarkovOnOff(RATES, stay_on)
    n_cells = 3 * N
    chains = trials_to_detect(RATES, BIAS, alpha_cell=ALPHA / n_cells, power=POWER)
    plan = MarkovOnOff(np.tile(RATES, chains), np.tile(stay_on, chains)).plan(rng, n_rounds)
    by_client = plan.reshape(n_rounds, chains, N)
    first = by_client[0].sum(axis=0).astype(float)
    names = [f"round 0: P({i} in S)" for i in range(N)]
    t_names, t_succ, t_trials, t_prob = transition_cells(by_client, base.stay_on,
                                                         base.switch_on)
    test = law_test(names + t_names, np.r_[first, t_succ],
                    np.r_[np.full(N, float(chains)), t_trials], np.r_[RATES, t_prob],
                    alpha=ALPHA, power=POWER)
    return law_evidence({"markov_on_off": (test, {})}, "processes",
                        {"chains": chains, "rounds": n_rounds,
                            "stay_on": base.stay_on.tolist(),
                            "switch_on": base.switch_on.tolist()})


@claim("focus.draw_law.cyclic", ref="Assumption 1 (deterministic participation)",
       kind="algorithm", expected="holds", result=ASSUMPTION1, parts=("definition",),
       statement="A round-robin of per_round clients per round includes client i in round r "
                 "exactly when (i - offset - r per_round) mod N < per_round.",
       quick=dict(cases=((5, 2, 0), (6, 4, 3), (7, 3, 1))),
       full=dict(cases=((5, 2, 0), (6, 4, 3), (7, 3, 1), (12, 5, 7))))
def cyclic(*, rng, cases):
    """The plan of two periods against the schedule, cell by cell (deterministic)."""
    mismatches = {}
    for n, per_round, offset in cases:
        proc = Cyclic(n, per_round, offset=offset)
        rounds = 2 * proc.period
        plan = proc.plan(rng, rounds)
        r = np.arange(rounds)[:, None]
        schedule = (np.arange(n)[None, :] - offset - r * per_round) % n < per_round
        mismatches[f"N={n}, per_round={per_round}, offset={offset}"] = int(
            np.sum(plan != schedule))
    return Evidence(measured=sum(mismatches.values()), theoretical=0, relation="==",
                    tolerance=Tolerance.exact("counts of mismatched cells"),
                    details={"mismatches": mismatches})
