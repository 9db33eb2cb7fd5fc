r"""Assumptions 3-5 of SAFARI as hypothesis predicates, shared by Theorems 4-5, their
corollaries and Remark 6 (an assumption is not a result: it is a hypothesis of the results
that state it).

Instances of the optimisation results carry ``problem`` (a quadratic federation, clients an
axis), ``L``, ``sigma_G2`` (the constant the bound is evaluated with), ``noise_var`` /
``noise_var_s`` (the clients' / server's :math:`E\|\xi\|^2` of the run's plan: zero-mean
Gaussian, so unbiased) and ``sigma2`` / ``sigma_s2`` (the constants in the bound).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis

from ..predicates import at_most, smooth, strongly_convex


def heterogeneity(problem) -> float:
    r""":math:`\sup_x \max_i \|\nabla f_i(x) - \nabla F(x)\|^2` of a quadratic federation
    :math:`f_i = x^\top A_i x/2 - b_i^\top x`: finite only for a shared Hessian, where it is
    :math:`\max_i\|b_i - \bar b\|^2` (exact)."""
    A, b = np.asarray(problem.A), np.asarray(problem.b)
    if not np.allclose(A, A[0], rtol=0.0, atol=1e-14):
        return float("inf")
    return float(np.max(np.sum((b - b.mean(axis=0)) ** 2, axis=1)))


#: absolute slack of A5 relative to max_i ||b_i||^2: the mean of N identical float64 rows
#: differs from each by up to ~N ulp, so identical clients give sigma_G^2 ~ 1e-34, not 0
HETEROGENEITY_ATOL = 1e-20


@hypothesis("A3", "L-smooth: ||grad F_i(x) - grad F_i(y)|| <= L ||x - y|| for all i, x, y")
def a3_smooth(*, problem, L):
    return smooth(problem, L)


@hypothesis("A4", "unbiased stochastic gradients with E||grad F_i(x, xi) - grad F_i(x)||^2 "
                  "<= sigma^2 (clients) and <= sigma_s^2 (server)")
def a4_noise(*, noise_var, noise_var_s, sigma2, sigma_s2):
    return at_most(noise_var, sigma2) and at_most(noise_var_s, sigma_s2)


@hypothesis("A5", "bounded gradient dissimilarity: ||grad F_i(x) - grad F(x)||^2 <= sigma_G^2 "
                  "for all i and x")
def a5_dissimilarity(*, problem, sigma_G2):
    scale = float(np.max(np.sum(np.asarray(problem.b) ** 2, axis=1)))
    return at_most(heterogeneity(problem), sigma_G2 + HETEROGENEITY_ATOL * (1.0 + scale))


@hypothesis("mu", "every F_i is mu-strongly convex")
def strong_convexity(*, problem, mu):
    return strongly_convex(problem, mu)


def optimisation_instance(problem, *, sigma_G2, noise_var, noise_var_s, sigma2=None,
                          sigma_s2=None, **extra) -> dict:
    """The values Assumptions 3-5 read on ``problem`` (``sigma2``/``sigma_s2`` default to the
    plan's noise, the bound evaluated at the run's own variances)."""
    return dict(problem=problem, L=float(problem.L), sigma_G2=float(sigma_G2),
                noise_var=float(noise_var), noise_var_s=float(noise_var_s),
                sigma2=float(noise_var if sigma2 is None else sigma2),
                sigma_s2=float(noise_var_s if sigma_s2 is None else sigma_s2), **extra)


# Assumptions 1-2 (Theorems 2-3, Lemma 2, Remark 2): instances carry ``flip`` (the Massart
# label-flip probability, 0 for realizable labels) and ``alpha`` (the smallest alpha with
# beta = 1 between P and the pooled Q, computed on the instance).

@hypothesis("A1", "Assumption 1 (Bernstein noise condition) with beta_P = beta_Q = 1: labels "
                  "realizable or with Massart flips of probability < 1/2")
def a1_noise_condition(*, flip):
    return 0.0 <= flip < 0.5


@hypothesis("A2", "Assumption 2: P and Q are (alpha, beta)-positively related, here with "
                  "beta = 1 (the beta >= 1 case the claims test): a finite alpha")
def a2_positive_relation(*, alpha):
    return bool(np.isfinite(alpha)) and alpha >= 0
