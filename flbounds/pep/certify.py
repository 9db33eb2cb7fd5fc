r"""A rigorous upper bound from a solver's multipliers, whatever the solver's accuracy.

Why. On the FOCUS Lyapunov PEP at small steps (p_min = 0.3, N >= 5, steps ~1e-3) the value
:math:`E\Psi^+ \approx 1 - O(\eta)` sits on an O(1) Gram matrix: every interior-point solve
measured (Clarabel with tolerances down to 1e-10, equilibration bounds 1e-6..1e6, static
regularisation 1e-10 and 50 refinement steps, QDLDL; SCS ``eps = 1e-8``) stops at
``optimal_inaccurate`` or at ``optimal`` with two equivalent forms 3.5e-5 apart. Dividing the
objective by :math:`\eta` (maximise :math:`(E\Psi^+ - \Psi)/\eta` on :math:`\Psi = 1`) made
Clarabel fail outright. Better conditioning was not found; a certificate that does not trust
the solver was.

The bound. A PEP maximises the objective :math:`o(G, F)` subject to constraints
:math:`e_i(G, F) \le 0` (or :math:`= 0`), with :math:`G \succeq 0` the Gram matrix of the leaf
points and :math:`F` the leaf function values; each :math:`o, e_i` is affine in
:math:`(G, F)`. For ANY multipliers :math:`\lambda_i` (inequalities clipped to
:math:`\lambda_i \ge 0`), at every feasible point

.. math:: o = \Big(o - \sum_i \lambda_i e_i\Big) + \sum_i \lambda_i e_i
          \le k + \langle M, G\rangle + d^\top F
          \le k + \max(0, \lambda_{\max}(M))\, T + \sum_k |d_k|\, \Phi_k,

(the middle term sharpened to :math:`\sum_{\lambda_k(M) > 0} \lambda_k (\sum_j |v_{kj}| B_j)^2`
over the positive eigenpairs, :math:`B_j` the leaves' norm bounds, :func:`.certify_terms._excess`),
where :math:`k + \langle M, G\rangle + d^\top F = o - \sum_i \lambda_i e_i` is rebuilt here
in float64 from the multipliers (the solver's own dual slack is not used),
:math:`T \ge \operatorname{tr} G` and :math:`\Phi_k \ge |F_k|` are a-priori bounds over the
feasible set. With exact multipliers :math:`M = -S \preceq 0` and :math:`d = 0`, and the bound
is the dual value :math:`k`; the solver's errors only add their own size. Rounding: the
eigenvalue of the float64 :math:`M` is within :math:`n \varepsilon \|M\|_F` of the exact one
(Weyl; eigvalsh is backward stable), and :math:`k, d` carry at most a relative
:math:`m\varepsilon` from the :math:`m` terms summed; :data:`ROUNDING` times those is added.

A-priori bounds (:func:`leaf_bounds`; there in general: any L-smooth client anchored at a
bounded point). They need a bounded feasible set, which the FOCUS PEP
has once every client is stationary at a common :math:`x^\star = 0` with
:math:`f_i(0) = 0` (``anchor.anchored_minimizer(common=True)``; the FOCUS round is invariant
under :math:`f_i \to f_i + \langle a_i, \cdot\rangle` with :math:`\sum_i a_i = 0`, so this loses
nothing: see :mod:`.tracking`). Then for an :math:`L_i`-smooth convex :math:`f_i`,
:math:`\|\nabla f_i(u)\| \le L_i\|u\|` and :math:`0 \le f_i(u) \le \tfrac{L_i}2 \|u\|^2`.
Given bounds on the initial leaf points (from the initial condition), every later leaf is a
gradient at a linear combination :math:`u = \sum_j a_j \ell_j` of earlier leaves, so
:math:`\|u\| \le \sum_j |a_j| B_j` by the triangle inequality, and :math:`B = L_i\|u\|`
(a proximal step's gradient enters its own point: :mod:`.certify_prox`).
Then :math:`T = \sum_\ell B_\ell^2` and :math:`\Phi = \tfrac{L_i}2 B_u^2`. Each client
keeps its own constant (``Setting(n, mu=(...), L=(...))``): the interpolation conditions
are written per function, so each function's leaves are those of an :math:`L_i`-smooth
function whatever the others' constants; bounding them with the largest :math:`L` would be
valid too, only looser, and with a smaller one (the first client's, say) it is no bound.

The lower end of the reported bracket is the solver's primal value (the objective at its Gram
matrix, feasible up to the solver's residuals): it is reported, and a certificate is accepted
only when ``upper - primal`` is within :func:`bracket_tolerance` (1e-4 relative, wider than
the 1e-6 of an accurate solve: the number is less sharp, never less valid), but only
``upper`` is rigorous. A ``violated`` verdict still needs a replayed witness.
"""

