r"""FedAvg's worst one-round contraction, with the exact expectation over participation.

Round: every :math:`i \in S` runs ``local_steps`` gradient steps from the server model
:math:`x`, reaching :math:`z_i`; the server takes :math:`x^+ = \sum_{i \in S} z_i / |S|`
(:math:`x^+ = x` when :math:`S = \emptyset`), as ``flbounds.algorithms.fedavg``.

- ``common_minimizer=True``: every :math:`f_i` is minimized at the same :math:`x^\star`; the
  metric is :math:`E\|x^+ - x^\star\|^2 / \|x - x^\star\|^2`.
- ``common_minimizer=False`` (heterogeneous clients): FedAvg does not converge to
  :math:`x^\star = \arg\min \sum_i f_i` (its limit is biased), so a rate towards
  :math:`x^\star` does not exist. The metric is then the contraction of two runs with the same
  clients and the same participation, :math:`E\|x^+ - \tilde x^+\|^2 / \|x - \tilde x\|^2`:
  the rate at which FedAvg forgets its start (and reaches its own stationary law).
- ``homogeneous=True``: all clients share one function (FOCUS Cor. 3's setting).

The expectation is exact: :math:`E\|\sum_i s_i z_i/|S|\|^2` needs only
:math:`W_{ij} = E[s_i s_j/|S|^2]` and :math:`P(\emptyset)` (:mod:`flbounds.pep.moments`).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import check_int, check_positive

from .anchor import anchored_minimizer, origin
from .gd import check_class
from .moments import participation_moments
from .result import WorstCase, make_result
from .rounds import gd_steps, weighted_gram
from .sdp import solve


def _functions(problem, mu, L, n_clients, homogeneous):
    from PEPit.functions import SmoothStronglyConvexFunction

    if homogeneous:
        func = problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
        return [func] * n_clients
    return [problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L)
            for _ in range(n_clients)]


def _reference_point(problem, funcs, common_minimizer):
    """x* shared by all clients (zero gradient for each), or the second start; at the origin
    (translation symmetry, :mod:`.anchor`)."""
    if not common_minimizer:
        return origin(), False
    return anchored_minimizer(funcs, common=True), True


def fedavg_rate(mu, L, n_clients, local_steps, step, participation=None,
                common_minimizer=False, *, homogeneous=False, printed=None) -> WorstCase:
    r"""Worst one-round contraction of FedAvg over L-smooth mu-strongly convex clients.

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L`` (every client).
    n_clients, local_steps : int
        :math:`N \ge 1`, :math:`\tau \ge 1`.
    step : float
        Local step :math:`\eta > 0`.
    participation : None, bool vector or a process of ``flbounds.participation``
        None: full participation; a bool vector: that fixed set; a process: the exact
        expectation over its subset law.
    common_minimizer : bool
        See the module docstring.
    homogeneous : bool
        All clients share one function (implies a common minimizer).
    printed : float, optional
        A printed rate to report next to the worst case.

    Returns
    -------
    WorstCase
    """
    from PEPit import PEP

    mu, L = check_class(mu, L)
    n = check_int(n_clients, "n_clients", minimum=1)
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")
    moments = participation_moments(participation, n)
    problem = PEP()
    funcs = _functions(problem, mu, L, n, homogeneous)
    ref, is_star = _reference_point(problem, funcs, common_minimizer or homogeneous)
    x = problem.set_initial_point()
    problem.set_initial_condition((x - ref) ** 2 <= 1)
    diffs = []
    for f in funcs:
        z = gd_steps(f, x, step, tau)
        diffs.append(z - ref if is_star else z - gd_steps(f, ref, step, tau))
    metric = weighted_gram(diffs, diffs, moments.avg_pair)
    if moments.empty > 0:
        metric = metric + moments.empty * (x - ref) ** 2
    problem.set_performance_metric(metric)
    what = "E||x+ - x*||^2 / ||x - x*||^2" if is_star else \
        "E||x+ - x~+||^2 / ||x - x~||^2 (two runs, same clients and participation)"
    return make_result(solve(problem), printed=printed, metric=what,
                       params=dict(mu=mu, L=L, n_clients=n, local_steps=tau, step=step,
                                   common_minimizer=bool(common_minimizer),
                                   homogeneous=bool(homogeneous),
                                   empty_probability=moments.empty,
                                   inclusion=np.round(moments.inclusion, 12).tolist()))
