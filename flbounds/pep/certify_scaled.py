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
the objective *is* :math:`w r^2` (``exact``) and :math:`w \le 0`, it is at most 0 pointwise
and 0 is the bound; a lower bound :math:`w \le 0` proves nothing (no bound).

Values bounded by a constant. An anchor's value may be bounded independently of :math:`r`
(SAFARI's non-convex rounds: :math:`0 \le F(x_0) - F^\star \le c`). Every leaf value is then
within :math:`C + \phi_k r^2` (:func:`.certify.leaf_bounds`: the anchor's value plus terms
quadratic in the leaves), and :math:`\sum_k |d_k| C` joins the constant:
:math:`o \le (k + \rho + \sum_k |d_k| C) / (1 - (E + \rho)/w)`.

The weight. For :math:`o = \sum_t p_t \|\nabla f(x_t)\|^2` (weights :math:`p_t \ge 0`) with
:math:`r = \|\nabla f(x_0)\|`, :math:`\|\nabla f(x_t)\| \ge r - L\|x_t - x_0\| \ge r(1 - L
b_t)` with :math:`b_t` the unit bound of :math:`\|x_t - x_0\|`, so :math:`w = \sum_t p_t
\max(0, 1 - L b_t)^2` (:func:`gradient_weight`).

Constants per function. The unit bounds come from :func:`.certify.leaf_bounds`, which bounds
each function's leaves with its own ``f.L``; ``L`` here is that of the function whose
gradient norm is the scale (:func:`gradient_weight`: :math:`\|\nabla f(x_t)\| \ge r - L
\|x_t - x_0\|` is about that one function). The rounds certified this way
(:mod:`.descent`, :mod:`.server_steps`) have one function or identical clients, so no
per-client constant reaches them.
"""

from __future__ import annotations

import math

from .certify import bracket_tolerance, certify, leaf_bounds
from .sdp import SOLVERS, PEPSolveError, SolveInfo, attempts, reused


def gradient_weight(terms, x0, L, bound_of) -> float:
    r""":math:`w = \sum_t p_t \max(0, 1 - L b_t)^2` of the module docstring.

    Parameters
    ----------
    terms : iterable of (float, PEPit.Point)
        ``(p_t, x_t)``: the objective is :math:`\sum_t p_t \|\nabla f(x_t)\|^2`.
    x0 : PEPit.Point
        The point whose gradient norm is the scale :math:`r`.
    L : float
        Smoothness constant.
    bound_of : callable
        ``bound_of(point)``: a bound on the point's norm in units of :math:`r`.

    Returns
    -------
    float
        :math:`w \ge 0`.

    Raises
    ------
    ValueError
        On a negative weight :math:`p_t`.
    """
    total = 0.0
    for p, x in terms:
        if p < 0:
            raise ValueError(f"terms: weights must be >= 0, got {p}")
        total += p * max(0.0, 1.0 - L * bound_of(x - x0)) ** 2
    return total


def scaled_upper(cert, weight, constant=0.0, exact=False) -> float:
    """The upper bound of the module docstring from a unit-scale :class:`.certify.Certificate`.

    Parameters
    ----------
    cert : Certificate
        :func:`.certify.certify` with the leaves' bounds in units of :math:`r`.
    weight : float
        :math:`w` with :math:`o \\ge w r^2` on the feasible set.
    constant : float
        :math:`\\sum_k |d_k| C`, the value leftover of the constant value bounds.
    exact : bool
        The objective equals :math:`w r^2` (then :math:`w \\le 0` gives the bound 0).

    Returns
    -------
    float
        The bound, or ``inf`` when :math:`E + \\rho \\ge w` (or :math:`w \\le 0`, not
        ``exact``).
    """
    if weight <= 0:
        return 0.0 if exact else float("inf")
    rounding = cert.upper - cert.dual - cert.eig_excess - cert.value_leftover
    slope = (cert.eig_excess + cert.value_leftover + rounding) / weight
    if not slope < 1:
        return float("inf")
    return (cert.dual + rounding + constant) / (1 - slope)


def solve_scaled(build, L, weight=None, *, exact=False) -> SolveInfo:
    """Solve a PEP (each solver of :data:`.sdp.SOLVERS` in turn) and accept the scaled
    certified bound of the first solve whose bracket [primal value, bound] is within
    :func:`.certify.bracket_tolerance`.

    Parameters
    ----------
    build : callable
        ``build()`` returns ``(problem, funcs, initial)`` or ``(problem, funcs, initial,
        weight)`` (then ``weight`` here is not used): the :class:`PEPit.PEP`, its
        functions (each anchored at a bounded point) and the leaves' bounds
        (:func:`.certify.leaf_bounds`): points in units of the scale :math:`r`, leaf
        expressions (anchor values) by constants (module docstring).
    L : float
        Smoothness constant of every function.
    weight : float or callable
        :math:`w`, with the objective :math:`\\ge w r^2` on the feasible set, or
        ``weight(bound_of)`` computing it from ``bound_of(point)``, a bound on a point's norm
        in units of :math:`r` (e.g. :func:`gradient_weight`).
    exact : bool
        The objective equals :math:`w r^2` (:func:`scaled_upper`).

    Returns
    -------
    SolveInfo
        ``worst`` the bound, status ``certified (<solver status>)``, ``gap`` the bracket.

    Raises
    ------
    PEPSolveError
        When no solve gives a bracket within the tolerance.
    """
    problem, funcs, initial, *rest = build()
    weight = rest[0] if rest else weight
    # the key: the SDP and the way its bound is computed (a computed weight is a function of
    # the SDP)
    how = [("certified-scaled", {"L": float(L), "weight": "computed" if callable(weight)
                                 else float(weight), "exact": bool(exact)})]
    return reused(problem, lambda: _scaled(problem, funcs, initial, L, weight, exact),
                  solvers=how)


def _scaled(problem, funcs, initial, L, weight, exact) -> SolveInfo:
    from PEPit import Point

    from .certify import _norm_bound

    points = {k: b for k, b in initial.items() if isinstance(k, Point)}
    constants = {k: b for k, b in initial.items() if not isinstance(k, Point)}
    unit, scaled = leaf_bounds(funcs, {**points, **dict.fromkeys(constants, 0.0)}, L)
    _, fixed = leaf_bounds(funcs, {**dict.fromkeys(points, 0.0), **constants}, L)
    if callable(weight):
        weight = float(weight(lambda point: _norm_bound(point, unit)))
    failures = []
    for name, _dual, status, seconds in attempts(problem, SOLVERS, failures):
        if problem.G_value is None or problem.wrapper.objective.value is None:
            failures.append(f"{name}: status {status}, no values")
            continue
        both = certify(problem, unit, {k: scaled[k] + fixed[k] for k in scaled})
        rounding = both.upper - both.dual - both.eig_excess - both.value_leftover
        leftover = certify(problem, unit, scaled).value_leftover
        constant = certify(problem, unit, fixed).value_leftover
        cert = both._replace(value_leftover=leftover,
                             upper=both.dual + both.eig_excess + leftover + rounding)
        upper = scaled_upper(cert, weight, constant, exact)
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


__all__ = ["gradient_weight", "scaled_upper", "solve_scaled"]