from __future__ import annotations

import numpy as np

from .certify_prox import gradient_bound
from .certify_terms import ROUNDING, Certificate, _Affine, _norm_bound
from .sdp import (
    SOLVERS,
    PEPSolveError,
    SolveInfo,
    attempts,
    dual_residual,
    gap_tolerance,
    prepared_multipliers,
    reused,
    solve,
)

#: accepted width of the bracket [solver's primal value, certified bound], relative to
#: max(1, |bound|). The bound is rigorous whatever the width, so a verdict "bound <= printed"
#: is sound at any width; the width only says how close the bound is to the exact worst case.
#: Measured on FOCUS at p = linspace(0.3, 0.9, N), tau = 3, the printed step: 5e-7 (N = 4),
#: 5e-6 (N = 6), 2.5e-5 (N = 8), almost all from the dual slack's positive part times the
#: a-priori norm bounds (Clarabel's multipliers are that far from feasible).
BRACKET_REL = 1e-4


def bracket_tolerance(upper: float) -> float:
    """Largest accepted bracket width at a certified bound ``upper``."""
    return max(gap_tolerance(upper), BRACKET_REL * max(1.0, abs(upper)))


def leaf_bounds(funcs, initial, L):
    r"""A-priori bounds on the norms of the leaf points and on the leaf function values.

    Each function needs an *anchor*: one of its points :math:`(a, g_a, f_a)` whose point,
    gradient and value are bounded by ``initial`` (or are combinations of bounded leaves, e.g.
    :math:`x^\star = 0` with value 0). For every :math:`L_f`-smooth function, convex or not,
    :math:`\|\nabla f(u)\| \le \|g_a\| + L_f\|u - a\|` and :math:`|f(u)| \le |f_a| +
    \|g_a\|\|u - a\| + \tfrac{L_f}2\|u - a\|^2`; the SDP's interpolation conditions of the
    smooth (strongly) convex, quadratic and smooth classes are exact, so every feasible point
    is such a function and the bounds hold on the whole feasible set.

    Per-client constants. The interpolation conditions of a function are those of its own
    class :math:`\mathcal F_{\mu_f, L_f}` (PEPit's ``f.L``): each function's coordinates of a
    feasible point interpolate an :math:`L_f`-smooth function whatever the other functions'
    constants, so both inequalities hold with :math:`L_f` for the leaves of ``f`` (its
    gradients and values), and a leaf of one function is bounded from leaves already bounded
    (the argument is per function, the order of creation is the only link). ``L`` is the
    largest constant: it bounds a function that carries none (``f.L`` absent), and a function
    whose ``f.L`` exceeds it is refused (a caller's ``L`` below a client's constant is a bug:
    e.g. every client given the first client's L).

    Parameters
    ----------
    funcs : list of PEPit functions
        L-smooth, each with an anchor (above).
    initial : dict
        ``{point: bound on its norm}`` for every leaf point that is not a gradient of a
        function at a bounded point, and ``{leaf expression: bound on |value|}`` for every
        leaf function value at an anchor or outside the functions (e.g. a free :math:`F^\star`).
    L : float
        The largest smoothness constant: each function is bounded with its own ``f.L`` (at
        most ``L``), one without ``f.L`` with ``L``.

    Returns
    -------
    (dict, dict)
        ``{id(leaf point): norm bound}``, ``{id(leaf value): |value| bound}``.

    Raises
    ------
    ValueError
        When a function has no anchor, a bound is negative or not finite, or a leaf point is
        neither bounded nor a gradient of a bounded point.
    """
    from PEPit import Point

    if not (np.isfinite(L) and L > 0):
        raise ValueError(f"L must be finite and > 0, got {L}")
    points, values = {}, {}
    for key, b in initial.items():
        if not (np.isfinite(b) and b >= 0):
            raise ValueError(f"initial bounds must be finite and >= 0, got {b}")
        (points if isinstance(key, Point) else values)[id(key)] = float(b)
    source, own = {}, {}
    for f in funcs:
        own[id(f)] = float(getattr(f, "L", L))
        if not own[id(f)] <= L:
            raise ValueError(f"L={L} is below a function's smoothness constant {f.L}")
        for u, g, _v in f.list_of_points:
            if g.get_is_leaf() and id(g) not in points:
                source[id(g)] = (f, u)
    anchors, near = {}, {}   # near: ||u - a|| per gradient leaf (.certify_prox)
    for leaf in Point.list_of_leaf_points:
        if id(leaf) in points:
            continue
        if id(leaf) not in source:
            raise ValueError("initial: a leaf point is neither bounded nor a gradient")
        f, u = source[id(leaf)]
        a, g_a, _ = anchors.get(id(f)) or anchors.setdefault(id(f), _anchor(f, points, values))
        points[id(leaf)], near[id(leaf)] = gradient_bound(
            leaf, u, a, g_a, own[id(f)], getattr(f, "mu", -1.0) >= 0, points)
    for f in funcs:
        a, g_a, f_a = anchors.get(id(f)) or anchors.setdefault(id(f), _anchor(f, points, values))
        for u, g, v in f.list_of_points:
            if v.get_is_leaf() and id(v) not in values:
                d = near[id(g)] if id(g) in near else _norm_bound(u - a, points)
                values[id(v)] = f_a + _norm_bound(g_a, points) * d + 0.5 * own[id(f)] * d**2
    return points, values


