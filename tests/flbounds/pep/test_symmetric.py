"""Symmetry classes (flbounds.pep.symmetric, classlaw, symmetric_witness): the reduced SDP
against the direct one at N = 2..8, the class law's moments against the subset law's, bad
input, and the witness replayed through flbounds.algorithms at N = 100."""

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, UniformWithoutReplacement
from flbounds.pep.classlaw import class_law, classes_of
from flbounds.pep.expect import law_of
from flbounds.pep.symmetric import build_symmetric
from flbounds.pep.symmetric_witness import fedavg_symmetric_witness, focus_symmetric_witness
from flbounds.pep.witness import witness_tolerance


def _same(direct, reduced):
    """The two forms state the same SDP; each value is accepted within ``gap_tolerance`` (1e-6
    relative) of the exact optimum, so the two agree within the sum of the two tolerances."""
    tol = pep.gap_tolerance(direct.worst) + pep.gap_tolerance(reduced.worst)
    assert abs(direct.worst - reduced.worst) <= tol, (direct.worst, reduced.worst)


def _two_classes(n):
    """Clients 0..h-1 with p = 0.3, the rest with p = 0.7 (h = n // 2, at least one)."""
    h = max(1, n // 2)
    return [list(range(h)), list(range(h, n))], np.r_[np.full(h, 0.3), np.full(n - h, 0.7)]


def _case(algorithm, n, n_classes):
    if n_classes == 1:
        groups, p = [list(range(n))], np.full(n, 0.5)
    else:
        groups, p = _two_classes(n)
    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    if algorithm == "fedavg":
        return pep.fedavg_round(3, 0.2), setting, pep.distance(), Bernoulli(p), groups
    # FOCUS's server sums the N trackers: the step and the consensus weight scale as 1/N
    return pep.focus_round(2, 0.1 / n), setting, pep.focus_lyapunov(1.0 / n), Bernoulli(p), \
        groups


@pytest.mark.parametrize("n_classes", [1, 2])
@pytest.mark.parametrize("n", range(2, 9))
@pytest.mark.parametrize("algorithm", ["fedavg", "focus"])
def test_the_symmetric_sdp_equals_the_direct_one(algorithm, n, n_classes):
    round_, setting, measure, law, groups = _case(algorithm, n, n_classes)
    direct = pep.worst_case(round_, setting, measure, law)
    reduced = pep.worst_case(round_, setting, measure, law, classes=groups)
    _same(direct, reduced)
    assert reduced.params["class_sizes"] == [len(g) for g in groups]


class _HalfMean:
    """A user's aggregation rule (half the mean over S): the class law's generic path."""

    def coefficients(self, masks, inclusion):
        return 0.5 * pep.Uniform().coefficients(masks, inclusion)


#: V = ||x - x*||^2 + sum_i ||grad f_i(x*)||^2, clients not sharing x*: since sum_i grad f_i(x*)
#: = 0, the gradients at x* are pure deviations, and the round's variance over S is what the
#: deviation blocks carry (in the rounds above they vanish at the optimum: dropping the
#: correction -<e_a, e_b>/(n_c - 1) of two clients of one class leaves those values unchanged
#: and moves these by up to 1e-2)
HETEROGENEITY = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2
                             + sum(g ** 2 for g in star.gradients),
                             "||x - x*||^2 + sum_i ||grad f_i(x*)||^2")


@pytest.mark.parametrize("n_classes", [1, 2])
@pytest.mark.parametrize("n", range(2, 9))
def test_the_deviation_blocks_carry_the_clients_differences(n, n_classes):
    groups, p = ([list(range(n))], np.full(n, 0.5)) if n_classes == 1 else _two_classes(n)
    setting = pep.Setting(n, 1.0, 2.0)
    round_ = pep.fedavg_round(2, 0.2)
    _same(pep.worst_case(round_, setting, HETEROGENEITY, Bernoulli(p)),
          pep.worst_case(round_, setting, HETEROGENEITY, Bernoulli(p), classes=groups))


@pytest.mark.parametrize("name", ["two runs", "unbiased", "normalized", "user rule", "fixed size",
                                  "scaffold", "quadratic", "momentum", "labels"])
