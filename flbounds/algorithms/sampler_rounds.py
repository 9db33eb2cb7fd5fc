r"""The one round loop of FedAvg with an unbiased client sampler (Algorithm 1 of K-Vib).

Replicates are an axis: :func:`run` advances B independent runs (one sampler and one source of
randomness each) round by round. The unbatched :func:`~flbounds.algorithms.fedavg_sampler` is this
loop with B = 1 and the caller's Generator as the source; the batched
:func:`~flbounds.algorithms.fedavg_sampler_batched` replays a pre-drawn uniform plan per replicate
(:class:`ReplayUniforms`). Vectorised over replicates: every client's local steps (one
``client_gradients`` call per local step for all replicates together), the pseudo-gradients, their
norms and the recorded losses and gradients. When every sampler is a
:class:`~flbounds.sampling.UniformISP`, :class:`~flbounds.sampling.KVib` or
:class:`~flbounds.sampling.OracleISP` with the same settings, the round's probabilities, cost terms
and draws come from one compiled call (:func:`flbounds.kernels.isp_round.isp_sampler_round`, exact
ports of the NumPy operations) fed with the one ``random(N)`` per round such a sampler draws from
its source; otherwise the samplers' own methods run per replicate. The aggregate is a sum in client
order (:func:`~flbounds.kernels.sampler_loop.weighted_sum`); the BLAS products (``pi @ pi``, the
recorded ``lambda @ ...``) stay per replicate, so a replicate's numbers do not depend on the others.
With nothing recorded but the iterates, a uniform ISP or K-Vib on the compiled problems runs every
round in one compiled loop (:mod:`flbounds.kernels.sampler_loop`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms._common import round_settings
from flbounds.algorithms._replay import ReplayUniforms
from flbounds.kernels.isp_round import (
    KVIB,
    ORACLE,
    UNIFORM,
    IspRound,
    IspSettings,
    isp_sampler_round,
)
from flbounds.kernels.replicates import local_update_blocks, local_update_masked
from flbounds.kernels.rounds import serial_only
from flbounds.kernels.sampler_loop import DrawnRun, DrawnState, drawn_rounds, weighted_sum
from flbounds.sampling import (
    Draw,
    Feedback,
    KVib,
    OracleISP,
    UniformISP,
    multinomial_variance,
    optimal_isp_objective,
    rsp_uniform_variance,
)
from flbounds.sampling.adaptive import SamplerBase


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


class Hyper(NamedTuple):
    """Validated settings of a run: local steps R, :math:`\\eta_l`, :math:`\\eta_g`, client
    weights :math:`\\lambda` (N,), straggler plans (B, T, N) or None and their probabilities,
    and the diagnostics to record: True (loss, gradient norm, variance terms), ``"variance"``
    (the variance terms only) or False (none)."""

    local_steps: int
    step: float
    server_step: float
    lam: np.ndarray
    availability: np.ndarray | None
    avail_probs: np.ndarray | None
    diagnostics: bool | str = True
    steps: np.ndarray | None = None     # (T,) round t's local step when they differ

    def step_at(self, t: int) -> float:
        r"""Round t's local step :math:`\eta_{l,t}`."""
        return self.step if self.steps is None else float(self.steps[t])


def _serial(problem, step, local_steps):
    return round_settings(step, local_steps, parallel=False, data=problem.kernel_data)


def _has_kernels(problem) -> bool:
    return type(problem).__module__.startswith("flbounds.problems.") \
        and getattr(problem, "kernel_data", None) is not None


def drawn_local_updates(problem, x, local_steps, step, mask, out=None):
    """(B, N, d) array whose rows ``[b, i]`` with ``mask[b, i]`` are the pseudo-gradients of
    :func:`replicate_local_updates` (the same numbers); the other rows are undefined. ``out``:
    a float64 (B, N, d) buffer to write them to (a run reuses one)."""
    n_reps, dim = x.shape
    if out is None:
        out = np.empty((n_reps, problem.n_clients, dim))
    if _has_kernels(problem):
        local_update_masked(problem.kernel_data, np.ascontiguousarray(x, dtype=float),
                            _serial(problem, step, local_steps), mask, out)
        return out
    reps, clients = np.nonzero(mask)
    X = x[reps]
    for _ in range(local_steps):
        X = X - step * problem.client_gradients(X, clients=clients)
    out[reps, clients] = x[reps] - X
    return out