def _anchor(f, points, values):
    """``(a, g_a, bound on |f_a|)``: the first point of ``f`` whose point, gradient and value
    are bounded (:func:`leaf_bounds`)."""
    for u, g, v in f.list_of_points:
        try:
            _norm_bound(u, points), _norm_bound(g, points)
            return u, g, _value_bound(v, values)
        except ValueError:
            continue
    raise ValueError("funcs: a function has no point with bounded point, gradient and value "
                     "(an anchor, e.g. anchored_minimizer)")


def _value_bound(v, values):
    total = 0.0
    for leaf, coef in v.decomposition_dict.items():
        if isinstance(leaf, int | float):
            total += abs(float(coef) * float(leaf))
        elif id(leaf) in values:
            total += abs(float(coef)) * values[id(leaf)]
        else:
            raise ValueError("initial: a function value depends on a leaf with no bound")
    return total


def certify(problem, point_bounds, value_bounds, multipliers=None) -> Certificate:
    """Rigorous upper bound on a solved :class:`PEPit.PEP` (module docstring).

    Parameters
    ----------
    problem : PEPit.PEP
        After ``problem.solve`` (any status with values), single performance metric; extra
        LMIs go to :func:`.certify_lmi.certify_lmi` (their duals made PSD).
    point_bounds, value_bounds : dict
        From :func:`leaf_bounds`.
    multipliers : array_like, optional
        One per prepared constraint (default: the solver's); inequality multipliers are
        clipped at 0.

    Raises
    ------
    ValueError
        On a multiplier vector of the wrong length or not finite, or a leaf without a bound.
    """
    from PEPit import Point

    if problem._list_of_prepared_psd:   # the quadratic class: its LMI duals too
        from .certify_lmi import certify_lmi
        return certify_lmi(problem, point_bounds, value_bounds, multipliers)
    constraints, lam = prepared_multipliers(problem, multipliers)
    leaves = Point.list_of_leaf_points
    index = {id(p): k for k, p in enumerate(leaves)}
    if any(id(p) not in point_bounds for p in leaves):
        raise ValueError("point_bounds: a leaf point has no bound")
    if len(problem.list_of_performance_metrics) != 1:
        raise ValueError("problem: the certificate needs exactly one performance metric")
    metric = problem.list_of_performance_metrics[0]
    acc = _Affine(len(leaves), index)
    acc.add(metric.decomposition_dict, 1.0)
    for c, lam_i in zip(constraints, lam, strict=True):
        if id(problem.objective) in {id(k) for k in c.expression.decomposition_dict}:
            continue  # PEPit's "objective <= metric": the metric is the objective here
        weight = max(lam_i, 0.0) if c.equality_or_inequality == "inequality" else lam_i
        if weight != 0.0:
            acc.add(c.expression.decomposition_dict, -weight)
    return acc.bound(point_bounds, value_bounds, leaves, float(metric.eval()))


