"""The attack on Lemma D.1 (be-the-leader): the fixed path holds, a budget above N is rejected
by the lemma's FTRL predicate, and a planted defect (the regularizer difference dropped from
the bound) is found by the search."""

import numpy as np

import verify.kvib.attacks_lemma_d1 as d1
from flbounds.falsify.surfaces import get_surface

CLAIM = "kvib.lemmaD1.be_the_leader"


def test_fixed_path_is_inside_and_holds():
    surface = get_surface(CLAIM)
    point = surface.fixed_instances()[0]
    assert surface.effective_validator()(**point) is True
    assert surface.ratio(**point) <= surface.threshold


def test_a_budget_above_n_is_rejected():
    surface = get_surface(CLAIM)
    rejected = surface.effective_validator()(**dict(surface.fixed_instances()[0], budget=7))
    assert isinstance(rejected, str) and "FTRL" in rejected


def test_the_uniform_floor_corner_is_tight():
    """p_min = K/N: every iterate and comparator is uniform, both sides are 0."""
    surface = get_surface(CLAIM)
    point = dict(surface.fixed_instances()[0], floor=1.0)
    assert abs(surface.ratio(**point) - 1.0) <= 1e-12


def test_dropping_the_regularizer_term_is_found(monkeypatch):
    """Planted: R = 0 in the bound (stability alone). One round, gamma large against the
    feedback, comparator the hindsight-optimal p: the regularised iterate p^2 is not the
    leader, and the ratio exceeds 1 (below 1 with R restored)."""
    surface = get_surface(CLAIM)
    feedback = np.random.default_rng(0).uniform(0, 10, (12, 16))
    point = dict(surface.fixed_instances()[0], feedback=feedback, n=6, n_rounds=1, budget=2,
                 floor=0.0, gamma=10.0, mix=np.array([0.0, 0.0, 1.0, 0.0]))
    assert surface.effective_validator()(**point) is True
    assert surface.ratio(**point) < 1
    monkeypatch.setattr(d1.FTRLPath, "regularizer", lambda self, p: 0.0)
    assert surface.ratio(**point) > surface.threshold
