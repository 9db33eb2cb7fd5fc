"""Class-count laws of processes at any N (``flbounds.pep.countlaws``): each equals the
enumerated subset law where that exists (N <= 16), solves the symmetric SDP as the direct one
does, and refuses a law that tells apart two clients of one class."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import (
    Bernoulli,
    Cyclic,
    Excluding,
    MarkovOnOff,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
    subset_distribution,
)
from flbounds.participation.fixed_size import successive_class_counts
from flbounds.pep.classlaw import class_law, classes_of


def _enumerated(process, groups):
    """The class-count law from the exact subset law (the N <= 16 path), as a dict."""
    masks, probs = subset_distribution(process)
    labels = groups.labels()
    counts = np.stack([masks[:, labels == c].sum(axis=1) for c in range(len(groups.groups))],
                      axis=1)
    table = {}
    for row, p in zip(map(tuple, counts), probs, strict=True):
        if p > 0:
            table[row] = table.get(row, 0.0) + p
    return table


def _as_table(law):
    return {tuple(int(v) for v in row): p for row, p in zip(law.counts, law.probs, strict=True)}


def _assert_same(law, table):
    got = _as_table(law)
    assert set(got) == set(table)
    assert max(abs(got[k] - table[k]) for k in table) < 1e-13


LABELS = [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3]
WEIGHTS = np.array([1.0, 3.0, 0.5, 0.0])[LABELS]


@pytest.mark.parametrize("process", [
    WeightedWithoutReplacement(WEIGHTS, 4),
    WeightedWithoutReplacement(WEIGHTS, 1),
    WeightedWithoutReplacement(WEIGHTS, 10),
    MarkovOnOff(np.array([0.2, 0.6, 0.9, 0.4])[LABELS], 0.95),
    Excluding(UniformWithoutReplacement(7, 3), [10, 11, 0, 1, 2], 12),
    Excluding(WeightedWithoutReplacement(np.array([3.0, 0.5])[[0, 0, 0, 0, 1, 1, 1]], 3),
              [10, 11, 0, 1, 2], 12),
    Cyclic(12, 12),
])
def test_each_law_equals_the_enumerated_subset_law(process):
    groups = classes_of(LABELS, 12)
    _assert_same(class_law(process, groups), _enumerated(process, groups))


def test_a_round_robin_over_singletons_and_its_refusal():
    single = classes_of(list(range(6)), 6)
    _assert_same(class_law(Cyclic(6, 2, offset=1), single),
                 _enumerated(Cyclic(6, 2, offset=1), single))
    with pytest.raises(ValueError, match="classes"):       # blocks tell clients apart
        class_law(Cyclic(40, 5), classes_of([0] * 20 + [1] * 20, 40))


def test_a_class_mixing_excluded_and_kept_clients_is_refused():
    process = Excluding(Bernoulli(np.full(38, 0.3)), [0, 1], 40)
    with pytest.raises(ValueError, match="classes"):
        class_law(process, classes_of([0] * 20 + [1] * 20, 40))
    law = class_law(process, classes_of([0, 0] + [1] * 38, 40))
    assert law.inclusion == pytest.approx([0.0, 0.3], abs=1e-15)


def test_successive_sampling_counts_at_scale():
    """N = 1000 in two weight classes: a law (mass 1, m draws) whose inclusion probabilities
    sum to m, and the process's own inclusion probabilities now exist past N = 22 and agree."""
    sizes, weights, m = [600, 400], [1.0, 2.5], 100
    counts, probs = successive_class_counts(sizes, weights, m)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(counts.sum(axis=1) == m)
    pi = probs @ counts / np.array(sizes)
    assert pi @ sizes == pytest.approx(m, rel=1e-12)
    assert pi[1] > pi[0]                                       # heavier clients more often
    process = WeightedWithoutReplacement(np.repeat(weights, sizes), m)
    assert process.inclusion_probabilities()[[0, -1]] == pytest.approx(pi, rel=1e-12)
    law = class_law(process, classes_of([list(range(600)), list(range(600, 1000))], 1000))
    assert law.inclusion == pytest.approx(pi, rel=1e-12)


def test_the_class_recursion_catches_a_planted_bug():
    """Drawing in proportion to the class's whole weight (ignoring the clients already drawn)
    is a different law; the enumerated law tells them apart."""
    sizes, weights, m = np.array([3, 4]), np.array([1.0, 3.0]), 3
    process = WeightedWithoutReplacement(np.repeat(weights, sizes), m)
    table = _enumerated(process, classes_of([0] * 3 + [1] * 4, 7))
    counts, probs = successive_class_counts(sizes, weights, m)
    right = dict(zip(map(tuple, counts.tolist()), probs, strict=True))
    assert max(abs(right[k] - table[k]) for k in table) < 1e-14
    # the planted bug: the same recursion without removing drawn clients
    states = {(0, 0): 1.0}
    for _ in range(m):
        nxt = {}
        for k, p in states.items():
            for c in range(2):
                if k[c] < sizes[c]:
                    q = sizes[c] * weights[c] / (sizes @ weights)
                    key = tuple(k[d] + (d == c) for d in range(2))
                    nxt[key] = nxt.get(key, 0.0) + p * q
        states = nxt
    assert max(abs(states.get(k, 0.0) - table[k]) for k in table) > 1e-2


def test_the_symmetric_sdp_equals_the_direct_one_under_weighted_sampling():
    n = 6
    groups = [[0, 1, 2], [3, 4, 5]]
    law = WeightedWithoutReplacement(np.r_[np.ones(3), np.full(3, 3.0)], 2)
    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    for rule in (pep.Uniform(), pep.Unbiased()):
        round_ = pep.fedavg_round(2, 0.2, aggregate=rule)
        direct = pep.worst_case(round_, setting, pep.distance(), law)
        reduced = pep.worst_case(round_, setting, pep.distance(), law, classes=groups)
        tol = pep.gap_tolerance(direct.worst) + pep.gap_tolerance(reduced.worst)
        assert abs(direct.worst - reduced.worst) <= tol, (rule, direct.worst, reduced.worst)


def test_weighted_sampling_and_exclusion_solve_at_n_1000():
    n = 1000
    weights = np.r_[np.ones(500), np.full(500, 2.0)]
    groups = [list(range(500)), list(range(500, 1000))]
    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    res = pep.worst_case(pep.fedavg_round(2, 0.2, aggregate=pep.Unbiased()), setting,
                         pep.distance(), WeightedWithoutReplacement(weights, 50), classes=groups)
    assert 0 < res.worst < 1
    away = Excluding(Bernoulli(np.full(500, 0.2)), range(500), n)
    res = pep.worst_case(pep.fedavg_round(2, 0.2), setting, pep.distance(), away,
                         classes=groups)
    assert 0 < res.worst < 1


def test_the_witness_replays_under_weighted_sampling_at_n_100():
    """The symmetric solve's witness (one quadratic per class) run by flbounds.algorithms on
    N = 100 clients drawn by successive weighted sampling, over every class-count vector."""
    from flbounds.pep.symmetric_witness import fedavg_symmetric_witness
    from flbounds.pep.witness import witness_tolerance

    groups = [list(range(40)), list(range(40, 100))]
    law = WeightedWithoutReplacement(np.r_[np.ones(40), np.full(60, 3.0)], 5)
    w = fedavg_symmetric_witness(1.0, 2.0, law, groups, 2, 0.2)
    assert abs(w.witness.replayed - w.witness.pep) <= witness_tolerance(w.witness)
