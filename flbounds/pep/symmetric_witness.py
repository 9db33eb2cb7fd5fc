r"""Witnesses at scale: one quadratic per class rebuilt from a symmetric solve, replayed at N.

A symmetric solve (:mod:`flbounds.pep.symmetric`) over the class of L-smooth
:math:`\mu`-strongly convex quadratics returns, per class, the representative's points and
gradients as a mean part plus a deviation part. When the deviations vanish at the optimum,
every client of a class runs the same trajectory, so one quadratic per class,
:math:`f_c(x) = \tfrac12 (x - x^\star)^\top Q_c (x - x^\star)` with :math:`\mu_c I \preceq Q_c
\preceq L_c I` (the class's own constants, which may differ between classes) fitted to the
class's mean points (:func:`flbounds.pep.witness.fit_quadratic`), interpolates the worst
case; the start state is the class's mean points on each of its clients
(:func:`flbounds.pep.symmetric_fit.symmetric_instance`). Any described round (SCAFFOLD,
server momentum, FedAU, MIFA, unbiased weights, a user's round) is replayed on that instance
at the full N through its own description (:func:`symmetric_witness`,
:mod:`flbounds.pep.symmetric_replay`); FedAvg, FOCUS and SCAFFOLD also through
``flbounds.algorithms`` (:func:`fedavg_symmetric_witness`, :func:`focus_symmetric_witness`,
:func:`scaffold_symmetric_witness`). The exact expectation over the participation needs one
run per value of the class counts :math:`K` (given :math:`K`, every set with those counts
gives the same outcome up to a permutation within the classes, the clients of a class being
identical), weighted by the law of :math:`K` (:class:`~flbounds.pep.classlaw.ClassLaw`);
drawn with replacement, one run per value of the class totals and split of the draws between
the clients.
The replayed ratio is a lower bound on the worst case; it reaches it when one function per
class can (always where the solve's deviations vanish: ``deviation``, the largest deviation
norm relative to the largest point norm, a square root of the Gram matrix's deviation block,
so about the square root of the solver's accuracy when it vanishes), otherwise the gap is what
one function per class cannot express.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .symmetric_fit import symmetric_instance
from .witness import Witness


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
        CPU seconds of the replay.
    """

    witness: Witness
    classes: tuple
    deviation: float
    seconds: float


def _witness(instance, replayed, groups, seconds) -> ScaledWitness:
    x0 = instance.free["x"]
    witness = Witness(replayed=replayed, pep=instance.worst,
                      fit_residual=instance.fit_residual, A=np.stack(instance.per_class),
                      b=np.zeros((len(instance.per_class), x0.size)), x0=x0)
    return ScaledWitness(witness, groups, instance.deviation, seconds)


def symmetric_witness(round_, measure, mu, L, participation, classes) -> ScaledWitness:
    r"""The worst case of ``measure`` after one round of any described ``round_`` over
    quadratics sharing :math:`x^\star`, from a symmetric solve, and the exact expectation
    the description attains on the rebuilt instance at the full N
    (:func:`~flbounds.pep.symmetric_fit.symmetric_instance`, replayed by
    :func:`flbounds.pep.symmetric_replay.replay_classes`: one run of the N clients per
    value of the class counts, or per value of the class totals and their split between
    the clients with counts).

    Parameters
    ----------
    round_, measure, mu, L, participation, classes
        As for :func:`~flbounds.pep.symmetric_fit.symmetric_instance`.

    Returns
    -------
    ScaledWitness
        ``witness.replayed`` (on the instance) against ``witness.pep`` (the solve), with the
        ``deviation`` that says whether one function per class can reach the solve.
    """
    from .symmetric_replay import replay_classes

    instance = symmetric_instance(round_, measure, mu, L, participation, classes)
    start = time.process_time()
    replayed = replay_classes(round_, instance.problem, instance.free, instance.law, measure)
    return _witness(instance, replayed, instance.law.classes.groups,
                    time.process_time() - start)


