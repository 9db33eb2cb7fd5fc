r"""Run a described round (:mod:`flbounds.pep.describe`) on arrays: the same description the
PEP is built from, evaluated on an explicit quadratic problem and participating set.

The local updates and server steps of a :class:`~flbounds.pep.describe.Round` only add,
subtract and scale points and call ``f.gradient``; here the points are :class:`Vector` s (an
array whose ``*`` with another vector is the inner product and ``** 2`` the squared norm, as
for PEPit points) and ``f`` a client of a ``flbounds.problems.Quadratic``. So a description
can be checked against the simulated algorithms of ``flbounds.algorithms`` on every
participating set (``tests/flbounds/pep/test_replay.py``), and a measure's exact expectation
on an instance is :func:`expected_measure`, the sum over the law's sets. A law drawn with
replacement (:mod:`flbounds.pep.counts`) is replayed over its count vectors: a drawn client
runs once and enters every aggregate once per draw, as ``flbounds.algorithms.fedavg`` runs a
count plan (``tests/flbounds/pep/test_replay_counts.py``).
"""

from __future__ import annotations

import numpy as np


class Vector:
    """An array that multiplies like a PEPit point: by a number (scaling) or by a vector
    (inner product); ``v ** 2`` is the squared norm."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = np.asarray(v, dtype=float)

    def __add__(self, other):
        return Vector(self.v + _raw(other))

    __radd__ = __add__

    def __sub__(self, other):
        return Vector(self.v - _raw(other))

    def __rsub__(self, other):
        return Vector(_raw(other) - self.v)

    def __neg__(self):
        return Vector(-self.v)

    def __mul__(self, other):
        if isinstance(other, Vector):
            return float(self.v @ other.v)
        return Vector(float(other) * self.v)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return Vector(self.v / float(other))

    def __pow__(self, power):
        if power != 2:
            raise ValueError(f"power must be 2 (a squared norm), got {power}")
        return float(self.v @ self.v)


def _raw(value):
    if isinstance(value, Vector):
        return value.v
    if isinstance(value, int | float) and value == 0:
        return 0.0
    raise ValueError(f"cannot add a Vector and {type(value).__name__}")


class QuadraticClient:
    r"""Client ``i`` of a ``flbounds.problems.Quadratic``: :math:`\nabla f_i(z) = A_i z - b_i`."""

    def __init__(self, problem, i):
        self.A, self.b = np.asarray(problem.A[i]), np.asarray(problem.b[i])

    def gradient(self, z):
        return Vector(self.A @ z.v - self.b)


class Minimizer:
    """:math:`x^\\star` of the problem and every client's gradient there."""

    def __init__(self, problem, clients):
        self.x = Vector(problem.x_star)
        self.gradients = [c.gradient(self.x) for c in clients]


def start_state(round_, clients, free):
    """The round's initial state from ``free`` (``{name: array}`` for server points,
    ``{name: (N, d) array}`` for client points), derived points added as in
    :func:`flbounds.pep.engine.initial_state`. Returns ``(server, clients)`` dicts of
    :class:`Vector`."""
    derived = round_.initial
    server = {k: Vector(free[k]) for k in round_.server_state if k not in derived}
    own = [{k: Vector(free[k][i]) for k in round_.client_state if k not in derived}
           for i in range(len(clients))]
    for name, how in derived.items():
        if how.kind == "copy":
            for c in own:
                c[name] = server[how.of]
    for name, how in derived.items():
        if how.kind == "gradient":
            for f, c in zip(clients, own, strict=True):
                c[name] = f.gradient(c[how.of])
    for name, how in derived.items():
        if how.kind in ("sum", "mean"):
            total = sum((c[how.of] for c in own), 0)
            server[name] = total if how.kind == "sum" else total / len(own)
    return server, own


def run_round(round_, clients, state, mask, inclusion=None, counts=None):
    """One round with participating set ``mask`` (bool, one per client): returns the next
    ``(server, clients)``. ``inclusion`` (the law's :math:`P(i \\in S)`, or :math:`E[c_i]`
    with counts) is what the unbiased rule divides by; default all ones.

    With ``counts`` (one draw count per client, sampling with replacement) the round runs
    as ``flbounds.algorithms.fedavg`` runs a count plan: a client drawn :math:`c_i \\ge 1`
    times runs its local update once and every rule weighs it by :math:`c_i`
    (:mod:`flbounds.pep.counts`); ``mask`` must then be ``counts > 0`` (or None)."""
    server, own = state
    if counts is not None:
        counts = np.asarray(counts, dtype=float)
        if counts.shape != (len(clients),) or not np.all(counts >= 0):
            raise ValueError(f"counts must be {len(clients)} numbers >= 0, got {counts}")
        if mask is not None and not np.array_equal(np.asarray(mask, dtype=bool), counts > 0):
            raise ValueError("mask must be the support of counts (counts > 0)")
        mask = counts > 0
    mask = np.asarray(mask, dtype=bool)
    drawn = mask if counts is None else counts
    inclusion = np.ones(mask.size) if inclusion is None else np.asarray(inclusion, float)
    pulled = {k: server[k] for k in round_.pull}
    new_clients, sent = [], []
    for f, c, s in zip(clients, own, mask, strict=True):
        if s:
            new, messages = round_.local.run(f, pulled, dict(c))
            new_clients.append({**c, **new})
            sent.append(messages)
        else:
            new_clients.append(dict(c))
            sent.append(None)
    aggregated = {}
    for name, rule in round_.push.items():
        w = rule.coefficients(drawn[None, :], inclusion)[0]
        aggregated[name] = sum((float(w[i]) * sent[i][name] for i in np.flatnonzero(mask)), 0)
        if not isinstance(aggregated[name], Vector):  # an empty round aggregates 0
            aggregated[name] = Vector(np.zeros_like(server["x"].v))
    return {**server, **round_.server.update(dict(server), aggregated)}, new_clients


