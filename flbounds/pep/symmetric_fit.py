r"""The instance rebuilt from a symmetric solve over quadratics: one quadratic per class.

:func:`symmetric_instance` solves one round over L-smooth :math:`\mu`-strongly convex
quadratics sharing :math:`x^\star = 0` in the symmetric form (:mod:`flbounds.pep.symmetric`),
fits to each class representative's mean points and gradients a quadratic within its class's
:math:`[\mu_c, L_c]` (:func:`flbounds.pep.witness.fit_quadratic`), and lays the start
state's free points out on the N clients (the class's mean point on each of its clients).
The witnesses of :mod:`flbounds.pep.symmetric_witness` replay it at the full N; the
module docstring there says when one function per class reaches the solved value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .witness import fit_quadratic


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
    info = solve(problem, reuse=False)  # the points are read: a stored value cannot stand in
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


def _mean_point(point, space):
    mean = space.split(point)[0]
    return np.asarray(mean.eval(), float)


@dataclass(frozen=True)
class ClassInstance:
    """The instance rebuilt from a symmetric solve over quadratics (:func:`symmetric_instance`).

    Attributes
    ----------
    problem : flbounds.problems.Quadratic
        N clients, client i of class c given class c's fitted quadratic (minimizer 0).
    free : dict
        The start's free points: a server point's array, a client point's (N, d) array (the
        class's mean point on each of its clients); for :func:`flbounds.pep.replay.start_state`.
    law : ClassLaw or CountClassLaw
        The solve's law of the class counts.
    per_class : tuple of ndarray
        Each class's Hessian :math:`Q_c`.
    worst : float
        The solve's worst case.
    fit_residual, deviation : float
        The largest fit residual (:func:`~flbounds.pep.witness.fit_quadratic`) and the largest
        deviation part relative to the largest point (module docstring).
    """

    problem: object
    free: dict
    law: object
    per_class: tuple
    worst: float
    fit_residual: float
    deviation: float


def symmetric_instance(round_, measure, mu, L, participation, classes) -> ClassInstance:
    r"""Solve one round of ``round_`` over quadratics sharing :math:`x^\star = 0` in the
    symmetric form and rebuild its worst case at the full N: one quadratic per class, fitted
    to the representative's mean points within the class's :math:`[\mu_c, L_c]`, and the
    start state's free points (module docstring).

    Parameters
    ----------
    round_ : Round
        Any described round the symmetric form takes (not a ``Mixture``).
    measure : Measure
        One run, of the form the symmetric form takes.
    mu, L : float or sequence of float
        :math:`0 < \mu \le L`, one value or one per client (equal within each class).
    participation : process
        Exchangeable within each class, or drawing with replacement with one draw
        probability per class.
    classes : partition of the N clients

    Returns
    -------
    ClassInstance

    Raises
    ------
    ValueError
        Naming ``measure`` for a two-run measure; the symmetric form's own errors.
    """
    from flbounds.problems import Quadratic

    if measure.runs != 1:
        raise ValueError("measure: a witness replays one instance, not two runs")
    info, parts, per_class, residual, deviation = _rebuild(round_, measure, mu, L,
                                                           participation, classes)
    labels, space = parts["classes"].labels(), parts["space"]
    server, clients = parts["start"]
    derived = round_.initial
    free = {k: np.asarray(v.eval(), float) for k, v in server.items() if k not in derived}
    for name in round_.client_state:
        if name not in derived:
            means = [_mean_point(own[name], space) for own in clients]
            free[name] = np.stack([means[c] for c in labels])
    dim = free["x"].size
    problem = Quadratic(np.stack([per_class[c] for c in labels]),
                        np.zeros((labels.size, dim)))
    return ClassInstance(problem, free, parts["law"], tuple(per_class), info.worst, residual,
                         deviation)


__all__ = ["ClassInstance", "symmetric_instance"]
