"""K-Vib attacks on expectations over sampling, computed exactly by enumerating every
participation history (Theorem 5.2's explicit bound, Theorem 4.1's final bound on FL runs),
and Theorem D.1's attack widened to feedback from below and any lambda: the exact sums agree
with sampled runs of the library, points outside the hypotheses are rejected, and a bound
planted too small is crossed."""

import numpy as np
import pytest

import verify.kvib.attacks as attacks
import verify.kvib.attacks_exact as exact
import verify.kvib.attacks_fl_exact as fl
from flbounds.algorithms.fedavg_sampler import local_updates
from flbounds.falsify.surfaces import get_surface
from flbounds.sampling import (
    KVib,
    isp_variance,
    optimal_isp_probabilities,
    optimal_isp_variance,
)
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


# ---- the level enumeration against the node-by-node walk with the library's samplers ----

def _costs_walk(feedback, n_rounds, budget, G):
    """E l_t(p~^t) and min z_t by :func:`expectation_tree` (a KVib copy per branch)."""
    costs, zbar = np.zeros(n_rounds), [np.inf]

    def visit(t, sampler, _, prob):
        pi = feedback.values(t)
        costs[t - 1] += prob * float(np.sum(pi * pi / sampler.inclusion_weights()))
        zbar[0] = min(zbar[0], float(budget) - int(np.sum(sampler.base_probabilities() >= 1.0)))
        return pi, lambda mask, draw: None

    nodes = exact.expectation_tree(KVib(feedback.n_clients, budget, n_rounds, G=G), n_rounds,
                                   visit)
    return costs, zbar[0], nodes


def _fl_walk(problem, sampler, *, n_rounds, local_steps, eta, x0):
    """The moments of :func:`fl.fl_moments` by :func:`expectation_tree`, node by node."""
    n, k = problem.n_clients, float(sampler.budget)
    lam = 1.0 / n
    out = dict(grad_sq=np.zeros(n_rounds + 1), q=np.zeros(n_rounds), gamma=np.zeros(n_rounds),
               rho=np.inf)

    def visit(t, node, x, prob):
        grad = problem.gradient(x)
        out["grad_sq"][t - 1] += prob * float(grad @ grad)
        if t > n_rounds:
            return None, None
        z = lam * local_updates(problem, x, local_steps=local_steps, step=eta / local_steps)
        a = np.sqrt(np.sum(z * z, axis=1))
        v_star = optimal_isp_variance(a, k)
        sq = float(np.sum(a * a))
        alpha = v_star / ((n - k) / k * sq) if sq > 0 and k < n else 0.0
        gamma = (alpha * (n - k) / k + n) * lam
        out["q"][t - 1] += prob * (isp_variance(node.probabilities(), a) - v_star)
        out["gamma"][t - 1] += prob * gamma
        out["rho"] = min(out["rho"], (1 - 10 * gamma * eta**2) / 16)
        return a, lambda mask, draw: x - draw.weights @ z[draw.clients]

    out["nodes"] = exact.expectation_tree(sampler, n_rounds + 1, visit,
                                          np.asarray(x0, dtype=float), update_last=False)
    return out


def _close(new, old, rtol=1e-12):
    new, old = np.asarray(new, dtype=float), np.asarray(old, dtype=float)
    return np.all(np.abs(new - old) <= rtol * np.maximum(np.abs(old), 1e-300))


def test_waterfill_rows_is_the_solver_row_by_row():
    rng = np.random.default_rng(3)
    for n in (2, 3, 4, 7):
        A = np.exp(rng.normal(0, 2, (300, n)))
        A[:40, 1] = A[:40, 0]                      # ties
        for k in (1.0, 1.5, n / 2, n - 0.3, float(n)):
            rows = exact.waterfill_rows(A, k)
            assert np.array_equal(rows, [optimal_isp_probabilities(a, k) for a in A])
    with pytest.raises(ValueError, match="positive"):
        exact.waterfill_rows(np.array([[1.0, 0.0]]), 1.0)


def _regret_points(rng, count):
    for _ in range(count):
        n = int(rng.integers(2, 5))
        yield dict(base=np.exp(rng.uniform(-7, 7, 4)), decay=rng.uniform(-1, 1, 4),
                   lam=rng.dirichlet(np.ones(4)) + 1e-3, n=n, T=int(rng.integers(1, 5)),
                   k_frac=float(rng.random()), g_factor=float(np.exp(rng.uniform(0, 2.3))))


def test_kvib_levels_match_the_walk_on_random_points():
    """Costs, min z_t and the node count: the level enumeration against the walk."""
    rng = np.random.default_rng(5)
    done = 0
    for point in _regret_points(rng, 40):
        fb, k, G = exact._regret_point(**point)
        if point["T"] * k < point["n"]:
            continue
        new, old = exact.kvib_expected_costs(fb, point["T"], k, G), _costs_walk(fb, point["T"],
                                                                              k, G)
        assert _close(new[0], old[0]) and new[1] == old[1] and new[2] == old[2]
        done += 1
    assert done >= 20


def _fl_points(rng, count):
    for _ in range(count):
        yield dict(c=rng.uniform(-3, 3, 8), x0=rng.uniform(-10, 10, 2),
                   n=int(rng.integers(2, 5)), k_frac=float(rng.random()),
                   w=rng.dirichlet(np.ones(4)), kind=int(rng.integers(0, 2)),
                   G=float(np.exp(rng.uniform(-6.9, 6.9))), R=int(rng.integers(1, 11)),
                   T=int(rng.integers(1, 4)), L=float(np.exp(rng.uniform(-4.6, 4.6))))


def test_fl_levels_match_the_walk_on_random_points():
    """Every moment of one FedAvg run, both samplers: levels against the walk."""
    rng = np.random.default_rng(7)
    kinds = set()
    for point in _fl_points(rng, 24):
        problem, _, _, make = fl._fl_point(**point)
        eta = 1 / (8 * point["L"]) * float(rng.uniform(0.1, 1))
        args = dict(n_rounds=point["T"], local_steps=point["R"], eta=eta, x0=point["x0"])
        new, old = fl.fl_moments(problem, make(), **args), _fl_walk(problem, make(), **args)
        for key in ("grad_sq", "q", "gamma", "rho"):
            assert _close(new[key], old[key]), key
        assert new["nodes"] == old["nodes"]
        kinds.add(point["kind"])
    assert kinds == {0, 1}
