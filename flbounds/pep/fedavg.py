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

The round is the description :func:`flbounds.pep.described.fedavg_round` (local gradient
steps, the mean over S, global step 1) built by :func:`flbounds.pep.engine.build`; the
expectation is exact: :math:`E\|\sum_i s_i z_i/|S|\|^2` needs only
:math:`W_{ij} = E[s_i s_j/|S|^2]` and :math:`P(\emptyset)` (:mod:`flbounds.pep.expect`,
:mod:`flbounds.pep.moments`).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import check_int, check_positive

from .describe import Setting, distance, two_runs
from .described import fedavg_round
from .engine import build, solve_built
from .gd import check_class
from .result import WorstCase, make_result


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
    mu, L = check_class(mu, L)
    n = check_int(n_clients, "n_clients", minimum=1)
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")
    is_star = bool(common_minimizer or homogeneous)
    measure = distance() if is_star else two_runs()
    setting = Setting(n, mu, L, identical=bool(homogeneous),
                      common_minimizer=bool(common_minimizer))
    rnd = fedavg_round(tau, step)
    problem, parts = build(rnd, setting, measure, participation)
    law = parts["law"]
    # no accurate solve: the certified bound where it applies (flbounds.pep.engine.solve_built)
    info = solve_built(problem, rnd, setting, measure, participation)
    return make_result(info, printed=printed, metric=measure.label,
                       params=dict(mu=mu, L=L, n_clients=n, local_steps=tau, step=step,
                                   common_minimizer=bool(common_minimizer),
                                   homogeneous=bool(homogeneous),
                                   empty_probability=law.empty_probability,
                                   inclusion=np.round(law.inclusion, 12).tolist()))
