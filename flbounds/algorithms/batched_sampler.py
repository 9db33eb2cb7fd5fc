r"""FedAvg with an unbiased ISP client sampler over a replicate axis (seeds).

The unbatched :func:`~flbounds.algorithms.fedavg_sampler.fedavg_sampler` lets the sampler draw
from ``rng``: every independent-sampling (ISP) sampler of :mod:`flbounds.samplers` draws exactly
one ``rng.random(N)`` per round and includes client i iff :math:`U_i < \tilde p_i`. The plan of
a batched run is therefore the uniforms ``(n_reps, T, N)``, replicate b's drawn by
``rng_b.random((T, N))`` -- the same numbers, in the same order, as the T per-round draws of
the unbatched run (:func:`sampler_uniforms`). Each replicate's sampler then reads its row of
the plan through :class:`ReplayUniforms`, so the samplers themselves are unchanged.

Vectorised over replicates: every client's local steps of every replicate (one
``client_gradients`` call per local step for all replicates together), the pseudo-gradients,
their norms, and the recorded losses and gradients. When every sampler is a
:class:`~flbounds.samplers.UniformISP`, :class:`~flbounds.samplers.KVib` or
:class:`~flbounds.samplers.OracleISP` with the same settings, each round's probabilities, cost
terms and draws of all replicates come from one compiled call
(:func:`flbounds.kernels.isp_round.isp_sampler_round`, exact ports of the NumPy
operations); otherwise the samplers' own methods run per replicate. The BLAS products of the
unbatched loop (``pi @ pi``, the aggregate ``w @ z[S]``, the recorded ``lambda @ ...``) stay
per replicate, as NumPy calls on the same operands, so replicate b equals
``fedavg_sampler(problem, samplers[b], rng_b, ...)`` bit for bit (tested). Memory per
replicate: the server trace (T + 1, d) and O(N d) scratch.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.fedavg_sampler import (
    SamplerTrace,
    _restrict,
    check_weights_and_availability,
    exact_variance,
)
from flbounds.kernels.isp_round import KVIB, ORACLE, UNIFORM, isp_sampler_round
from flbounds.samplers import KVib, OracleISP, UniformISP
from flbounds.samplers.base import Draw, Feedback
from flbounds.sampling import optimal_isp_objective


class ReplayUniforms:
    """Hands out the rows of a pre-drawn uniform plan (T, N) in place of a Generator.

    Only ``random(N)`` exists (what ISP samplers call, once per round); asking for another
    size or more rows than the plan holds raises ``ValueError``.
    """

    def __init__(self, uniforms: np.ndarray):
        self._uniforms = uniforms
        self._next = 0

    def random(self, size):
        n_rows, n_clients = self._uniforms.shape
        if size != n_clients and size != (n_clients,):
            raise ValueError(f"the replayed plan holds rows of {n_clients} uniforms, "
                             f"asked for size {size!r}")
        if self._next >= n_rows:
            raise ValueError("the replayed plan is exhausted")
        row = self._uniforms[self._next].copy()
        self._next += 1
        return row


def sampler_uniforms(rngs, *, n_rounds: int, n_clients: int) -> np.ndarray:
    """The plan (n_reps, n_rounds, n_clients): replicate b's ``rngs[b].random((T, N))``,
    the same numbers an ISP sampler draws from ``rngs[b]`` over T unbatched rounds."""
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
    if not np.all((uniforms >= 0) & (uniforms < 1)):
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


class _Recorder:
    """Loss and squared gradient norm of f = sum_i lambda_i f_i at every replicate's point."""

    def __init__(self, problem, lam, n_reps):
        self.problem, self.lam = problem, lam
        self.clients = np.tile(np.arange(problem.n_clients), n_reps)
        self.loss, self.grad_sq = [], []

    def __call__(self, x):
        n_reps, dim = x.shape
        n = self.problem.n_clients
        X = np.repeat(x, n, axis=0)
        losses = self.problem.client_losses(X, clients=self.clients).reshape(n_reps, n)
        grads = self.problem.client_gradients(X, clients=self.clients).reshape(n_reps, n, dim)
        loss, grad_sq = np.empty(n_reps), np.empty(n_reps)
        for b in range(n_reps):
            loss[b] = float(self.lam @ losses[b])
            g = self.lam @ grads[b]
            grad_sq[b] = float(g @ g)
        self.loss.append(loss)
        self.grad_sq.append(grad_sq)


def _fast_kind(samplers):
    """The compiled sampler kind if all samplers are one supported type with equal settings."""
    kinds = {UniformISP: UNIFORM, KVib: KVIB, OracleISP: ORACLE}
    first = samplers[0]
    kind = kinds.get(type(first))
    settings = ("budget", "n_clients", "theta", "gamma", "variant", "p_min")
    if kind is None or any(type(s) is not type(first) or any(
            getattr(s, a, None) != getattr(first, a, None) for a in settings) for s in samplers):
        return None
    return kind


