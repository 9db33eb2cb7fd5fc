r"""FedAvg with an unbiased ISP client sampler over a replicate axis (seeds).

The unbatched :func:`~flbounds.algorithms.fedavg_sampler.fedavg_sampler` lets the sampler draw
from ``rng``: every independent-sampling (ISP) sampler of :mod:`flbounds.sampling` draws exactly
one ``rng.random(N)`` per round and includes client i iff :math:`U_i < \tilde p_i`. The plan of
a batched run is therefore the uniforms ``(n_reps, T, N)``, replicate b's drawn by
``rng_b.random((T, N))`` -- the same numbers, in the same order, as the T per-round draws of
the unbatched run (:func:`sampler_uniforms`). Each replicate's sampler reads its row of the
plan through :class:`~flbounds.algorithms.sampler_rounds.ReplayUniforms`, and both functions
run the one round loop :func:`flbounds.algorithms.sampler_rounds.run`, so replicate b equals
``fedavg_sampler(problem, samplers[b], rng_b, ...)`` bit for bit (tested). Memory per
replicate: the server trace (T + 1, d) and O(N d) scratch.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.fedavg_sampler import check_hyper, check_weights_and_availability
from flbounds.algorithms.sampler_rounds import (
    Hyper,
    ReplayUniforms,
    SamplerTrace,
    check_diagnostics,
    run,
)

__all__ = ["ReplayUniforms", "fedavg_sampler_batched", "sampler_uniforms"]


def sampler_uniforms(rngs, *, n_rounds: int, n_clients: int) -> np.ndarray:
    """The uniforms of replicate-batched sampler runs: replicate b's
    ``rngs[b].random((T, N))``, the same numbers an ISP sampler draws from ``rngs[b]`` over T
    unbatched rounds.

    Parameters
    ----------
    rngs : iterable of numpy.random.Generator
        One generator per replicate, at least one.
    n_rounds : int
        T, at least 1.
    n_clients : int
        N, at least 1.

    Returns
    -------
    numpy.ndarray, shape (n_reps, n_rounds, n_clients)
    """
    rngs = list(rngs)
    if not rngs:
        raise ValueError("rngs must hold at least one generator")
    for name, v in (("n_rounds", n_rounds), ("n_clients", n_clients)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return np.stack([rng.random((n_rounds, n_clients)) for rng in rngs])


def _check_inputs(problem, samplers, uniforms, weights, availability, avail_probs):
    n = problem.n_clients
    uniforms = np.asarray(uniforms, dtype=float)
    if uniforms.ndim != 3 or uniforms.shape[0] < 1 or uniforms.shape[2] != n:
        raise ValueError(f"uniforms must have shape (n_reps >= 1, n_rounds, {n}), "
                         f"got {uniforms.shape}")
    # two reductions, no temporaries (NaN fails both comparisons)
    if uniforms.size and not (uniforms.min() >= 0 and uniforms.max() < 1):
        raise ValueError("uniforms must lie in [0, 1)")
    samplers = list(samplers)
    if len(samplers) != uniforms.shape[0]:
        raise ValueError(f"samplers must hold one fresh sampler per replicate "
                         f"({uniforms.shape[0]}), got {len(samplers)}")
    if len({id(s) for s in samplers}) != len(samplers):
        raise ValueError("samplers must be distinct objects (each keeps its own state)")
    for s in samplers:
        if getattr(s, "procedure", None) != "isp" or getattr(s, "n_clients", n) != n:
            raise ValueError("samplers must be independent-sampling (procedure 'isp') "
                             f"samplers over {n} clients")
    lam, availability, avail_probs = check_weights_and_availability(
        problem, weights, availability, avail_probs, uniforms.shape, "(n_reps, n_rounds, N)")
    return samplers, uniforms, lam, availability, avail_probs


def fedavg_sampler_batched(problem, samplers, uniforms, *, local_steps: int, step: float,
                           server_step: float = 1.0, weights=None, x0=None,
                           availability=None, avail_probs=None,
                           diagnostics: bool | str = True) -> SamplerTrace:
    r"""FedAvg with an ISP sampler (:func:`~flbounds.algorithms.fedavg_sampler.fedavg_sampler`)
    for every replicate of the plan ``uniforms``.

    Parameters
    ----------
    problem
        As for ``fedavg_sampler``; its ``client_gradients`` / ``client_losses`` must accept
        ``clients=`` with repeats (every :mod:`flbounds.problems` problem does).
    samplers : sequence of samplers
        One *fresh* ISP sampler per replicate (``UniformISP``, ``KVib``, ``OracleISP``...);
        each is updated in place, as in the unbatched run.
    uniforms : array_like, shape (n_reps, T, N)
        The plan, e.g. :func:`sampler_uniforms`; T is the number of rounds.
    local_steps, step, server_step, weights, x0
        As for ``fedavg_sampler`` (``step`` a number or a schedule per round), shared by all
        replicates.
    availability, avail_probs : optional
        Straggler plans (n_reps, T, N) and the known probabilities (N,).
    diagnostics : {True, "variance", False}
        As for ``fedavg_sampler``.

    Returns
    -------
    SamplerTrace
        Every field with a leading replicate axis; replicate b's fields equal those of
        ``fedavg_sampler(problem, samplers[b], rng_b, ...)`` exactly when
        ``uniforms[b] = rng_b.random((T, N))``.
    """
    diagnostics = check_diagnostics(diagnostics)
    samplers, uniforms, lam, availability, avail_probs = _check_inputs(
        problem, samplers, uniforms, weights, availability, avail_probs)
    step, steps = check_hyper(local_steps, step, server_step, uniforms.shape[1])
    x = np.zeros(problem.dim) if x0 is None else np.asarray(x0, dtype=float).copy()
    hyper = Hyper(int(local_steps), step, float(server_step), lam, availability,
                  avail_probs, diagnostics, steps)
    return run(problem, samplers, [ReplayUniforms(u) for u in uniforms], uniforms.shape[1],
               hyper, x)
