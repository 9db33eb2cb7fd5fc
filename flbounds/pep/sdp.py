r"""Solve a PEPit problem with a checked primal-dual gap: Clarabel first, SCS as the fallback.

A performance-estimation problem is a semidefinite program over the Gram matrix of the
iterates and gradients. The worst case reported is PEPit's *dual* value (a valid upper bound
once the dual is feasible: the proof PEPit reconstructs from the multipliers); the primal value
is the worst case attained by the optimal Gram matrix. A solve is accepted only when the solver
reports ``optimal``, the two agree within :data:`GAP_REL` (relative) plus :data:`GAP_ABS`, and
the multipliers reconstruct the dual bound's proof to within :data:`RESIDUAL_REL` relative
(:func:`dual_residual`: leftover coefficients, negative dual-slack eigenvalue and negative
multipliers, weighted by the solver's primal point); otherwise the next solver is tried, and
when none is accurate :class:`PEPSolveError` is raised. An inaccurate solve therefore never
becomes a number; a builder may instead return a certified upper bound (``solve_first(...,
certified=...)``, :mod:`.certify`, :mod:`.certify_scaled`), valid whatever the accuracy.

Clarabel (interior point, default tolerances 1e-8) is fast and accurate on most PEPs here, but
on the FOCUS Lyapunov PEP it often stops at ``optimal_inaccurate`` (the local-step
displacements are O(eta) while the state is O(1), a badly scaled Gram matrix). It is then
re-run with tolerances 1e-7, and SCS (``eps = 1e-8``) is the last resort. Every accepted solve
has residuals below 1e-7 and a gap below the tolerance; on a FOCUS one-round instance the three
accepted answers agree to 4e-7 relative, so :data:`GAP_REL` = 1e-6 is the accuracy a claim may
rely on (``tolerance`` of the tightness claims), not the (smaller) reported gap. Where no
setting gives an accurate solve (FOCUS at p_min <= 0.3, N >= 5), :mod:`.certify` turns the
solver's multipliers into a rigorous upper bound instead. :func:`accurate` is the one
acceptance test (replace it to make every solve count as inaccurate).

Path. Clarabel is called on the conic form of PEPit's constraints (:mod:`.conic`: the data
cvxpy would send it, written without cvxpy's canonicalisation, which cost more than the solve
itself on the grids' small SDPs); problems with extra LMIs and the options
``interface="cvxpy"`` go through cvxpy, and so does SCS.

Scale. The PEPs are homogeneous (points times a, function values times a^2 keep every class),
so bounding the initial condition by s instead of 1 multiplies the optimal value by s. The
solvers' absolute tolerances and regularisation are not scale free: on SAFARI's non-convex
rounds at a quarter of the step of ``safari.thm4.tightness``'s grid (gradients of size
1/sqrt(eta) for a unit initial gap) Clarabel and SCS stop at ``optimal_inaccurate``; with the
initial gap bounded by eta every entry is O(1) and Clarabel returns ``optimal`` (same value to
1e-8 relative). Builders pass that ``scale`` to :func:`solve`, which divides the values and
the gap by it before the acceptance test.

Reuse. With ``FLBOUNDS_PEP_CACHE`` set to a file (the ledger's engine sets it to
``pep_solves.sqlite`` beside its results store), :func:`solve` keeps every accepted solve
there, keyed by :func:`solve_key` (a digest of the SDP as it is sent to the solver: every
constraint's coefficients, the LMIs, the scale, the solver settings and acceptance bounds,
the versions of PEPit, cvxpy and the solvers), and returns the stored :class:`SolveInfo` for
an SDP already solved, by any claim, without calling a solver. Unset, nothing is stored.
No warm start is attempted (an interior-point method gains little from one).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sqlite3
import time
import warnings
from dataclasses import dataclass

#: accepted primal-dual gap: relative part (times max(1, |worst|)) and absolute part
GAP_REL = 1e-6
GAP_ABS = 1e-9
#: accepted dual residual (:func:`dual_residual`), relative to max(1, |worst|). Measured: the
#: accepted solves of the claims' grids leave 1e-8 to 9e-6 (FOCUS under PL); solves that are
#: wrong by 3.5e-5 (FOCUS N = 6 at scale 1/eta, ``optimal`` with gap 4e-8) or worse leave
#: 4e-4 and more. An ``optimal`` status and a small gap alone do not catch those.
RESIDUAL_REL = 1e-5
#: (cvxpy solver name, options), tried in order
SOLVERS = (
    ("CLARABEL", {}),
    ("CLARABEL", {"tol_gap_abs": 1e-7, "tol_gap_rel": 1e-7, "tol_feas": 1e-7, "max_iter": 400}),
    ("SCS", {"eps": 1e-8, "max_iters": 20_000}),
)


class PEPSolveError(RuntimeError):
    """No solver returned an ``optimal`` status with a primal-dual gap within tolerance."""


@dataclass(frozen=True)
class SolveInfo:
    """Outcome of one accepted solve.

    Attributes
    ----------
    worst : float
        The dual value: an upper bound on the performance metric over the function class.
    primal : float
        The value attained by the optimal Gram matrix (a lower bound, up to feasibility).
    gap : float
        ``|worst - primal|``.
    solver, status : str
    seconds : float
        Wall time of the accepted solve (including PEPit's compilation).
    gram_size, n_constraints : int
        Side of the Gram matrix and number of scalar constraints of the SDP.
    dual_residual : float
        :func:`dual_residual` of the accepted solve (value units).
    """

    worst: float
    primal: float
    gap: float
    solver: str
    status: str
    seconds: float
    gram_size: int
    n_constraints: int
    dual_residual: float = 0.0


def gap_tolerance(worst: float) -> float:
    """The largest accepted primal-dual gap at a worst case of size ``worst``.

    Parameters
    ----------
    worst : float
        The worst case's value.

    Returns
    -------
    float
        An absolute part plus a part relative to ``max(1, |worst|)``.
    """
    return GAP_ABS + GAP_REL * max(1.0, abs(worst))


def prepared_multipliers(problem, multipliers=None):
    """Prepared constraints and multipliers (solver duals or ``multipliers``); ValueError."""
    import numpy as np

    if problem._list_of_psd_sent_to_wrapper:
        raise ValueError("problem: extra LMI constraints are not supported by the certificate")
    constraints = problem._list_of_prepared_constraints
    lam = np.array([float(c.eval_dual()) for c in constraints] if multipliers is None
                   else multipliers, dtype=float)
    if lam.shape != (len(constraints),) or not np.all(np.isfinite(lam)):
        raise ValueError(f"multipliers must be {len(constraints)} finite numbers")
    return constraints, lam


def dual_residual(problem) -> float:
    r"""How far the solver's multipliers are from a proof of its dual bound, in value units.

    The dual value :math:`\tau` is a valid upper bound when the objective, minus the
    multiplier-weighted constraints, plus :math:`\langle S, G\rangle` with the dual slack
    :math:`S \succeq 0`, equals :math:`\tau` identically in the Gram matrix :math:`G` and the
    function values (PEPit's proof reconstruction). A solver leaves (a) coefficients in that
    identity, (b) a negative eigenvalue of :math:`S`, (c) negative inequality multipliers.
    Returned: their effect on the bound at the solver's own primal point, :math:`\sum_k |c_k|
    |v_k| + \max(0, -\lambda_{\min}(S)) \operatorname{tr} G + \sum_i \max(0, -\lambda_i)
    |e_i|` (:math:`v_k` the Gram entries and function values the leftover :math:`c_k` multiply,
    :math:`e_i` the constraint values). This is a consistency check near the solution, not a
    bound over the whole feasible set (which is unbounded along the heterogeneity directions).
    Problems with extra LMIs (PEPit's quadratic class) add their LMI multipliers' terms, read
    entry by entry from the solver (:func:`.certify_duals.lmi_residual`).
    """
    from .certify_duals import lmi_residual
    from .conic import residual

    if problem._list_of_psd_sent_to_wrapper:
        return lmi_residual(problem)
    return residual(problem)


def attempts(problem, solvers, failures):
    """Run each solver on ``problem`` in turn, quietly.

    Yields ``(name, dual value or None, status, seconds)`` per solver that returned; a solver
    that raised is listed in ``failures`` (a list, appended to) and skipped. The caller
    decides whether a returned solve is accepted, and stops iterating when it is.
    """
    for name, options in solvers:
        start = time.perf_counter()
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                dual = _run(problem, name, options)
        except Exception as exc:  # cvxpy raises SolverError, PEPit may fail on None values
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        yield name, dual, str(problem.wrapper.prob.status), time.perf_counter() - start


def _run(problem, name, options):
    """One solve: Clarabel on the problem's conic form (:mod:`.conic`), through cvxpy when
    the options say ``interface="cvxpy"`` or the form has extra LMIs; SCS through cvxpy."""
    from .conic import NotConic, solve_clarabel

    options = dict(options)
    if name == "CLARABEL" and options.pop("interface", "direct") == "direct":
        try:
            return solve_clarabel(problem, options)
        except NotConic:
            pass
    return problem.solve(wrapper="cvxpy", solver=name, verbose=0, **options)


def solve(problem, *, scale=1.0, solvers=None, reuse=True) -> SolveInfo:
    """Solve a fully specified :class:`PEPit.PEP` (see the module docstring for acceptance).

    Parameters
    ----------
    problem : PEPit.PEP
    scale : float
        The problem's initial condition is bounded by ``scale`` instead of 1 (a homogeneous
        PEP: every value scales with it); the values and the gap are divided by ``scale``
        before the acceptance test, so a number means the same at every scale.
    solvers : sequence of (name, options), optional
        Default :data:`SOLVERS`.
    reuse : bool
        Whether a stored solve of the same SDP may stand in (``FLBOUNDS_PEP_CACHE``, module
        docstring); False for a caller that reads the solved problem's values afterwards.

    Returns
    -------
    SolveInfo
        The accepted solve: worst case (the dual bound), primal value, gap, solver, status.

    Raises
    ------
    PEPSolveError
        When every solver fails, is not ``optimal`` or leaves a gap above :func:`gap_tolerance`.
    """
    solvers = SOLVERS if solvers is None else solvers
    if reuse:
        return reused(problem, lambda: _solve(problem, scale, solvers), scale=scale,
                      solvers=solvers)
    return _solve(problem, scale, solvers)


def accurate(status, dual, primal, residual) -> bool:
    """The acceptance test of a solve (module docstring), in the problem's own units.

    Parameters
    ----------
    status : str
        The solver's status.
    dual, primal : float
        The dual and primal values.
    residual : float
        :func:`dual_residual` of the solve.

    Returns
    -------
    bool
        ``optimal``, the gap within :func:`gap_tolerance` and the residual within
        :data:`RESIDUAL_REL` relative. :mod:`.certify` reads this function through the module
        (a test that replaces it makes every solve inaccurate everywhere).
    """
    return (status == "optimal" and abs(dual - primal) <= gap_tolerance(dual)
            and residual <= RESIDUAL_REL * max(1.0, abs(dual)))


def _solve(problem, scale, solvers) -> SolveInfo:
    from PEPit import Point

    failures = []
    for name, dual, status, seconds in attempts(problem, solvers, failures):
        primal = problem.wrapper.objective.value
        if dual is None or primal is None:
            failures.append(f"{name}: status {status}, no value (unbounded or infeasible)")
            continue
        dual, primal = float(dual) / scale, float(primal) / scale
        gap = abs(dual - primal)
        residual = dual_residual(problem) / scale
        if not accurate(status, dual, primal, residual):
            failures.append(f"{name}: status {status}, gap {gap:.2e}, dual residual "
                            f"{residual:.2e}")
            continue
        return SolveInfo(worst=dual, primal=primal, gap=gap, solver=name, status=status,
                         seconds=seconds, gram_size=int(Point.counter),
                         n_constraints=len(problem._list_of_constraints_sent_to_wrapper),
                         dual_residual=residual)
    raise PEPSolveError("no accurate solve: " + "; ".join(failures))


#: the environment variable naming the file of stored solves (module docstring)
CACHE_ENV = "FLBOUNDS_PEP_CACHE"


def solve_key(problem, scale=1.0, solvers=None) -> str:
    """Digest of the SDP :func:`solve` would send to the solvers (module docstring, Reuse).

    Prepares ``problem``'s constraints (what its ``solve`` does first, once) and hashes each
    constraint's kind and coefficients over the leaf points and function values (numbered in
    the order the problem declared them), every LMI's entries, ``scale``, the solver settings,
    the acceptance bounds and the solver libraries' versions. Two problems built alike give
    the same key; any changed coefficient gives another.
    """
    from importlib.metadata import version

    if problem.objective is None:
        problem._prepare_constraints(verbose=0)

    def term(key):  # a pair of leaf points, a leaf function value, or the constant 1
        if isinstance(key, tuple):
            return [f"p{key[0].counter}", f"p{key[1].counter}"]
        return "1" if isinstance(key, int | float) else f"e{key.counter}"

    def expression(e):
        if not hasattr(e, "decomposition_dict"):
            return float(e).hex()
        return [(term(k), float(c).hex()) for k, c in e.decomposition_dict.items()]

    digest = hashlib.sha256()
    for c in problem._list_of_prepared_constraints:
        digest.update(json.dumps([c.equality_or_inequality, expression(c.expression)]).encode())
    for m in problem._list_of_prepared_psd:
        digest.update(json.dumps([list(m.shape), [expression(e) for e in
                                                   m.matrix_of_expressions.ravel()]]).encode())
    versions = [version(p) for p in ("pepit", "cvxpy", "clarabel", "scs")]
    digest.update(json.dumps([float(scale).hex(), [[n, sorted(o.items())] for n, o in
                                                    (SOLVERS if solvers is None else solvers)],
                              GAP_REL, GAP_ABS, RESIDUAL_REL, versions]).encode())
    return digest.hexdigest()


def reused(problem, compute, *, scale=1.0, solvers=None) -> SolveInfo:
    """``compute()``, the accepted solve of ``problem`` (a :class:`SolveInfo`), or the one
    stored under ``solve_key(problem, scale, solvers)`` when ``FLBOUNDS_PEP_CACHE`` names a
    file (module docstring, Reuse); a new one is stored there. ``solvers`` names the way
    ``compute`` accepts a solve (another acceptance, another key)."""
    path = os.environ.get(CACHE_ENV)
    if not path:
        return compute()
    key = solve_key(problem, scale, solvers)
    if (stored := _cached(path, key)) is not None:
        return stored
    info = compute()
    _store(path, key, info)
    return info


def _cached(path, key) -> SolveInfo | None:
    if not os.path.exists(path):
        return None
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=60)) as db:
            row = db.execute("SELECT info FROM solves WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:  # no table yet, or a file this process cannot read: solve
        return None
    return None if row is None else SolveInfo(**json.loads(row[0]))


def _store(path, key, info: SolveInfo) -> None:
    """Keep ``info``; a file this process cannot write (a Dask worker on another machine)
    only loses the reuse, never the solve."""
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=60)) as db, db:
            db.execute("CREATE TABLE IF NOT EXISTS solves (key TEXT PRIMARY KEY, info TEXT)")
            db.execute("INSERT OR IGNORE INTO solves VALUES (?, ?)",
                       (key, json.dumps(info.__dict__)))
    except sqlite3.Error:
        pass


def solve_first(forms, certified=None) -> SolveInfo:
    """Solve the first of several equivalent formulations that passes :func:`solve`'s test.

    Parameters
    ----------
    forms : iterable of (callable, float) or (callable, float, solvers)
        ``(build, scale)``: ``build()`` returns a fresh :class:`PEPit.PEP` whose initial
        condition is bounded by ``scale``. The forms must have the same optimal value (they
        differ by pinned symmetries or by scale, :mod:`.anchor`); the solvers do not treat
        them alike, so one that stops at ``optimal_inaccurate`` is followed by the next. A
        third entry names the solvers of that attempt (default :data:`SOLVERS`), so that a
        builder can try every form with the fast solvers before any with the slow one.
    certified : callable, optional
        Called when no form is accurate: returns a :class:`SolveInfo` whose ``worst`` is a
        rigorous upper bound rebuilt from a solver's multipliers (status ``certified (...)``,
        :func:`flbounds.pep.certify.solve_certified`), or raises :class:`PEPSolveError`.

    Raises
    ------
    PEPSolveError
        When no form is solved accurately and no certificate is found (every failure is
        listed).
    """
    failures = []
    for k, (build, scale, *solvers) in enumerate(forms):
        try:
            return solve(build(), scale=scale, solvers=solvers[0] if solvers else None)
        except PEPSolveError as exc:
            failures.append(f"form {k}: {exc}")
    if certified is not None:
        try:
            return certified()
        except PEPSolveError as exc:
            failures.append(f"certificate: {exc}")
    raise PEPSolveError("no accurate solve in any form: " + " | ".join(failures))
