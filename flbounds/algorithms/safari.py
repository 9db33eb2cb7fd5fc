r"""SAFARI (Algorithm 1 of SAFARI): a Bernoulli(q) choice per round between a FedAvg client
round and one server SGD step.

.. math::

    x_{r+1} = \begin{cases}
      \frac{1}{|S_r|}\sum_{i \in S_r} x^i_{r,K}, \quad
      x^i_{r,k+1} = x^i_{r,k} - \eta_c (\nabla F_i(x^i_{r,k}) + \xi^i_{r,k}),\ x^i_{r,0} = x_r
      & \text{with probability } q,\\
      x_r - \eta_s (\nabla F(x_r) + \zeta_r) & \text{otherwise.}
    \end{cases}

The random plan (:class:`SafariPlan`: round types, sampled clients, client and server gradient
noise) is drawn by :func:`safari_plan` and passed in; :func:`safari` itself never draws. The
rounds run in the compiled loop :func:`flbounds.kernels.mixed_rounds.safari_rounds` for every
problem of :mod:`flbounds.problems`; ``q = 1`` (every round a FedAvg local-SGD round) and
``q = 0`` (server SGD) are tested against independent references.

References
----------
SAFARI: Server-assisted FL under incomplete client participation, Algorithm 1, Theorems 4-5.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms._common import check_compiled, problem_data
from flbounds.kernels._layout import rows_last
from flbounds.kernels.gradients import QuadraticData, RidgeData, ScalarPLData, population
from flbounds.kernels.mixed_rounds import MixedPlan, safari_rounds


class SafariPlan(NamedTuple):
    """Randomness of a SAFARI run, drawn once by the caller (:func:`safari_plan`).

    Attributes
    ----------
    client_round : numpy.ndarray of bool, shape (R,)
        True: a FedAvg client round (probability q); False: a server round.
    clients : numpy.ndarray of int, shape (R, m)
        The clients sampled for round r (used on client rounds).
    client_noise : numpy.ndarray, shape (R, m, K, d)
        Additive noise of the local stochastic gradients.
    server_noise : numpy.ndarray, shape (R, d)
        Additive noise of the server's stochastic gradient.
    """

    client_round: np.ndarray   # (R,) bool: True = FedAvg client round (prob. q)
    clients: np.ndarray        # (R, m) int: clients sampled for round r (used on client rounds)
    client_noise: np.ndarray   # (R, m, K, d) additive noise of the local stochastic gradients
    server_noise: np.ndarray   # (R, d) additive noise of the server stochastic gradient


class SafariTrace(NamedTuple):
    r"""The trace of a SAFARI run.

    Attributes
    ----------
    x : numpy.ndarray, shape (R + 1, d)
        The server iterates :math:`x_0, \dots, x_R`.
    client_round : numpy.ndarray of bool, shape (R,)
        The round types used.
    local_grad_norm2 : numpy.ndarray, shape (R,)
        :math:`\|\frac1m \sum_i \sum_k \nabla F_i(x^i_{r,k})\|^2` on client rounds, NaN
        on server rounds.
    """

    x: np.ndarray              # (R + 1, d) server iterates x_0..x_R
    client_round: np.ndarray   # (R,) the round types actually used
    # (R,) ||(1/m) sum_i sum_k grad F_i(x^i_{r,k})||^2 on client rounds, NaN on server rounds
    local_grad_norm2: np.ndarray


def safari_plan(rng: np.random.Generator, *, n_rounds: int, q: float, eligible, n_sampled: int,
                local_steps: int, dim: int, client_noise_std: float,
                server_noise_std: float) -> SafariPlan:
    r"""Draw a plan: Bernoulli(q) round types, ``n_sampled`` clients uniformly without
    replacement from ``eligible`` each round, isotropic Gaussian noise with
    :math:`E\|\xi\|^2 = \sigma^2` (std :math:`\sigma/\sqrt d` per coordinate).

    The same ``rng`` state gives the same clients and noise whatever ``q`` is (the coins are
    drawn last), so runs at different ``q`` share their random streams.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of every draw.
    n_rounds : int
        R.
    q : float
        The probability of a client round, in [0, 1].
    eligible : array_like of int
        The clients that may be sampled.
    n_sampled : int
        m, the clients per client round (at most ``len(eligible)``).
    local_steps : int
        K, local steps per sampled client.
    dim : int
        d.
    client_noise_std, server_noise_std : float
        :math:`\sigma \ge 0` of the local and of the server gradients' noise.

    Returns
    -------
    SafariPlan

    References
    ----------
    .. [1] H. Yang, P. Qiu, P. Khanduri, M. Fang, J. Liu. Understanding Server-Assisted
       Federated Learning in the Presence of Incomplete Client Participation. ICML 2024.
       arXiv:2405.02745, Algorithm 1.
    """
    _check_plan_args(eligible=eligible, n_rounds=n_rounds, q=q, n_sampled=n_sampled,
                     local_steps=local_steps, dim=dim, client_noise_std=client_noise_std,
                     server_noise_std=server_noise_std)
    plan = _empty_plan((), n_rounds, n_sampled, local_steps, dim)
    _draw_plan(rng, plan, q=q, eligible=eligible, client_noise_std=client_noise_std,
               server_noise_std=server_noise_std)
    return plan


def _empty_plan(lead: tuple, n_rounds, n_sampled, local_steps, dim) -> SafariPlan:
    """Uninitialised plan arrays (C order) for :func:`_draw_plan`, with leading axes
    ``lead`` (``(B,)`` for B stacked replicates)."""
    return SafariPlan(np.empty((*lead, n_rounds), dtype=bool),
                      np.empty((*lead, n_rounds, n_sampled), dtype=np.int64),
                      np.empty((*lead, n_rounds, n_sampled, local_steps, dim)),
                      np.empty((*lead, n_rounds, dim)))


def _check_plan_args(*, eligible, n_rounds, q, n_sampled, local_steps, dim, client_noise_std,
                     server_noise_std):
    eligible = np.asarray(eligible, dtype=np.int64)
    _positive_int("n_rounds", n_rounds)
    _positive_int("n_sampled", n_sampled)
    _positive_int("local_steps", local_steps)
    _positive_int("dim", dim)
    if eligible.ndim != 1 or eligible.size < n_sampled or np.unique(eligible).size != eligible.size:
        raise ValueError("eligible must be distinct client indices, at least n_sampled of them")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    if client_noise_std < 0 or server_noise_std < 0:
        raise ValueError("noise standard deviations must be >= 0")


def _draw_plan(rng, out: SafariPlan, *, q, eligible, client_noise_std,
               server_noise_std) -> None:
    """:func:`safari_plan`'s draws, in its order, into the arrays of ``out`` (bool (R,),
    int64 (R, m), float64 (R, m, K, d) and (R, d), C order: ``standard_normal`` fills an
    array in memory order), arguments checked by the caller; for plans stacked along a
    replicate axis without copying them (``out`` a replicate's slice)."""
    if not all(field.flags.c_contiguous for field in out):
        raise ValueError("the plan arrays must be C-contiguous")
    n_rounds, n_sampled = out.clients.shape
    dim = out.server_noise.shape[1]
    eligible = np.asarray(eligible, dtype=np.int64)
    keys = rng.random((n_rounds, eligible.size))
    np.take(eligible, np.argsort(keys, axis=1)[:, :n_sampled], out=out.clients)
    for noise, std in ((out.client_noise, client_noise_std), (out.server_noise, server_noise_std)):
        rng.standard_normal(out=noise)
        np.multiply(noise, std / np.sqrt(dim), out=noise)
    np.less(rng.random(n_rounds), q, out=out.client_round)


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check(problem, plan: SafariPlan, step_client, step_server, x0):
    R = plan.client_round.shape[0]
    if plan.client_round.dtype != bool or plan.client_round.ndim != 1:
        raise ValueError("plan.client_round must be a 1-D bool array")
    if plan.clients.ndim != 2 or plan.clients.shape[0] != R or plan.clients.dtype.kind not in "iu":
        raise ValueError("plan.clients must be an integer array of shape (R, m)")
    if plan.clients.size and (plan.clients.min() < 0
                              or plan.clients.max() >= problem.n_clients):
        raise ValueError(f"plan.clients must index clients 0..{problem.n_clients - 1}")
    m, d = plan.clients.shape[1], problem.dim
    if plan.client_noise.ndim != 4 or plan.client_noise.shape[:2] != (R, m) \
            or plan.client_noise.shape[3] != d:
        raise ValueError(f"plan.client_noise must have shape (R, m, K, {d})")
    if plan.server_noise.shape != (R, d):
        raise ValueError(f"plan.server_noise must have shape ({R}, {d})")
    for name, v in (("step_client", step_client), ("step_server", step_server)):
        if isinstance(v, numbers.Real) and not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be positive and finite, got {v}")
    x0 = np.zeros(d) if x0 is None else np.asarray(x0, dtype=float)
    if x0.shape != (d,) or not np.all(np.isfinite(x0)):
        raise ValueError(f"x0 must be a finite vector of shape ({d},)")
    if not (np.all(np.isfinite(plan.client_noise)) and np.all(np.isfinite(plan.server_noise))):
        raise ValueError("plan noise must be finite")
    return x0


def server_population(data, weights=None):
    r""":func:`~flbounds.kernels.gradients.population` (of the weighted objective
    :math:`\sum_i p_i f_i` if ``weights`` are given, :func:`weighted_population`) with
    read-only arrays, as the clients' containers have, so one compiled specialisation of the
    gradient kernels serves both."""
    pop = population(data) if weights is None else weighted_population(data, weights)
    for value in pop:
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return pop


def weighted_population(data, weights):
    r""":math:`F = \sum_i p_i f_i` as a single client: weighted means of :math:`A_i, b_i`
    (quadratics) and :math:`c_i` (scalar PL); ridge pools the samples with client i's rows
    and targets scaled by :math:`\sqrt{N p_i}`. A weighted logistic objective is no single
    logistic client: ``ValueError`` naming ``weights``."""
    w = np.asarray(weights, dtype=np.float64)
    if isinstance(data, QuadraticData):
        A = np.tensordot(w, data.A, axes=1)[None]
        return QuadraticData(A, (w @ data.b)[None], rows_last(A))
    if isinstance(data, RidgeData):
        n_clients, _, d = data.features.shape
        scale = np.sqrt(n_clients * w)
        return RidgeData((data.features * scale[:, None, None]).reshape(1, -1, d),
                         (data.targets * scale[:, None]).reshape(1, -1), data.lam)
    if isinstance(data, ScalarPLData):
        return ScalarPLData(np.array([w @ data.c]))
    raise ValueError("weights: the weighted objective of a logistic problem is not one "
                     "logistic client (SAFARI's server step needs it); use uniform weights")


def kernel_plan(plan: SafariPlan) -> MixedPlan:
    """The plan as the kernel's contiguous arrays (int64 clients, float64 noises)."""
    return MixedPlan(np.ascontiguousarray(plan.client_round, dtype=bool),
                     np.ascontiguousarray(plan.clients, dtype=np.int64),
                     np.ascontiguousarray(plan.client_noise, dtype=float),
                     np.ascontiguousarray(plan.server_noise, dtype=float))


def _round_steps(step, n_rounds, local_steps, name):
    """A constant step as a float (the compiled loop of constant steps), else the steps (R,)."""
    scalar, steps = schedules.resolve(step, n_rounds, local_steps, name=name,
                                      per_local_step=False)
    return float(scalar) if scalar is not None else np.ascontiguousarray(steps[:, 0])


def safari(problem, plan: SafariPlan, *, step_client: float, step_server: float,
           x0=None, fast: bool = True) -> SafariTrace:
    r"""Run Algorithm 1 of SAFARI along ``plan``.

    Parameters
    ----------
    problem
        A :mod:`flbounds.problems` problem (its ``kernel_data``); the server step uses
        :math:`\nabla F` of all N clients (weighted by the problem's client weights; a
        weighted logistic problem is a ``ValueError``).
    plan : SafariPlan
    step_client, step_server : float, Schedule or array
        :math:`\eta_c` and :math:`\eta_s`, or one step per round each
        (:mod:`flbounds.algorithms.schedules`).
    x0 : (d,) array, optional (zeros)
    fast : bool
        Must be True (kept for the signature): the compiled loop is the one implementation.

    Returns
    -------
    SafariTrace
    """
    x0 = _check(problem, plan, step_client, step_server, x0)
    check_compiled(fast, "fast")
    R, d = plan.client_round.shape[0], problem.dim
    steps = tuple(_round_steps(v, R, plan.client_noise.shape[2], name) for name, v in
                  (("step_client", step_client), ("step_server", step_server)))
    data = problem_data(problem)
    xs, g2 = np.empty((R + 1, d)), np.empty(R)
    weights = None if getattr(problem, "uniform_weights", True) else problem.weights
    safari_rounds(data, server_population(data, weights), kernel_plan(plan), steps,
                  np.ascontiguousarray(x0, dtype=float), (xs, g2))
    return SafariTrace(xs, plan.client_round.copy(), g2)
