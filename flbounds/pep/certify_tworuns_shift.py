r"""Two runs pinned by a linear shift: a certificate that covers the rounding of the SDP's own
coefficients, for rounds that evaluate gradients only at start points.

Why. :mod:`.certify_tworuns` bounds a two-run PEP as built: its float64 coefficients are
read as exact rationals, because the second run's leaves are unbounded and any rounding
allowance would multiply them. When the second run's leaves vanish on the feasible set,
:math:`\operatorname{tr} G` is bounded a priori and :mod:`.certify`'s certificate, whose
rounding allowances (:data:`.certify_terms.ROUNDING`) cover the coefficients too, applies.

**The shift.** Every class used here (smooth strongly convex, smooth, quadratic) is closed
under :math:`f_i \to f_i + \langle a_i, \cdot\rangle + c_i`. Suppose (checked by
:func:`shift_pinnable` on the built PEP):

(a) the second run's start has no free point: every one of its leaves is a gradient (its
    model is pinned at 0 by translation, :func:`.engine.build`; the client state is the
    model or derived from it), and
(b) every gradient of either run is evaluated at a point that is a combination of start
    points only (no gradient in it): one gradient evaluation per client and start point,
    e.g. FedAvg or K-Vib with one local step.

Then under the shift the evaluation points of both runs do not move (by (b), they are fixed
combinations of the start points), each gradient of client i moves by :math:`a_i` in both
runs, and every point a round makes is a fixed linear combination of start points and
gradients, with the same coefficients in both runs (the same operations, the same
participation): every difference of the two runs, hence the measure and its initial
condition, is unchanged. With :math:`a_i = -\nabla f_i(0)`, :math:`c_i = -f_i(0)` every
client is stationary at the second run's start with value 0, and by (a) and (b) every
gradient of the second run is evaluated at 0. So the PEP with those gradients pinned
(:math:`\|g\|^2 \le 0`, value 0: :func:`pin_second_run`) has the same value: its feasible
set is a subset, and the shift maps every feasible instance into it with the same
objective (the interpolation conditions of these classes are exact, so a feasible point is
an instance). Checked against the unpinned value in
``tests/flbounds/pep/test_certify_tworuns_shift.py``.

Pinned, the second run's leaves are 0, each client's anchor is its point at 0 (gradient and
value 0), the first run's start points are bounded by :math:`V \le 1` at the start
difference (:func:`.certify_derived.norm_bound`, exact and rounded upwards, read from the
PEP's initial condition; exact for its float coefficients, e.g. the exact ones of
:math:`\|x - \tilde x\|^2`), and :func:`.certify.solve_certified` gives the bound, its
rounding allowances covering the coefficients of the constraints and the objective.

**Where the argument fails.** With more than one local step, a gradient is evaluated at a
point that depends on an earlier gradient; the shift then moves the evaluation points of
both runs, differently, and for a non-quadratic class the gradients there change by more
than :math:`a_i`: the difference is not preserved (for quadratics it is, since
:math:`\nabla f_i` is affine: :func:`.certify_tworuns.pin_stationary`). A client state other
than the model (FOCUS's tracking points, SCAFFOLD's control variates, MIFA's memory, a server
momentum) gives the second run free start leaves that no shift pins (a shift has one vector
per client, spent on the stationary point): (a) fails and :math:`\operatorname{tr} G` stays
unbounded.
"""

from __future__ import annotations

from .certify_derived import norm_bound, quadratic_form
from .sdp import PEPSolveError


def _distinct(funcs):
    return list({id(f): f for f in funcs}.values())


def shift_pinnable(parts) -> bool:
    """Whether a built two-run PEP meets (a) and (b) of the module docstring.

    Parameters
    ----------
    parts : dict
        From :func:`.engine.build` (direct form, two runs).

    Returns
    -------
    bool
    """
    runs = parts.get("runs")
    if runs is None or parts.get("other") is None or "space" in parts:
        return False
    funcs = _distinct(parts["funcs"])
    grads = {id(g) for f in funcs for _u, g, _v in f.list_of_points if g.get_is_leaf()}
    if any(id(p) not in grads for p in runs[1]):
        return False                                                # (a)
    return not any(id(leaf) in grads for f in funcs for u, _g, _v in f.list_of_points
                   for leaf in u.decomposition_dict)               # (b)


