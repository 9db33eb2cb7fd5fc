"""K-Vib attacks on expectations over sampling, computed exactly by enumerating every
participation history (Theorem 5.2's explicit bound, Theorem 4.1's final bound on FL runs),
and Theorem D.1's attack widened to feedback from below and any lambda: the exact sums agree
with sampled runs of the library, points outside the hypotheses are rejected, and a bound
planted too small is crossed."""

import numpy as np

import verify.kvib.attacks as attacks
import verify.kvib.attacks_exact as exact
import verify.kvib.attacks_fl_exact as fl
from flbounds.falsify.surfaces import get_surface
from flbounds.sampling.online import Assumption51Feedback, kvib_online

REGRET = dict(base=np.array([1.0, 2.0, 0.5, 3.0]), decay=np.array([0.5, -0.5, 0.9, 0.2]),
              lam=np.array([0.1, 0.2, 0.3, 0.4]), n=3, T=3, k_frac=0.5, g_factor=1.0)


def test_branches_are_a_probability_law():
    masks, probs = exact.branches(np.array([0.2, 1.0, 0.7]))
    assert abs(probs.sum() - 1) <= 1e-15
    assert masks[:, 1].all()  # a client with p = 1 is always in


def test_kvib_tree_matches_sampled_runs():
    """E l_t(p~^t) by enumeration against 20,000 runs of the compiled K-Vib (4 SE)."""
    fb = Assumption51Feedback(np.full(3, 1 / 3), np.array([1.0, 2.0, 0.5]),
                              np.array([0.5, -1.0, 0.4]))
    costs, zbar, nodes = exact.kvib_expected_costs(fb, 3, 1.5, 1.0)
    assert nodes == 1 + 8 + 64 and zbar > 0
    rng = np.random.default_rng(0)
    runs = np.array([kvib_online(fb, 3, 1.5, rng, G=1.0).costs for _ in range(20_000)])
    se = runs.std(axis=0) / np.sqrt(len(runs))
    assert np.all(np.abs(runs.mean(axis=0) - costs) <= 4 * se + 1e-12)


def test_thm5_2_points_are_judged_by_its_predicates():
    valid = get_surface("kvib.thm5_2.explicit_bound").effective_validator()
    assert valid(**REGRET) is True
    assert valid(**dict(REGRET, T=1)) is not True                      # T K < N
    assert valid(**dict(REGRET, g_factor=0.5)) is not True             # G below the feedback
    assert valid(**dict(REGRET, decay=np.full(4, -1.5))) is not True   # negative feedback


def test_thm5_2_planted_small_bound_is_crossed(monkeypatch):
    assert 0 < exact.thm5_2_exact(**REGRET) <= 1
    real = exact.explicit_bound_value
    monkeypatch.setattr(exact, "explicit_bound_value", lambda **c: real(**c) / 1e4)
    assert exact.thm5_2_exact(**REGRET) > 1


FL = dict(c=np.linspace(-1, 1, 8), x0=np.array([1.0, -1.0]), n=3, k_frac=0.5,
          w=np.full(4, 0.25), kind=1, G=1.0, R=5, T=2, L=1.0)


def test_fl_tree_matches_sampled_runs():
    """Exact E||grad f(x^t)||^2 and E Q(S^t) against 2,000 FedAvg runs (4 SE)."""
    from flbounds.algorithms.fedavg_sampler import fedavg_sampler

    problem, _, _, make = fl._fl_point(**FL)
    eta = 1 / 8
    moments = fl.fl_moments(problem, make(), n_rounds=2, local_steps=5, eta=eta, x0=FL["x0"])
    rng = np.random.default_rng(1)
    grads, qs = [], []
    for _ in range(2000):
        tr = fedavg_sampler(problem, make(), rng, n_rounds=2, local_steps=5, step=eta / 5,
                            x0=FL["x0"])
        grads.append(tr.grad_sq)
        qs.append(tr.variance - tr.opt_variance)
    for runs, value in ((np.array(grads), moments["grad_sq"]), (np.array(qs), moments["q"])):
        se = runs.std(axis=0) / np.sqrt(len(runs))
        assert np.all(np.abs(runs.mean(axis=0) - value) <= 4 * se + 1e-12)


def test_fl_points_are_judged_at_the_runs_step(monkeypatch):
    valid = get_surface("kvib.thm4_1.final_bound_fl_run").effective_validator()
    assert valid(**FL) is True
    fl._CACHE.clear()
    monkeypatch.setattr(fl, "tuned_step", lambda *, L, **_: 1 / (4 * L))  # twice the limit
    assert valid(**FL) is not True
    fl._CACHE.clear()


def test_fl_planted_small_bound_is_crossed(monkeypatch):
    fl._CACHE.clear()
    assert 0 < fl.final_bound_exact(**FL) <= 1
    fl._CACHE.clear()
    real = fl.thm41_rhs
    monkeypatch.setattr(fl, "thm41_rhs", lambda **c: real(**c) / 1e4)
    assert fl.final_bound_exact(**FL) > 1
    fl._CACHE.clear()


D1 = dict(base=np.linspace(0.5, 5.0, 16), decay=np.tile([0.9, -0.9], 8),
          lam=np.linspace(1, 2, 16) / np.linspace(1, 2, 16).sum(), n=6, T=30, k_frac=0.6)


def test_d1_points_from_below_are_in_and_outside_points_are_rejected():
    valid = get_surface("kvib.thm_d1.printed_last_term").effective_validator()
    assert valid(**D1) is True
    assert valid(**dict(D1, decay=np.full(16, -1.5))) is not True  # negative feedback
    rising = dict(D1, decay=np.full(16, -0.5))
    assert valid(**rising) is True
    fb, _, G = attacks._d1_point(**rising)
    assert G > fb.G  # rising feedback is largest at t = T, not at t = 1


def test_d1_planted_small_bound_is_crossed(monkeypatch):
    assert 0 < attacks.printed_last_term(**D1) <= 1
    real = attacks.thm_d1_bound_value
    monkeypatch.setattr(attacks, "thm_d1_bound_value", lambda **c: real(**c) / 1e4)
    assert attacks.printed_last_term(**D1) > 1


def test_d1_corrected_planted_small_bound_is_crossed(monkeypatch):
    valid = get_surface("kvib.thm_d1.full_information").effective_validator()
    assert valid(**D1) is True
    assert 0 < attacks.corrected_last_term(**D1) <= 1
    real = attacks.thm_d1_bound_value
    monkeypatch.setattr(attacks, "thm_d1_bound_value", lambda **c: real(**c) / 1e4)
    assert attacks.corrected_last_term(**D1) > 1


def test_pmin_both_branches_is_judged_and_can_fail(monkeypatch):
    surface = get_surface("kvib.thm_d1.pmin_both_branches")
    point = surface.fixed_instances()[0]
    valid = surface.effective_validator()
    assert valid(**point) is True
    assert valid(**dict(point, decay=np.full(16, -1.5))) is not True
    assert 0 < attacks.pmin_both(**point) <= 1
    real = attacks._pmin_terms   # the printed step's counterexample, without the 2 N^2 G^2/K
    monkeypatch.setattr(attacks, "_pmin_terms", lambda *a: 2 * real(*a))
    assert attacks.pmin_both(**point) > 1
