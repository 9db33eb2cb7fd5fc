"""Sampling with replacement (flbounds.pep.counts): the law of the counts against the
process's exact moments, the class law's moments against the enumerated law, the reduced SDP
against the direct one at N = 2..6, a planted bug (multiplicities ignored), N = 1000, and bad
input."""

import itertools

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import WithReplacement
from flbounds.pep.classcounts import count_class_law
from flbounds.pep.classlaw import class_law, classes_of
from flbounds.pep.counts import MAX_COUNT_VECTORS
from flbounds.pep.expect import ParticipationLaw, law_of

RULES = [pep.Uniform(), pep.Sum(), pep.Unbiased(), pep.Unbiased((0.05, 0.05, 0.3, 0.3, 0.3)),
         pep.Normalized((1, 1, 3, 3, 3)), pep.FixedWeights((1, 1, 2, 2, 2), 0.5)]


def _process(n, k=3):
    """Clients 0..h-1 drawn with weight 1, the rest with weight 3 (h = n // 2)."""
    h = max(1, n // 2)
    w = np.r_[np.full(h, 1.0), np.full(n - h, 3.0)]
    return WithReplacement(w / w.sum(), k), [list(range(h)), list(range(h, n))]


def test_the_count_law_has_the_process_moments():
    process, _ = _process(5, 4)
    law = law_of(process, 5)
    assert law.probs.sum() == pytest.approx(1.0, abs=1e-14)
    assert np.all(law.counts.sum(axis=1) == 4)
    assert law.inclusion == pytest.approx(process.inclusion_probabilities(), abs=1e-14)
    assert law.count_means == pytest.approx(process.count_means(), abs=1e-14)
    second = np.array([[law.moment((("weight", pep.Sum(), i), ("weight", pep.Sum(), j)))
                        for j in range(5)] for i in range(5)])
    assert second == pytest.approx(process.count_second_moments(), abs=1e-13)
    assert law.empty_probability == 0.0


@pytest.mark.parametrize("rule", RULES, ids=repr)
def test_class_moments_equal_the_enumerated_law(rule):
    process, groups = _process(5)
    groups = classes_of(groups, 5)
    full, law = law_of(process, 5), count_class_law(process, groups)
    labels = groups.labels()
    variables = {"in": lambda i: ("in", i), "weight": lambda i: ("weight", rule, i)}
    for (i, j), (u, v) in itertools.product([(0, 0), (0, 1), (0, 3), (3, 3), (3, 4)],
                                            itertools.product(variables, repeat=2)):
        exact = full.probs @ (full.values(variables[u](i)) * full.values(variables[v](j)))
        pair = ((int(labels[i]), ((u, rule) if u == "weight" else (u,),)),
                (int(labels[j]), ((v, rule) if v == "weight" else (v,),)))
        assert law.moment(*pair, same=i == j) == pytest.approx(exact, rel=1e-12, abs=1e-14), \
            (i, j, u, v)
    assert law.inclusion == pytest.approx(full.inclusion[[0, 3]], abs=1e-14)


def _agree(direct, reduced):
    tol = pep.gap_tolerance(direct.worst) + pep.gap_tolerance(reduced.worst)
    assert abs(direct.worst - reduced.worst) <= tol, (direct.worst, reduced.worst)


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("algorithm", ["fedavg", "focus"])
def test_the_symmetric_sdp_equals_the_direct_one_with_counts(algorithm, n):
    process, groups = _process(n)
    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    round_, measure = pep.fedavg_round(3, 0.2), pep.distance()
    if algorithm == "focus":
        round_, measure = pep.focus_round(2, 0.1 / n), pep.focus_lyapunov(1.0 / n)
    direct = pep.worst_case(round_, setting, measure, process)
    reduced = pep.worst_case(round_, setting, measure, process, classes=groups)
    _agree(direct, reduced)
    assert reduced.params["class_inclusion"] == pytest.approx(
        process.inclusion_probabilities()[[0, n - 1]], abs=1e-12)


@pytest.mark.parametrize("name", ["unbiased", "normalized", "sum", "scaffold", "two runs",
                                  "heterogeneity", "smooth", "one draw"])
def test_other_rounds_and_rules_agree_with_counts(name):
    n = 5
    process, groups = _process(n)
    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    round_, measure = pep.fedavg_round(2, 0.2), pep.distance()
    if name in ("unbiased", "normalized", "sum"):
        rule = {"unbiased": "unbiased", "normalized": pep.Normalized((1, 1, 3, 3, 3)),
                "sum": pep.FixedWeights((1,) * 5, 1 / 3)}[name]
        round_ = pep.fedavg_round(2, 0.2, aggregate=rule)
    elif name == "scaffold":
        round_, measure = pep.scaffold_round(2, 0.1, n), pep.scaffold_lyapunov(1.0)
    elif name == "two runs":
        setting, measure = pep.Setting(n, 1.0, 2.0), pep.two_runs()
    elif name == "heterogeneity":
        setting = pep.Setting(n, 1.0, 2.0)
        measure = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                               + sum(g ** 2 for g in star.gradients), "heterogeneity")
    elif name == "smooth":
        setting = pep.Setting(n, 0.0, 2.0, function_class="smooth", common_minimizer=True)
    else:
        process = WithReplacement(process.p, 1)
    _agree(pep.worst_case(round_, setting, measure, process),
           pep.worst_case(round_, setting, measure, process, classes=groups))


