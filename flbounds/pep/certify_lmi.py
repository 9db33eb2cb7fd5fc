r"""Certified upper bounds for PEPs with extra LMIs (the quadratic class), whatever the
solver's accuracy.

Why. PEPit's smooth strongly convex quadratic class (Bousselmi, Hendrickx and Glineur 2023,
Thm 3.9) is interpolated by linear equalities (each value :math:`f_i - f_s = \tfrac12
\langle x_i - x_s, g_i\rangle`, symmetry :math:`\langle x_i - x_s, g_j\rangle = \langle x_j -
x_s, g_i\rangle`) and one LMI per function, :math:`T(G) \succeq 0` with
:math:`T_{ij} = (L + \mu)\langle g_i, x_j - x_s\rangle - \langle g_i, g_j\rangle - \mu L
\langle x_i - x_s, x_j - x_s\rangle` over its points (:math:`x_s` its stationary point, a leaf
of its own). :mod:`.certify` and :mod:`.certify_margin` read scalar multipliers only, so these
SDPs had no certificate and an inaccurate solve was an error.

The bound. For ANY scalar multipliers :math:`\lambda_i` (inequalities clipped to :math:`\ge 0`)
and ANY matrices :math:`W_f = P_f + A_f` with :math:`P_f \succeq 0` symmetric and :math:`A_f`
antisymmetric, at every feasible point :math:`\langle W_f, T_f(G)\rangle = \langle P_f,
T_f(G)\rangle \ge 0` (:math:`T_f(G)` is symmetric and PSD there: the LMI is sent as a
symmetric matrix equal to :math:`T_f` entrywise, and the symmetry equalities make
:math:`T_{ij} = T_{ji}` anyway), so

.. math:: o \le o - \sum_i \lambda_i e_i + \sum_f \langle W_f, T_f(G)\rangle
          = k + \langle M, G\rangle + d^\top F,

the identity of :mod:`.certify` with the LMI terms added to :math:`M` (each :math:`T_{ij}` is
linear in the Gram matrix: no constant, no value). From there the bound is that of
:mod:`.certify` (a-priori bounds on the leaves: :func:`certify_lmi`) or of
:mod:`.certify_margin` (a margin: :func:`margin_certificate_lmi`), unchanged, with the LMI
terms' coefficients counted in the rounding allowances like every other term.

The LMI multipliers. :math:`W_f` is the solver's multiplier matrix of :math:`T_f \succeq 0`
(:func:`solver_lmi_duals`; an antisymmetric part is free, since :math:`T_f(G)` is symmetric on
the feasible set) whose symmetric part is made PSD (:func:`psd_weights`): projected onto the
PSD cone (its
negative eigenvalues set to 0), then shifted by :math:`\delta I` with :math:`\delta` at least
the computed smallest eigenvalue's deficit plus its rounding error (Weyl, eigvalsh backward
stable: :data:`.certify.ROUNDING` :math:`n\varepsilon\|W\|_F`), so that the float64 matrix
actually used is PSD exactly, whatever the solver returned. The projection is where an
inaccurate solve's error goes: what it removes from :math:`Z_f` reappears in :math:`M`, whose
positive part is paid for by the a-priori bounds (or the margin). Skipping it (using
:math:`Z_f` as returned) is no certificate: an indefinite :math:`W` proves a bound on the
PEP whose LMI is the equality :math:`T(G) = 0`, which can lie below the worst case
(``tests/flbounds/pep/test_certify_lmi.py``).

A-priori bounds of the stationary points (:func:`stationary_bounds`). :math:`x_s` is a leaf
point that is no gradient, so :func:`.certify.leaf_bounds` needs its bound given. For a
quadratic :math:`f = \tfrac12 (x - x_s)^\top H (x - x_s) + f_s` with :math:`\mu I \preceq H`,
:math:`\mu > 0`, and any of its points :math:`(a, g_a)`, :math:`g_a = H(a - x_s)` gives
:math:`\|a - x_s\| \le \|g_a\|/\mu`, hence :math:`\|x_s\| \le \|a\| + \|g_a\|/\mu`; with the
anchor :math:`(x^\star, 0)` at the origin, :math:`x_s = 0`. (The SDP's conditions are exact
interpolation conditions, so every feasible point is such a quadratic.) In the symmetric form
:math:`x_s` is a class vector (mean plus deviation, :mod:`.symmetric`), each part bounded by
the same number (:mod:`.certify_symmetric`). With :math:`\mu = 0` there is no such bound and
PEPit's class is refused here (``ValueError`` naming ``setting``); one-run PEPs, direct and
symmetric, declare that class about each function's first point instead
(:mod:`.certify_quadratic`: no stationary leaf). In the symmetric form with PEPit's class
(:math:`\mu > 0`, or two runs) PEPit's own stationary leaf, replaced by the class vector, is unused
(:func:`unused_leaves`): the margin's :math:`\operatorname{tr} G` leaves it out (else the
regularised PEP is unbounded) and so does the slope (its rows of :math:`M` dropped), valid
since the PEP's value is the same with that leaf at 0.
"""

