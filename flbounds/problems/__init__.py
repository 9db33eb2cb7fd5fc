r"""Synthetic federated problems with known constants.

There are :math:`N` clients and the global objective is the plain mean

.. math:: F(x) = \frac1N \sum_{i=1}^N f_i(x).

Clients are an array axis. Every problem has ``n_clients``, ``dim``, the per-client
``client_losses(X)`` / ``client_gradients(X)`` (row ``i`` of ``X`` is client ``i``'s point;
``clients=`` selects a subset), ``loss(x)`` / ``gradient(x)`` of :math:`F`, and the constants
``x_star``, ``F_star``, ``mu``, ``L`` (max over clients of the smoothness constant of
:math:`f_i`), ``client_mu``, ``client_L``. ``mu_is_bound`` / ``L_is_bound`` say whether
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

