"""Work the FOCUS claims share or batch gives the bits of the one-by-one computation: several
expectations from one round per participation set (and noise vector), and the gradient norm
and loss of F over a whole trace in one call."""

import numpy as np

from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import random_logistic, random_quadratics
from verify.focus import lemma5_6
from verify.focus.fig9 import _gap_curve
from verify.focus.one_round import _expect, _expect_all, _instance, _states
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
