"""The SAFARI reference instance (spec 7.B, audit part A #1) and helpers to run it; shared by
the claims, the figures and the benchmarks."""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.batched_safari import (
    safari_batched,
    safari_plans,
    stack_safari_plans,
)
from flbounds.algorithms.safari import SafariPlan, safari, safari_plan
from flbounds.stats import mc_mean
from verify.safari.closed_forms import ClientQuadratics

#: M = 10 clients, s = 4 never participate (c_i = (-1.5, 0)); the rest c_i = (1, 0); cbar = 0
N_CLIENTS, N_EXCLUDED, N_SAMPLED, LOCAL_STEPS = 10, 4, 5, 5
SIGMA = SIGMA_S = 0.1


def two_group_problem() -> ClientQuadratics:
    centers = np.zeros((N_CLIENTS, 2))
    centers[:N_EXCLUDED, 0] = -1.5
    centers[N_EXCLUDED:, 0] = 1.0
    return ClientQuadratics.isotropic(centers)


ELIGIBLE = np.arange(N_EXCLUDED, N_CLIENTS)


def run_seed(rng, problem, *, n_rounds, q, step_server, step_client, x0, eligible=ELIGIBLE,
             n_sampled=N_SAMPLED, local_steps=LOCAL_STEPS, sigma=SIGMA, sigma_s=SIGMA_S,
             lean=False):
    """One SAFARI run on ``problem`` with a fresh plan from ``rng`` (:func:`lean_plan`'s if
    ``lean``: the same law, only the draws the run reads)."""
    plan = (lean_plan if lean else safari_plan)(
        rng, n_rounds=n_rounds, q=q, eligible=eligible, n_sampled=n_sampled,
        local_steps=local_steps, dim=problem.dim, client_noise_std=sigma,
        server_noise_std=sigma_s)
    trace = safari(problem, plan, step_client=step_client, step_server=step_server,
                   x0=np.asarray(x0, dtype=float))
    return plan, trace


#: plan memory (client noise, doubles) per batched SAFARI call; larger seed sets run in chunks
PLAN_DOUBLES_PER_CALL = 2_000_000


def run_seeds_batched(rngs, problem, *, step_server, step_client, x0, lean=False,
                      **plan_kwargs):
    """One plan per generator (drawn exactly as :func:`safari_plan` would, or by
    :func:`lean_plan` if ``lean``), all run by
    :func:`~flbounds.algorithms.batched_safari.safari_batched` in chunks of replicates.

    Yields ``(plan, trace)`` per chunk, both with a leading replicate axis; replicate b is
    bit for bit ``run_seed(rngs[b], ...)`` (same draws in the same order, same iterates), or,
    if ``lean``, the run on ``lean_plan(rngs[b], ...)``.
    """
    rngs = list(rngs)
    per_rep = (plan_kwargs["n_rounds"] * plan_kwargs["n_sampled"] * plan_kwargs["local_steps"]
               * plan_kwargs["dim"])
    chunk = max(1, PLAN_DOUBLES_PER_CALL // per_rep)
    for start in range(0, len(rngs), chunk):
        plan = (stack_safari_plans([lean_plan(r, **plan_kwargs)
                                    for r in rngs[start:start + chunk]]) if lean
                else safari_plans(rngs[start:start + chunk], **plan_kwargs))
        yield plan, safari_batched(problem, plan, step_client=step_client,
                                   step_server=step_server, x0=np.asarray(x0, dtype=float))


def grad_norm2(problem, xs) -> np.ndarray:
    """||grad F(x_r)||^2 for every row of ``xs``."""
    g = xs @ problem.A.mean(axis=0).T - problem.b.mean(axis=0)
    return np.sum(g ** 2, axis=1)


def mean_and_se(samples):
    """Monte Carlo mean and standard error over the first axis (``flbounds.stats.mc_mean``)."""
    est = mc_mean(samples)
    return est.mean, est.se


def lean_plan(rng, *, n_rounds, q, eligible, n_sampled, local_steps, dim, client_noise_std,
              server_noise_std) -> SafariPlan:
    """A SAFARI plan with the law of :func:`~flbounds.algorithms.safari.safari_plan` that
    draws only what the run reads: the round types first (Bernoulli(q)), then, for the client
    rounds alone, the sampled clients (``n_sampled`` of ``eligible`` uniformly without
    replacement, the order of uniform keys) and the client noise, and for the server rounds
    alone the server noise (isotropic Gaussian, std sigma/sqrt(d) per coordinate). The
    entries SAFARI does not read (client noise and clients of a server round, server noise of
    a client round) are zeros and ``eligible[:n_sampled]``. Same design, about a factor
    ``1/q`` fewer Gaussian draws (the cost of a plan) than ``safari_plan``, other numbers:
    the draws come in another order."""
    eligible = np.asarray(eligible, dtype=np.int64)
    if eligible.ndim != 1 or eligible.size < n_sampled:
        raise ValueError("eligible must hold at least n_sampled client indices")
    client_round = rng.random(n_rounds) < q
    rows = np.flatnonzero(client_round)
    clients = np.empty((n_rounds, n_sampled), dtype=np.int64)
    clients[:] = eligible[:n_sampled]
    keys = rng.random((rows.size, eligible.size))
    clients[rows] = eligible[np.argsort(keys, axis=1)[:, :n_sampled]]
    client_noise = _noise_rows(rng, rows, (n_rounds, n_sampled, local_steps, dim),
                               client_noise_std / np.sqrt(dim))
    server_noise = _noise_rows(rng, np.flatnonzero(~client_round), (n_rounds, dim),
                               server_noise_std / np.sqrt(dim))
    return SafariPlan(client_round, clients, client_noise, server_noise)


def _noise_rows(rng, rows, shape, std):
    """An array of ``shape``, zeros but for rows ``rows`` (increasing): Gaussian, ``std``."""
    if rows.size == shape[0]:   # every row: drawn in place
        out = rng.standard_normal(shape)
        out *= std
        return out
    drawn = rng.standard_normal((rows.size, *shape[1:]))
    drawn *= std
    out = np.zeros(shape)
    out[rows] = drawn
    return out
