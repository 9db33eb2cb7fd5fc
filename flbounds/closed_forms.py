"""Exact limits of FedAvg on quadratic clients, under their public name.

A re-export of :mod:`flbounds.theory.fedavg_limits`.
"""

from flbounds.theory.fedavg_limits import (  # noqa: F401
    fedavg_fixed_point,
    fedavg_stationary_moments,
    local_maps,
    shared_hessian_fixed_point,
    stationary_error,
    virtual_phase_errors,
    weighted_minimizer,
)
