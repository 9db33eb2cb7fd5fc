r"""A certified upper bound for a PEP whose feasible set is bounded only through its objective.

:func:`.certify.certify` needs a-priori bounds on every leaf of the Gram matrix. Some PEPs have
none from their initial condition: over the L-smooth (non-convex) class, "one round's decrease
:math:`w_d(f(x) - f(x^+)) \le 1`" bounds :math:`\|\nabla f(x)\|` only through the very
inequality the PEP proves. Their leaves are still bounded *in units of* a free scale
:math:`r` (here :math:`r = \|\nabla f(x)\|`): every later gradient is within :math:`L` times a
combination of earlier leaves (:func:`.certify.leaf_bounds` with :math:`\|g_0\| \le 1`), so
:math:`B_j = b_j r` and :math:`\Phi_k = \phi_k r^2`. When the objective dominates that scale,
:math:`o \ge w r^2` with :math:`w > 0` (for :math:`o = w_g\|\nabla f(x)\|^2`, equality), the
certificate of :mod:`.certify` computed with the unit bounds reads

.. math:: o \le k + \rho + (E + \rho) r^2 \le k + \rho + \frac{E + \rho}{w}\, o,

with :math:`k` the multipliers' dual value, :math:`E` the eigenvalue excess plus the value
leftover at :math:`r = 1` and :math:`\rho` the rounding allowance (counted in both the
constant and the :math:`r^2` part, which over-covers it). Hence, when :math:`E + \rho < w`,

.. math:: o \le \frac{k + \rho}{1 - (E + \rho)/w},

valid whatever the solver's accuracy (the rest of the argument is :mod:`.certify`'s). When
:math:`w \le 0` the objective is at most 0 pointwise (:math:`o = w\,r^2`), and 0 is the bound.
"""

from __future__ import annotations

import math

from .certify import bracket_tolerance, certify, leaf_bounds
from .sdp import SOLVERS, PEPSolveError, SolveInfo, attempts, reused


def scaled_upper(cert, weight) -> float:
    """The upper bound of the module docstring from a unit-scale :class:`.certify.Certificate`.

    Parameters
    ----------
    cert : Certificate
        :func:`.certify.certify` with the leaves' bounds in units of :math:`r`.
    weight : float
        :math:`w` with :math:`o \\ge w r^2` on the feasible set.

    Returns
    -------
    float
        The bound, or ``inf`` when :math:`E + \\rho \\ge w > 0`.
    """
    if weight <= 0:
        return 0.0
    rounding = cert.upper - cert.dual - cert.eig_excess - cert.value_leftover
    slope = (cert.eig_excess + cert.value_leftover + rounding) / weight
    if not slope < 1:
        return float("inf")
    return (cert.dual + rounding) / (1 - slope)


def solve_scaled(build, L, weight) -> SolveInfo:
    """Solve a PEP (each solver of :data:`.sdp.SOLVERS` in turn) and accept the scaled
    certified bound of the first solve whose bracket [primal value, bound] is within
    :func:`.certify.bracket_tolerance`.

    Parameters
    ----------
    build : callable
        ``build()`` returns ``(problem, funcs, initial)``: the :class:`PEPit.PEP`, its
        functions (each anchored at a bounded point) and the leaves' bounds in units of the
        scale :math:`r` (:func:`.certify.leaf_bounds`).
    L : float
        Smoothness constant of every function.
    weight : float
        :math:`w`, with the objective :math:`\\ge w r^2` on the feasible set.

    Returns
    -------
    SolveInfo
        ``worst`` the bound, status ``certified (<solver status>)``, ``gap`` the bracket.

    Raises
    ------
    PEPSolveError
        When no solve gives a bracket within the tolerance.
    """
    problem, funcs, initial = build()
    how = [("certified-scaled", {"L": float(L), "weight": float(weight)})]
    return reused(problem, lambda: _scaled(problem, funcs, initial, L, float(weight)),
                  solvers=how)


def _scaled(problem, funcs, initial, L, weight) -> SolveInfo:
    from PEPit import Point

    bounds = leaf_bounds(funcs, initial, L)
    failures = []
    for name, _dual, status, seconds in attempts(problem, SOLVERS, failures):
        if problem.G_value is None or problem.wrapper.objective.value is None:
            failures.append(f"{name}: status {status}, no values")
            continue
        cert = certify(problem, *bounds)
        upper = scaled_upper(cert, weight)
        width = abs(upper - cert.primal)
        if math.isfinite(upper) and width <= bracket_tolerance(upper):
            return SolveInfo(worst=upper, primal=cert.primal, gap=width, solver=name,
                             status=f"certified ({status})", seconds=seconds,
                             gram_size=int(Point.counter),
                             n_constraints=len(problem._list_of_constraints_sent_to_wrapper),
                             dual_residual=upper - cert.dual)
        failures.append(f"{name}: status {status}, certified {upper:.9g}, primal "
                        f"{cert.primal:.9g}")
    raise PEPSolveError("no certified solve: " + "; ".join(failures))


__all__ = ["scaled_upper", "solve_scaled"]
