"""Eq. (8)'s display: the smallest Q over joint laws is the quantile coupling's (checked
against every coupling of a brute-force grid on the witness), it exceeds the right side on
the witness and not on a symmetric instance, and the excess-variance reading is caught by a
planted wrong cost."""

import numpy as np
from scipy.optimize import linprog

from flbounds.sampling import optimal_isp_probabilities
from verify.kvib import eq8


def _lp_w2(x, px, y, py):
    cost = (x[:, None] - y[None, :]) ** 2
    n, m = cost.shape
    rows = [np.kron(np.eye(n), np.ones(m)), np.kron(np.ones(n), np.eye(m))]
    res = linprog(cost.ravel(), A_eq=np.vstack(rows), b_eq=np.r_[px, py], bounds=(0, None))
    return res.fun


def test_quantile_coupling_is_the_smallest_over_all_joint_laws():
    a, p = eq8.WITNESS_A, eq8.WITNESS_P
    laws = eq8.estimator_law(a, p), eq8.estimator_law(a, optimal_isp_probabilities(a, 1.0))
    w2 = eq8.wasserstein2_squared(*laws[0], *laws[1])
    assert np.isclose(w2, 5 / 9) and np.isclose(w2, _lp_w2(*laws[0], *laws[1]))


def test_witness_fails_and_a_symmetric_instance_does_not(monkeypatch):
    assert eq8.display_every_coupling(rng=None).verdict() == "violated"
    monkeypatch.setattr(eq8, "WITNESS_A", np.array([1.0, 1.0]))
    monkeypatch.setattr(eq8, "WITNESS_P", np.array([0.4, 0.6]))
    assert eq8.display_every_coupling(rng=None).verdict() == "holds"


def test_a_planted_wrong_cost_breaks_the_excess_variance_reading(monkeypatch):
    kw = dict(n_clients=6, budget=2, n_rounds=5, local_steps=2)
    assert eq8.excess_variance_reading(rng=np.random.default_rng(0), **kw).verdict() == "holds"
    real = eq8._replay_costs
    monkeypatch.setattr(eq8, "_replay_costs", lambda *a: real(*a) * [1, 1, 1.01])
    assert eq8.excess_variance_reading(rng=np.random.default_rng(0), **kw).verdict() == "violated"
