r"""Synthetic federated problems with known constants.

There are :math:`N` clients with weights :math:`p_i \ge 0`, :math:`\sum_i p_i = 1` (the
``weights=`` of every problem; default uniform, :math:`p_i = 1/N`), and the global objective is

.. math:: F(x) = \sum_{i=1}^N p_i f_i(x).

With uniform weights :math:`F` is computed as the plain mean (the same numbers as a problem
without weights); :meth:`with_weights` gives the same clients under other weights.

Clients are an array axis. Every problem has ``n_clients``, ``dim``, the per-client
``client_losses(X)`` / ``client_gradients(X)`` (row ``i`` of ``X`` is client ``i``'s point;
``clients=`` selects a subset), ``loss(x)`` / ``gradient(x)`` of :math:`F`, and the constants
``x_star``, ``F_star``, ``mu`` (all of the weighted :math:`F`), ``L`` (max over clients of
the smoothness constant of :math:`f_i`, the constant the theorems assume of every client),
``client_mu``, ``client_L``, and the heterogeneity constants ``heterogeneity_gradient``
(:math:`\sum_i p_i \|\nabla f_i(x^\star)\|^2`) and ``heterogeneity_gap`` (Li et al.'s
:math:`\Gamma = F^\star - \sum_i p_i f_i^\star`, where it is exact: quadratic and ridge
problems with strongly convex clients; else None). ``mu_is_bound`` / ``L_is_bound`` say whether
``mu`` / ``L`` are exact or only valid bounds; a constant that does not exist is ``None``.
All arrays are float64 and read-only; everything random takes an explicit ``rng``.
"""

from ._base import NEWTON_MAX_ITER, NEWTON_RTOL, SYMMETRY_RTOL
from ._nonlinear import LogisticL2, NonconvexLogistic, ScalarPL
from ._quadratic import Quadratic, Ridge
from .generators import (
    random_logistic,
    random_quadratics,
    random_ridge,
    random_scalar_pl,
    shared_hessian_quadratics,
)

__all__ = [
    "NEWTON_MAX_ITER",
    "NEWTON_RTOL",
    "SYMMETRY_RTOL",
    "LogisticL2",
    "NonconvexLogistic",
    "Quadratic",
    "Ridge",
    "ScalarPL",
    "random_logistic",
    "random_quadratics",
    "random_ridge",
    "random_scalar_pl",
    "shared_hessian_quadratics",
]

