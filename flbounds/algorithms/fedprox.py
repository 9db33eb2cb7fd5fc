r"""FedProx (Li, Sahu, Zaheer, Sanjabi, Talwalkar, Smith, MLSys 2020): local proximal steps.

Round r: every :math:`i \in S_r` pulls :math:`x_r` and runs :math:`\tau` gradient steps on its
proximal objective :math:`h_i(z; x_r) = f_i(z) + \frac{\mu}{2}\lVert z - x_r\rVert^2`,

.. math:: z_{t+1} = z_t - \eta_r\big(\nabla f_i(z_t) + \mu (z_t - x_r)\big),

and the server averages, :math:`x_{r+1} = |S_r|^{-1}\sum_{S_r} z_{\tau,i}` (the paper's
Algorithm 2: devices sampled with probabilities :math:`p_k`, a plain average; an empty round
leaves :math:`x` unchanged). :math:`\mu = 0` is FedAvg. The trace records how inexactly each
participant solved its subproblem, the paper's :math:`\gamma`-inexactness (Definition 2):
:math:`\gamma_{r,i} = \lVert\nabla h_i(z_{\tau,i}; x_r)\rVert / \lVert\nabla f_i(x_r)\rVert`.

The authors' code (``github.com/litian96/FedProx``) draws devices uniformly and averages their
models weighted by sample counts :math:`n_i`; that rule is
``fedavg_family(problem, plan, local_prox(mu), aggregation=aggregation.sample_counts(n))``
(checked against a twin of the code in ``tests/flbounds/algorithms/test_authors_code.py``).

References
----------
T. Li, A. K. Sahu, M. Zaheer, M. Sanjabi, A. Talwalkar, V. Smith. Federated Optimization in
Heterogeneous Networks. MLSys 2020, Algorithm 2, Definition 2.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms.baselines import _setup
from flbounds.validation import check_finite


class FedProxTrace(NamedTuple):
    r"""Trace of :func:`fedprox`.

    Attributes
    ----------
    x : ndarray, shape (n_rounds + 1, d)
        Server iterates.
    mu : float
        The proximal parameter :math:`\mu`.
    inexactness : ndarray, shape (n_rounds, N)
        :math:`\gamma_{r,i}` of every participant (NaN for the others, and where
        :math:`\nabla f_i(x_r) = 0`).

    References
    ----------
    T. Li, A. K. Sahu, M. Zaheer, M. Sanjabi, A. Talwalkar and V. Smith, Federated
    optimization in heterogeneous networks (FedProx), MLSys 2020.
    """

    x: np.ndarray
    mu: float
    inexactness: np.ndarray


def fedprox(problem, plan, *, step, local_steps, mu, x0=None) -> FedProxTrace:
    r"""FedProx with the participation sets of ``plan`` (module docstring gives the update).

    Parameters
    ----------
    problem : flbounds.problems problem
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float, Schedule or array
        Local step :math:`\eta > 0`, or one per round (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`\tau \ge 1` local gradient steps on :math:`h_i`.
    mu : float
        The proximal parameter :math:`\mu \ge 0`.
    x0 : array_like, shape (d,), optional
        Start (default 0).

    Returns
    -------
    FedProxTrace
    """
    plan, steps, local_steps, x, xs = _setup(problem, plan, step, local_steps, x0)
    mu = check_finite(mu, "mu")
    if mu < 0.0:
        raise ValueError(f"mu must be >= 0, got {mu}")
    gamma = np.full(plan.shape, np.nan)
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            Z = np.empty((idx.size, x.size))
            Z[:] = x
            for _ in range(local_steps):
                Z -= steps[r] * (problem.client_gradients(Z, clients=idx) + mu * (Z - x))
            start = np.linalg.norm(problem.client_gradients(np.tile(x, (idx.size, 1)),
                                                            clients=idx), axis=1)
            end = np.linalg.norm(problem.client_gradients(Z, clients=idx) + mu * (Z - x),
                                 axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                gamma[r, idx] = np.where(start > 0.0, end / start, np.nan)
            x = Z.mean(axis=0)
        xs[r + 1] = x
    return FedProxTrace(xs, mu, gamma)
