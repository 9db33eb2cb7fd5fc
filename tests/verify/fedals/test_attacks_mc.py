"""The Monte Carlo attacks on FedALS's corrected Remark 4.2 bounds: the claims' own instances
are inside and hold, a point outside Case II is rejected, the ratio replays exactly (common
random numbers), and a planted defect in a bound gives a ratio above 1."""

import numpy as np
import pytest

import verify.fedals.attacks_mc as mc
from flbounds.falsify.surfaces import get_surface

CASES = ["fedals.remark42.case1_bound", "fedals.remark42.case2_bound"]


@pytest.mark.parametrize("claim_id", CASES)
def test_fixed_points_are_inside_hold_and_replay(claim_id):
    surface = get_surface(claim_id)
    point = surface.fixed_instances()[0]
    assert surface.effective_validator()(**point) is True
    ratio = surface.ratio(**point)
    assert ratio <= surface.threshold
    assert surface.ratio(**point) == ratio


def test_more_draws_than_clients_is_outside_case_two():
    surface = get_surface("fedals.remark42.case2_bound")
    point = dict(surface.fixed_instances()[0], n_clients=3, n_participants=5)
    rejected = surface.effective_validator()(**point)
    assert isinstance(rejected, str) and "case_II" in rejected
    # with replacement (Case I) the same sizes are inside
    assert get_surface("fedals.remark42.case1_bound").effective_validator()(**point) is True


def test_a_bound_a_tenth_of_case_one_is_found(monkeypatch):
    surface = get_surface(CASES[0])
    point = surface.fixed_instances()[0]
    original = mc._bound72
    monkeypatch.setattr(mc, "_bound72", lambda *a: tuple(0.1 * np.asarray(original(*a))))
    assert surface.ratio(**point) > surface.threshold


def test_a_bound_a_tenth_of_case_two_is_found(monkeypatch):
    surface = get_surface(CASES[1])
    point = dict(surface.fixed_instances()[0], n_participants=1, lam=10.0, n_samples=60)
    assert surface.ratio(**point) <= surface.threshold
    original = mc._bound73
    monkeypatch.setattr(mc, "_bound73", lambda *a: (0.1 * original(*a)[0], *original(*a)[1:]))
    assert surface.ratio(**point) > surface.threshold


B1_POINT = dict(n_clients=8, zeta=0.0, lam=3.4, n_samples=37, batch_frac=0.4, step=0.22,
                tau=17)


def test_thm_b1_fixed_points_hold_and_zero_local_steps_are_rejected():
    surface = get_surface("fedals.thmB1.bound")
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        assert surface.ratio(**point) <= surface.threshold
    rejected = surface.effective_validator()(**dict(B1_POINT, tau=0))
    assert isinstance(rejected, str) and "sgd" in rejected


def test_a_bound_a_tenth_of_thm_b1_is_found(monkeypatch):
    """Where the gap's lower 5-SE limit is positive (about 0.2 of (37)), a tenth of (37) is
    exceeded."""
    surface = get_surface("fedals.thmB1.bound")
    assert 0 < surface.ratio(**B1_POINT) <= surface.threshold
    original = mc._b1_runs

    def planted(*args, **kwargs):
        runs = original(*args, **kwargs)
        for run in runs:
            run["summary"] = run["summary"]._replace(bound=0.1 * run["summary"].bound)
        return runs

    monkeypatch.setattr(mc, "_b1_runs", planted)
    assert surface.ratio(**B1_POINT) > surface.threshold


def test_logistic_fixed_points_hold_and_a_hundredth_of_the_bound_is_found(monkeypatch):
    surface = get_surface("fedals.thm41.logistic_bound")
    ratios = [surface.ratio(**point) for point in surface.fixed_instances()]
    assert all(surface.effective_validator()(**p) is True for p in surface.fixed_instances())
    assert max(ratios) <= surface.threshold
    point = surface.fixed_instances()[int(np.argmax(ratios))]
    assert max(ratios) > 0.0    # the gap's lower limit is positive there (about 0.015)
    original = mc._logistic_cell

    def planted(**kwargs):
        cell = original(**kwargs)
        cell["row"]["bound"] *= 0.01
        return cell

    monkeypatch.setattr(mc, "_logistic_cell", planted)
    assert surface.ratio(**point) > surface.threshold


def test_eq56_fixed_points_hold_zero_steps_are_rejected_and_a_hundredth_is_found(monkeypatch):
    from flbounds.falsify import search

    surface = get_surface("fedals.thm43.eq56_printed")
    for point in surface.fixed_instances():
        assert surface.effective_validator()(**point) is True
        assert surface.ratio(**point) <= surface.threshold
    rejected = surface.effective_validator()(**dict(surface.fixed_instances()[0], tau=0))
    assert isinstance(rejected, str) and "sgd" in rejected
    original = mc.summarize_bound
    monkeypatch.setattr(mc, "summarize_bound",
                        lambda *a, **kw: original(*a, **kw)._replace(
                            bound=0.01 * original(*a, **kw).bound))
    attack = search(surface.ratio, surface.space, budget=20, seed=0,
                    validator=surface.effective_validator())
    assert attack.best_ratio > surface.threshold
