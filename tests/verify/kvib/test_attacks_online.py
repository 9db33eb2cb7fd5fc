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


ROUND = dict(c=np.linspace(-1, 1, 32), x=[1.0, -1.0], n=4, k_frac=0.3, w=np.full(16, 1 / 16),
             R=5, step_frac=1.0, L=1.0)


def test_descent_round_expectation_matches_sampled_rounds():
    """The closed-form E f(x^{t+1}) behind eq. (36)'s attack against ISP draws of the same
    round (4 standard errors), through the library's local updates."""
    from flbounds.algorithms.fedavg_sampler import local_updates
    from flbounds.problems import Quadratic

    b, k, step, p, x = online._round_point(**ROUND)
    prob = Quadratic(np.tile(np.eye(2), (4, 1, 1)), b)
    z = local_updates(prob, x, local_steps=5, step=step) / 4
    rng = np.random.default_rng(0)
    draws = rng.random((200_000, 4)) < p
    nxt = x - (draws / p) @ z
    f = 0.5 * np.sum(nxt**2, axis=1) - nxt @ b.mean(axis=0)
    zsum = z.sum(axis=0)
    grad = x - b.mean(axis=0)
    exact = (0.5 * x @ x - x @ b.mean(axis=0)) - (grad @ zsum - 0.5 * (
        zsum @ zsum + np.sum(np.sum(z * z, axis=1) * (1 - p) / p)))
    assert abs(f.mean() - exact) <= 4 * f.std() / np.sqrt(f.size)


def test_descent_round_points_are_judged_and_can_fail(monkeypatch):
    import verify.kvib.thm4_1.descent_round as dr

    for name in ("kvib.thm4_1.descent_round_printed", "kvib.thm4_1.descent_round_repaired"):
        assert get_surface(name).effective_validator()(**ROUND) is True
    assert 0 < online.descent_round(**ROUND) <= 1
    assert 0 < online.descent_round_repaired(**ROUND) <= 1
    real = dr.expected_descent  # a planted ascent instead of the exact descent
    monkeypatch.setattr(dr, "expected_descent", lambda *a: -100 * abs(real(*a)))
    assert online.descent_round(**ROUND) > 1
    assert online.descent_round_repaired(**ROUND) > 1


def test_bound_a_round_points_are_judged_and_can_fail(monkeypatch):
    surface = get_surface("kvib.thm4_1.bound_a_measured")
    valid = surface.effective_validator()
    assert valid(**ROUND) is True
    assert valid(**dict(ROUND, step_frac=1.5)) is not True     # eta_l above 1/(8RL)
    assert 0 < online.bound_a_round(**ROUND) <= 1
    monkeypatch.setattr(online, "optimal_isp_variance", lambda a, k: 1e3 * float(a @ a))
    assert online.bound_a_round(**ROUND) > 1


def test_the_printed_lines_witness_breaks_it_under_every_reading():
    import verify.kvib.thm4_1.descent_round as dr

    assert online.descent_round(**online.ROUND_WITNESS) > 2
    b, k, step, p, x = online._round_point(**online.ROUND_WITNESS)
    assert np.allclose(p, [0.99, 0.01], rtol=0, atol=1e-15) and k == 1.0
    lhs, rhs, readings = dr.printed_sides(dr.terms_at(dr.WITNESS))
    assert lhs > 6 and max(readings.values()) == rhs < 0
    assert 0 < online.descent_round_repaired(**online.ROUND_WITNESS) < 0.05
