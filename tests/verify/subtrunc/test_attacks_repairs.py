"""The attacks on SubTrunc's repaired statements: fixed points inside the hypotheses hold,
points outside are rejected, and a planted defect makes the search find a ratio above 1."""

import numpy as np
import pytest

import verify.subtrunc.attacks_repairs as repairs
from flbounds.falsify import search
from flbounds.falsify.surfaces import get_surface
from flbounds.selection import distorted_greedy
from verify.subtrunc.lemma1 import eq31_closed_form as repairs_closed_form


@pytest.mark.parametrize("claim_id", ["subtrunc.intro.nondecreasing_concave",
                                      "subtrunc.unionfl.distorted_greedy"])
def test_fixed_points_are_inside_and_hold(claim_id):
    surface = get_surface(claim_id)
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        assert surface.ratio(**point) <= surface.threshold


def test_a_convex_psi_is_rejected_by_the_concavity_predicate():
    surface = get_surface("subtrunc.intro.nondecreasing_concave")
    point = dict(surface.fixed_instances()[0], psi=3, shape=1.0)
    rejected = surface.effective_validator()(**point)
    assert isinstance(rejected, str) and "g" in rejected


def test_a_budget_above_n_is_rejected():
    surface = get_surface("subtrunc.unionfl.distorted_greedy")
    point = dict(surface.fixed_instances()[0], n=3, k=5)
    rejected = surface.effective_validator()(**point)
    assert isinstance(rejected, str) and "budget" in rejected


def test_a_decreasing_concave_psi_is_found(monkeypatch):
    """Planted: psi = -x^2 (concave, not nondecreasing), the printed intro's counterexample
    class; the search over the same space finds a negative DR margin."""
    monkeypatch.setattr(repairs, "_psi", lambda kind, shape, cap: lambda x: -np.square(x))
    surface = get_surface("subtrunc.intro.nondecreasing_concave")
    attack = search(surface.ratio, surface.space, budget=20, seed=0,
                    validator=surface.effective_validator())
    assert attack.best_ratio > surface.threshold


def test_plain_greedy_for_distorted_greedy_is_found(monkeypatch):
    """Planted: the set of the first element only instead of distorted greedy's output."""
    monkeypatch.setattr(repairs, "distorted_greedy", lambda h, k: [0])
    surface = get_surface("subtrunc.unionfl.distorted_greedy")
    attack = search(surface.ratio, surface.space, budget=40, seed=0,
                    validator=surface.effective_validator())
    assert attack.best_ratio > surface.threshold
    assert distorted_greedy is not repairs.distorted_greedy


def test_eq31_repair_rejects_a_step_above_one_third_and_finds_the_printed_bound(monkeypatch):
    """eta L E = 2 eta > 1/3 is outside Lemma 1; planted: the printed (31) (tau sigma^2/n for
    tau^2 sigma^2/n), the refuted step, is found (ratio 1.147 at eta = 1/6)."""
    surface = get_surface("subtrunc.eq31.corrected")
    validate = surface.effective_validator()
    assert validate(step=1 / 6, n_clients=1) is True
    assert isinstance(validate(step=0.2, n_clients=1), str)
    assert surface.ratio(step=1 / 6, n_clients=1) < 1
    monkeypatch.setattr(repairs, "eq31_closed_form",
                        lambda step, n: (lambda t: (t[0], t[1], t[1]))(
                            repairs_closed_form(step, n)))
    assert surface.ratio(step=1 / 6, n_clients=1) > surface.threshold