def pin_second_run(problem, parts) -> dict:
    """Pin every gradient of the second run at 0 and its value at 0 (module docstring).

    Parameters
    ----------
    problem : PEPit.PEP
        Built, unsolved; the constraints are added to it.
    parts : dict
        Its parts (:func:`.engine.build`, two runs).

    Returns
    -------
    dict
        ``{gradient leaf: 0, value leaf: 0}``: bounds for :func:`.certify.leaf_bounds`.

    Raises
    ------
    ValueError
        Naming ``runs`` when a gradient of the second run is evaluated away from 0.
    """
    second = {id(p) for p in parts["runs"][1]}
    fixed = {}
    for f in _distinct(parts["funcs"]):
        for u, g, v in f.list_of_points:
            if id(g) in second:
                if u.decomposition_dict:
                    raise ValueError("runs: a gradient of the second run is evaluated away "
                                     "from its pinned start")
                problem.add_constraint(g ** 2 <= 0)
                problem.add_constraint(v == 0)
                fixed[g], fixed[v] = 0.0, 0.0
    return fixed


def start_bounds(problem, parts) -> dict:
    """``{first run's free start point: bound}`` from the PEP's initial condition
    :math:`V(\\text{start difference}) \\le 1` (:mod:`.certify_derived`: exact, rounded up).

    Parameters
    ----------
    problem : PEPit.PEP
        Built by :func:`.engine.build` (its constraint named "Initial condition").
    parts : dict
        Its parts.

    Returns
    -------
    dict
        ``{leaf: bound}``.

    Raises
    ------
    PEPSolveError
        When :math:`V \\le 1` leaves a free start point unbounded (no certificate).
    """
    initial = [c for c in problem.list_of_constraints if c.get_name() == "Initial condition"]
    if len(initial) != 1:
        raise ValueError("problem: one initial condition expected")
    leaves, q, c0 = quadratic_form(initial[0].expression)   # V - 1 <= 0
    bound = {id(p): norm_bound(q, c0 + 1, k) for k, p in enumerate(leaves)}
    grads = {id(g) for f in _distinct(parts["funcs"]) for _u, g, _v in f.list_of_points}
    free = [p for p in parts["runs"][0] if id(p) not in grads]
    out = {p: bound.get(id(p), float("inf")) for p in free}
    if any(b == float("inf") for b in out.values()):
        raise PEPSolveError("no certificate: V <= 1 at the start difference leaves a start "
                            "point of the first run unbounded")
    return out


def solve_shifted(build, L):
    """The certified solve of a two-run PEP meeting :func:`shift_pinnable`: its second run
    pinned (:func:`pin_second_run`), then :func:`.certify.solve_certified`.

    Parameters
    ----------
    build : callable
        ``build()`` returns ``(problem, parts)`` from :func:`.engine.build` (unsolved).
    L : float
        The largest smoothness constant.

    Returns
    -------
    SolveInfo
        As :func:`.certify.solve_certified` (an accurate solve's dual value, or the
        certified bound with status ``certified (...)``).

    Raises
    ------
    ValueError
        Naming ``runs`` when the PEP does not meet :func:`shift_pinnable`.
    PEPSolveError
        When no solve gives a bracket within the tolerance, or :math:`V` leaves a start point
        unbounded.
    """
    from .certify import solve_certified

    def parts_of():
        problem, parts = build()
        if not shift_pinnable(parts):
            raise ValueError("runs: the second run has free start points or a gradient at a "
                             "point that depends on a gradient (no shift pins it)")
        fixed = pin_second_run(problem, parts)
        return problem, _distinct(parts["funcs"]), {**start_bounds(problem, parts), **fixed}

    return solve_certified(parts_of, L)


def shifted_first(build):
    """:func:`solve_shifted`'s solve when the built PEP meets :func:`shift_pinnable` and is
    not over the quadratic class (pinned by its stationary points instead,
    :func:`.certify_tworuns.pin_stationary`); None otherwise, or when no bracket is found
    (:func:`.certify_tworuns.solve_two_runs` then tries its margin certificate)."""
    problem, parts = build()
    funcs = _distinct(parts.get("funcs", ()))
    if problem.list_of_psd or any(type(f).__name__ == "SmoothStronglyConvexQuadraticFunction"
                                  for f in funcs) or not shift_pinnable(parts):
        return None
    try:
        return solve_shifted(build, max(float(f.L) for f in funcs))
    except PEPSolveError:
        return None


__all__ = ["pin_second_run", "shift_pinnable", "shifted_first", "solve_shifted",
           "start_bounds"]