def solve_certified(build, L, alternatives=(), bounds=None, *, reuse=True) -> SolveInfo:
    """Solve a PEP and accept its certified upper bound (:func:`certify`).

    Each solver of :data:`.sdp.SOLVERS` is tried in turn on the problem. A solve that passes
    :func:`.sdp.solve`'s test (``optimal``, gap and dual residual within tolerance, accurate
    to 1e-6) is returned as there: ``worst`` the dual value, status ``optimal``. Otherwise a
    solve with values is accepted when the certified bound and the solver's primal value
    agree within :func:`bracket_tolerance`: ``worst`` is the certified bound, ``gap`` the
    bracket width, status ``certified (<solver status>)``. ``dual_residual`` is the part of
    the certified bound added to the multipliers' dual value (both cases). An accurate solve
    is preferred because the certificate's bracket (1e-6 to 3e-5 measured) is wider than its
    accuracy; its dual value lies below the certified bound (checked).

    Parameters
    ----------
    build : callable
        ``build()`` returns ``(problem, funcs, initial)``: a fully specified
        :class:`PEPit.PEP`, its functions and ``initial`` for :func:`leaf_bounds`.
    L : float or sequence of float
        The largest smoothness constant, or the clients' constants (their largest is used):
        each function's leaves are bounded with its own ``f.L`` (:func:`leaf_bounds`).
    alternatives : sequence of callables
        Each returns a fresh equivalent :class:`PEPit.PEP` (same optimal value, no certificate
        needed); when the first certified solve is not accurate, each is given
        :func:`.sdp.solve` with the two Clarabel settings of :data:`.sdp.SOLVERS` (SCS, slow,
        is left out), and the first accurate one is returned instead of the certified bound.
    bounds : callable, optional
        ``bounds(funcs, initial)`` returns the a-priori bounds of :func:`leaf_bounds` (default
        ``leaf_bounds(funcs, initial, L)``); the symmetric form gives its own
        (:func:`.certify_symmetric.class_leaf_bounds`).
    reuse : bool
        Whether a stored solve may stand in (:func:`.sdp.solve`'s ``reuse``); False for a
        caller that reads the solved problem's points afterwards (a witness).

    Raises
    ------
    PEPSolveError
        When no solve gives a bracket within the tolerance.
    """

    problem, funcs, initial = build()
    L = float(np.max(L))
    how = [("certified", {"L": L, "alternatives": len(alternatives),
                          "rounding": ROUNDING, "bracket": BRACKET_REL})]
    compute = lambda: _certified(problem, funcs, initial, L, alternatives, bounds)  # noqa: E731
    return reused(problem, compute, solvers=how) if reuse else compute()


