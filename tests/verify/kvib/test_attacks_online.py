"""Theorem 5.1's attack searches Assumption 5.1 feedback from above and below, K in [1, N),
N up to 16: points are judged by Theorem 5.1's predicates, and a bound planted too small is
crossed at an ordinary point (the surface can fail)."""

import numpy as np

import verify.kvib.attacks_online as online
from flbounds.falsify.surfaces import get_surface

POINT = dict(base=np.linspace(0.5, 5.0, 16), decay=np.tile([0.9, -0.9], 8), n=6, T=200,
             k_frac=0.8)


def test_points_are_judged_by_theorem_5_1s_predicates():
    surface = get_surface("kvib.thm5_1.tbfp_bound")
    assert surface.instance is not None and surface.validator is None
    valid = surface.effective_validator()
    assert valid(**POINT) is True
    assert valid(**dict(POINT, decay=np.full(16, -1.5))) is not True  # negative feedback


def test_a_planted_small_bound_is_crossed(monkeypatch):
    assert 0 < online.tbfp_bound(**POINT) <= 1
    real = online.thm5_1_bound
    monkeypatch.setattr(online, "thm5_1_bound", lambda **c: real(**c) / 1e4)
    assert online.tbfp_bound(**POINT) > 1
