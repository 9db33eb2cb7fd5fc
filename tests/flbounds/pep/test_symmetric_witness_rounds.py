"""Witnesses at scale for every described round (flbounds.pep.symmetric_witness,
symmetric_fit, symmetric_replay): the class outcomes reproduce the class laws, each round's
rebuilt instance replayed at the full N (N = 100 and 1000, two classes) reaches the symmetric
solve, the description agrees with flbounds.algorithms on the rebuilt instances, and planted
bugs in the replay's law (a dropped class, the draws of a class on one client, a wrong class
size, one class's inclusion probability in the unbiased rule for all) are caught."""

import itertools

import numpy as np
import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, UniformWithoutReplacement, WithReplacement
from flbounds.pep import sdp
from flbounds.pep import symmetric_replay as sr
from flbounds.pep.classcounts import count_class_law
from flbounds.pep.classlaw import class_law, classes_of
from flbounds.pep.replay import QuadraticClient, run_round, start_state
from flbounds.pep.symmetric_fit import symmetric_instance
from flbounds.pep.symmetric_witness import (
    focus_symmetric_witness,
    scaffold_symmetric_witness,
    symmetric_witness,
)

#: two evaluations of the same float64 arithmetic in another order (test_replay.py)
ROUNDING = 1e-12
N, H = 100, 40                                   # two classes: clients 0..39 and 40..99
GROUPS = [list(range(H)), list(range(H, N))]
BERNOULLI = Bernoulli(np.r_[np.full(H, 0.1), np.full(N - H, 0.05)])
Q = np.r_[np.full(H, 1.0), np.full(N - H, 3.0)]
DRAWS = WithReplacement(Q / Q.sum(), 6)          # 6 draws, class draw probabilities 1:3

ROUNDS = {
    "scaffold": (pep.scaffold_round(2, 0.1, N), pep.scaffold_lyapunov(1.0 / N)),
    "momentum": (pep.momentum_round(2, 0.2, 0.5), pep.momentum_lyapunov(1.0)),
    "fedau": (pep.fedau_round(2, 0.2, [1.0] * H + [2.0] * (N - H)), pep.distance()),
    "mifa": (pep.mifa_round(2, 0.1, N), pep.mifa_lyapunov(1.0 / N)),
    "unbiased": (pep.kvib_round(2, 0.2), pep.distance()),
}


def _reaches(replayed, solved):
    """A replay runs an instance of the class, so it is at most the exact worst case, which
    the accepted solve gives within ``gap_tolerance``; where one function per class attains
    the worst case the replay equals it up to the fitted instance's error, second order in
    the fit residual (measured: at most 5.1e-7 here)."""
    return abs(replayed - solved) <= pep.gap_tolerance(solved)


def _below(w):
    return w.witness.replayed <= w.witness.pep + pep.gap_tolerance(w.witness.pep)


# --------------------------------------------------------------------------- the class law


@pytest.mark.parametrize(("total", "members"), [(4, 3), (3, 5), (5, 2), (0, 4)])
def test_within_class_counts_is_the_occupancy_law(total, members):
    """Every assignment of the draws to the clients, sorted into its multiset of counts."""
    brute = {}
    for draw in itertools.product(range(members), repeat=total):
        counts = np.bincount(np.asarray(draw, dtype=int), minlength=members)
        parts = tuple(sorted((int(c) for c in counts if c), reverse=True))
        brute[parts] = brute.get(parts, 0.0) + members ** -total
    got = dict(sr.within_class_counts(total, members))
    assert got.keys() == brute.keys()
    for parts, prob in brute.items():
        assert got[parts] == pytest.approx(prob, rel=ROUNDING)


@pytest.mark.parametrize("process", [BERNOULLI, DRAWS], ids=["sets", "counts"])
def test_class_outcomes_reproduce_the_class_law(process):
    """Probabilities sum to 1, and each client's mean inclusion (or mean count) over the
    outcomes, averaged over its class, is the class law's."""
    groups = classes_of(GROUPS, N)
    drawn = process is DRAWS
    law = (count_class_law if drawn else class_law)(process, groups)
    total, mean = 0.0, np.zeros(N)
    for mask, counts, prob in sr.class_outcomes(law):
        total += prob
        mean += prob * (mask if counts is None else counts)
    assert total == pytest.approx(1.0, abs=ROUNDING)
    per_class = np.array([mean[g].mean() for g in GROUPS])
    want = law.count_means if drawn else law.inclusion
    np.testing.assert_allclose(per_class, want, rtol=ROUNDING)


# --------------------------------------------------------------------------- every round


@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_every_described_round_is_reached_at_n_100(name):
    """Two Bernoulli classes (p = 0.1, 0.05); replayed through the description."""
    w = symmetric_witness(*ROUNDS[name], 1.0, 2.0, BERNOULLI, GROUPS)
    assert _below(w)
    assert _reaches(w.witness.replayed, w.witness.pep), (w.witness.replayed, w.witness.pep)