def test_other_rounds_laws_and_measures_agree(name):
    n, groups = 5, [[0, 1, 2], [3, 4]]
    p = np.array([0.4, 0.4, 0.4, 0.8, 0.8])
    setting = pep.Setting(n, 1.0, 2.0, common_minimizer=True)
    round_, measure, law, classes = pep.fedavg_round(2, 0.2), pep.distance(), Bernoulli(p), groups
    if name == "two runs":
        setting, measure = pep.Setting(n, 1.0, 2.0), pep.two_runs()
    elif name == "unbiased":
        round_ = pep.fedavg_round(2, 0.2, aggregate="unbiased")
    elif name == "normalized":
        round_ = pep.fedavg_round(2, 0.2, aggregate=pep.Normalized((1, 1, 1, 3, 3)))
    elif name == "user rule":
        round_ = pep.fedavg_round(2, 0.2, aggregate=_HalfMean())
    elif name == "fixed size":
        law = UniformWithoutReplacement(n, 2)
    elif name == "scaffold":
        round_, measure = pep.scaffold_round(2, 0.1, n), pep.scaffold_lyapunov(1.0)
    elif name == "quadratic":
        setting = pep.Setting(n, 1.0, 2.0, function_class="quadratic", common_minimizer=True)
    elif name == "momentum":
        round_, measure = pep.momentum_round(2, 0.1, 0.5), pep.momentum_lyapunov(1.0)
    else:
        classes = [0, 0, 0, 1, 1]
    _same(pep.worst_case(round_, setting, measure, law),
          pep.worst_case(round_, setting, measure, law, classes=classes))


def test_a_minimizer_the_clients_do_not_share():
    n, groups = 4, [[0, 1], [2, 3]]
    setting = pep.Setting(n, 1.0, 2.0)
    round_, measure = pep.focus_round(2, 0.05), pep.focus_lyapunov(1.0)
    law = Bernoulli([0.3, 0.3, 0.7, 0.7])
    _same(pep.worst_case(round_, setting, measure, law),
          pep.worst_case(round_, setting, measure, law, classes=groups))


def test_the_size_does_not_grow_with_n():
    from PEPit import Point

    sizes = []
    for n in (4, 40, 1000):
        groups, p = _two_classes(n)
        problem, _ = build_symmetric(pep.fedavg_round(3, 0.2),
                                     pep.Setting(n, 1.0, 2.0, common_minimizer=True),
                                     pep.distance(), Bernoulli(p), classes=groups)
        sizes.append((len(problem.list_of_functions), Point.counter))
    assert sizes[0] == sizes[1] == sizes[2] == (2, sizes[0][1])


@pytest.mark.parametrize("process", [Bernoulli([0.2, 0.2, 0.2, 0.6, 0.6]),
                                     UniformWithoutReplacement(5, 3)])
def test_class_moments_equal_the_subset_law(process):
    groups = classes_of([[0, 1, 2], [3, 4]], 5)
    law, full = class_law(process, groups), law_of(process, 5)
    rule = pep.Uniform()
    w = rule.coefficients(full.masks, full.inclusion)
    s = full.masks.astype(float)
    for (i, ci), (j, cj) in [((0, 0), (0, 0)), ((0, 0), (1, 0)), ((0, 0), (3, 1)),
                             ((3, 1), (4, 1))]:
        same = i == j
        assert law.moment((ci, (("in",),)), (cj, (("in",),)), same=same) == \
            pytest.approx(full.probs @ (s[:, i] * s[:, j]), abs=1e-14)
        assert law.moment((ci, (("weight", rule),)), (cj, (("weight", rule),)), same=same) \
            == pytest.approx(full.probs @ (w[:, i] * w[:, j]), abs=1e-14)
    assert law.empty_probability == pytest.approx(full.empty_probability, abs=1e-15)


def test_the_target_size_solves():
    """One FedAvg round, exact Bernoulli participation, N = 1000 in 2 classes, solves to a
    contraction (its time is measured in ``benchmarks/pep_sizes.py``, not asserted here: a
    test must pass on a busy machine)."""
    groups, p = _two_classes(1000)
    res = pep.worst_case(pep.fedavg_round(3, 0.2), pep.Setting(1000, 1.0, 2.0,
                                                                  common_minimizer=True),
                         pep.distance(), Bernoulli(p), classes=groups)
    assert 0 < res.worst < 1


