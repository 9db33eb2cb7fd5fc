r"""Witnesses at scale: one quadratic per class rebuilt from a symmetric solve, replayed at N.

A symmetric solve (:mod:`flbounds.pep.symmetric`) over the class of L-smooth
:math:`\mu`-strongly convex quadratics returns, per class, the representative's points and
gradients as a mean part plus a deviation part. When the deviations vanish at the optimum,
every client of a class runs the same trajectory, so one quadratic per class,
:math:`f_c(x) = \tfrac12 (x - x^\star)^\top Q_c (x - x^\star)` with :math:`\mu_c I \preceq Q_c
\preceq L_c I` (the class's own constants, which may differ between classes) fitted to the
class's mean points (:func:`flbounds.pep.witness.fit_quadratic`), interpolates the worst
case. The instance (N clients, client :math:`i \in C_c` given :math:`Q_c`) is run through
``flbounds.algorithms.fedavg`` (or ``focus``, from the solve's start state) at the full N;
its exact expectation over the participation needs one run per value of the class counts :math:`K`
(given :math:`K`, every set with those counts gives the same iterate, the clients of a class
being identical), weighted by the law of :math:`K` (:class:`~flbounds.pep.classlaw.ClassLaw`).
The replayed ratio is a lower bound on the worst case; it reaches it when the solve's
deviations vanish (reported as ``deviation``, the largest deviation norm relative to the
largest point norm), otherwise the gap is what one function per class cannot express.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .witness import Witness, fit_quadratic


@dataclass(frozen=True)
class ScaledWitness:
    """A symmetric solve's witness replayed at the full N.

    Attributes
    ----------
    witness : Witness
        ``replayed`` (the algorithm's exact ratio on the instance), ``pep`` (the symmetric
        worst case), ``fit_residual``, and the instance ``A`` (one matrix per class), ``b``,
        ``x0``.
    classes : tuple of tuple of int
    deviation : float
        The largest deviation part of the representative's points and gradients, relative to
        the largest of their norms (0: one function per class is exact).
    seconds : float
        Time of the replay.
    """

    witness: Witness
    classes: tuple
    deviation: float
    seconds: float


def _points(f, space):
    """(points, gradients, largest deviation, largest norm) of a solved class function."""
    xs, gs, dev, size = [], [], 0.0, 0.0
    for x, g, _ in f.list_of_points:
        for p, out in ((x, xs), (g, gs)):
            mean, e = space.split(p)
            m = np.asarray(mean.eval(), float) if mean.decomposition_dict else None
            out.append(m)
            size = max(size, 0.0 if m is None else float(np.linalg.norm(m)))
            if e.decomposition_dict:
                dev = max(dev, float(np.linalg.norm(e.eval())))
    return xs, gs, dev, size


def _rebuild(round_, measure, mu, L, participation, classes):
    """Solve ``round_`` over quadratics sharing x* = 0 in the symmetric form and fit one
    quadratic per class, of its class's constants: ``(info, parts, Q per class, residual,
    deviation)``."""
    from .describe import Setting
    from .sdp import solve
    from .symmetric import build_symmetric

    setting = Setting(participation.n_clients, mu, L, function_class="quadratic",
                      common_minimizer=True)
    problem, parts = build_symmetric(round_, setting, measure, participation, classes=classes)
    info = solve(problem)
    dim = np.asarray(parts["start"][0]["x"].eval(), float).size
    per_class, residual, deviation = [], 0.0, 0.0
    for f, (mu_c, L_c) in zip(parts["funcs"], parts["constants"], strict=True):
        xs, gs, dev, size = _points(f, parts["space"])
        D = np.column_stack([np.zeros(dim) if x is None else x for x in xs])
        G = np.column_stack([np.zeros(dim) if g is None else g for g in gs])
        Q, res = fit_quadratic(D, G, mu_c, L_c)
        per_class.append(Q)
        residual = max(residual, res)
        deviation = max(deviation, dev / max(size, 1e-300))
    return info, parts, per_class, residual, deviation


def _sets(law, groups, n):
    """One plan row per value of the class counts, with its probability: the first k_c
    clients of class c participate; drawn with replacement (a class law of totals
    :math:`M_c`), the first client of class c is drawn :math:`M_c` times (a count plan of
    ``flbounds.algorithms.fedavg``). The clients of a class are identical, so the round's
    outcome depends on the class counts only, whichever clients carry them."""
    from .classcounts import CountClassLaw

    drawn = isinstance(law, CountClassLaw)
    for counts, prob in zip(law.counts.astype(int), law.probs, strict=True):
        row = np.zeros(n, dtype=np.int64 if drawn else bool)
        for group, k in zip(groups.groups, counts, strict=True):
            if drawn:
                row[group[0]] = k
            else:
                row[list(group[:k])] = True
        yield row, prob


def _mean_point(point, space):
    mean = space.split(point)[0]
    return np.asarray(mean.eval(), float)


def fedavg_symmetric_witness(mu, L, participation, classes, local_steps, step) -> ScaledWitness:
    r"""The worst one-round :math:`E\|x_1 - x^\star\|^2 / \|x_0 - x^\star\|^2` of FedAvg (mean
    over S, clients sharing :math:`x^\star`) over quadratics, from a symmetric solve, and the
    ratio ``flbounds.algorithms.fedavg`` attains on the rebuilt instance at the full N.

    Parameters
    ----------
    mu, L : float or sequence of float
        :math:`0 \le \mu \le L`: one value for all clients, or one per client (equal within
        each class; :class:`~flbounds.pep.describe.Setting`). Class c's quadratic has
        :math:`\mu_c I \preceq Q_c \preceq L_c I`.
    participation : process
        Exchangeable within each class (:func:`~flbounds.pep.classlaw.class_law`), N clients,
        or drawing with replacement with one draw probability per class (replayed as count
        plans).
    classes : partition of the N clients
    local_steps : int
    step : float

    Returns
    -------
    ScaledWitness
    """
    import time

    from flbounds.algorithms import fedavg
    from flbounds.problems import Quadratic

    from .describe import distance
    from .described import fedavg_round

    info, parts, per_class, residual, deviation = _rebuild(
        fedavg_round(local_steps, step), distance(), mu, L, participation, classes)
    law, groups, n = parts["law"], parts["classes"], participation.n_clients
    x0 = np.asarray(parts["start"][0]["x"].eval(), float)
    instance = Quadratic(np.stack([per_class[c] for c in groups.labels()]),
                         np.zeros((n, x0.size)))
    start, total = time.perf_counter(), 0.0
    for mask, prob in _sets(law, groups, n):
        x1 = fedavg(instance, mask[None, :], step=step, local_steps=local_steps, x0=x0).x[-1]
        total += prob * float(np.sum(x1 ** 2))
    witness = Witness(replayed=total / float(np.sum(x0 ** 2)), pep=info.worst,
                      fit_residual=residual, A=np.stack(per_class),
                      b=np.zeros((len(per_class), x0.size)), x0=x0)
    return ScaledWitness(witness, groups.groups, deviation, time.perf_counter() - start)


def focus_symmetric_witness(mu, L, participation, classes, local_steps, step,
                            consensus_weight) -> ScaledWitness:
    r"""The worst one-round :math:`E[\Psi_{r+1}] / \Psi_r` of FOCUS, :math:`\Psi = \|x -
    x^\star\|^2 + c \sum_i \|x - z_i\|^2` (clients sharing :math:`x^\star`), over quadratics,
    from a symmetric solve, and the ratio ``flbounds.algorithms.focus`` attains on the rebuilt
    instance at the full N, started from the solve's state (server model, each client's last
    model :math:`z_i`, its stored gradient :math:`\nabla f_i(z_i)`, :math:`y = \sum_i g_i`).

    Parameters
    ----------
    mu, L : float or sequence of float
        :math:`0 \le \mu \le L`: one value for all clients, or one per client (equal within
        each class; :class:`~flbounds.pep.describe.Setting`). Class c's quadratic has
        :math:`\mu_c I \preceq Q_c \preceq L_c I`.
    participation : process
        Exchangeable within each class, N clients (not drawn with replacement:
        ``flbounds.algorithms.focus`` runs participation masks only).
    classes : partition of the N clients
    local_steps : int
    step : float
    consensus_weight : float
        :math:`c > 0`.

    Returns
    -------
    ScaledWitness

    Raises
    ------
    ValueError
        Naming ``participation`` for a law drawn with replacement.
    """
    import time

    from flbounds.algorithms import FocusState, focus
    from flbounds.problems import Quadratic

    from .counts import draws_of
    from .described import focus_lyapunov, focus_round

    if draws_of(participation) is not None:
        raise ValueError("participation: flbounds.algorithms.focus runs participation masks, "
                         "not counts drawn with replacement")
    c = float(consensus_weight)
    info, parts, per_class, residual, deviation = _rebuild(
        focus_round(local_steps, step), focus_lyapunov(c), mu, L, participation, classes)
    law, groups, n = parts["law"], parts["classes"], participation.n_clients
    server, clients = parts["start"]
    x0 = np.asarray(server["x"].eval(), float)
    labels = groups.labels()
    z0 = np.stack([_mean_point(clients[k]["z"], parts["space"]) for k in labels])
    A = np.stack([per_class[k] for k in labels])
    instance = Quadratic(A, np.zeros((n, x0.size)))
    g0 = np.einsum("nij,nj->ni", A, z0)

    def psi(x, z):
        return float(np.sum(x ** 2) + c * np.sum((x - z) ** 2))

    start, total = time.perf_counter(), 0.0
    for mask, prob in _sets(law, groups, n):
        state = FocusState(x0.copy(), g0.sum(axis=0), g0.copy(), z0.copy())
        trace = focus(instance, mask[None, :], step=step, local_steps=local_steps, start=state)
        total += prob * psi(trace.x[-1], trace.models)
    witness = Witness(replayed=total / psi(x0, z0), pep=info.worst, fit_residual=residual,
                      A=np.stack(per_class), b=np.zeros((len(per_class), x0.size)), x0=x0)
    return ScaledWitness(witness, groups.groups, deviation, time.perf_counter() - start)


__all__ = ["ScaledWitness", "fedavg_symmetric_witness", "focus_symmetric_witness"]
