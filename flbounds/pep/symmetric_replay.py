r"""A described round replayed at the full N over the law of the class counts.

On an instance whose clients of a class are identical (one function per class and one start
state per class, as a symmetric solve's witness is: :mod:`flbounds.pep.symmetric_witness`),
the exact expectation of a measure over an exchangeable participation law needs one run per
value of the class counts, not one per set.

**Sets** (:class:`~flbounds.pep.classlaw.ClassLaw`). Given the class counts :math:`K`, the
participating set is uniform over the sets with those counts, and any two of them are mapped
onto each other by a permutation within the classes, which leaves the instance unchanged: the
next state is the same up to that permutation and a symmetric measure takes the same value. So
the set holding the first :math:`K_c` clients of every class, weighted by :math:`P(K)`, gives
the expectation exactly.

**Counts** (:class:`~flbounds.pep.classcounts.CountClassLaw`, sampling with replacement).
Given the class totals :math:`M`, the counts within class c are
:math:`\mathrm{Multinomial}(M_c; \text{uniform over its } n_c \text{ clients})` and
independent across classes. A round whose clients keep a state (SCAFFOLD's controls, FOCUS's
stored gradients, MIFA's memory) depends on how the draws split between clients, not only on
:math:`M`; up to a permutation within the class that split is a partition :math:`\lambda` of
:math:`M_c` into at most :math:`n_c` parts, of probability

.. math:: P(\lambda \mid M_c) = \frac{M_c!}{\prod_j \lambda_j!}\,
          \frac{n_c!}{(n_c - \ell)!\,\prod_k m_k!}\, n_c^{-M_c},

(:math:`\ell` parts, :math:`m_k` of them equal to k): the multinomial probability of one count
vector times the number of count vectors with that multiset of counts. Each combination of
partitions is run once, its parts carried by the first clients of each class
(:func:`class_outcomes`).

:func:`replay_classes` runs every outcome through :func:`flbounds.pep.replay.run_round` on all
N clients, with the law's per-client inclusion probabilities (or mean counts) for the rules
that read them. The clients of a class share one function and, in every outcome, the same
start state, so the local run of a participant of class c is computed once and reused (a pure
function of the client's function, the pulled points and its state, keyed by their values):
the aggregation over the participants and the measure over the N clients are evaluated in
full.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction
from math import factorial, perm

import numpy as np

from .describe import Local
from .replay import Minimizer, QuadraticClient, _State, run_round, start_state

#: the largest number of outcomes (class totals and splits of the draws) a replay runs
MAX_OUTCOMES = 200_000


def _partitions(total, most, largest=None):
    """Every partition of ``total`` into at most ``most`` parts, parts non-increasing."""
    largest = total if largest is None else largest
    if total == 0:
        yield ()
        return
    if most == 0:
        return
    for first in range(min(total, largest), 0, -1):
        for rest in _partitions(total - first, most - 1, first):
            yield (first, *rest)


def _n_partitions(total, most):
    """The number of partitions of ``total`` into at most ``most`` parts."""
    ways = [1] + [0] * total       # parts of size 1..most (conjugate: at most ``most`` parts)
    for part in range(1, min(total, most) + 1):
        for k in range(part, total + 1):
            ways[k] += ways[k - part]
    return ways[total]


def within_class_counts(total, n_members):
    r"""The counts of a class of ``n_members`` clients given ``total`` draws uniform over
    them, up to a permutation of the clients: ``(parts, probability)`` for every partition
    of ``total`` into at most ``n_members`` parts (module docstring).

    Parameters
    ----------
    total : int
        :math:`M_c \ge 0`.
    n_members : int
        :math:`n_c \ge 1`.

    Returns
    -------
    list of (tuple of int, float)
        The probabilities sum to 1.
    """
    total, n = int(total), int(n_members)
    if total < 0 or n < 1:
        raise ValueError(f"total must be >= 0 and n_members >= 1, got {total}, {n}")
    out = []
    for parts in _partitions(total, n):     # exact integers, one rounding at the end
        ways = factorial(total) * perm(n, len(parts))
        for k in parts:
            ways //= factorial(k)
        for m in Counter(parts).values():
            ways //= factorial(m)
        out.append((parts, float(Fraction(ways, n ** total))))
    return out


def class_outcomes(law):
    """``(mask, counts, probability)`` for one representative outcome per value of the
    class counts (sets) or per value of the class totals and within-class partitions
    (counts, ``mask`` their support; module docstring).

    Parameters
    ----------
    law : ClassLaw or CountClassLaw

    Yields
    ------
    (bool array (N,), int array (N,) or None, float)

    Raises
    ------
    ValueError
        Naming ``participation`` when the draws have more than :data:`MAX_OUTCOMES` splits.
    """
    from itertools import product

    from .classcounts import CountClassLaw

    groups, n = law.classes.groups, law.classes.n_clients
    drawn = isinstance(law, CountClassLaw)
    if drawn:
        size = sum(int(np.prod([_n_partitions(m, len(g)) for g, m in zip(groups, row,
                                                                         strict=True)]))
                   for row in law.counts.astype(int))
        if size > MAX_OUTCOMES:
            raise ValueError(f"participation: {law.n_draws} draws split between the clients "
                             f"of the classes in {size} ways, more than {MAX_OUTCOMES}")
    for row, prob in zip(law.counts.astype(int), law.probs, strict=True):
        if not drawn:
            mask = np.zeros(n, dtype=bool)
            for group, k in zip(groups, row, strict=True):
                mask[list(group[:k])] = True
            yield mask, None, float(prob)
            continue
        splits = [within_class_counts(m, len(g)) for g, m in zip(groups, row, strict=True)]
        for combo in product(*splits):
            counts = np.zeros(n, dtype=np.int64)
            weight = float(prob)
            for group, (parts, p) in zip(groups, combo, strict=True):
                counts[list(group[:len(parts)])] = parts
                weight *= p
            yield counts > 0, counts, weight


def _shared(local):
    """``local`` computing each distinct (function, pulled points, state) once."""
    cache = {}

    def key(points):
        return tuple((k, v.v.tobytes()) for k, v in sorted(points.items()))

    def run(f, pulled, state):
        k = (id(f), key(pulled), key(state))
        if k not in cache:
            cache[k] = (f, local.run(f, pulled, state))     # f kept: its id stays unique
        return cache[k][1]

    return Local(run, local.label)


def replay_classes(round_, problem, free, law, measure) -> float:
    r"""Exact :math:`E[V(X^+)] / V(X)` of ``measure`` after one round of ``round_`` on
    ``problem`` (N clients) from ``free``, over the class law ``law``, one run of all N
    clients per outcome of :func:`class_outcomes`.

    Parameters
    ----------
    round_ : Round
    problem : flbounds.problems.Quadratic
        The same ``A_i``, ``b_i`` for every client of a class.
    free : dict
        The start's free points (:func:`flbounds.pep.replay.start_state`), the same for every
        client of a class.
    law : ClassLaw or CountClassLaw
    measure : Measure
        One run.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``problem`` or ``free`` when two clients of a class differ, ``measure`` for
        a two-run measure.
    """
    from .classcounts import CountClassLaw

    if measure.runs != 1:
        raise ValueError("measure: a replay runs one instance, not two runs")
    groups = law.classes
    labels = groups.labels()
    for name, arrays in (("problem", (problem.A, problem.b)),
                         ("free", [v for k, v in free.items() if k in round_.client_state])):
        for a in arrays:
            a = np.asarray(a, float)
            if any(not np.array_equal(a[list(g)], np.broadcast_to(a[g[0]], a[list(g)].shape))
                   for g in groups.groups):
                raise ValueError(f"{name}: the clients of a class must be identical")
    one = [QuadraticClient(problem, g[0]) for g in groups.groups]
    clients = [one[c] for c in labels]
    star = Minimizer(problem, clients)
    state = start_state(round_, clients, free)
    shared = replace(round_, local=_shared(round_.local))
    per_class = law.count_means if isinstance(law, CountClassLaw) else law.inclusion
    inclusion = np.asarray(per_class, float)[labels]
    total = 0.0
    for mask, counts, prob in class_outcomes(law):
        after = run_round(shared, clients, state, mask, inclusion, counts)
        total += prob * measure.value(_State(*after), star)
    return total / measure.value(_State(*state), star)


__all__ = ["MAX_OUTCOMES", "class_outcomes", "replay_classes", "within_class_counts"]
