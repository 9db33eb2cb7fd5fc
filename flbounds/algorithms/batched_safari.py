r"""SAFARI over a replicate axis: many random plans in one compiled call.

For Monte Carlo over SAFARI's randomness (round types, sampled clients, gradient noise):
``plans`` is a sequence of :class:`~flbounds.algorithms.safari.SafariPlan` (or one SafariPlan
whose fields carry a leading replicate axis) and replicate b is exactly
``safari(problem, plans[b], ...)``, bit for bit: every replicate runs in one compiled call over
the replicate-batched round loop (:func:`flbounds.kernels.replicates.safari_replicates`: per
client round, each client's local steps for all replicates that sampled it in one block),
in parallel over groups of replicates (a replicate's numbers do not depend on the thread
count or its group); on one thread, a batch narrower than
:data:`~flbounds.kernels.replicates.SAFARI_MIN_BLOCK` runs its replicates one after the other,
where the blocks would cost more than they save (with more threads every group takes the
blocks). Memory per replicate: the server trace
(R + 1, d) and the (R,) local-gradient record, plus O(m K d) scratch for one round; no
client states are kept.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from flbounds.algorithms._common import check_compiled, problem_data
from flbounds.algorithms.safari import (
    SafariPlan,
    _check,
    _check_plan_args,
    _draw_plan,
    _empty_plan,
    _round_steps,
    kernel_plan,
    server_population,
)
from flbounds.kernels.replicates import run_safari_replicates


class BatchedSafariTrace(NamedTuple):
    """Replicate b's :class:`~flbounds.algorithms.safari.SafariTrace` fields at index b."""

    x: np.ndarray                 # (B, R + 1, d) server iterates
    client_round: np.ndarray      # (B, R) round types used
    local_grad_norm2: np.ndarray  # (B, R) as in SafariTrace, NaN on server rounds


def stack_safari_plans(plans) -> SafariPlan:
    """Stack a sequence of SafariPlans (same R, m, K, d) into one with a leading replicate
    axis; a SafariPlan whose ``client_round`` is already 2-D is returned as contiguous arrays.
    """
    if isinstance(plans, SafariPlan) and np.ndim(plans.client_round) == 2:
        fields = [np.asarray(f) for f in plans]
    else:
        plans = list(plans)
        if not plans or not all(isinstance(p, SafariPlan) for p in plans):
            raise ValueError("plans must be a non-empty sequence of SafariPlan or a stacked "
                             "SafariPlan with a leading replicate axis")
        shapes = {tuple(np.shape(f) for f in p) for p in plans}
        if len(shapes) != 1:
            raise ValueError("plans must all have the same shapes (R, m, K, d)")
        fields = [np.stack([np.asarray(p[j]) for p in plans]) for j in range(4)]
    if fields[0].ndim != 2 or fields[0].shape[0] < 1:
        raise ValueError("stacked plan.client_round must have shape (n_reps >= 1, R)")
    return SafariPlan(*(np.ascontiguousarray(f) for f in fields))


def safari_plans(rngs, *, n_rounds: int, q: float, eligible, n_sampled: int, local_steps: int,
                 dim: int, client_noise_std: float, server_noise_std: float) -> SafariPlan:
    """Stacked plans, replicate b drawn from ``rngs[b]`` exactly as :func:`safari_plan` draws
    it (the same draws, in the same order, the same numbers), straight into the stacked
    arrays.

    Parameters
    ----------
    rngs : iterable of numpy.random.Generator
        One generator per replicate, at least one.
    n_rounds, q, eligible, n_sampled, local_steps, dim, client_noise_std, server_noise_std
        As in :func:`~flbounds.algorithms.safari.safari_plan`.

    Returns
    -------
    SafariPlan
        Every field with a leading replicate axis.
    """
    rngs = list(rngs)
    if not rngs:
        raise ValueError("rngs must hold at least one generator")
    _check_plan_args(eligible=eligible, n_rounds=n_rounds, q=q, n_sampled=n_sampled,
                     local_steps=local_steps, dim=dim, client_noise_std=client_noise_std,
                     server_noise_std=server_noise_std)
    plans = _empty_plan((len(rngs),), n_rounds, n_sampled, local_steps, dim)
    for b, rng in enumerate(rngs):
        _draw_plan(rng, _replicate(plans, b), q=q, eligible=eligible,
                   client_noise_std=client_noise_std, server_noise_std=server_noise_std)
    return plans


def _replicate(plan: SafariPlan, rep: int) -> SafariPlan:
    return SafariPlan(*(f[rep] for f in plan))


def safari_batched(problem, plans, *, step_client: float, step_server: float, x0=None,
                   fast: bool = True) -> BatchedSafariTrace:
    r"""SAFARI (:func:`~flbounds.algorithms.safari.safari`) for every plan in ``plans``.

    Parameters
    ----------
    problem
        As in :func:`~flbounds.algorithms.safari.safari`.
    plans : sequence of SafariPlan, or SafariPlan with a leading replicate axis
        Replicate b's plan (see :func:`stack_safari_plans`, :func:`safari_plans`).
    step_client, step_server
        As in :func:`~flbounds.algorithms.safari.safari`, shared by all replicates (numbers or
        schedules with one step per round, in the same replicate-batched kernel).
    x0 : array_like, shape (d,) or (n_reps, d), optional
        The start of every replicate, or one start per replicate (e.g. to continue runs).
    fast : bool, default True
        Must be True (kept for the signature): the compiled loop is the one implementation.

    Returns
    -------
    BatchedSafariTrace
        ``x[b]``, ``client_round[b]``, ``local_grad_norm2[b]`` equal the fields of
        ``safari(problem, plans[b], x0=x0[b], ...)`` exactly.
    """
    plan = stack_safari_plans(plans)
    n_reps, n_rounds = plan.client_round.shape
    steps = [_round_steps(v, n_rounds, plan.client_noise.shape[3], name) for name, v in
             (("step_client", step_client), ("step_server", step_server))]
    step_client, step_server = steps
    if x0 is not None and np.ndim(x0) == 2:
        if np.shape(x0)[0] != n_reps:
            raise ValueError(f"x0 must have shape ({problem.dim},) or ({n_reps}, "
                             f"{problem.dim}) (one start per replicate), got {np.shape(x0)}")
        starts = np.array([_check(problem, _replicate(plan, rep), step_client, step_server,
                                  x0[rep]) for rep in range(n_reps)])
    else:
        x0 = _check(problem, _replicate(plan, 0), step_client, step_server, x0)
        for rep in range(1, n_reps):
            _check(problem, _replicate(plan, rep), step_client, step_server, x0)
        starts = np.repeat(np.asarray(x0, dtype=float)[None], n_reps, axis=0)
    check_compiled(fast, "fast")
    data = problem_data(problem)
    xs = np.empty((n_reps, n_rounds + 1, problem.dim))
    g2 = np.empty((n_reps, n_rounds))
    weights = None if getattr(problem, "uniform_weights", True) else problem.weights
    run_safari_replicates(data, server_population(data, weights), kernel_plan(plan),
                          tuple(steps),
                          np.ascontiguousarray(starts, dtype=float), (xs, g2),
                          numba.get_num_threads())
    return BatchedSafariTrace(xs, plan.client_round.copy(), g2)