def replicate_local_updates(problem, x, local_steps, step):
    """(B, N, d) pseudo-gradients :math:`x_b - x_{b,i}^R` of every client of every replicate
    after ``local_steps`` full-batch GD steps from the replicate's model ``x[b]``.

    Problems of :mod:`flbounds.problems` (whose gradients are the compiled kernels) run
    :func:`flbounds.kernels.replicates.local_update_blocks`: each client once for all
    replicates, the same numbers as the NumPy loop below, which serves any other problem."""
    n_reps, dim = x.shape
    if _has_kernels(problem):
        out = np.empty((n_reps, problem.n_clients, dim))
        local_update_blocks(problem.kernel_data, np.ascontiguousarray(x, dtype=float),
                            _serial(problem, step, local_steps), out)
        return out
    clients = np.tile(np.arange(problem.n_clients), n_reps)
    X = np.repeat(x, problem.n_clients, axis=0)
    for _ in range(local_steps):
        X = X - step * problem.client_gradients(X, clients=clients)
    return x[:, None, :] - X.reshape(n_reps, problem.n_clients, dim)


def exact_variance(sampler, z: np.ndarray, pi: np.ndarray) -> float:
    """Variance of the sampler's estimator of sum z for this round (procedure-specific)."""
    if sampler.procedure == "multinomial":
        return multinomial_variance(sampler.probabilities(), z, sampler.budget)
    if sampler.procedure == "subset":
        return rsp_uniform_variance(z, sampler.budget)
    p = sampler.inclusion_weights()
    return float(np.sum((1 - p) / p * pi * pi))


def restrict_draw(draw: Draw, available: np.ndarray, avail_probs: np.ndarray) -> Draw:
    """Stragglers: keep the drawn clients that are ``available``, dividing their estimator
    weights by their availability probabilities :math:`q_i`."""
    keep = available[draw.clients]
    q = avail_probs[draw.clients[keep]]
    return Draw(draw.clients[keep], draw.counts[keep], draw.weights[keep] / q,
                draw.probs[keep] * q)


def _record(problem, lam, x, out, t):
    """Loss and squared gradient norm of :math:`f = \\sum_i \\lambda_i f_i` at ``x[b]``."""
    n_reps, dim = x.shape
    n = problem.n_clients
    clients = np.tile(np.arange(n), n_reps)
    X = np.repeat(x, n, axis=0)
    losses = problem.client_losses(X, clients=clients).reshape(n_reps, n)
    grads = problem.client_gradients(X, clients=clients).reshape(n_reps, n, dim)
    for b in range(n_reps):
        out.loss[b, t] = float(lam @ losses[b])
        g = lam @ grads[b]
        out.grad_sq[b, t] = float(g @ g)


def _compiled_settings(samplers):
    """The compiled settings if all samplers are one supported type, equally set; else None."""
    kinds = {UniformISP: UNIFORM, KVib: KVIB, OracleISP: ORACLE}
    first = samplers[0]
    kind = kinds.get(type(first))
    names = ("budget", "n_clients", "theta", "gamma", "variant", "p_min")
    if kind is None or any(type(s) is not type(first) or any(
            getattr(s, a, None) != getattr(first, a, None) for a in names) for s in samplers):
        return None
    return IspSettings(kind, float(first.budget), float(getattr(first, "theta", 0.0)),
                       float(getattr(first, "gamma", 0.0)),
                       getattr(first, "variant", "") == "paper",
                       float(getattr(first, "p_min", 0.0)))


def _sampler_round(sampler, source, zb, pi):
    """The sampler's own methods: (draw, optimal cost, cost gap, exact variance)."""
    sampler.reveal(pi)
    pb = sampler.inclusion_weights()
    best = optimal_isp_objective(pi, sampler.budget)
    pos = pi > 0
    gap = float(np.sum(pi[pos] ** 2 / pb[pos])) - best
    return sampler.sample(source), best, gap, exact_variance(sampler, zb, pi)


def _compiled_draws(settings, pi_all, omega, sources, state: IspRound):
    """Every replicate's round through :func:`isp_sampler_round`; the draws."""
    uniforms = np.stack([source.random(pi_all.shape[1]) for source in sources])
    isp_sampler_round(settings, pi_all, omega, uniforms, state)
    draws = []
    for b in range(pi_all.shape[0]):
        chosen = np.flatnonzero(state.mask[b])
        probs = state.p[b][chosen]
        draws.append(Draw(chosen, np.ones(chosen.size, dtype=np.int64), 1.0 / probs, probs))
    return draws


def _write_back(settings, samplers, omega, p):
    """Leave the samplers in the state their own methods would have (updated in place)."""
    for b, sampler in enumerate(samplers):
        if settings.kind == KVIB:
            sampler.omega[:] = omega[b]
        elif settings.kind == ORACLE:
            sampler._p = p[b].copy()


def check_diagnostics(diagnostics):
    """``diagnostics`` as a run records it: True, ``"variance"`` or False."""
    if isinstance(diagnostics, bool | np.bool_):
        return bool(diagnostics)
    if diagnostics == "variance":
        return diagnostics
    raise ValueError(f"diagnostics must be True, 'variance' or False, got {diagnostics!r}")


