r"""Fix the symmetries of a PEP: one point at the origin, one function value at zero.

Every function class used here is invariant under translating all points (:math:`f(\cdot - v)`
is in the class) and, for each function separately, under adding a constant. The PEPs built on
them only involve differences of points and differences of one function's values, so the
optimal value does not change when one point is pinned at the origin and each function's value
at that point is pinned at zero. Left free, these symmetries are directions along which the
Gram matrix and the function values are unbounded: the primal feasible set has a lineality
space, the dual slack matrix cannot be positive definite (no strictly feasible dual), and the
interior-point solvers stop at ``optimal_inaccurate`` on badly scaled instances. Measured on
SAFARI's non-convex rounds (``safari_nonconvex_rate``) at q = 0, K = 1, R = 3 and a quarter of
the step of ``safari.thm4.tightness``'s grid: free start and free :math:`F^\star`, Clarabel
and SCS ``optimal_inaccurate`` (gap 2.8e-5); start at the origin and :math:`F^\star = 0`,
Clarabel ``optimal``, gap 2.4e-7, same value to 1e-7 relative.

Fresh zero objects are made per problem: PEPit caches a point's value after a solve, so the
shared ``PEPit.null_point`` would carry a stale vector from one problem to the next.
"""

from __future__ import annotations


def origin():
    """A fresh zero :class:`PEPit.Point` (no Gram coordinate)."""
    from PEPit import Point

    return Point(is_leaf=False, decomposition_dict={})


def zero():
    """A fresh zero :class:`PEPit.Expression` (no function-value coordinate)."""
    from PEPit import Expression

    return Expression(is_leaf=False, decomposition_dict={})


def anchored_minimizer(funcs, *, common=False, at_origin=True):
    r"""The minimizer :math:`x^\star` of :math:`\sum_i f_i`, placed at the origin.

    Each distinct function gets the point :math:`(0, g_i, 0)`: value zero (its constant is
    free), gradients :math:`g_i` free with :math:`\sum_i g_i = 0`, or every :math:`g_i = 0`
    with ``common=True`` (a minimizer shared by every client). A function listed several times
    (identical clients) is one function, stationary at the origin.

    Parameters
    ----------
    funcs : list of PEPit functions
    common : bool
        Every function is stationary at :math:`x^\star`.
    at_origin : bool
        Pin :math:`x^\star` at the origin (default), or keep it a free point and pin only the
        function values (measured better conditioned on the FOCUS Lyapunov PEP, whose state
        is measured from :math:`x^\star`: N = 2, tau = 2, eta = 0.01 solves ``optimal`` in
        0.2 s with free x*, 4.8 s with nothing pinned, ``optimal_inaccurate`` with x* = 0).

    Returns
    -------
    PEPit.Point
        :math:`x^\star` (the origin).
    """
    from PEPit import Point

    distinct = list({id(f): f for f in funcs}.values())
    x_star = origin() if at_origin else Point()
    if common or len(distinct) == 1:
        grads = [origin() for _ in distinct]
    else:
        weights = [sum(1 for g in funcs if g is f) for f in distinct]
        grads = [Point() for _ in distinct[:-1]]
        last = origin()
        for w, g in zip(weights, grads, strict=False):
            last = last - w * g
        grads.append((1 / weights[-1]) * last)
    for f, g in zip(distinct, grads, strict=True):
        f.add_point((x_star, g, zero()))
    return x_star


def minimizer(funcs, form):
    r"""The minimizer of :math:`\sum_i f_i` in one of three equivalent forms: ``"pepit"``
    (PEPit's ``stationary_point``, nothing pinned), ``"values"`` (function values pinned) or
    ``"origin"`` (also the point at the origin)."""
    if form == "pepit":
        from .rounds import point_sum

        return point_sum(funcs).stationary_point() if len(funcs) > 1 else \
            funcs[0].stationary_point()
    if form not in ("values", "origin"):
        raise ValueError(f"form must be 'pepit', 'values' or 'origin', got {form!r}")
    return anchored_minimizer(funcs, at_origin=form == "origin")


__all__ = ["anchored_minimizer", "minimizer", "origin", "zero"]
