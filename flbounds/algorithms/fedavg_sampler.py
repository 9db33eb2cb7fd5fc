r"""FedAvg with an unbiased client sampler (Algorithm 1 of [003]) and exact per-round variance.

Per round t (all clients' updates are simulated so the exact quantities are available):

.. math::
    g_i^t = x^t - x_i^{t,R},\quad z_i=\lambda_i g_i^t,\quad \pi_t(i)=\|z_i\|,\quad
    d^t=\sum_{i\in S^t} w_i z_i,\quad x^{t+1}=x^t-\eta_g d^t,

with local steps :math:`x_i^{t,r}=x_i^{t,r-1}-\eta_l\nabla f_i(x_i^{t,r-1})` (full-batch, so
:math:`\sigma_l=0`). Recorded: the weighted objective :math:`f=\sum_i\lambda_if_i`, the squared
gradient norm, the exact variance :math:`\mathbb V_t` of :math:`d^t` under the sampler's
procedure, and :math:`\ell_t(p^t)-\ell_t(p^{*,t})` (``q_gap``). The operative Def. 4.1 is the
exact excess variance :math:`Q_t=\mathbb V_t-\delta_*^t` (``variance - opt_variance``), whose
mean is :math:`\beta_1`; it equals ``q_gap`` for ISP samplers only (for RSP samplers
``q_gap`` evaluates the ISP cost at the inclusion weights, not a variance).

Stragglers (App. E.1): ``availability`` is a bool plan (T, N) drawn independently of the
sampler (e.g. :class:`flbounds.participation.Bernoulli`) with known probabilities ``avail_probs``;
only available sampled clients report and the weights are divided by :math:`q_i`.

Randomness: the sampler draws its own sample from ``rng`` (sampler code owns its draws); this
function makes no other draw.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..samplers.base import Draw, Feedback
from ..sampling import multinomial_variance, optimal_isp_objective, rsp_uniform_variance


class SamplerTrace(NamedTuple):
    x: np.ndarray              # (T + 1, d) server iterates
    loss: np.ndarray           # (T + 1,) f(x^t) = sum_i lambda_i f_i(x^t)
    grad_sq: np.ndarray        # (T + 1,) ||grad f(x^t)||^2
    variance: np.ndarray       # (T,) exact V_t of d^t given the round's updates
    opt_variance: np.ndarray   # (T,) optimal-ISP variance of the round (delta_*^t)
    q_gap: np.ndarray          # (T,) l_t(p^t) - l_t(p*^t): the variance gap for ISP only;
    #                            for any sampler use variance - opt_variance (exact excess)
    sum_sq: np.ndarray         # (T,) sum_i pi_t(i)^2 (uniform ISP variance = (N-K)/K * this)
    sizes: np.ndarray          # (T,) clients that reported


def local_updates(problem, x, *, local_steps: int, step: float) -> np.ndarray:
    """All clients' pseudo-gradients g_i = x - x_i^R after ``local_steps`` GD steps."""
    X = np.tile(x, (problem.n_clients, 1))
    for _ in range(local_steps):
        X = X - step * problem.client_gradients(X)
    return x[None, :] - X


def exact_variance(sampler, z: np.ndarray, pi: np.ndarray) -> float:
    """Variance of the sampler's estimator of sum z for this round (procedure-specific)."""
    if sampler.procedure == "multinomial":
        return multinomial_variance(sampler.probabilities(), z, sampler.budget)
    if sampler.procedure == "subset":
        return rsp_uniform_variance(z, sampler.budget)
    p = sampler.inclusion_weights()
    return float(np.sum((1 - p) / p * pi * pi))


def _restrict(draw: Draw, available: np.ndarray, avail_probs: np.ndarray) -> Draw:
    keep = available[draw.clients]
    q = avail_probs[draw.clients[keep]]
    return Draw(draw.clients[keep], draw.counts[keep], draw.weights[keep] / q,
                draw.probs[keep] * q)


