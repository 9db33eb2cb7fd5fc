r"""The check of a searched Lyapunov function: a rigorous upper bound on its one-round ratio.

Why. The search (:mod:`.lyapunov_search`) hands its :math:`V` to a one-round PEP,
:math:`\sup E[V(\xi^+)]` over :math:`V(\xi) \le 1`. The value of an accurate solve is within
the solver's 1e-6 of that supremum, on either side: measured, it sat 4e-9 below the replayed
witness's contraction (heavy-ball clients, guide) and 9e-9 below it (lifted FedAvg, N = 2),
so it is no upper bound. :func:`certified_value` takes, from the same solve, the bound rebuilt
from the solver's multipliers (:func:`.certify.certify`), valid whatever the solve's accuracy.

The start bounds (:func:`start_bounds`). That bound needs an a-priori bound on every free
start point (the leaves that are no gradient). :math:`V` is :math:`\xi^\top P\xi` (its points
and, lifted, the clients' gradients at :math:`x`) plus nonnegative weights on function values
:math:`f_i(\cdot) - f_i^\star \ge 0`, so on the PEP's feasible set
:math:`\operatorname{tr}(QG) \le V \le 1`, :math:`Q` the quadratic part over the leaves. The
searched :math:`P` is singular (the search minimises its trace; FOCUS: the direction
:math:`(z_0, g_0, z_1, g_1) \propto (a, -b, -a, b)`, the clients' tilt symmetry, which the
shared minimizer pins but :math:`V` does not read), so :math:`V \le 1` alone leaves those
leaves free. The class bounds them: every feasible point interpolates functions of
:math:`\mathcal F_{\mu_i, L_i}` stationary at :math:`x^\star = 0`, so for every point
:math:`(u, g)` of client i, :math:`C(u, g) = \langle g, u\rangle - \tfrac{\mu_i L_i}{\mu_i +
L_i}\|u\|^2 - \tfrac1{\mu_i + L_i}\|g\|^2 \ge 0` (Nesterov, Thm 2.1.12), a quadratic form
:math:`\operatorname{tr}(C_j G) \ge 0`. For any :math:`t \ge 0`, :math:`\operatorname{tr}((Q -
\sum_j t_j C_j) G) \le 1` on the feasible set, and the exact bound of a leaf under one
quadratic form (:func:`.certify_derived.norm_bound`, exact rational arithmetic, rounded up) is
a valid bound. :math:`t` maximises :math:`\lambda_{\min}(Q - \sum_j t_j C_j)` (a small SDP;
its solver is not trusted: the form is rebuilt exactly from the float :math:`t` and its
positive semidefiniteness decided exactly); each leaf keeps the smaller of its bounds with
that :math:`t` and with :math:`t = 0`. A leaf unbounded under both stays free:
:class:`.sdp.PEPSolveError` names it (no a-priori bound from these inequalities; the margin
route of :mod:`.certify_margin`, which needs no a-priori bound but a bounded feasible set, is
not tried here).

Polishing. The certificate of an accurate solve is its dual value plus the multipliers'
leftovers times the start bounds; with a singular :math:`P` those bounds are large (lifted
FOCUS, N = 2, p = 0.2: :math:`\operatorname{tr} G \le 1.6 \cdot 10^5`), and Clarabel's
default tolerances left 3.9e-4 (above the 1e-4 bracket tolerance). When the bracket is wider
than an accurate solve's gap tolerance (1e-6), the same SDP is solved again with tighter
tolerances (:data:`POLISH`) and the narrower certificate kept: 1.7e-7 there.
"""

from __future__ import annotations

import contextlib
import math
import os
from fractions import Fraction

import numpy as np

from .sdp import PEPSolveError, SolveInfo, attempts

