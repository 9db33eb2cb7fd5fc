r"""A PEPit problem's semidefinite program in Clarabel's conic form, solved without cvxpy.

Why. On the SDPs of the tightness grids, cvxpy's canonicalisation (its expression tree, then
the cone-matrix stuffing) took longer than Clarabel's own solve. The SDP PEPit prepares is
already linear in the leaf function values :math:`F` and the Gram matrix :math:`G`, so its
conic form is written here directly, from the constraints' coefficients.

The form. Variables :math:`x = (F, g)`: :math:`F` the leaf function values (in PEPit's order)
and :math:`g` the upper triangle of :math:`G` row by row (the order cvxpy gives a symmetric
variable). Each active constraint :math:`e(G, F) = \langle W, G\rangle + w^\top F + w_0`
(:math:`\le 0` or :math:`= 0`) is one row of :math:`A x + s = b` (coefficient of
:math:`g_{ij}`, :math:`i < j`: :math:`W_{ij} + W_{ji}`; :math:`b = -w_0`), the equalities first
(zero cone), then the inequalities (nonnegative cone), in PEPit's order; the last block is
:math:`s = \operatorname{svec}(G)` in Clarabel's PSD triangle cone (upper triangle column by
column, off-diagonal entries times :math:`\sqrt 2`). The objective is PEPit's: maximise its
leaf :math:`\tau` (``minimize q.x`` with :math:`q = -e_\tau`). This is the problem cvxpy
hands to Clarabel for the same PEP (same rows, columns and coefficients: the tests compare
the data), so the solves agree.

Multipliers. Clarabel's dual point satisfies :math:`A^\top z + q = 0` with :math:`z` in the
dual cone, i.e. :math:`o - \sum_i z_i e_i + \langle S, G\rangle` is constant in :math:`(G, F)`
with :math:`S = \operatorname{smat}(z_{\mathrm{PSD}}) \succeq 0` (off-diagonal entries divided
by :math:`\sqrt 2`): :math:`z_i` are the constraints' multipliers (nonnegative on
inequalities) and :math:`S` the dual slack of :math:`G \succeq 0`, the quantities PEPit's cvxpy
wrapper stores. :func:`solve_clarabel` stores them in the same places (``eval_dual`` of each
constraint, ``problem.residual``, ``G_value``, ``F_value``, the leaves' values) and returns
the dual value of PEPit's proof reconstruction (:math:`-\sum_i z_i w_{0,i}` plus the
objective's constant), so everything downstream (:func:`.sdp.dual_residual`, the certificates
of :mod:`.certify`) reads a direct solve as it reads one through cvxpy.

Problems with extra LMIs (PEPit's quadratic class) are not written here (:class:`NotConic`):
:func:`.sdp.attempts` sends those through cvxpy.
"""

from __future__ import annotations

import weakref
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

#: Clarabel's statuses as cvxpy names them (the statuses :func:`.sdp.accurate` reads)
STATUS = {"Solved": "optimal", "AlmostSolved": "optimal_inaccurate",
          "PrimalInfeasible": "infeasible", "DualInfeasible": "unbounded",
          "AlmostPrimalInfeasible": "infeasible_inaccurate",
          "AlmostDualInfeasible": "unbounded_inaccurate", "MaxIterations": "user_limit",
          "MaxTime": "user_limit"}
#: statuses that come with a primal point (cvxpy's SOLUTION_PRESENT)
WITH_VALUES = ("optimal", "optimal_inaccurate", "user_limit")


class NotConic(ValueError):
    """The problem has constraints this form does not write (extra LMIs)."""


class ConicForm(NamedTuple):
    """``minimize q.x`` subject to ``A x + s = b``, ``s`` in ``zero^n_eq x R+^n_in x PSD``.

    Attributes
    ----------
    A : scipy.sparse.csc_matrix
    b, q : ndarray
    n_eq, n_in : int
        Rows of the zero and nonnegative cones (the PSD block follows).
    n_values, n_gram : int
        Leaf function values (the first columns) and the Gram matrix's side.
    rows : list
        The active constraints in row order.
    offset : float
        The objective's constant.
    """

    A: object
    b: np.ndarray
    q: np.ndarray
    n_eq: int
    n_in: int
    n_values: int
    n_gram: int
    rows: list
    offset: float


_FORMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _columns(n_values, n):
    """Column of Gram entry (i, j), i <= j: the upper triangle row by row after F."""
    i, j = np.triu_indices(n)
    col = np.zeros((n, n), dtype=np.int64)
    col[i, j] = n_values + np.arange(i.size)
    return col


def _coefficients(expression, col, n_values):
    """(columns, values, constant) of an affine expression of the leaves."""
    cols, vals, const = [], [], 0.0
    for key, coef in expression.decomposition_dict.items():
        if isinstance(key, tuple):
            a, b = key[0].counter, key[1].counter
            cols.append(col[a, b] if a <= b else col[b, a])
        elif isinstance(key, int | float):
            const += float(coef) * float(key)
            continue
        else:
            cols.append(key.counter)
        vals.append(float(coef))
    return cols, vals, const


def conic_form(problem) -> ConicForm:
    """The conic form of ``problem`` (module docstring), built once per problem.

    Raises
    ------
    NotConic
        When the problem has active extra LMIs.
    """
    import scipy.sparse as sp
    from PEPit import Expression, Point

    if problem.objective is None:
        problem._prepare_constraints(verbose=0)
    form = _FORMS.get(problem)
    if form is not None:
        return form
    if any(psd.activated for psd in problem._list_of_prepared_psd):
        raise NotConic("problem: extra LMI constraints (sent through cvxpy)")
    n, n_values = Point.counter, Expression.counter
    col = _columns(n_values, n)
    active = [c for c in problem._list_of_prepared_constraints if c.activated]
    rows = [c for c in active if c.equality_or_inequality == "equality"]
    n_eq = len(rows)
    rows += [c for c in active if c.equality_or_inequality == "inequality"]
    if len(rows) != len(active):
        raise ValueError("problem: a constraint is neither an equality nor an inequality")
    r_idx, c_idx, vals, b = [], [], [], np.zeros(len(rows) + n * (n + 1) // 2)
    for r, constraint in enumerate(rows):
        cols, v, const = _coefficients(constraint.expression, col, n_values)
        r_idx += [r] * len(cols)
        c_idx += cols
        vals += v
        b[r] = -const
    # svec(G) in Clarabel's order (upper triangle by columns), off-diagonal times sqrt 2
    ii, jj = _svec_order(n)
    r_idx += list(len(rows) + np.arange(ii.size))
    c_idx += list(col[ii, jj])
    vals += list(np.where(ii == jj, -1.0, -np.sqrt(2.0)))
    n_x = n_values + n * (n + 1) // 2
    A = sp.coo_matrix((vals, (r_idx, c_idx)), shape=(b.size, n_x)).tocsc()
    A.sum_duplicates()
    A.eliminate_zeros()
    A.sort_indices()
    cols, v, offset = _coefficients(problem.objective, col, n_values)
    q = np.zeros(n_x)
    np.add.at(q, cols, -np.asarray(v, dtype=float))
    form = ConicForm(A, b, q, n_eq, len(rows) - n_eq, n_values, n, rows, offset)
    _FORMS[problem] = form
    return form


def _svec_order(n):
    """(i, j) of Clarabel's PSD triangle entries: upper triangle, column by column."""
    jj, ii = np.tril_indices(n)  # (j, i) with i <= j, row-major in j: column-major upper
    return ii, jj


def _settings(options):
    import clarabel

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    for key, value in options.items():
        if not hasattr(settings, key):
            raise ValueError(f"options: Clarabel has no setting {key!r}")
        setattr(settings, key, value)
    return settings


def solve_clarabel(problem, options=None):
    """Solve ``problem`` (a :class:`PEPit.PEP`) with Clarabel on its :func:`conic_form`.

    Sets what PEPit's ``solve`` sets (``problem.wrapper`` with ``prob.status`` and
    ``objective.value``, each constraint's multiplier, ``residual``, ``G_value``,
    ``F_value``, the leaves' values) and returns PEPit's dual value, or None when Clarabel
    returns no primal point (the status says why; nothing else is set then).

    Parameters
    ----------
    problem : PEPit.PEP
    options : dict, optional
        Clarabel settings (e.g. ``tol_gap_abs``).

    Raises
    ------
    NotConic
        When the problem has extra LMIs.
    """
    import clarabel
    import scipy.sparse as sp

    form = conic_form(problem)
    settings = _settings(options or {})
    cones = [clarabel.ZeroConeT(form.n_eq), clarabel.NonnegativeConeT(form.n_in),
             clarabel.PSDTriangleConeT(form.n_gram)]
    cones = [c for c, size in zip(cones, (form.n_eq, form.n_in, form.n_gram), strict=True)
             if size > 0]
    n_x = form.q.size
    solution = clarabel.DefaultSolver(sp.csc_matrix((n_x, n_x)), form.q, form.A, form.b,
                                      cones, settings).solve()
    status = STATUS.get(str(solution.status), "solver_error")
    problem.wrapper_name = "clarabel"
    problem.wrapper = SimpleNamespace(prob=SimpleNamespace(status=status),
                                      objective=SimpleNamespace(value=None),
                                      solver_name="CLARABEL")
    problem._list_of_constraints_sent_to_wrapper = list(form.rows)
    problem._list_of_psd_sent_to_wrapper = []
    if status not in WITH_VALUES:
        return None
    x, z = np.asarray(solution.x, dtype=float), np.asarray(solution.z, dtype=float)
    values, gram = _unpack(form, x)
    m = form.n_eq + form.n_in
    slack = _smat(form.n_gram, z[m:])
    for constraint in problem._list_of_prepared_constraints:
        constraint._dual_variable_value = 0.0
    for constraint, lam in zip(form.rows, z[:m], strict=True):
        constraint._dual_variable_value = float(lam)
    problem.wrapper.objective.value = float(form.offset - form.q @ x)
    problem.wrapper.optimal_G, problem.wrapper.optimal_F = gram, values
    problem.residual, problem.G_value, problem.F_value = slack, gram, values
    problem._eval_points_and_function_values(values, gram, verbose=0)
    dual = form.offset
    for constraint in problem._list_of_prepared_constraints:
        const = constraint.expression.decomposition_dict.get(1, 0.0)
        dual -= constraint._dual_variable_value * float(const)
    return dual


def _unpack(form, x):
    """(F, G) from the primal point."""
    n = form.n_gram
    i, j = np.triu_indices(n)
    gram = np.zeros((n, n))
    gram[i, j] = x[form.n_values:]
    gram[j, i] = x[form.n_values:]
    return x[:form.n_values].copy(), gram


def _smat(n, z):
    """The symmetric matrix of a PSD-cone vector in Clarabel's order, off-diagonal entries
    divided by sqrt 2 (as cvxpy unpacks it)."""
    ii, jj = _svec_order(n)
    mat = np.zeros((n, n))
    v = np.where(ii == jj, z, z / np.sqrt(2))
    mat[ii, jj] = v
    mat[jj, ii] = v
    return mat


def residual(problem) -> float:
    """:func:`.sdp.dual_residual` of a solved problem, from its :func:`conic_form` (same
    terms, summed over matrix entries instead of PEPit expressions)."""
    form = conic_form(problem)
    m = form.n_eq + form.n_in
    lam = np.array([float(c.eval_dual()) for c in form.rows])
    slack = np.asarray(problem.residual, dtype=float)
    n = form.n_gram
    i, j = np.triu_indices(n)
    # leftover coefficients of o - sum lam e + <S, G> on each leaf value and Gram entry
    left = -form.q - form.A[:m].T @ lam
    left[form.n_values:] += np.where(i == j, 1.0, 2.0) * slack[i, j]
    points = np.array([p.eval() for p in _leaf_points()]).reshape(n, -1) if n else \
        np.zeros((0, 0))
    gram_at = points @ points.T
    at = np.concatenate([_leaf_values(form.n_values), gram_at[i, j]])
    leftover = float(np.sum(np.abs(left) * np.abs(at)))
    values = form.A[:m] @ at - form.b[:m]
    ineq = np.arange(m) >= form.n_eq
    negative = float(np.sum(np.where(ineq & (lam < 0), -lam * np.abs(values), 0.0)))
    min_eig = float(np.min(np.linalg.eigvalsh(slack))) if slack.size else 0.0
    return leftover + max(0.0, -min_eig) * float(np.trace(problem.G_value)) + negative


def _leaf_points():
    from PEPit import Point

    return Point.list_of_leaf_points


def _leaf_values(n_values):
    from PEPit import Expression

    out = np.zeros(n_values)
    for e in Expression.list_of_leaf_expressions:
        out[e.counter] = float(e.eval())
    return out


__all__ = ["ConicForm", "NotConic", "conic_form", "residual", "solve_clarabel"]