def certified_star(build, L, measure) -> SolveInfo:
    """:func:`solve_certified` on a one-run PEP whose clients do not share :math:`x^\\star`
    (direct form, :func:`.engine.build`; any class of :func:`leaf_bounds`, the quadratic one
    with its LMI duals and ``mu > 0``): the free start points are bounded by
    ``measure.bounds``, the free gradients at :math:`x^\\star` by ``measure.star_bounds``
    (either, when not given, derived from :math:`V`: :mod:`.certify_derived`);
    each client's point at :math:`x^\\star` (value 0) is then its anchor, and each quadratic
    stationary point is bounded by :func:`.certify_lmi.stationary_bounds`. With constants per
    client, client i's leaves are bounded with its own :math:`L_i` (:func:`leaf_bounds`) and
    its stationary point with its own :math:`\\mu_i`: :math:`\\|x_s - a\\| \\le \\|g_a\\| /
    \\mu_i` since its Hessian is at least :math:`\\mu_i I`.

    Why every class of :class:`~.describe.Setting`: the argument reads only each function's
    smoothness and the exactness of its interpolation conditions. For the smooth strongly
    convex, the smooth (nonconvex) and the quadratic classes, every feasible point of the SDP
    interpolates a function of the class, :math:`L_i`-smooth, with value 0 and the bounded
    gradient :math:`g_i^\\star` at :math:`x^\\star = 0`, so both inequalities of
    :func:`leaf_bounds` hold from that anchor; convexity is used only by a proximal step
    (:mod:`.certify_prox`). Measured forced inaccurate (FedAvg, tau = 3, N = 3, L = 2,
    ``star_bounds`` 1): brackets 1.1e-7 (smooth strongly convex, mu = 1), 9.6e-6 (smooth).

    Parameters
    ----------
    build : callable
        ``build()`` returns a fresh unsolved PEP and its parts (``funcs``, ``start``,
        ``star``).
    L : float or sequence of float
        The largest smoothness constant, or one per client (:func:`solve_certified`; each
        client's leaves bounded with its own L and, for its stationary point, its own mu).
    measure : Measure
        One run; ``bounds`` and ``star_bounds`` where given, the rest derived from
        :math:`V` (:meth:`.measures.Measure.start_bounds`).

    Returns
    -------
    SolveInfo
        As :func:`solve_certified`.

    Raises
    ------
    ValueError
        Naming ``measure`` when it has two runs.
    PEPSolveError
        When no solve gives a bracket within the tolerance.
    """
    from .certify_lmi import stationary_bounds

    if measure.runs != 1:
        raise ValueError("measure: a certified solve with x* not shared needs a one-run "
                         "measure")

    def parts_of():
        problem, parts = build()
        funcs = list({id(f): f for f in parts["funcs"]}.values())
        initial = measure.start_bounds(parts["start"], parts["star"], funcs)
        return problem, funcs, stationary_bounds(funcs, initial)

    return solve_certified(parts_of, L)


def _certified(problem, funcs, initial, L, alternatives, bounds_of=None) -> SolveInfo:
    from PEPit import Point

    bounds = leaf_bounds(funcs, initial, L) if bounds_of is None else bounds_of(funcs, initial)
    failures = []
    for name, dual, status, seconds in attempts(problem, SOLVERS, failures):
        if problem.G_value is None or problem.wrapper.objective.value is None:
            failures.append(f"{name}: status {status}, no values")
            continue
        cert = certify(problem, *bounds)
        info = dict(solver=name, seconds=seconds, gram_size=int(Point.counter),
                    n_constraints=len(problem._list_of_constraints_sent_to_wrapper),
                    dual_residual=cert.upper - cert.dual)
        if _accurate(problem, status, dual, cert):
            return SolveInfo(worst=float(dual), primal=cert.primal, status=status,
                             gap=abs(float(dual) - cert.primal), **info)
        width = abs(cert.upper - cert.primal)
        if width <= bracket_tolerance(cert.upper):
            certified = SolveInfo(worst=cert.upper, primal=cert.primal, gap=width,
                                  status=f"certified ({status})", **info)
            break
        failures.append(f"{name}: status {status}, certified {cert.upper:.9g}, primal "
                        f"{cert.primal:.9g}")
    else:
        certified = None
    for k, alternative in enumerate(alternatives):  # builds a new PEP: problem is gone
        try:
            return solve(alternative(), solvers=SOLVERS[:2])
        except PEPSolveError as exc:
            failures.append(f"alternative {k}: {exc}")
    if certified is None:
        raise PEPSolveError("no certified solve: " + "; ".join(failures))
    return certified


def _accurate(problem, status, dual, cert):
    """:func:`.sdp.accurate` (read through the module), and the dual value below the
    certified bound."""
    from . import sdp

    if dual is None or not float(dual) <= cert.upper:
        return False
    return sdp.accurate(status, float(dual), cert.primal, dual_residual(problem))


__all__ = ["BRACKET_REL", "Certificate", "bracket_tolerance", "certified_star", "certify",
           "leaf_bounds", "solve_certified"]
