"""Work the FOCUS claims share or batch gives the bits of the one-by-one computation: several
expectations from one round per participation set (and noise vector), and the gradient norm
and loss of F over a whole trace in one call."""

import numpy as np

from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import random_logistic, random_quadratics
from verify.focus import lemma5_6
from verify.focus.fig9 import _gap_curve
from verify.focus.one_round import _expect, _expect_all, _instance, _states, expect_in_order
from verify.focus.thm6 import full_gradients


def test_set_expectations_together_equal_one_by_one():
    rng = np.random.default_rng(3)
    problem, _, masks, probs = _instance(rng, 2)
    fns = (lambda s: s.consensus_error(),
           lambda s: float(np.sum(problem.gradient(s.x) ** 2)))
    for st in _states(rng, problem, 3, 0.01):
        together = _expect_all(problem, st, masks, probs, 0.01, 2, fns)
        assert together == tuple(_expect(problem, st, masks, probs, 0.01, 2, f) for f in fns)


def test_noise_expectations_together_equal_one_by_one():
    rng = np.random.default_rng(4)
    problem = random_quadratics(rng, 4, 2, mu=1.0, L=2.0)
    masks, probs = subset_distribution(Bernoulli(lemma5_6.P_LEMMA))
    st = lemma5_6._state(rng, problem, 0.01, lemma5_6.SIGMA)
    fns = (lambda s: s.consensus_error(),
           lambda s: float(np.sum(problem.gradient(s.x) ** 2)))
    together = lemma5_6._expect_all(problem, st, masks, probs, 0.01, 2, lemma5_6.SIGMA, fns)
    assert together == tuple(lemma5_6._expect(problem, st, masks, probs, 0.01, 2,
                                              lemma5_6.SIGMA, f) for f in fns)


def test_set_expectation_from_one_round_equals_one_by_one():
    """Lemma 3's claim: every set's state from one library round, summed in _expect's order."""
    rng = np.random.default_rng(6)
    for tau in (2, 5):
        problem, _, masks, probs = _instance(rng, tau)
        for step in (1e-3, 0.05):
            for st in _states(rng, problem, 4, step):
                one = _expect(problem, st, masks, probs, step, tau,
                              lambda s, pb=problem: float(np.sum((s.x - pb.x_star) ** 2)))
                batched = expect_in_order(
                    problem, st, masks, probs, step, tau,
                    lambda o, pb=problem: np.sum((o.x - pb.x_star) ** 2, axis=1))
                assert batched == one


def test_noise_expectation_from_one_round_per_vector_equals_one_by_one():
    """Lemma 5's claims: every (set, noise vector) state rebuilt as the library builds it."""
    rng = np.random.default_rng(7)
    problem = random_quadratics(rng, 4, 2, mu=1.0, L=2.0)
    masks, probs = subset_distribution(Bernoulli(lemma5_6.P_LEMMA))
    for tau in (1, 3):
        for step in (1e-3, 0.02):
            for st in [lemma5_6._state(rng, problem, step, lemma5_6.SIGMA) for _ in range(3)]:
                one = lemma5_6._expect(problem, st, masks, probs, step, tau, lemma5_6.SIGMA,
                                       lambda s: float(np.sum((s.x - problem.x_star) ** 2)))
                batched = lemma5_6.expect_in_order(
                    problem, st, masks, probs, step, tau, lemma5_6.SIGMA,
                    lambda o: np.sum((o.x - problem.x_star) ** 2, axis=1))
                assert batched == one


def test_trace_gradients_and_losses_equal_row_by_row():
    rng = np.random.default_rng(5)
    for problem in (random_quadratics(rng, 10, 4, mu=0.5, L=1.0),
                    random_logistic(rng, 4, 10, 3, lam=0.01)):
        xs = rng.standard_normal((57, problem.dim))
        assert np.array_equal(full_gradients(problem, xs),
                              np.stack([problem.gradient(x) for x in xs]))
        assert np.array_equal(_gap_curve(problem, xs),
                              np.array([problem.loss(x) for x in xs]) - problem.F_star)


def test_local_models_are_the_one_round_runs_of_t_local_steps():
    from flbounds.algorithms import fedavg
    from verify.focus.lemma1_2 import SHAPES, _instance, local_models

    rng = np.random.default_rng(6)
    for shape in SHAPES:
        problem = _instance(rng, *shape)[0]
        start = problem.x_star + rng.standard_normal(problem.dim)
        models = local_models(problem, start, step=0.05, local_steps=5)
        for i in range(problem.n_clients):
            plan = np.zeros((1, problem.n_clients), dtype=bool)
            plan[0, i] = True
            assert np.array_equal(models[0, i], start)
            for t in range(1, 6):
                assert np.array_equal(models[t, i], fedavg(problem, plan, step=0.05,
                                                           local_steps=t, x0=start).x[-1])