@pytest.mark.parametrize("classes, match", [
    ([[0, 1], [1, 2]], "classes"),            # not a partition (1 twice, 3 missing)
    ([[0, 1], [2]], "classes"),               # 3 clients for N = 4
    ([[0, 1, 2, 3, 4]], "classes"),           # a client 4 that does not exist
    ([0, 0, 1], "classes"),                   # 3 labels for N = 4
    ([[0, 1], []], "classes"),                # an empty class
    ([[0, 2], [1, 3]], "classes"),            # p differs within a class
])
def test_bad_classes_are_refused_before_any_work(classes, match):
    law = Bernoulli([0.3, 0.3, 0.7, 0.7])
    with pytest.raises(ValueError, match=match):
        pep.worst_case(pep.fedavg_round(1, 0.2), pep.Setting(4, 1.0, 2.0, common_minimizer=True),
                       pep.distance(), law, classes=classes)


def _raw_prox(f, pulled, state):
    """A proximal step through PEPit's primitive (it adds the point to f itself)."""
    from PEPit.primitive_steps import proximal_step

    z = proximal_step(pulled["x"], f, 0.2)[0]
    return {}, {"delta": z - pulled["x"]}


def test_other_bad_input_names_its_argument():
    setting = pep.Setting(4, 1.0, 2.0, common_minimizer=True)
    groups = [[0, 1], [2, 3]]
    round_, law = pep.fedavg_round(1, 0.2), Bernoulli([0.5] * 4)
    with pytest.raises(ValueError, match="participation"):
        pep.worst_case(round_, setting, pep.distance(), Bernoulli([0.5] * 5), classes=groups)
    with pytest.raises(ValueError, match="classes"):
        pep.worst_case(pep.fedavg_round(1, 0.2, aggregate=pep.FixedWeights((1, 2, 3, 3))),
                       setting, pep.distance(), law, classes=groups)
    with pytest.raises(ValueError, match="setting"):
        pep.worst_case(round_, pep.Setting(4, 1.0, 2.0, identical=True), pep.distance(), law,
                       classes=groups)
    coupled = pep.lyapunov(lambda state, star: (state["x"] - star.x) ** 2, "x only")
    pep.worst_case(round_, setting, coupled, law, classes=groups)     # no client: fine
    focus = pep.focus_round(2, 0.05)
    mean_z = pep.lyapunov(lambda state, star: sum(state.client("z"), 0 * state["x"]) ** 2,
                          "||sum z||^2")
    with pytest.raises(ValueError, match="measure"):
        pep.worst_case(focus, setting, mean_z, law, classes=groups)
    with pytest.raises(ValueError, match="round"):      # a point added to f directly
        pep.worst_case(pep.Round("prox", pep.local_custom(_raw_prox), {"delta": "uniform"},
                                 pep.server_model_step()), setting, pep.distance(), law,
                       classes=groups)


def test_the_witness_replays_the_worst_case_at_n_100():
    """One quadratic per class rebuilt from the symmetric solve, FedAvg run by
    flbounds.algorithms on N = 100 clients over every value of the class counts."""
    n = 100
    groups = [list(range(40)), list(range(40, n))]
    p = np.r_[np.full(40, 0.1), np.full(60, 0.05)]
    w = fedavg_symmetric_witness(1.0, 2.0, Bernoulli(p), groups, 2, 0.2)
    assert w.deviation < 1e-4
    assert abs(w.witness.replayed - w.witness.pep) <= witness_tolerance(w.witness)


def test_the_focus_witness_replays_the_worst_case_at_n_100():
    """FOCUS (step and consensus weight 1/N), one quadratic per class, run by
    flbounds.algorithms.focus from the solve's state on N = 100 clients."""
    n = 100
    groups = [list(range(40)), list(range(40, n))]
    p = np.r_[np.full(40, 0.1), np.full(60, 0.05)]
    w = focus_symmetric_witness(1.0, 2.0, Bernoulli(p), groups, 2, 0.1 / n, 1.0 / n)
    assert abs(w.witness.replayed - w.witness.pep) <= witness_tolerance(w.witness)