from __future__ import annotations

import numpy as np

from .certify_duals import lmi_residual, solver_lmi_duals
from .certify_terms import ROUNDING, Certificate, _Affine, _norm_bound, _Sums


def psd_weights(problem, lmi_duals=None, *, project=True):
    r"""The PSD multipliers :math:`W_f` of the problem's LMIs (module docstring).

    Parameters
    ----------
    problem : PEPit.PEP
        Solved (any status with values) unless ``lmi_duals`` is given.
    lmi_duals : sequence of array_like, optional
        One square matrix per LMI sent to the solver (default: :func:`solver_lmi_duals`).
    project : bool
        Project the symmetric part onto the PSD cone and shift it (default). False uses the
        matrices as given: no certificate (kept for the planted-bug test).

    Returns
    -------
    list of (PEPit.PSDMatrix, ndarray)

    Raises
    ------
    ValueError
        Naming ``lmi_duals``: wrong number, shape, or a value that is not finite.
    """
    psds = list(problem._list_of_psd_sent_to_wrapper)
    duals = solver_lmi_duals(problem) if lmi_duals is None else list(lmi_duals)
    if len(duals) != len(psds):
        raise ValueError(f"lmi_duals: {len(psds)} matrices expected, got {len(duals)}")
    out = []
    for psd, z in zip(psds, duals, strict=True):
        z = np.asarray(z, dtype=float)
        if z.shape != psd.shape or not np.all(np.isfinite(z)):
            raise ValueError(f"lmi_duals: each must be a finite {psd.shape} matrix")
        w = 0.5 * (z + z.T)
        out.append((psd, (_projected(w) if project else w) + 0.5 * (z - z.T)))
    return out


def _projected(w):
    """The PSD projection of ``w``, shifted until its float64 value is provably PSD."""
    eps = np.finfo(float).eps
    n = w.shape[0]
    lam, vec = np.linalg.eigh(w)
    w = (vec * np.maximum(lam, 0.0)) @ vec.T
    w = 0.5 * (w + w.T)
    delta = 0.0
    for _ in range(60):
        shifted = w + delta * np.eye(n)
        low = float(np.linalg.eigvalsh(shifted)[0])
        slack = ROUNDING * n * eps * max(float(np.linalg.norm(shifted)), np.finfo(float).tiny)
        if low >= slack:
            return shifted
        delta = 2.0 * max(delta, slack - low, slack)
    raise ValueError("lmi_duals: no PSD shift found")  # pragma: no cover (finite input)


def _lagrangian(acc, problem, metric, multipliers, lmi_duals, project, **kw):
    """Accumulate :math:`o - \\sum_i \\lambda_i e_i + \\sum_f \\langle W_f, T_f\\rangle`."""
    constraints = problem._list_of_prepared_constraints
    lam = np.array([float(c.eval_dual()) for c in constraints] if multipliers is None
                   else multipliers, dtype=float)
    if lam.shape != (len(constraints),) or not np.all(np.isfinite(lam)):
        raise ValueError(f"multipliers must be {len(constraints)} finite numbers")
    acc.add(metric.decomposition_dict, 1.0, **kw)
    objective = id(problem.objective)
    for c, lam_i in zip(constraints, lam, strict=True):
        if objective in {id(k) for k in c.expression.decomposition_dict}:
            continue  # PEPit's "objective <= performance metric"
        weight = max(lam_i, 0.0) if c.equality_or_inequality == "inequality" else lam_i
        if weight != 0.0:
            acc.add(c.expression.decomposition_dict, -weight, **kw)
    for psd, w in psd_weights(problem, lmi_duals, project=project):
        entries = psd.matrix_of_expressions
        for i in range(w.shape[0]):
            for j in range(w.shape[1]):
                if w[i, j] != 0.0 and hasattr(entries[i, j], "decomposition_dict"):
                    acc.add(entries[i, j].decomposition_dict, float(w[i, j]), **kw)


def certify_lmi(problem, point_bounds, value_bounds, multipliers=None, lmi_duals=None, *,
                project=True) -> Certificate:
    """:func:`.certify.certify` for a problem with extra LMIs (module docstring).

    Parameters
    ----------
    problem : PEPit.PEP
        After ``problem.solve`` (any status with values), one performance metric.
    point_bounds, value_bounds : dict
        From :func:`.certify.leaf_bounds` (stationary points from :func:`stationary_bounds`).
    multipliers : array_like, optional
        One per prepared constraint (default: the solver's).
    lmi_duals : sequence of array_like, optional
        One per LMI sent (default: the solver's); symmetric part made PSD unless
        ``project`` is False.
    project : bool
        See :func:`psd_weights`.

    Returns
    -------
    Certificate
    """
    from PEPit import Point

    leaves = Point.list_of_leaf_points
    if any(id(p) not in point_bounds for p in leaves):
        raise ValueError("point_bounds: a leaf point has no bound")
    if len(problem.list_of_performance_metrics) != 1:
        raise ValueError("problem: the certificate needs exactly one performance metric")
    metric = problem.list_of_performance_metrics[0]
    acc = _Affine(len(leaves), {id(p): k for k, p in enumerate(leaves)})
    _lagrangian(acc, problem, metric, multipliers, lmi_duals, project)
    return acc.bound(point_bounds, value_bounds, leaves, float(metric.eval()))


