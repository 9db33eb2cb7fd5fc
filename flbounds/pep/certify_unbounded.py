r"""Say why a PEP has no worst case: an unbounded SDP told apart from a solver failure.

Why. When every solver stops at ``unbounded`` (or ``unbounded_inaccurate``), or the start
bounds derived from :math:`V` leave a point free (:mod:`.certify_derived`), no certificate
can exist (no multipliers prove a finite bound) and the plain error reads like a numerical
failure; the cause follows the witness in the message. A worst case is unbounded when the
measure :math:`V \le 1` at the start leaves some start points free and the round carries
them into :math:`V` after it. Measured: FOCUS with
two runs (:func:`.measures.two_runs`, :math:`V = \|x - \tilde x\|^2`) over the quadratic and
the smooth strongly convex classes: the tracking points :math:`z_i` (hence :math:`g_i =
\nabla f_i(z_i)` and :math:`y = \sum_i g_i`) of the two runs may differ without bound, and the
server step reads :math:`y`, so :math:`E\|x^+ - \tilde x^+\|^2` is unbounded; a measure that
also bounds the tracking difference (for example :math:`\|x - \tilde x\|^2 + c\sum_i \|z_i -
\tilde z_i\|^2`, ``two_runs(value=...)``) is the well-posed question. One run with
:math:`x^\star` not shared: FedAvg (3 local steps, step 0.2, N = 3, p = 0.3, 0.5, 0.7,
quadratic class) under :math:`V = \|x - x^\star\|^2` leaves the gradients at :math:`x^\star`
free (:mod:`.certify_derived` names them); witness 2.2475 at :math:`R = 10^2`, 174.6 at
:math:`10^4` (``tests/flbounds/pep/test_certify_derived.py``).

The witness (:func:`unbounded_witness`). The same PEP with :math:`\operatorname{tr} G \le R`
added is bounded; its value :math:`v(R)` at :data:`RADII` is solved with the accuracy test of
:func:`.sdp.solve`. A bounded PEP's value stops growing once :math:`R` exceeds the trace of an
optimal Gram matrix (order 1 under :math:`V \le 1`); along a recession direction it grows
like :math:`aR + b\sqrt R` (the :math:`\sqrt R` from cross terms with the bounded start),
so :math:`v(R_2) \ge \sqrt{R_2/R_1}\, v(R_1) > 0` is the numerical witness (measured on
FOCUS, N = 2, tau = 2, step 0.1, p = 0.3 and 0.7, smooth strongly convex: 4.03 at
:math:`R = 10^2`, 161.1 at :math:`10^4`); the state points :math:`V` does not read
(:func:`unread_state`) name the direction. The direction is reported, not proved: a certificate of
unboundedness is the primal ray, which the interior-point solvers do not return through
PEPit.
"""

from __future__ import annotations

#: the trace bounds of the witness solves
RADII = (1e2, 1e4)


def unread_state(measure, diff):
    """Names of the state points (server, then clients) whose leaves ``measure.value(diff,
    None)`` does not read (``diff`` a :class:`.engine.State` of two runs' difference)."""
    expr = measure.value(diff, None)
    read = set()
    for key in expr.decomposition_dict:
        if isinstance(key, tuple):
            read.update(id(p) for p in key)
    names = []
    points = [(k, v) for k, v in diff.server.items()] + \
        [(k, v) for c in diff.clients for k, v in c.items()]
    for name, point in points:
        leaves = {id(p) for p in point.decomposition_dict}
        if leaves and not leaves & read and name not in names:
            names.append(name)
    return names


def unbounded_witness(build, measure, radii=RADII):
    """A message saying the worst case is unbounded, with the witness of the module
    docstring, or None when the trace-bounded solves do not grow (a solver failure).

    Parameters
    ----------
    build : callable
        ``build()`` returns a fresh unsolved PEP and its parts (:func:`.engine.build`).
    measure : Measure
    radii : (float, float)
        Increasing trace bounds.

    Returns
    -------
    str or None
    """
    from PEPit import Point

    from .sdp import PEPSolveError, solve

    values, parts = [], None
    for r in radii:
        problem, parts = build()
        trace = None
        for p in list(Point.list_of_leaf_points):
            trace = p ** 2 if trace is None else trace + p ** 2
        problem.add_constraint(trace <= r)
        try:
            values.append(solve(problem).worst)
        except PEPSolveError:
            return None
    (r1, r2), (v1, v2) = radii, values
    if not (v1 > 0 and v2 >= (r2 / r1) ** 0.5 * v1):
        return None
    free = ""
    if parts.get("runs") is not None and parts.get("other") is not None:
        names = unread_state(measure, parts["start"] - parts["other"])
        if names:
            free = (f"; V(start difference) <= 1 leaves the difference of {names} free "
                    "(V does not read them), and the round carries it into V after it")
    return (f"the worst case is unbounded: with tr G <= R added, the worst case is "
            f"{v1:.6g} at R = {r1:g} and {v2:.6g} at R = {r2:g} "
            f"(grows at least like sqrt(R)){free}")


__all__ = ["RADII", "unbounded_witness", "unread_state"]