def check_weights_and_availability(problem, weights, availability, avail_probs, shape,
                                   shape_name: str):
    r"""Validated client weights :math:`\lambda` (default ``problem.weights`` or uniform) and
    straggler plan (bool array of ``shape``) with its probabilities :math:`q_i > 0`."""
    n = problem.n_clients
    lam = np.asarray(weights if weights is not None else getattr(problem, "weights",
                                                                   np.full(n, 1.0 / n)))
    if lam.shape != (n,) or np.any(lam < 0) or abs(lam.sum() - 1) > 1e-9:
        raise ValueError("weights must be a nonnegative vector of length N summing to 1")
    if (availability is None) != (avail_probs is None):
        raise ValueError("availability and avail_probs must be given together")
    if availability is not None:
        availability = np.asarray(availability, dtype=bool)
        avail_probs = np.asarray(avail_probs, dtype=float)
        if availability.shape != shape or np.any(avail_probs <= 0):
            raise ValueError(f"availability must be {shape_name} and avail_probs > 0")
    return lam, availability, avail_probs


def fedavg_sampler(problem, sampler, rng: np.random.Generator, *, n_rounds: int,
                   local_steps: int, step: float, server_step: float = 1.0, weights=None,
                   x0=None, availability=None, avail_probs=None) -> SamplerTrace:
    r"""Run Algorithm 1 of [003] with ``sampler`` (any object of :mod:`flbounds.samplers`).

    Parameters
    ----------
    problem
        Anything with ``n_clients``, ``dim``, ``client_losses(X)`` and ``client_gradients(X)``.
    sampler
        Fresh sampler with ``budget`` K; it is updated in place with the feedback.
    rng
        Passed to ``sampler.sample``.
    n_rounds, local_steps, step, server_step
        T, R, :math:`\eta_l`, :math:`\eta_g`.
    weights : array_like, optional
        :math:`\lambda` (default: ``problem.weights`` if present, else uniform 1/N).
    availability, avail_probs : optional
        Straggler plan (bool (T, N)) and its known probabilities :math:`q_i > 0`.
    """
    n = problem.n_clients
    lam, availability, avail_probs = check_weights_and_availability(
        problem, weights, availability, avail_probs, (n_rounds, n), "(n_rounds, N)")
    x = np.zeros(problem.dim) if x0 is None else np.asarray(x0, dtype=float).copy()
    xs, loss, grad_sq = [x.copy()], [], []
    var, opt_var, q_gap, sum_sq, sizes = (np.empty(n_rounds) for _ in range(5))

    def record(point):
        X = np.tile(point, (n, 1))
        loss.append(float(lam @ problem.client_losses(X)))
        g = lam @ problem.client_gradients(X)
        grad_sq.append(float(g @ g))

    record(x)
    for t in range(n_rounds):
        z = lam[:, None] * local_updates(problem, x, local_steps=local_steps, step=step)
        pi = np.linalg.norm(z, axis=1)
        sampler.reveal(pi)
        p = sampler.inclusion_weights()
        best = optimal_isp_objective(pi, sampler.budget)
        pos = pi > 0
        q_gap[t] = float(np.sum(pi[pos] ** 2 / p[pos])) - best
        sum_sq[t] = float(pi @ pi)
        opt_var[t] = best - sum_sq[t]
        var[t] = exact_variance(sampler, z, pi)
        draw = sampler.sample(rng)
        if availability is not None:
            draw = _restrict(draw, availability[t], avail_probs)
        sizes[t] = draw.clients.size
        d = draw.weights @ z[draw.clients] if draw.clients.size else np.zeros(problem.dim)
        x = x - server_step * d
        sampler.update(Feedback(draw, pi[draw.clients]))
        xs.append(x.copy())
        record(x)
    return SamplerTrace(np.array(xs), np.array(loss), np.array(grad_sq), var, opt_var, q_gap,
                        sum_sq, sizes)