def margin_certificate_lmi(problem, metric, growth, multipliers=None, lmi_duals=None, *,
                           project=True):
    """:func:`.certify_margin.margin_certificate` for a problem with extra LMIs (module
    docstring); arguments as :func:`certify_lmi`, ``metric`` and ``growth`` as there."""
    from PEPit import Point


    leaves = Point.list_of_leaf_points
    acc = _Sums(len(leaves), {id(p): k for k, p in enumerate(leaves)})
    _lagrangian(acc, problem, metric, multipliers, lmi_duals, project, model=True)
    unused = {id(p) for p in unused_leaves(problem, problem.list_of_functions)}
    keep = [k for k, p in enumerate(leaves) if id(p) not in unused]
    for name in ("M", "M_abs", "M_cnt"):    # unused leaves at 0: same value (unused_leaves)
        setattr(acc, name, getattr(acc, name)[np.ix_(keep, keep)])
    acc.n = len(keep)
    return acc.bound(growth, float(metric.eval()))


def stationary_bounds(funcs, initial):
    r"""``initial`` with a bound on every quadratic function's own stationary point
    :math:`\|x_s\| \le \|a\| + \|g_a\|/\mu` from a point :math:`(a, g_a)` of the function
    bounded by ``initial`` (module docstring).

    Parameters
    ----------
    funcs : list of PEPit functions
    initial : dict
        ``{point: bound on its norm}`` (and value bounds), as :func:`.certify.leaf_bounds`.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        Naming ``setting`` when a quadratic function has ``mu = 0`` or no bounded point.
    """
    from PEPit import Point

    out = dict(initial)
    points = {}
    for key, b in initial.items():
        if isinstance(key, Point):
            for leaf, coef in key.decomposition_dict.items():
                if key.get_is_leaf() or (len(key.decomposition_dict) == 1 and abs(coef) == 1):
                    points[id(leaf)] = min(float(b), points.get(id(leaf), float("inf")))
    for f in {id(f): f for f in funcs}.values():
        if not f.list_of_stationary_points or not hasattr(f, "mu") or \
                f.__class__.__name__ != "SmoothStronglyConvexQuadraticFunction":
            continue
        xs = f.list_of_stationary_points[0][0]
        if not f.mu > 0:
            raise ValueError("setting: a quadratic class with mu = 0 has no a-priori bound on "
                             "its stationary point")
        bound = None
        for a, g, _v in f.list_of_points:
            if a is xs:
                continue
            try:
                b = _norm_bound(a, points) + _norm_bound(g, points) / f.mu
            except ValueError:
                continue
            bound = b if bound is None else min(bound, b)
        if bound is None:
            raise ValueError("setting: a quadratic function has no point bounded a priori")
        out[xs] = bound
    return out


def unused_leaves(problem, funcs):
    r"""Leaf points that no function point, gradient, performance metric or LMI of the problem
    uses and that appear in its own constraints only as :math:`\langle \ell, v\rangle = 0`.

    The symmetric form (:mod:`.symmetric`) replaces a quadratic representative's stationary
    point by a class vector, leaving PEPit's own leaf unused but for the orthogonality
    constraints. Setting such a leaf's Gram row to 0 keeps every constraint satisfied, the
    Gram matrix PSD (a principal submatrix padded with zeros) and the objective unchanged, so
    the PEP's value is the same with the bound 0 on its norm (what :func:`stationary_bounds`'s
    callers give it).

    Parameters
    ----------
    problem : PEPit.PEP
        Built, not yet solved.
    funcs : list of PEPit functions

    Returns
    -------
    list of PEPit.Point
    """
    from PEPit import Point

    used = set()
    for f in funcs:
        for x, g, _v in f.list_of_points:
            used.update(id(k) for k in (*x.decomposition_dict, *g.decomposition_dict))
    for metric in problem.list_of_performance_metrics:
        for key in metric.decomposition_dict:
            if isinstance(key, tuple):
                used.update(id(k) for k in key)
    for psd in getattr(problem, "list_of_psd", []):
        for entry in psd.matrix_of_expressions.ravel():
            for key in getattr(entry, "decomposition_dict", {}):
                if isinstance(key, tuple):
                    used.update(id(k) for k in key)
    for c in problem.list_of_constraints:
        terms = c.expression.decomposition_dict
        if c.equality_or_inequality == "equality" and len(terms) == 1 and \
                isinstance(next(iter(terms)), tuple):
            continue        # <l, v> = 0
        for key in terms:
            if isinstance(key, tuple):
                used.update(id(k) for k in key)
    return [p for p in Point.list_of_leaf_points if id(p) not in used]


__all__ = ["certify_lmi", "lmi_residual", "margin_certificate_lmi", "psd_weights",
           "solver_lmi_duals", "stationary_bounds", "unused_leaves"]