def test_scaffold_and_momentum_are_reached_at_n_1000():
    """SCAFFOLD drawn with replacement (6 draws, 1:3) and server momentum under uniform
    10-of-1000 sampling with classes of L = 2 and 4."""
    n, h = 1000, 400
    groups = [list(range(h)), list(range(h, n))]
    q = np.r_[np.full(h, 1.0), np.full(n - h, 3.0)]
    scaffold = symmetric_witness(pep.scaffold_round(2, 0.1, n), pep.scaffold_lyapunov(1.0 / n),
                                 1.0, 2.0, WithReplacement(q / q.sum(), 6), groups)
    momentum = symmetric_witness(pep.momentum_round(2, 0.1, 0.5), pep.momentum_lyapunov(1.0),
                                 1.0, np.r_[np.full(h, 2.0), np.full(n - h, 4.0)],
                                 UniformWithoutReplacement(n, 10), groups)
    for w in (scaffold, momentum):
        assert _below(w)
        assert _reaches(w.witness.replayed, w.witness.pep), (w.witness.replayed, w.witness.pep)


# --------------------------------------------------------------------------- the algorithms


def _state_of(rnd, problem, free):
    clients = [QuadraticClient(problem, i) for i in range(problem.n_clients)]
    return clients, start_state(rnd, clients, free)


def _some(law, k=4):
    """The ``k`` most likely outcomes (a count plan with a client drawn twice among them)."""
    return sorted(sr.class_outcomes(law), key=lambda o: -o[2])[:k]


def test_the_scaffold_description_is_the_algorithm_on_count_plans():
    """fedavg_family with local_scaffold, from the rebuilt controls, on the most likely count
    plans, and the whole witness through both."""
    from flbounds.algorithms import fedavg_family, local_scaffold

    rnd, measure = ROUNDS["scaffold"]
    inst = symmetric_instance(rnd, measure, 1.0, 2.0, DRAWS, GROUPS)
    clients, state = _state_of(rnd, inst.problem, inst.free)
    x0, c0 = inst.free["x"], inst.free["ci"]
    outcomes = _some(inst.law)
    assert any(counts.max() >= 2 for _, counts, _ in outcomes)
    for mask, counts, _ in outcomes:
        server, own = run_round(rnd, clients, state, mask, inst.law.count_means[
            inst.law.classes.labels()], counts)
        ref = fedavg_family(inst.problem, counts[None, :], local_scaffold(x0.size), step=0.1,
                            local_steps=2, x0=x0, state0=c0, server0=c0.mean(axis=0))
        np.testing.assert_allclose(server["x"].v, ref.x[-1], atol=ROUNDING)
        np.testing.assert_allclose(server["c"].v, ref.server, atol=ROUNDING)
        np.testing.assert_allclose([c["ci"].v for c in own], ref.state, atol=ROUNDING)
    through = scaffold_symmetric_witness(1.0, 2.0, DRAWS, GROUPS, 2, 0.1, 1.0 / N)
    described = sr.replay_classes(rnd, inst.problem, inst.free, inst.law, measure)
    assert through.witness.replayed == pytest.approx(described, abs=ROUNDING)


def test_the_fedavg_and_focus_descriptions_are_the_algorithms_on_the_rebuilt_instances():
    from flbounds.algorithms import FocusState, fedavg, focus

    rnd = pep.fedavg_round(2, 0.2)
    inst = symmetric_instance(rnd, pep.distance(), 1.0, 2.0, DRAWS, GROUPS)
    clients, state = _state_of(rnd, inst.problem, inst.free)
    for mask, counts, _ in _some(inst.law):
        server, _ = run_round(rnd, clients, state, mask, None, counts)
        ref = fedavg(inst.problem, counts[None, :], step=0.2, local_steps=2,
                     x0=inst.free["x"]).x[-1]
        np.testing.assert_allclose(server["x"].v, ref, atol=ROUNDING)
    rnd = pep.focus_round(2, 0.1 / N)
    inst = symmetric_instance(rnd, pep.focus_lyapunov(1.0 / N), 1.0, 2.0, BERNOULLI, GROUPS)
    clients, state = _state_of(rnd, inst.problem, inst.free)
    g0 = np.array([c["g"].v for c in state[1]])
    for mask, _, _ in _some(inst.law):
        server, own = run_round(rnd, clients, state, mask)
        start = FocusState(inst.free["x"].copy(), g0.sum(axis=0), g0.copy(),
                           inst.free["z"].copy())
        ref = focus(inst.problem, mask[None, :], step=0.1 / N, local_steps=2, start=start)
        np.testing.assert_allclose(server["x"].v, ref.x[-1], atol=ROUNDING)
        np.testing.assert_allclose([c["z"].v for c in own], ref.models, atol=ROUNDING)


# --------------------------------------------------------------------------- FOCUS, counts