#: tighter solver settings tried on the check's SDP when the accurate solve's certificate is
#: wider than the bracket tolerance (its multipliers' leftovers times the start bounds)
POLISH = ({"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 400},)


def _coefficients(point, index):
    """``{position: Fraction}`` of a point over the indexed leaves, None if it reads another."""
    out = {}
    for leaf, coef in point.decomposition_dict.items():
        if id(leaf) not in index:
            return None
        out[index[id(leaf)]] = out.get(index[id(leaf)], Fraction(0)) + Fraction(float(coef))
    return out


def class_forms(funcs, index, n):
    r"""The forms :math:`C(u, g) \ge 0` (module docstring) of every point of ``funcs`` whose
    point and gradient read only the indexed leaves, as exact ``n x n`` matrices."""
    forms = []
    for f in {id(f): f for f in funcs}.values():
        L = getattr(f, "L", None)
        if L is None or not math.isfinite(float(L)):
            continue
        mu, L = Fraction(float(getattr(f, "mu", 0.0))), Fraction(float(L))
        a, b = mu * L / (mu + L), 1 / (mu + L)
        for u, g, _v in f.list_of_points:
            cu, cg = _coefficients(u, index), _coefficients(g, index)
            if not cu or not cg:
                continue
            C = [[Fraction(0)] * n for _ in range(n)]
            for i, x in cu.items():
                for j, y in cg.items():
                    C[i][j] += x * y / 2
                    C[j][i] += x * y / 2
                for j, y in cu.items():
                    C[i][j] -= a * x * y
            for i, x in cg.items():
                for j, y in cg.items():
                    C[i][j] -= b * x * y
            forms.append(C)
    return forms


def _weights(q, forms):
    """Float ``t >= 0`` maximising lambda_min(Q - sum t_j C_j) (None on a solver failure)."""
    import cvxpy as cp

    if not forms:
        return None
    Q = np.array(q, float)
    Cs = [np.array(C, float) for C in forms]
    t, s = cp.Variable(len(Cs), nonneg=True), cp.Variable()
    M = Q - sum(t[j] * Cs[j] for j in range(len(Cs)))
    problem = cp.Problem(cp.Maximize(s), [0.5 * (M + M.T) - s * np.eye(len(Q)) >> 0,
                                          t <= 1e6, s <= 1e6])
    try:
        problem.solve(solver="CLARABEL")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001  (Clarabel's Rust panics are BaseException)
        return None
    if t.value is None:
        return None
    return [max(float(v), 0.0) for v in t.value]


def start_bounds(value, free, funcs):
    """``{leaf: bound on its norm}`` for the free start leaves under ``value <= 1`` and the
    class's inequalities at :math:`x^\\star` (module docstring).

    Parameters
    ----------
    value : PEPit.Expression
        The quadratic part of :math:`V` at the start (points only, :math:`x^\\star = 0`).
    free : list of (str, PEPit.Point)
        The leaves a certificate needs bounded, with a name for the error.
    funcs : list of PEPit functions
        The PEP's functions (their points give the class's inequalities).

    Returns
    -------
    dict

    Raises
    ------
    PEPSolveError
        Naming the leaves that stay unbounded.
    """
    from .certify_derived import norm_bound, quadratic_form

    leaves, q, c0 = quadratic_form(value)
    index = {id(p): k for k, p in enumerate(leaves)}
    n = len(leaves)
    forms = class_forms(funcs, index, n)
    candidates = [q]
    t = _weights(q, forms)
    if t is not None:
        for shrink in (Fraction(1), Fraction(1, 2)):
            ft = [Fraction(v) * shrink for v in t]
            candidates.append([[q[i][j] - sum((w * C[i][j] for w, C in zip(ft, forms,
                                                                          strict=True)),
                                              Fraction(0))
                                for j in range(n)] for i in range(n)])
    bounds, unbounded = {}, []
    for name, leaf in free:
        k = index.get(id(leaf))
        b = math.inf if k is None else min(norm_bound(form, c0, k) for form in candidates)
        if math.isfinite(b):
            bounds[leaf] = b
        elif name not in unbounded:
            unbounded.append(name)
    if unbounded:
        raise PEPSolveError(f"no certificate: V <= 1 and the class's inequalities at x* leave "
                            f"{unbounded} unbounded (no a-priori bound; the margin route needs "
                            "a bounded feasible set)")
    return bounds


def free_leaves(start, funcs):
    r"""``[(name, leaf)]``: the start's leaf points that are no gradient of ``funcs`` (those
    of :func:`.certify_derived.derived_bounds`, without :math:`x^\star`)."""
    from .certify_derived import _named_leaves

    return _named_leaves(start, None, funcs)


@contextlib.contextmanager
def _own_solve():
    """No stored solve stands in (``FLBOUNDS_PEP_CACHE``): the certificate needs this
    solve's multipliers."""
    from .sdp import CACHE_ENV

    saved = os.environ.pop(CACHE_ENV, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[CACHE_ENV] = saved


def certified_value(build, L):
    r"""The certified bound of a PEP (:func:`.certify.certify`) from the solve the project's
    discipline accepts (:func:`.certify.solve_certified`: an accurate solve, else a bracket
    within :func:`.certify.bracket_tolerance`), whatever its accuracy.

    Parameters
    ----------
    build : callable
        ``build()`` returns ``(problem, funcs, initial)`` as for
        :func:`.certify.solve_certified` (``initial``: bounds of the free leaves).
    L : float or sequence of float
        The clients' largest smoothness constant (or one per client).

    Returns
    -------
    (SolveInfo, float or None)
        ``worst`` the certified bound (status ``certified (<solver status>)``, ``gap`` its
        bracket over the solver's primal value), and the accurate solve's value (None when
        only the certificate was accepted).

    Raises
    ------
    PEPSolveError
        When no solve is accepted, or the accurate solve's certificate is wider than the
        bracket tolerance.
    """
    from . import certify
    from .certify_lmi import stationary_bounds

    made = []

    def parts():
        problem, funcs, initial = build()
        made[:] = [problem, funcs, stationary_bounds(funcs, initial)]
        return tuple(made)

    L = float(np.max(L))
    with _own_solve():
        try:
            info = certify.solve_certified(parts, L)
        except PEPSolveError as exc:
            if not made:
                raise
            info = None
            failure = exc
    problem, funcs, initial = made
    bounds = certify.leaf_bounds(funcs, initial, L)
    if info is not None and info.status.startswith("certified"):
        return info, None
    cert = certify.certify(problem, *bounds) if info is not None else None
    if cert is None or not _fits(cert, sharp=True):
        cert, polished = _polished(problem, bounds, cert)
        if cert is None or not _fits(cert):
            best = "no values" if cert is None else \
                f"certified {cert.upper:.9g}, primal {cert.primal:.9g}"
            first = str(failure)[:300] if info is None else f"accurate {info.worst:.9g}"
            raise PEPSolveError(f"no certified check within the bracket tolerance ({first}; "
                                f"tighter tolerances: {polished}, {best})")
        if info is None:  # the certificate of a polished solve, whatever its accuracy
            return _info(cert, polished, problem, "certified (polished)"), None
    return _info(cert, info.solver, problem, f"certified ({info.status})",
                 seconds=info.seconds), info.worst


def _fits(cert, sharp=False):
    """Whether the certificate's bracket is within :func:`.certify.bracket_tolerance` (with
    ``sharp``, within an accurate solve's :func:`.sdp.gap_tolerance`)."""
    from .certify import bracket_tolerance
    from .sdp import gap_tolerance

    width = (gap_tolerance if sharp else bracket_tolerance)(cert.upper)
    return math.isfinite(cert.upper) and cert.upper - cert.primal <= width


def _polished(problem, bounds, cert):
    """The narrowest certificate of ``problem`` solved again with :data:`POLISH` (module
    docstring), or ``cert``; and the solver's last status."""
    from .certify import certify

    status = "no solve"
    for options in POLISH:
        for _name, _dual, status, _s in attempts(problem, [("CLARABEL", options)], []):  # noqa: B007
            if problem.G_value is not None:
                again = certify(problem, *bounds)
                if cert is None or again.upper < cert.upper:
                    cert = again
        if cert is not None and _fits(cert, sharp=True):
            break
    return cert, f"CLARABEL {status}"


def _info(cert, solver, problem, status, seconds=0.0):
    from PEPit import Point

    return SolveInfo(worst=cert.upper, primal=cert.primal, gap=cert.upper - cert.primal,
                     solver=solver, status=status, seconds=seconds,
                     gram_size=int(Point.counter),
                     n_constraints=len(problem._list_of_constraints_sent_to_wrapper),
                     dual_residual=cert.upper - cert.dual)

def plain_check(round_, setting, participation, measure):
    """:func:`certified_value` of the one-round PEP of ``measure`` (a searched :math:`V_P`,
    :func:`.lyapunov_lmi.lyapunov_measure`) built by :func:`.engine.build`, its free start
    leaves bounded by :func:`start_bounds`.

    Returns
    -------
    (SolveInfo, float or None)
    """
    from .engine import build as build_pep

    def build():
        problem, parts = build_pep(round_, setting, measure, participation)
        funcs = list({id(f): f for f in parts["funcs"]}.values())
        start = parts["start"]
        return problem, funcs, start_bounds(measure.value(start, parts["star"]),
                                            free_leaves(start, funcs), funcs)

    return certified_value(build, setting.L)


def safari_check(mu, L, q, local_steps, step_client, step_server):
    r""":func:`certified_value` of SAFARI's one-round PEP of :math:`\|x - x^\star\|^2`
    (identical clients, the SDP of :func:`.server_steps.safari_rate`, :math:`\|x\| \le 1`
    at the start).

    Returns
    -------
    (SolveInfo, float or None)
    """
    from PEPit import PEP

    from .describe import Setting, distance
    from .described_server import safari_round
    from .engine import initial_state
    from .scenarios import declare, expected
    from .server_steps import check_round_args

    mu, L, q, K, eta_c, step, _ = check_round_args(mu, L, q, local_steps, step_client,
                                                   step_server, None)
    program, measure = safari_round(q, K, eta_c, step), distance()

    def build():
        problem = PEP()
        funcs, star = declare(problem, Setting(1, mu, L, identical=True))
        start = initial_state(program.branches[0].round, funcs)
        problem.set_initial_condition(measure.value(start, star) <= 1)
        problem.set_performance_metric(expected(program, funcs, start, measure.value, star))
        return problem, funcs[:1], {start["x"]: 1.0}

    return certified_value(build, L)


__all__ = ["POLISH", "certified_value", "class_forms", "free_leaves", "plain_check",
           "safari_check", "start_bounds"]