def _write_back(kind, samplers, omega, p):
    """Leave the samplers in the state the unbatched run would (updated in place)."""
    for b, sampler in enumerate(samplers):
        if kind == KVIB:
            sampler.omega[:] = omega[b]
        elif kind == ORACLE:
            sampler._p = p[b].copy()


def _local_updates(problem, x, clients, local_steps, step):
    """(n_reps, N, d) pseudo-gradients x_b - x_{b,i}^R of every client of every replicate."""
    n_reps, dim = x.shape
    X = np.repeat(x, problem.n_clients, axis=0)
    for _ in range(local_steps):
        X = X - step * problem.client_gradients(X, clients=clients)
    return x[:, None, :] - X.reshape(n_reps, problem.n_clients, dim)


def fedavg_sampler_batched(problem, samplers, uniforms, *, local_steps: int, step: float,
                           server_step: float = 1.0, weights=None, x0=None,
                           availability=None, avail_probs=None) -> SamplerTrace:
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
        As for ``fedavg_sampler``, shared by all replicates.
    availability, avail_probs : optional
        Straggler plans (n_reps, T, N) and the known probabilities (N,).

    Returns
    -------
    SamplerTrace
        Every field with a leading replicate axis; replicate b's fields equal those of
        ``fedavg_sampler(problem, samplers[b], rng_b, ...)`` exactly when
        ``uniforms[b] = rng_b.random((T, N))``.
    """
    samplers, uniforms, lam, availability, avail_probs = _check_inputs(
        problem, samplers, uniforms, weights, availability, avail_probs)
    if isinstance(local_steps, bool) or not isinstance(local_steps, int | np.integer) \
            or local_steps < 1:
        raise ValueError(f"local_steps must be a positive integer, got {local_steps!r}")
    for name, v in (("step", step), ("server_step", server_step)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be positive and finite, got {v!r}")
    n_reps, n_rounds, n = uniforms.shape
    x = np.zeros(problem.dim) if x0 is None else np.asarray(x0, dtype=float).copy()
    x = np.repeat(x[None, :], n_reps, axis=0)
    replays = [ReplayUniforms(uniforms[b]) for b in range(n_reps)]
    clients = np.tile(np.arange(n), n_reps)
    xs = [x.copy()]
    var, opt_var, q_gap, sum_sq, sizes = (np.empty((n_reps, n_rounds)) for _ in range(5))
    record = _Recorder(problem, lam, n_reps)
    record(x)
    fast = _fast_kind(samplers)
    omega = np.stack([s.omega for s in samplers]) if fast == KVIB else np.zeros((n_reps, n))
    p, mask = np.empty((n_reps, n)), np.empty((n_reps, n), dtype=bool)
    best, gap, variance = np.empty(n_reps), np.empty(n_reps), np.empty(n_reps)
    for t in range(n_rounds):
        z = lam[None, :, None] * _local_updates(problem, x, clients, local_steps, step)
        pi_all = np.linalg.norm(z, axis=2)
        if fast is not None:
            s0 = samplers[0]
            isp_sampler_round(fast, pi_all, omega, s0.budget, getattr(s0, "theta", 0.0),
                              getattr(s0, "gamma", 0.0), getattr(s0, "variant", "") == "paper",
                              getattr(s0, "p_min", 0.0), np.ascontiguousarray(uniforms[:, t]),
                              p, mask, best, gap, variance)
        for b, sampler in enumerate(samplers):
            pi, zb = pi_all[b], z[b]
            if fast is None:
                sampler.reveal(pi)
                pb = sampler.inclusion_weights()
                best[b] = optimal_isp_objective(pi, sampler.budget)
                pos = pi > 0
                gap[b] = float(np.sum(pi[pos] ** 2 / pb[pos])) - best[b]
                variance[b] = exact_variance(sampler, zb, pi)
                draw = sampler.sample(replays[b])
            else:
                chosen = np.flatnonzero(mask[b])
                probs = p[b][chosen]
                draw = Draw(chosen, np.ones(chosen.size, dtype=np.int64), 1.0 / probs, probs)
            q_gap[b, t] = gap[b]
            sum_sq[b, t] = float(pi @ pi)
            opt_var[b, t] = best[b] - sum_sq[b, t]
            var[b, t] = variance[b]
            if availability is not None:
                draw = _restrict(draw, availability[b, t], avail_probs)
            sizes[b, t] = draw.clients.size
            d = draw.weights @ zb[draw.clients] if draw.clients.size else np.zeros(problem.dim)
            x[b] = x[b] - server_step * d
            if fast is None:
                sampler.update(Feedback(draw, pi[draw.clients]))
            elif fast == KVIB:
                np.add.at(omega[b], draw.clients, pi[draw.clients] ** 2 / draw.probs)
        xs.append(x.copy())
        record(x)
    _write_back(fast, samplers, omega, p)
    return SamplerTrace(np.stack(xs, axis=1), np.stack(record.loss, axis=1),
                        np.stack(record.grad_sq, axis=1), var, opt_var, q_gap, sum_sq, sizes)