def test_focus_with_counts_is_reached_and_is_not_the_set_reading(monkeypatch):
    """The engine weighs a correction by its client's count; replayed through the
    description it reaches the solve (4 draws, N = 100). Reading each draw as a set (every
    drawn client once, FOCUS's Case 3 and flbounds.algorithms.focus on the support) is
    another round: its value on the same instance differs beyond the tolerance."""
    q4 = WithReplacement(Q / Q.sum(), 4)
    w = focus_symmetric_witness(1.0, 2.0, q4, GROUPS, 2, 0.1 / N, 1.0 / N)
    assert _below(w)
    assert _reaches(w.witness.replayed, w.witness.pep), (w.witness.replayed, w.witness.pep)
    rnd, measure = pep.focus_round(2, 0.1 / N), pep.focus_lyapunov(1.0 / N)
    inst = symmetric_instance(rnd, measure, 1.0, 2.0, q4, GROUPS)
    outcomes = sr.class_outcomes
    monkeypatch.setattr(sr, "class_outcomes",
                        lambda law: ((m, None, p) for m, _, p in outcomes(law)))
    as_sets = sr.replay_classes(rnd, inst.problem, inst.free, inst.law, measure)
    assert not _reaches(as_sets, w.witness.pep), as_sets


# --------------------------------------------------------------------------- planted bugs


def _scaffold_counts():
    rnd, measure = ROUNDS["scaffold"]
    inst = symmetric_instance(rnd, measure, 1.0, 2.0, DRAWS, GROUPS)
    return (lambda: sr.replay_classes(rnd, inst.problem, inst.free, inst.law, measure)), \
        inst.worst


def test_planted_bugs_in_the_replayed_law_are_caught(monkeypatch):
    """SCAFFOLD with counts: the right replay reaches the solve; one that drops the second
    class, puts every draw of a class on its first client (exact for FedAvg, whose clients
    keep no state, wrong for SCAFFOLD's controls) or splits the draws over a class of the
    wrong size does not."""
    replay, solved = _scaffold_counts()
    assert _reaches(replay(), solved)
    outcomes, within = sr.class_outcomes, sr.within_class_counts

    def dropped(law):
        for mask, counts, prob in outcomes(law):
            mask, counts = mask.copy(), counts.copy()
            mask[H:], counts[H:] = False, 0
            yield mask, counts, prob

    def first_client(law):
        for row, prob in zip(law.counts.astype(int), law.probs, strict=True):
            counts = np.zeros(N, dtype=np.int64)
            counts[[g[0] for g in GROUPS]] = row
            yield counts > 0, counts, prob

    for planted in (dropped, first_client):
        monkeypatch.setattr(sr, "class_outcomes", planted)
        assert not _reaches(replay(), solved), planted.__name__
    monkeypatch.setattr(sr, "class_outcomes", outcomes)
    monkeypatch.setattr(sr, "within_class_counts", lambda m, n: within(m, N - n))
    assert not _reaches(replay(), solved)


def test_a_wrong_class_weight_of_the_unbiased_rule_is_caught(monkeypatch):
    """Unbiased weights divide by each class's inclusion probability (0.1 and 0.05); a
    replay that gives every client the first class's is caught."""
    rnd, measure = ROUNDS["unbiased"]
    inst = symmetric_instance(rnd, measure, 1.0, 2.0, BERNOULLI, GROUPS)

    def replay():
        return sr.replay_classes(rnd, inst.problem, inst.free, inst.law, measure)

    assert _reaches(replay(), inst.worst)
    right = sr.run_round
    monkeypatch.setattr(sr, "run_round", lambda r, c, s, mask, inclusion, counts: right(
        r, c, s, mask, np.full(inclusion.size, inclusion[0]), counts))
    assert not _reaches(replay(), inst.worst)


# --------------------------------------------------------------------------- refusals


def test_no_witness_from_an_inaccurate_solve(monkeypatch):
    """The witness reads the solve's points: every solve forced inaccurate raises instead of
    fitting an inaccurate Gram matrix."""
    monkeypatch.setattr(sdp, "accurate", lambda *a: False)
    with pytest.raises(pep.PEPSolveError):
        symmetric_witness(*ROUNDS["momentum"], 1.0, 2.0, Bernoulli(np.full(4, 0.5)),
                          [[0, 1], [2, 3]])


def test_bad_input_names_the_argument():
    from flbounds.problems import Quadratic

    with pytest.raises(ValueError, match="measure"):
        symmetric_witness(pep.fedavg_round(1, 0.1), pep.two_runs(), 1.0, 2.0,
                          Bernoulli(np.full(4, 0.5)), [[0, 1], [2, 3]])
    rnd, measure = ROUNDS["momentum"]
    inst = symmetric_instance(rnd, measure, 1.0, 2.0, Bernoulli(np.full(4, 0.5)),
                              [[0, 1], [2, 3]])
    A = inst.problem.A.copy()
    A[1] *= 1.5
    with pytest.raises(ValueError, match="problem"):
        sr.replay_classes(rnd, Quadratic(A, inst.problem.b), inst.free, inst.law, measure)
    with pytest.raises(ValueError, match="total"):
        sr.within_class_counts(-1, 3)
    many = count_class_law(WithReplacement(np.full(1000, 1e-3), 60),
                           classes_of([range(500), range(500, 1000)], 1000))
    with pytest.raises(ValueError, match="participation"):
        next(sr.class_outcomes(many))
