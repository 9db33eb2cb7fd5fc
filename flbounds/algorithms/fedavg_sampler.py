r"""FedAvg with an unbiased client sampler (Algorithm 1 of K-Vib) and exact per-round variance.

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
function makes no other draw. The round loop is :func:`flbounds.algorithms.sampler_rounds.run`
with one replicate (the batched :func:`~flbounds.algorithms.fedavg_sampler_batched` runs the
same loop over many).
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms.sampler_rounds import (
    Hyper,
    SamplerTrace,
    check_diagnostics,
    exact_variance,
    replicate_local_updates,
    restrict_draw,
    run,
)

__all__ = ["SamplerTrace", "check_hyper", "check_weights_and_availability", "exact_variance",
           "fedavg_sampler", "local_updates", "restrict_draw"]


def local_updates(problem, x, *, local_steps: int, step: float) -> np.ndarray:
    """All clients' pseudo-gradients g_i = x - x_i^R after ``local_steps`` GD steps."""
    return replicate_local_updates(problem, np.asarray(x, dtype=float)[None], local_steps,
                                   step)[0]


def check_hyper(local_steps, step, server_step, n_rounds=None):
    """``local_steps`` a positive integer, ``server_step`` positive and finite, ``step`` a
    positive number or (with ``n_rounds``) a schedule with one step per round
    (:mod:`flbounds.algorithms.schedules`). Returns ``(step, steps)``: the one step of the
    run (the first step of a schedule) and the (T,) steps if they differ, else None."""
    if isinstance(local_steps, bool) or not isinstance(local_steps, int | np.integer) \
            or local_steps < 1:
        raise ValueError(f"local_steps must be a positive integer, got {local_steps!r}")
    if not (np.isfinite(server_step) and server_step > 0):
        raise ValueError(f"server_step must be positive and finite, got {server_step!r}")
    if n_rounds is None:
        if not (np.isfinite(step) and step > 0):
            raise ValueError(f"step must be positive and finite, got {step!r}")
        return float(step), None
    scalar, steps = schedules.resolve(step, n_rounds, int(local_steps), per_local_step=False)
    if scalar is not None:
        return float(scalar), None
    return float(steps[0, 0]), np.ascontiguousarray(steps[:, 0])


def check_weights_and_availability(problem, weights, availability, avail_probs, shape,
                                   shape_name: str):
    r"""Validated client weights :math:`\lambda` (default ``problem.weights`` or uniform) and
    straggler plan (bool array of ``shape``) with its probabilities :math:`q_i > 0`."""
    n = problem.n_clients
    lam = np.asarray(weights if weights is not None else getattr(problem, "weights",
                                                                   np.full(n, 1.0 / n)),
                     dtype=float)
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
                   x0=None, availability=None, avail_probs=None,
                   diagnostics: bool | str = True) -> SamplerTrace:
    r"""Run Algorithm 1 of K-Vib with ``sampler`` (an adaptive sampler of flbounds.sampling).

    Parameters
    ----------
    problem
        Anything with ``n_clients``, ``dim``, ``client_losses(X)`` and ``client_gradients(X)``.
    sampler
        Fresh sampler with ``budget`` K; it is updated in place with the feedback.
    rng
        Passed to ``sampler.sample``.
    n_rounds, local_steps, step, server_step
        T, R, :math:`\eta_l`, :math:`\eta_g`; ``step`` may be a schedule with one step per
        round (:mod:`flbounds.algorithms.schedules`; a schedule whose steps differ runs the
        rounds one by one instead of the one compiled loop, with the same numbers per round).
    weights : array_like, optional
        :math:`\lambda` (default: ``problem.weights`` if present, else uniform 1/N).
    availability, avail_probs : optional
        Straggler plan (bool (T, N)) and its known probabilities :math:`q_i > 0`.
    diagnostics : {True, "variance", False}
        What to record besides ``x`` and ``sizes``: everything (True), the variance terms
        only (``loss`` and ``grad_sq`` NaN) or nothing (False: every other field NaN, and
        only the drawn clients' updates are computed unless the sampler needs every
        client's feedback, as the oracle does). Recorded fields are the same numbers in
        every mode.
    """
    diagnostics = check_diagnostics(diagnostics)
    n = problem.n_clients
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, int | np.integer) \
            or n_rounds < 0:
        raise ValueError(f"n_rounds must be a nonnegative integer, got {n_rounds!r}")
    lam, availability, avail_probs = check_weights_and_availability(
        problem, weights, availability, avail_probs, (n_rounds, n), "(n_rounds, N)")
    step, steps = check_hyper(local_steps, step, server_step, int(n_rounds))
    x = np.zeros(problem.dim) if x0 is None else np.asarray(x0, dtype=float).copy()
    hyper = Hyper(int(local_steps), step, float(server_step), lam,
                  None if availability is None else availability[None], avail_probs,
                  diagnostics, steps)
    trace = run(problem, [sampler], [rng], int(n_rounds), hyper, x)
    return SamplerTrace(*(field[0] for field in trace))