def needs_every_client(samplers) -> bool:
    """Whether a sampler reads every client's feedback before it draws (overrides ``reveal``)."""
    return any(getattr(type(s), "reveal", None) is not SamplerBase.reveal for s in samplers)


class _Context(NamedTuple):
    """What every round reads: the compiled settings (or None), K-Vib's state (B, N), the
    compiled round's outputs, the trace, and whether every client's update is computed."""

    settings: IspSettings | None
    omega: np.ndarray
    state: IspRound
    out: SamplerTrace
    every_client: bool
    updates: np.ndarray | None = None     # (B, N, d) buffer of the drawn clients' updates


def _full_round(problem, samplers, sources, hyper, t, x, ctx):
    """Round t with every client's update: the exact variance terms and the draws."""
    settings, state, out = ctx.settings, ctx.state, ctx.out
    z = hyper.lam[None, :, None] * replicate_local_updates(problem, x, hyper.local_steps,
                                                           hyper.step_at(t))
    pi_all = np.linalg.norm(z, axis=2)
    if settings is not None:
        draws = _compiled_draws(settings, pi_all, ctx.omega, sources, state)
    for b, sampler in enumerate(samplers):
        pi, zb = pi_all[b], z[b]
        if settings is None:
            draw, state.best[b], state.q_gap[b], state.variance[b] = _sampler_round(
                sampler, sources[b], zb, pi)
        else:
            draw = draws[b]
        out.q_gap[b, t] = state.q_gap[b]
        out.sum_sq[b, t] = float(pi @ pi)
        out.opt_variance[b, t] = state.best[b] - out.sum_sq[b, t]
        out.variance[b, t] = state.variance[b]
        if hyper.availability is not None:
            draw = restrict_draw(draw, hyper.availability[b, t], hyper.avail_probs)
        _server_step(sampler, ctx, hyper, (t, b), x, draw, zb[draw.clients],
                     pi[draw.clients])


def _drawn_round(problem, samplers, sources, hyper, t, x, ctx):
    """Round t computing the drawn clients' updates only: the draws come first (they do not
    depend on this round's updates), then the same server step and feedback."""
    settings, n_reps, n = ctx.settings, len(samplers), problem.n_clients
    if settings is not None:
        draws = _compiled_draws(settings, np.zeros((n_reps, n)), ctx.omega, sources, ctx.state)
    else:
        draws = [sampler.sample(source) for sampler, source in zip(samplers, sources,
                                                                   strict=True)]
    if hyper.availability is not None:
        draws = [restrict_draw(draw, hyper.availability[b, t], hyper.avail_probs)
                 for b, draw in enumerate(draws)]
    if settings is not None and hyper.availability is None:
        mask = ctx.state.mask      # the drawn clients of every replicate, as drawn
    else:
        mask = np.zeros((n_reps, n), dtype=bool)
        for b, draw in enumerate(draws):
            mask[b, draw.clients] = True
    updates = drawn_local_updates(problem, x, hyper.local_steps, hyper.step_at(t), mask,
                                  ctx.updates)
    # the feedback norms are read by K-Vib and by the samplers' own update only
    norms = settings is None or settings.kind == KVIB
    for b, (sampler, draw) in enumerate(zip(samplers, draws, strict=True)):
        z = hyper.lam[draw.clients, None] * updates[b, draw.clients]
        _server_step(sampler, ctx, hyper, (t, b), x, draw, z,
                     np.linalg.norm(z, axis=1) if norms else None)


def _server_step(sampler, ctx, hyper, where, x, draw, z, pi):
    """Replicate b's (``where = (t, b)``) aggregate of the drawn rows ``z`` (k, d) with norms
    ``pi`` (k,; None when no feedback reads them), its server step and the sampler's
    feedback; the sample size goes to the trace."""
    t, b = where
    ctx.out.sizes[b, t] = draw.clients.size
    d = weighted_sum(draw.weights, np.ascontiguousarray(z), np.empty(x.shape[1]))
    x[b] = x[b] - hyper.server_step * d
    if ctx.settings is None:
        sampler.update(Feedback(draw, pi))
    elif ctx.settings.kind == KVIB:
        np.add.at(ctx.omega[b], draw.clients, pi ** 2 / draw.probs)


#: uniforms handed to the compiled loop at once (replicates x rounds x clients; 2 MiB)
CHUNK_VALUES = 1 << 18


