r"""FedAWE (Xiang, Wang, Wang, NeurIPS 2024), a baseline of FOCUS's Table 1.

FedAWE targets heterogeneous, non-stationary client unavailability with two devices:

* adaptive innovation echoing: a client that returns after :math:`t - \tau_i` rounds scales its
  local innovation :math:`G_i = x_t - z_{s,i}` (the move of its :math:`s` local GD steps) by
  that gap, as if it had echoed the same innovation in every round it missed;
* implicit gossiping: the server averages the echoed models of the clients present,
  :math:`x_{t+1} = |A_t|^{-1}\sum_{i\in A_t} (x_t - \eta_g (t - \tau_i) G_i)`, and sets
  :math:`\tau_i \leftarrow t` for them.

An empty round leaves :math:`x` unchanged. The start counts as a participation in round -1,
so a client's first echo factor is the number of rounds it waited plus one.

References
----------
M. Xiang et al., "Efficient federated learning against
heterogeneous and non-stationary client unavailability", NeurIPS 2024, Algorithm 1.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.baselines import BaselineTrace, _local_gd, _setup
from flbounds.validation import check_positive


def fedawe(problem, plan, *, step, local_steps, x0=None, server_step=1.0) -> BaselineTrace:
    r"""FedAWE with participation sets from ``plan`` (module docstring gives the update).

    Parameters
    ----------
    problem : flbounds.problems problem
    plan : array_like of bool, shape (n_rounds, n_clients)
    step : float, Schedule or array
        Local step :math:`\eta > 0`, or one per round (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`s \ge 1` local GD steps per participation.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    server_step : float, default 1.0
        :math:`\eta_g > 0`.

    Returns
    -------
    BaselineTrace
        ``x`` (n_rounds + 1, d), the server model after each round.
    """
    plan, step, local_steps, x, xs = _setup(problem, plan, step, local_steps, x0)
    server_step = check_positive(server_step, "server_step")
    last = np.full(problem.n_clients, -1.0)
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            innovation = x - _local_gd(problem, x, idx, step[r], local_steps)
            echo = (r - last[idx])[:, None]
            x = x - server_step * (echo * innovation).mean(axis=0)
            last[idx] = r
        xs[r + 1] = x
    return BaselineTrace(xs)
