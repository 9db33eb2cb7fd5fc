r"""Witnesses at scale: one quadratic per class rebuilt from a symmetric solve, replayed at N.

A symmetric solve (:mod:`flbounds.pep.symmetric`) over the class of L-smooth
:math:`\mu`-strongly convex quadratics returns, per class, the representative's points and
gradients as a mean part plus a deviation part. When the deviations vanish at the optimum,
every client of a class runs the same trajectory, so one quadratic per class,
:math:`f_c(x) = \tfrac12 (x - x^\star)^\top Q_c (x - x^\star)` with :math:`\mu I \preceq Q_c
\preceq L I` fitted to the class's mean points (:func:`flbounds.pep.witness.fit_quadratic`),
interpolates the worst case. The instance (N clients, client :math:`i \in C_c` given
:math:`Q_c`) is run through ``flbounds.algorithms.fedavg`` at the full N; its exact
expectation over the participation needs one run per value of the class counts :math:`K`
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


def fedavg_symmetric_witness(mu, L, participation, classes, local_steps, step) -> ScaledWitness:
    r"""The worst one-round :math:`E\|x_1 - x^\star\|^2 / \|x_0 - x^\star\|^2` of FedAvg (mean
    over S, clients sharing :math:`x^\star`) over quadratics, from a symmetric solve, and the
    ratio ``flbounds.algorithms.fedavg`` attains on the rebuilt instance at the full N.

    Parameters
    ----------
    mu, L : float
        :math:`0 \le \mu \le L`.
    participation : process
        Exchangeable within each class (:func:`~flbounds.pep.classlaw.class_law`), N clients.
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

    from .describe import Setting, distance
    from .described import fedavg_round
    from .sdp import solve
    from .symmetric import build_symmetric

    n = participation.n_clients
    setting = Setting(n, mu, L, function_class="quadratic", common_minimizer=True)
    problem, parts = build_symmetric(fedavg_round(local_steps, step), setting, distance(),
                                     participation, classes=classes)
    info = solve(problem)
    space, law, groups = parts["space"], parts["law"], parts["classes"]
    x0 = np.asarray(parts["start"][0]["x"].eval(), float)
    dim = x0.size
    per_class, residual, deviation = [], 0.0, 0.0
    for f in parts["funcs"]:
        xs, gs, dev, size = _points(f, space)
        D = np.column_stack([np.zeros(dim) if x is None else x for x in xs])
        G = np.column_stack([np.zeros(dim) if g is None else g for g in gs])
        Q, res = fit_quadratic(D, G, mu, L)
        per_class.append(Q)
        residual = max(residual, res)
        deviation = max(deviation, dev / max(size, 1e-300))
    labels = groups.labels()
    A = np.stack([per_class[c] for c in labels])
    b = np.zeros((n, dim))
    instance = Quadratic(A, b)
    start = time.perf_counter()
    total = 0.0
    for counts, prob in zip(law.counts.astype(int), law.probs, strict=True):
        mask = np.zeros(n, dtype=bool)
        for group, k in zip(groups.groups, counts, strict=True):
            mask[list(group[:k])] = True
        x1 = fedavg(instance, mask[None, :], step=step, local_steps=local_steps, x0=x0).x[-1]
        total += prob * float(np.sum((x1 - instance.x_star) ** 2))
    ratio = total / float(np.sum((x0 - instance.x_star) ** 2))
    witness = Witness(replayed=ratio, pep=info.worst, fit_residual=residual,
                      A=np.stack(per_class), b=np.zeros((len(per_class), dim)), x0=x0)
    return ScaledWitness(witness, groups.groups, deviation, time.perf_counter() - start)


__all__ = ["ScaledWitness", "fedavg_symmetric_witness"]