def _loop_compiles(problem, sources, hyper, ctx) -> bool:
    """Whether the rounds can run as one compiled loop: drawn clients only, a uniform ISP or
    K-Vib (compiled settings), one local step for the run, no stragglers, a compiled problem,
    Generator or replay sources."""
    return ctx.settings is not None and ctx.settings.kind in (UNIFORM, KVIB) \
        and hyper.steps is None and not ctx.every_client and hyper.availability is None \
        and _has_kernels(problem) \
        and all(isinstance(s, np.random.Generator | ReplayUniforms) for s in sources)


def _chunk(source, count, n):
    """The next ``count`` rounds' uniforms (count, N) of a source, to be read only: a replayed
    plan's rows without a copy when they are a writable C-contiguous block (the array type the
    loop is compiled for)."""
    if isinstance(source, ReplayUniforms):
        block = source.rows(count, copy=False)
        return block if block.flags.c_contiguous and block.flags.writeable else block.copy()
    return source.random((count, n))


def _compiled_rounds(problem, sources, hyper, n_rounds, x, ctx):
    """All rounds through :func:`~flbounds.kernels.sampler_loop.drawn_rounds`, a chunk of
    rounds' uniforms per call (a Generator fills ``random((count, N))`` in the order of
    ``count`` calls of ``random(N)``); the same operations as :func:`_drawn_round`."""
    n_reps, n = ctx.omega.shape
    # one replicate: a round with enough work may run its drawn clients in chunks on threads
    # (the same bits); several run serially (their updates are computed client by client)
    local = round_settings(hyper.step, hyper.local_steps, parallel=n_reps == 1,
                           data=problem.kernel_data)
    chunked = None if serial_only(local) else True
    loop_settings = DrawnRun(ctx.settings, local, np.ascontiguousarray(hyper.lam, dtype=float),
                             float(hyper.server_step))
    state = DrawnState(x, ctx.omega, ctx.state.p, ctx.state.mask, ctx.updates)
    chunk = max(1, CHUNK_VALUES // (n_reps * n))
    for t0 in range(0, n_rounds, chunk):
        count = min(chunk, n_rounds - t0)
        uniforms = np.stack([_chunk(source, count, n) for source in sources]) if n_reps > 1 \
            else _chunk(sources[0], count, n)[None]
        drawn_rounds(problem.kernel_data, loop_settings, uniforms, state, ctx.out.x,
                     ctx.out.sizes, t0, chunked)


def run(problem, samplers, sources, n_rounds: int, hyper: Hyper, x0) -> SamplerTrace:
    """Advance every replicate b (``samplers[b]`` drawing from ``sources[b]``) for
    ``n_rounds`` rounds from ``x0``; every field of the trace has a leading replicate axis.

    With ``hyper.diagnostics`` False only ``x`` and ``sizes`` are recorded (the other fields
    are NaN) and, unless a sampler needs every client's feedback, only the drawn clients'
    updates are computed; with ``"variance"`` every client's update is computed for the
    variance terms but ``loss`` and ``grad_sq`` are NaN. The recorded fields are the same
    numbers in every mode."""
    n_reps, n, dim = len(samplers), problem.n_clients, problem.dim
    x = np.repeat(np.asarray(x0, dtype=float)[None, :], n_reps, axis=0)
    out = SamplerTrace(np.empty((n_reps, n_rounds + 1, dim)),
                       *(np.empty((n_reps, n_rounds + 1)) for _ in range(2)),
                       *(np.empty((n_reps, n_rounds)) for _ in range(5)))
    out.x[:, 0] = x
    settings = _compiled_settings(samplers)
    omega = np.stack([s.omega for s in samplers]) if settings and settings.kind == KVIB \
        else np.zeros((n_reps, n))
    state = IspRound(np.full((n_reps, n), np.nan), np.empty((n_reps, n), dtype=bool),
                     *(np.empty(n_reps) for _ in range(3)))
    every_client = hyper.diagnostics is not False or needs_every_client(samplers)
    ctx = _Context(settings, omega, state, out, every_client,
                   None if every_client else np.empty((n_reps, n, dim)))
    record = hyper.diagnostics is True
    if record:
        _record(problem, hyper.lam, x, out, 0)
    if _loop_compiles(problem, sources, hyper, ctx):
        _compiled_rounds(problem, sources, hyper, n_rounds, x, ctx)
    else:
        round_fn = _full_round if ctx.every_client else _drawn_round
        for t in range(n_rounds):
            round_fn(problem, samplers, sources, hyper, t, x, ctx)
            out.x[:, t + 1] = x
            if record:
                _record(problem, hyper.lam, x, out, t + 1)
    if settings is not None and n_rounds > 0:   # the probabilities of a round that ran
        _write_back(settings, samplers, omega, state.p)
    if not record:
        skipped = [out.loss, out.grad_sq]
        if hyper.diagnostics is False:
            skipped += [out.variance, out.opt_variance, out.q_gap, out.sum_sq]
        for field in skipped:
            field[:] = np.nan
    return out
