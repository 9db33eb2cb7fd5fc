r"""FOCUS's Assumptions 1-6 as hypothesis predicates, shared by the results that cite them.

Assumptions are not results: each theorem, lemma or corollary lists the ones it needs in its
own ``result(...)`` (scoped to its parts with ``.only``). The predicates read named values of
a claim's instance:

- ``q``: the exact averaging weights :math:`q_i = E[1\{i\in S\}/|S|]` of the participation
  process (Assumption 1; 0/0 := 0, i.e. not conditioned on a non-empty round unless a
  result's wording says so);
- ``problem``, ``L``, ``mu``, ``beta``: a problem of :mod:`flbounds.problems` and the
  constants the printed statement is evaluated at;
- ``sigma_g2``, ``delta_q2``: the heterogeneity constants of Assumption 5 and eq. (37);
- ``noise_law``, ``noise_std``, ``dim``, ``sigma``: the gradient noise of Assumption 6
  (``noise_std`` per coordinate, so the variance is ``noise_std**2 * dim``); :func:`noise`
  builds them.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis

from ..predicates import at_most, positive_probabilities, smooth, strongly_convex

#: the gradient noise of the SG-FOCUS claims: zero mean, covariance noise_std^2 I (normal
#: draws, or exact expectations valid for any such law)
ZERO_MEAN = "zero-mean, covariance noise_std^2 I"


@hypothesis("A1", "arbitrary participation: every client joins w.p. p_i in (0, 1], so "
                  "q_i = E[1_i / sum_j 1_j] > 0")
def a1(*, q):
    return positive_probabilities(q)


@hypothesis("A2", "every f_i is L-smooth")
def a2(*, problem, L):
    return smooth(problem, L)


@hypothesis("A3", "every f_i is mu-strongly convex")
def a3(*, problem, mu):
    return strongly_convex(problem, mu)


def pl_constant(problem) -> float | None:
    """A valid PL constant of F: the problem's own ``beta`` (:class:`ScalarPL`), else the
    strong convexity of F (``problem.mu``: a mu-strongly convex F is mu-PL); None if neither."""
    beta = getattr(problem, "beta", None)
    if beta is None:
        beta = getattr(problem, "mu", None)
    return None if beta is None else float(beta)


@hypothesis("A4", "F satisfies the PL condition ||grad F||^2 >= 2 beta (F - F*) with beta > 0")
def a4(*, problem, beta):
    known = pl_constant(problem)
    return known is not None and beta > 0 and at_most(beta, known)


def heterogeneity(problem) -> float:
    r"""sup_x max_i ||grad f_i(x) - grad F(x)||^2 of a quadratic problem: finite only when
    every A_i equals their mean (then grad f_i - grad F = mean(b) - b_i); inf otherwise."""
    A = np.asarray(problem.A)
    if not np.allclose(A, A.mean(axis=0), rtol=1e-12, atol=1e-14):
        return np.inf
    b = np.asarray(problem.b)
    return float(np.max(np.sum((b - b.mean(axis=0)) ** 2, axis=1)))


@hypothesis("A5", "bounded heterogeneity: ||grad f_i(x) - grad F(x)||^2 <= sigma_G^2 for every "
                  "x and i")
def a5(*, problem, sigma_g2):
    return at_most(heterogeneity(problem), sigma_g2)


@hypothesis("A6", "unbiased stochastic gradients with E||xi||^2 <= sigma^2 (here: zero-mean "
                  "noise of covariance noise_std^2 I, so E||xi||^2 = noise_std^2 d)")
def a6(*, noise_law, noise_std, dim, sigma):
    return noise_law == ZERO_MEAN and at_most(noise_std**2 * dim, sigma**2)


def q_of(process) -> np.ndarray:
    """The exact averaging weights q of a participation process (Assumption 1)."""
    return np.asarray(process.aggregation_weights(), dtype=float)


def constants(problem, process, **more) -> dict:
    """The instance values Assumptions 1-3 read: q, problem, L and mu (min_i mu_i, or None for
    a problem without strong convexity), plus ``more``."""
    client_mu = getattr(problem, "client_mu", None)
    mu = None if client_mu is None else float(np.min(client_mu))
    out = dict(q=q_of(process), problem=problem, L=float(problem.L))
    if mu is not None:
        out["mu"] = mu
    return {**out, **more}


def noise(sigma: float, dim: int, noise_std: float | None = None) -> dict:
    """Assumption 6's instance values for zero-mean noise of covariance noise_std^2 I in
    dimension ``dim`` (default noise_std = sigma/sqrt(dim), i.e. E||xi||^2 = sigma^2)."""
    std = sigma / np.sqrt(dim) if noise_std is None else noise_std
    return dict(noise_law=ZERO_MEAN, noise_std=float(std), dim=int(dim), sigma=float(sigma))


def sampling_bias(problem, q_hat) -> float:
    r"""sup_x ||q_hat' grad f(x) - u' grad f(x)||^2 (eq. (37)) on a quadratic problem: with one
    shared Hessian and sum(q_hat) = 1 it is ||q_hat' b - mean(b)||^2; inf otherwise."""
    q_hat = np.asarray(q_hat, dtype=float)
    A = np.asarray(problem.A)
    if abs(q_hat.sum() - 1) > 1e-12 or not np.allclose(A, A.mean(axis=0), rtol=1e-12,
                                                       atol=1e-14):
        return np.inf
    b = np.asarray(problem.b)
    return float(np.sum((q_hat @ b - b.mean(axis=0)) ** 2))


@hypothesis("eq37", "delta_q^2 bounds the sampling bias (37): ||q' grad f(x) - u' grad f(x)||^2 "
                    "<= delta_q^2 for every x, q read conditioned on a non-empty round "
                    "(q_hat = q / sum q: FedAvg skips empty rounds), as the claims do")
def eq37(*, problem, q_hat, delta_q2):
    return at_most(sampling_bias(problem, q_hat), delta_q2)


def class_instance(participation, mu, L, tau, step) -> dict:
    """The values a worst case over a function class (PEP) reports: the participation's exact
    q (a process, or Bernoulli probabilities p), the class constants, tau and the step. The
    class itself meets A2-A3 by construction; there is no problem to evaluate them on."""
    from flbounds.participation import Bernoulli

    process = participation if hasattr(participation, "aggregation_weights") else \
        Bernoulli(np.asarray(participation, dtype=float))
    return dict(q=q_of(process), L=float(L), mu=float(mu), tau=int(tau), step=float(step))


@hypothesis("heterogeneous", "heterogeneous clients: the f_i differ")
def heterogeneous(*, problem):
    A, b = np.asarray(problem.A), np.asarray(problem.b)
    return not (np.allclose(A, A[0]) and np.allclose(b, b[0]))