@pytest.mark.parametrize("aggregate", ["uniform", "unbiased"])
def test_one_draw_is_a_law_of_single_clients(aggregate):
    """With K = 1 draw the counts are the indicators of one client drawn with probability
    q_i, so the counts' worst case is that of the law of sets {i} (an independent path: the
    set law's own moments, no counts)."""
    n = 4
    process = WithReplacement(np.array([0.1, 0.2, 0.3, 0.4]), 1)
    singles = ParticipationLaw(np.eye(n, dtype=bool), process.p, "one client")
    setting = pep.Setting(n, 1.0, 2.0)
    measure = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                           + sum(g ** 2 for g in star.gradients), "heterogeneity")
    round_ = pep.fedavg_round(2, 0.2, aggregate=aggregate)
    _agree(pep.worst_case(round_, setting, measure, process),
           pep.worst_case(round_, setting, measure, singles))


def test_the_multiplicities_are_seen_by_the_comparison():
    """A planted bug, the counts' law read as a law of sets (each drawn client once in the
    mean over S), moves FedAvg's value far beyond the comparison's tolerance."""
    n = 4
    process, groups = _process(n, 3)
    setting = pep.Setting(n, 1.0, 2.0)
    measure = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                           + sum(g ** 2 for g in star.gradients), "heterogeneity")
    round_ = pep.fedavg_round(2, 0.2)
    law = law_of(process, n)
    right = pep.worst_case(round_, setting, measure, process, classes=groups)
    sets = pep.worst_case(round_, setting, measure, ParticipationLaw(law.masks, law.probs))
    assert abs(right.worst - sets.worst) > 100 * pep.gap_tolerance(right.worst), \
        (right.worst, sets.worst)


def test_counts_at_n_1000():
    n = 1000
    process, groups = _process(n, 20)
    res = pep.worst_case(pep.fedavg_round(3, 0.2), pep.Setting(n, 1.0, 2.0,
                                                                common_minimizer=True),
                         pep.distance(), process, classes=groups)
    assert 0 < res.worst < 1
    assert res.params["empty_probability"] == 0.0


class _HalfMean:
    def coefficients(self, masks, inclusion):
        return 0.5 * pep.Uniform().coefficients(masks, inclusion)


def test_bad_input_names_its_argument():
    process, groups = _process(4)
    setting = pep.Setting(4, 1.0, 2.0, common_minimizer=True)
    with pytest.raises(ValueError, match="classes"):          # q differs within a class
        pep.worst_case(pep.fedavg_round(1, 0.2), setting, pep.distance(), process,
                       classes=[[0, 1, 2], [3]])
    with pytest.raises(ValueError, match="participation"):    # 5 clients for 4
        pep.worst_case(pep.fedavg_round(1, 0.2), setting, pep.distance(),
                       WithReplacement(np.full(5, 0.2), 2), classes=groups)
    with pytest.raises(ValueError, match="participation"):    # a user's rule
        pep.worst_case(pep.fedavg_round(1, 0.2, aggregate=_HalfMean()), setting,
                       pep.distance(), process, classes=groups)
    with pytest.raises(ValueError, match="participation"):    # too many count vectors
        law_of(WithReplacement(np.full(40, 1 / 40), 12), 40)
    with pytest.raises(ValueError, match="participation"):    # counts are not sets
        class_law(process, classes_of(groups, 4))
    assert count_class_law(process, classes_of(groups, 4)).counts.shape[0] <= MAX_COUNT_VECTORS