def _runs(instance, run, value):
    """Exact expectation of ``value(run(mask, counts))`` over the instance's class outcomes
    (:func:`~flbounds.pep.symmetric_replay.class_outcomes`) and the CPU seconds it took."""
    from .symmetric_replay import class_outcomes

    start, total = time.process_time(), 0.0
    for mask, counts, prob in class_outcomes(instance.law):
        total += prob * value(run(mask if counts is None else counts))
    return total, time.process_time() - start


def fedavg_symmetric_witness(mu, L, participation, classes, local_steps, step) -> ScaledWitness:
    r"""The worst one-round :math:`E\|x_1 - x^\star\|^2 / \|x_0 - x^\star\|^2` of FedAvg (mean
    over S, clients sharing :math:`x^\star`) over quadratics, from a symmetric solve, and the
    ratio ``flbounds.algorithms.fedavg`` attains on the rebuilt instance at the full N.

    Parameters
    ----------
    mu, L : float or sequence of float
        :math:`0 < \mu \le L`: one value for all clients, or one per client (equal within
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
    from flbounds.algorithms import fedavg

    from .described import fedavg_round
    from .measures import distance

    instance = symmetric_instance(fedavg_round(local_steps, step), distance(), mu, L,
                                  participation, classes)
    x0 = instance.free["x"]
    total, seconds = _runs(instance, lambda plan: fedavg(
        instance.problem, plan[None, :], step=step, local_steps=local_steps, x0=x0).x[-1],
        lambda x1: float(np.sum(x1 ** 2)))
    return _witness(instance, total / float(np.sum(x0 ** 2)), instance.law.classes.groups,
                    seconds)


def focus_symmetric_witness(mu, L, participation, classes, local_steps, step,
                            consensus_weight) -> ScaledWitness:
    r"""The worst one-round :math:`E[\Psi_{r+1}] / \Psi_r` of FOCUS, :math:`\Psi = \|x -
    x^\star\|^2 + c \sum_i \|x - z_i\|^2` (clients sharing :math:`x^\star`), over quadratics,
    from a symmetric solve, and the ratio ``flbounds.algorithms.focus`` attains on the rebuilt
    instance at the full N, started from the solve's state (server model, each client's last
    model :math:`z_i`, its stored gradient :math:`\nabla f_i(z_i)`, :math:`y = \sum_i g_i`).

    **Counts.** ``flbounds.algorithms.focus`` runs sets. The engine solves FOCUS drawn with
    replacement under its count rule (:mod:`flbounds.pep.counts`): a client drawn
    :math:`c_i \ge 1` times runs once and its correction :math:`v_i` enters
    :math:`y^+ = y + \sum_i c_i v_i` :math:`c_i` times, so :math:`y = \sum_i g_i` no longer
    holds after a client is drawn twice. That round is replayed through the description
    (:func:`flbounds.pep.symmetric_replay.replay_classes`, every split of the class totals
    between the clients), not through the algorithm. FOCUS's own reading of a draw with
    replacement is its set of distinct clients (each pushes once; the paper's Case 3 gives
    :math:`p_i = 1 - (1 - q_i)^m`), which is ``focus`` on the support: a different round,
    whose law of sets the symmetric form does not build.

    Parameters
    ----------
    mu, L : float or sequence of float
        :math:`0 < \mu \le L`: one value for all clients, or one per client (equal within
        each class; :class:`~flbounds.pep.describe.Setting`). Class c's quadratic has
        :math:`\mu_c I \preceq Q_c \preceq L_c I`.
    participation : process
        Exchangeable within each class, N clients, or drawing with replacement with one
        draw probability per class (the engine's count rule, above).
    classes : partition of the N clients
    local_steps : int
    step : float
    consensus_weight : float
        :math:`c > 0`.

    Returns
    -------
    ScaledWitness

    References
    ----------
    Ying, Li and Yang, FOCUS, NeurIPS 2025, arXiv:2503.20117, Section 3 (Case 3).
    """
    from flbounds.algorithms import FocusState, focus

    from .classcounts import CountClassLaw
    from .described import focus_lyapunov, focus_round

    c = float(consensus_weight)
    rnd, measure = focus_round(local_steps, step), focus_lyapunov(c)
    instance = symmetric_instance(rnd, measure, mu, L, participation, classes)
    if isinstance(instance.law, CountClassLaw):
        from .symmetric_replay import replay_classes

        start = time.process_time()
        replayed = replay_classes(rnd, instance.problem, instance.free, instance.law, measure)
        return _witness(instance, replayed, instance.law.classes.groups,
                        time.process_time() - start)
    x0, z0 = instance.free["x"], instance.free["z"]
    g0 = np.einsum("nij,nj->ni", instance.problem.A, z0)

    def psi(x, z):
        return float(np.sum(x ** 2) + c * np.sum((x - z) ** 2))

    def run(mask):
        state = FocusState(x0.copy(), g0.sum(axis=0), g0.copy(), z0.copy())
        return focus(instance.problem, mask[None, :], step=step, local_steps=local_steps,
                     start=state)

    total, seconds = _runs(instance, run, lambda trace: psi(trace.x[-1], trace.models))
    return _witness(instance, total / psi(x0, z0), instance.law.classes.groups, seconds)


def scaffold_symmetric_witness(mu, L, participation, classes, local_steps, step,
                               control_weight) -> ScaledWitness:
    r"""The worst one-round :math:`E[V^+] / V` of SCAFFOLD (option II, mean over S),
    :math:`V = \|x - x^\star\|^2 + c \sum_i \|c_i - \nabla f_i(x^\star)\|^2` (clients
    sharing :math:`x^\star`, so :math:`\nabla f_i(x^\star) = 0`), over quadratics, from a
    symmetric solve, and the ratio SCAFFOLD attains on the rebuilt instance at the full N,
    run by ``flbounds.algorithms.fedavg_family`` with
    ``flbounds.algorithms.local_scaffold`` from the solve's state (server model, each
    client's control :math:`c_i`, the server's :math:`c = \sum_i c_i / N`): the same round
    as ``flbounds.algorithms.scaffold``, which starts from zero controls only. Counts are
    run as count plans (a client drawn :math:`c_i` times runs once and enters both
    aggregates :math:`c_i` times, as the engine's count rule has it).

    Parameters
    ----------
    mu, L : float or sequence of float
        :math:`0 < \mu \le L`, one value or one per client (equal within each class).
    participation : process
        Exchangeable within each class, or drawing with replacement with one draw
        probability per class.
    classes : partition of the N clients
    local_steps : int
    step : float
    control_weight : float
        :math:`c > 0`.

    Returns
    -------
    ScaledWitness
    """
    from flbounds.algorithms import fedavg_family, local_scaffold

    from .described import scaffold_lyapunov, scaffold_round

    n = participation.n_clients
    cw = float(control_weight)
    instance = symmetric_instance(scaffold_round(local_steps, step, n),
                                  scaffold_lyapunov(cw), mu, L, participation, classes)
    x0, c0 = instance.free["x"], instance.free["ci"]
    local = local_scaffold(x0.size)

    def value(trace):
        return float(np.sum(trace.x[-1] ** 2) + cw * np.sum(trace.state ** 2))

    total, seconds = _runs(instance, lambda plan: fedavg_family(
        instance.problem, plan[None, :], local, step=step, local_steps=local_steps, x0=x0,
        state0=c0, server0=c0.mean(axis=0)), value)
    start = float(np.sum(x0 ** 2) + cw * np.sum(c0 ** 2))
    return _witness(instance, total / start, instance.law.classes.groups, seconds)


__all__ = ["ScaledWitness", "fedavg_symmetric_witness", "focus_symmetric_witness",
           "scaffold_symmetric_witness", "symmetric_witness"]