def outcomes(law):
    """``(mask, counts, probability)`` of every outcome of ``law``
    (:class:`~flbounds.pep.expect.ParticipationLaw`): its sets (``counts`` None) or, drawn
    with replacement, its count vectors (``mask`` their support)."""
    for k, prob in enumerate(law.probs):
        yield law.masks[k], None if law.counts is None else law.counts[k], float(prob)


class _State:
    def __init__(self, server, clients):
        self.server, self.clients = server, clients

    def __getitem__(self, name):
        return self.server[name]

    def client(self, name):
        return [c[name] for c in self.clients]


def replay_measure(round_, instance, measure, participation=None, *, start=None) -> float:
    r"""Exact :math:`E[V(X^+)] / V(X)` of ``measure`` after one round of ``round_`` run on a
    quadratic instance, over ``participation`` as :func:`flbounds.pep.worst_case` takes it:
    the replay of a worst case on arrays (the round's own local update and server step,
    every participating set weighed by its probability).

    Parameters
    ----------
    round_ : Round
    instance : flbounds.problems.Quadratic or FittedInstance
        The clients; a :class:`~flbounds.pep.second_moment.FittedInstance`
        (:func:`flbounds.pep.worst_instance`) carries its start too.
    measure : Measure
        A one-run measure (:func:`flbounds.pep.lyapunov`, :func:`flbounds.pep.distance`).
    participation : None, bool vector, process or sampler
        As for :func:`flbounds.pep.worst_case` (:func:`flbounds.pep.expect.law_of`).
    start : dict, optional
        The free start points by name (server: a ``(d,)`` array, client: ``(N, d)``);
        derived ones (:attr:`Round.initial`) are computed. Required unless ``instance``
        carries one.

    Returns
    -------
    float
        The exact ratio on this instance: a lower bound on the worst case over any class
        holding the instance.
    """
    from .describe import Measure, Round

    problem = getattr(instance, "problem", instance)
    if start is None:
        start = getattr(instance, "start", None)
    if not isinstance(round_, Round):
        raise ValueError(f"round_ must be a Round, got {type(round_).__name__}")
    if not (hasattr(problem, "A") and hasattr(problem, "n_clients")):
        raise ValueError(f"instance must be a flbounds.problems.Quadratic or a FittedInstance, "
                         f"got {type(instance).__name__}")
    if not isinstance(measure, Measure) or measure.runs != 1:
        raise ValueError("measure must be a one-run Measure (flbounds.pep.lyapunov or "
                         "distance)")
    free = {k for k in (*round_.server_state, *round_.client_state) if k not in round_.initial}
    if not isinstance(start, dict) or set(start) != free:
        given = sorted(start) if isinstance(start, dict) else type(start).__name__
        raise ValueError(f"start must give the free state points {sorted(free)}, got {given}")
    return expected_measure(round_, problem, start, participation, measure)


def expected_measure(round_, problem, free, law, measure):
    r"""Exact :math:`E[V(X^+)] / V(X)` of ``measure`` after one round of ``round_`` on the
    quadratic ``problem`` from ``free`` (see :func:`start_state`), over ``law`` (a
    :class:`~flbounds.pep.expect.ParticipationLaw`, or anything
    :func:`~flbounds.pep.expect.law_of` takes; :func:`replay_measure` is the checked entry):
    the sum over its sets, or over its count vectors when it draws with replacement
    (:func:`run_round` with ``counts``, the rules reading :math:`E[c_i]` in place of the
    inclusion probabilities)."""
    from .expect import law_of

    if not (hasattr(law, "masks") and hasattr(law, "probs")):   # a law as it is
        law = law_of(law, problem.n_clients)
    clients = [QuadraticClient(problem, i) for i in range(problem.n_clients)]
    star = Minimizer(problem, clients)
    state = start_state(round_, clients, free)
    start = measure.value(_State(*state), star)
    total = 0.0
    for mask, counts, prob in outcomes(law):
        total += prob * measure.value(_State(*run_round(round_, clients, state, mask,
                                                        law.count_means, counts)), star)
    return total / start


__all__ = ["Minimizer", "QuadraticClient", "Vector", "expected_measure", "outcomes",
           "replay_measure", "run_round", "start_state"]
