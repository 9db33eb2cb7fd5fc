"""The adversarial search: planted violations are found, seeds reproduce, budgets hold,
validators reject, witnesses shrink, and bad input is refused before any work."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flbounds.falsify import SPD, Box, Integers, Simplex, Transform, search, shrink

PEAK = np.array([0.731, 0.204, 0.618])


def planted(*, x):
    """A bound that holds except within ~0.015 of PEAK, where a spike reaches 1.2 (a slack
    that shrinks towards the worst case, as for a tight bound, plus a narrow violation)."""
    r = np.sqrt(np.sum((x - PEAK) ** 2))
    return 0.95 - 0.3 * r + 0.25 * np.exp(-r**2 / (2 * 0.01**2))


def test_planted_violation_is_narrow():
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 11)] * 3), axis=-1).reshape(-1, 3)
    assert max(planted(x=x) for x in grid) < 1.0    # a 11^3 grid misses it


@pytest.mark.parametrize("method", ["cma", "de"])
def test_planted_narrow_violation_is_found(method):
    attack = search(planted, {"x": Box(0, 1, shape=3)}, budget=1500, seed=0, method=method)
    assert attack.best_ratio > 1.0
    assert np.allclose(attack.witness["x"], PEAK, atol=0.02)


@pytest.mark.parametrize("method", ["cma", "de"])
def test_same_seed_same_attack(method):
    space = {"x": Box(0, 1, shape=3), "k": Integers(1, 4), "w": Simplex(3)}

    def ratio(*, x, k, w):
        return planted(x=x) + 0.01 * k * w[0]

    a = search(ratio, space, budget=400, seed=7, method=method)
    b = search(ratio, space, budget=400, seed=7, method=method)
    c = search(ratio, space, budget=400, seed=8, method=method)
    assert a.best_ratio == b.best_ratio and a.history == b.history
    assert all(np.array_equal(a.witness[k], b.witness[k]) for k in space)
    assert c.history != a.history


@pytest.mark.parametrize("method", ["cma", "de"])
@pytest.mark.parametrize("budget", [1, 7, 250])
def test_budget_is_never_exceeded(method, budget):
    calls = []

    def ratio(*, x):
        calls.append(1)
        return float(x)

    attack = search(ratio, {"x": Box(0, 1)}, budget=budget, seed=0, method=method)
    assert attack.evaluations == budget == len(calls)


def test_rejected_instances_never_count():
    def ratio(*, x):
        return 10.0 if x > 0.5 else x   # the large values lie outside the hypotheses

    attack = search(ratio, {"x": Box(0, 1)}, budget=300, seed=0,
                    validator=lambda *, x: x <= 0.5 or "x > 1/2")
    assert attack.rejected > 0
    assert attack.best_ratio <= 0.5 and attack.witness["x"] <= 0.5


def test_starts_are_evaluated_first():
    attack = search(planted, {"x": Box(0, 1, shape=3)}, budget=5, seed=0,
                    starts=[{"x": PEAK}])
    assert attack.history[0] == (1, planted(x=PEAK))
    assert attack.best_ratio >= planted(x=PEAK)


def test_shrink_rounds_and_lowers_while_violating():
    def ratio(*, x, n):
        return 1.5 - abs(x - 0.7312345) if n >= 2 else 0.5

    small = shrink(ratio, {"x": Box(0, 1), "n": Integers(1, 9)}, {"x": 0.7312345, "n": 7})
    assert small.witness == {"x": 0.7, "n": 2} and small.ratio > 1
    with pytest.raises(ValueError, match="witness"):
        shrink(ratio, {"x": Box(0, 1), "n": Integers(1, 9)}, {"x": 0.7, "n": 1})


def test_primitives_decode_into_their_sets():
    rng = np.random.default_rng(0)
    spd, simplex = SPD(3, 0.5, 2.0, extreme=True), Simplex(4, floor=0.01)
    for _ in range(20):
        a = spd.decode(rng.random(spd.dim))
        eig = np.linalg.eigvalsh(a)
        assert np.allclose(a, a.T) and np.isclose(eig[0], 0.5) and np.isclose(eig[-1], 2.0)
        w = simplex.decode(rng.random(4))
        assert np.isclose(w.sum(), 1.0) and w.min() >= 0.01
        assert 1 <= Integers(1, 3).decode(rng.random(1)) <= 3
    squared = Transform(Box(0, 2), lambda v: v * v, float)
    assert squared.decode(np.array([1.0])) == 4.0


@pytest.mark.parametrize("make, match", [
    (lambda: Box(1.0, 0.0), "low < high"),
    (lambda: Box(0.0, 1.0, log=True), "log=True"),
    (lambda: Integers(3, 1), "Integers"),
    (lambda: Simplex(0), "Simplex"),
    (lambda: SPD(2, 2.0, 1.0), "SPD"),
])
def test_bad_primitives_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("kwargs, match", [
    (dict(budget=0, seed=0), "budget"),
    (dict(budget=10, seed=-1), "seed"),
    (dict(budget=10, seed=0, method="nelder"), "method"),
    (dict(budget=10, seed=0, restarts="none"), "restarts"),
])
def test_bad_search_arguments_are_refused_before_any_evaluation(kwargs, match):
    calls = []
    with pytest.raises(ValueError, match=match):
        search(lambda *, x: calls.append(x) or 0.0, {"x": Box(0, 1)}, **kwargs)
    with pytest.raises(ValueError, match="space"):
        search(lambda *, x: 0.0, {}, budget=10, seed=0)
    assert calls == []


@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), budget=st.integers(1, 150),
       method=st.sampled_from(["cma", "de"]))
def test_a_bound_that_holds_is_never_reported_broken(seed, budget, method):
    def ratio(*, x, k, w):  # <= 1 everywhere, = 1 only on a thin set
        return float(np.sum(np.sin(3 * x) ** 2) / 3 * (k / 5) * w.max())

    attack = search(ratio, {"x": Box(-2, 2, shape=3), "k": Integers(1, 5), "w": Simplex(3)},
                    budget=budget, seed=seed, method=method)
    assert attack.best_ratio <= 1.0 and attack.evaluations == budget
