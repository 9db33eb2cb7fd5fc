r"""A certified upper bound for two-run measures (direct form), whatever the solver's accuracy.

Why. A two-run PEP (:func:`.measures.two_runs`: the same round from two states, the measure
of their difference) has an unbounded feasible set (:mod:`.certify_symmargin`): adding
:math:`t\langle a, \cdot\rangle` to a client's :math:`f_i` keeps it in the class and, as
:math:`t \to \infty`, both runs move together to points far away while their difference stays
bounded. Neither a-priori bounds (:mod:`.certify`) nor a margin (:mod:`.certify_margin`) can
then pay for the multipliers' errors along those directions.

**The unbounded directions.** Let the leaves be :math:`x` (the first run's start; the second
run's is pinned at 0), the first run's leaves :math:`\ell^1_j` and the second run's
:math:`\ell^2_j`, paired by role (the same point or gradient of the same client in the two
runs, made by the same operations). Write :math:`\ell^1_j = \ell^2_j + \delta_j`. In the
coordinates :math:`y = (x, \delta, \ell^2)` (:math:`\ell = By`), the Lagrangian of any
multipliers reads :math:`k + y^\top B^\top M B y + d^\top F`. Along the limit above every
:math:`\ell^2_j` grows like :math:`t` while :math:`x, \delta` stay bounded, so a certificate
must not depend on :math:`\ell^2` at all:

.. math:: d = 0, \qquad M B e_{\ell^2_j} = M (e_{\ell^1_j} + e_{\ell^2_j}) = 0 \quad
          \text{for every pair } j,

equalities linear in the multipliers. They hold at the exact optimum: the identical runs
from a common start on a 1-D quadratic :math:`\tfrac h2 y^2 + a y` (curvature :math:`h \in
[\mu, L]` per client) are recession directions :math:`D = cc^\top` with :math:`c` in
:math:`U = \operatorname{span}\{e_{\ell^1_j} + e_{\ell^2_j}\}`, along which the objective is
0 and every constraint non-positive, so :math:`\langle M, D\rangle \ge 0`; with :math:`M
\preceq 0` this forces :math:`Mc = 0`, and those :math:`c` span :math:`U` (per client the
gradients :math:`(1 - \eta h)^k a` over :math:`\tau` distinct :math:`h`: a Vandermonde
basis). Measured: an accurate FedAvg solve (N = 2, tau = 2) leaves :math:`|MU| = 3.8\cdot
10^{-7}` against :math:`|M| = 0.36`. A solver's multipliers satisfy them only to its
accuracy, and any residual times an unbounded :math:`\ell^2` is no bound: they are made
exact (:func:`exact_correction`): the equalities are written in rationals (every float
coefficient of the SDP as built is an exact rational), their residual at the solver's
multipliers is cancelled by a correction on the inequality multipliers that are safely
positive (pivots chosen in floats, the square system solved in exact fractions), and the
result is checked exactly: every equality holds, every inequality multiplier is
:math:`\ge 0`; otherwise no certificate.

**The bound.** With those equalities exact, the Lagrangian is :math:`k + z^\top M_1 z`,
:math:`z = (x, \delta)` and :math:`M_1` the block of :math:`M` on the first run's leaves
(:math:`B e_x = e_x`, :math:`B e_{\delta_j} = e_{\ell^1_j}`). On the feasible set the
objective is at most that, and when :math:`\lambda_{\max}(M_1) \le 0` (with the rounding of
its float64 value and of eigvalsh, as :mod:`.certify_margin`), at most :math:`k` rounded up:
a margin on the bounded coordinates only. It comes as in :mod:`.certify_margin`, from a solve
of :math:`o + \sigma\|z\|^2`, :math:`\|z\|^2 = \|x\|^2 + \sum_j \|\ell^1_j - \ell^2_j\|^2`, a
bounded function on the feasible set (each :math:`\delta_j` is a gradient difference of one
L-smooth client at two points whose difference is a combination of :math:`x` and earlier
:math:`\delta`), so the regularised PEP is bounded and its multipliers for :math:`o` leave
:math:`M_1 \approx -\sigma I`. The bound is on the SDP as built (its float64 coefficients read
as exact rationals): the rounding of those coefficients against real-number ones is not
covered here, since it would multiply unbounded coordinates. It is covered where the second
run can be pinned: the quadratic class (below, :mod:`.certify_margin`'s allowances) and rounds
whose gradients are evaluated at start points only, with no client state but the model
(:mod:`.certify_tworuns_shift`, tried first); elsewhere (more than one local step over a
non-quadratic class, FOCUS's, SCAFFOLD's or MIFA's client state) it is not.

Validity does not rest on the pairing: :math:`B` is invertible for any pairing, so with the
equalities exact, the multipliers' inequality parts :math:`\ge 0` (both checked in fractions)
and the slope :math:`\le 0`, the bound holds; a wrong pairing only loses the margin.

Where it applies: two runs built by :func:`.engine.build` or
:func:`.symmetric.build_symmetric` (each records its runs' leaves; in the reduced form the
leaves are class means and deviations, paired the same way, and each deviation difference is
bounded with its mean by orthogonality), any class without extra LMIs (smooth strongly convex,
smooth, per-client constants, identical clients).

**The quadratic class** (direct form; :func:`pin_stationary`). Over quadratics the two runs'
difference does not see the shift :math:`f_i \to f_i + \langle a_i, \cdot\rangle + c_i`:
every point a round makes is a fixed linear combination of its start points and gradients
(PEPit's points are linear in the leaves), the gradients of both runs move by the same
:math:`a_i`, so every difference of the two runs, the measure and its initial condition are
unchanged, while the run points themselves move. A shift maps feasible points to feasible
points (the class is closed under it) and puts :math:`x_s = 0`, :math:`f_s = 0` with
:math:`a_i = H_i x_s`. So the PEP with every stationary point pinned
(:math:`\|x_s\|^2 \le 0`, :math:`f_s = 0`) has the same value (checked against the unpinned
solve in ``tests/flbounds/pep/test_certify_tworuns_quadratic.py``). Pinned, the second run
starts at a stationary point of every client (its start is the origin), so all its leaves
are 0 on the feasible set, :math:`\operatorname{tr} G` is bounded and the plain margin
certificate of :mod:`.certify_margin` applies, the LMI multipliers made PSD as in
:mod:`.certify_lmi`; each client's anchor is its stationary point, of value 0.

In the symmetric form (:func:`.symmetric.build_symmetric`) each class's stationary point is
a class vector (a mean plus a deviation) and is pinned the same way: the shift is made
client by client, so it maps class-symmetric instances to class-symmetric ones and the
reduced PEP with its stationary vectors at 0 has the reduced PEP's value (checked against
the direct form in ``tests/flbounds/pep/test_certify_tworuns_symmetric_quadratic.py``). The
stationary leaf PEPit made, replaced by the class vector, is unused: the margin leaves it out
(:func:`.certify_lmi.unused_leaves`), else the regularised PEP is unbounded along it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .certify import ROUNDING, bracket_tolerance
from .certify_terms import first_margin
from .sdp import SOLVERS, PEPSolveError, SolveInfo, attempts, reused

#: margins tried in turn (the objective o + sigma ||z||^2), as :data:`.certify_margin.SIGMAS`
SIGMAS = (1e-7, 1e-6, 1e-5)
#: an inequality multiplier is corrected only when at least this (relative to the largest)
SAFE = 1e-6


def pairs_of(runs, start):
    """``(x, pairs)``: the first run's start leaf ``x`` and the paired leaves of the two runs
    (``runs`` from :func:`.engine.build`; ``start`` the first run's start state)."""
    first, second = runs
    x = start["x"]
    rest = [p for p in first if p is not x]
    if len(rest) != len(first) - 1 or len(rest) != len(second):
        raise ValueError("runs: the two runs do not make the same leaves")
    return x, list(zip(rest, second, strict=True))


def _exact(c):
    return Fraction(float(c))


def _rows(terms, pair_of, sign=1):
    """Sparse contributions of one expression to the equalities: ``("v", leaf id)`` for a
    value, ``(leaf id, pair)`` for :math:`(MU)`, and the constant under ``"k"``."""
    out = {}
    for key, coef in terms.items():
        c = sign * _exact(coef)
        if isinstance(key, tuple):
            p, q = key
            for a, b in ((p, q), (q, p)):
                j = pair_of.get(id(b))
                if j is not None:
                    out[(id(a), j)] = out.get((id(a), j), 0) + c / 2
        elif isinstance(key, int | float):
            out["k"] = out.get("k", 0) + c * _exact(key)
        else:
            out[("v", id(key))] = out.get(("v", id(key)), 0) + c
    return out


def exact_correction(problem, metric, pairs, multipliers=None):
    """Multipliers (exact fractions) that satisfy the equalities of the module docstring
    exactly, closest in spirit to ``multipliers`` (default: the solver's), or None.

    Returns
    -------
    (list of Fraction, list of constraints) or None
    """
    constraints = [c for c in problem._list_of_prepared_constraints
                   if id(problem.objective) not in {id(k) for k in c.expression.decomposition_dict}]
    lam = [float(c.eval_dual()) for c in constraints] if multipliers is None else \
        [float(v) for v in multipliers]
    if len(lam) != len(constraints) or not all(math.isfinite(v) for v in lam):
        raise ValueError(f"multipliers must be {len(constraints)} finite numbers")
    ineq = [c.equality_or_inequality == "inequality" for c in constraints]
    top = max((abs(v) for v in lam), default=0.0)
    # inequality multipliers below SAFE (relative) are set to 0, the others corrected
    w = [Fraction(v if not q or v > SAFE * top else 0.0) for v, q in zip(lam, ineq, strict=True)]
    pair_of = {}
    for j, (a, b) in enumerate(pairs):
        pair_of[id(a)], pair_of[id(b)] = j, j
    cols = [_rows(c.expression.decomposition_dict, pair_of) for c in constraints]
    target = _rows(metric.decomposition_dict, pair_of)
    keys = sorted({k for col in cols for k in col if k != "k"} | {k for k in target if k != "k"},
                  key=repr)
    index = {k: r for r, k in enumerate(keys)}
    residual = [target.get(k, 0) for k in keys]            # target - sum_i w_i col_i
    for wi, col in zip(w, cols, strict=True):
        if wi:
            for k, v in col.items():
                if k != "k":
                    residual[index[k]] -= wi * v
    if any(residual):
        safe = [i for i, (v, q) in enumerate(zip(w, ineq, strict=True)) if not q or v]
        delta = _solve(cols, safe, keys, index, residual)
        if delta is None:
            return None
        for i, d in delta.items():
            w[i] += d
    if any(q and v < 0 for v, q in zip(w, ineq, strict=True)):
        return None
    check = [target.get(k, 0) for k in keys]
    for wi, col in zip(w, cols, strict=True):
        for k, v in col.items():
            if k != "k" and wi:
                check[index[k]] -= wi * v
    return (w, constraints) if not any(check) else None


def _as_given(problem, multipliers):
    constraints = [c for c in problem._list_of_prepared_constraints
                   if id(problem.objective) not in {id(k) for k in c.expression.decomposition_dict}]
    lam = [float(c.eval_dual()) for c in constraints] if multipliers is None else multipliers
    return [Fraction(max(float(v), 0.0) if c.equality_or_inequality == "inequality" else
                     float(v)) for v, c in zip(lam, constraints, strict=True)], constraints


def _solve(cols, safe, keys, index, residual):
    """A correction on the columns ``safe`` with sum_i delta_i col_i = residual exactly
    (pivots by QR in floats, the square system in fractions), or None."""
    from scipy.linalg import qr

    a = np.zeros((len(keys), len(safe)))
    for c, i in enumerate(safe):
        for k, v in cols[i].items():
            if k != "k":
                a[index[k], c] = float(v)
    if not a.size:
        return None
    _, r, piv = qr(a, pivoting=True, mode="economic")
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > 1e-10 * max(diag[0], 1e-300)))
    chosen = [safe[piv[c]] for c in range(rank)]
    _, r2, rows = qr(a[:, piv[:rank]].T, pivoting=True, mode="economic")
    rows = list(rows[:rank])
    m = [[cols[i].get(keys[r], Fraction(0)) for i in chosen] + [residual[r]] for r in rows]
    n = len(chosen)
    for c in range(n):                      # Gauss-Jordan in fractions
        p = next((r for r in range(c, n) if m[r][c] != 0), None)
        if p is None:
            return None
        m[c], m[p] = m[p], m[c]
        inv = 1 / m[c][c]
        m[c] = [v * inv for v in m[c]]
        for r in range(n):
            if r != c and m[r][c] != 0:
                f = m[r][c]
                m[r] = [v - f * u for v, u in zip(m[r], m[c], strict=True)]
    return {i: m[c][n] for c, i in enumerate(chosen)}


def two_run_bound(problem, metric, x, pairs, multipliers=None, *, exact=True):
    """``(upper, dual, slope)``: the certified bound on ``metric`` (module docstring), ``inf``
    when the equalities cannot be made exact or the slope is positive.

    Parameters
    ----------
    problem : PEPit.PEP
        Solved (any status with values); no extra LMIs.
    metric : PEPit.Expression
        The objective :math:`o`.
    x, pairs
        From :func:`pairs_of`.
    multipliers : array_like, optional
        One per prepared constraint other than PEPit's objective ones (default: the solver's).
    exact : bool
        Make the equalities exact and check them (default). False keeps the multipliers as
        given (inequalities clipped at 0) and ignores the second run's coordinates: no
        certificate (kept for the planted-bug test).
    """
    from PEPit import Point

    if problem._list_of_prepared_psd:
        raise ValueError("problem: extra LMIs are not covered by the two-run certificate")
    z = [x] + [a for a, _ in pairs]
    known = {id(p) for p in z} | {id(b) for _, b in pairs}
    if any(id(p) not in known for p in Point.list_of_leaf_points):
        raise ValueError("runs: a leaf point belongs to neither run")
    solved = exact_correction(problem, metric, pairs, multipliers) if exact else \
        _as_given(problem, multipliers)
    if solved is None:
        return float("inf"), float("nan"), float("inf")
    w, constraints = solved
    pos = {id(p): k for k, p in enumerate(z)}
    m = [[Fraction(0)] * len(z) for _ in z]
    const = Fraction(0)
    for weight, terms in [(Fraction(1), metric.decomposition_dict)] + \
            [(-wi, c.expression.decomposition_dict) for wi, c in zip(w, constraints,
                                                                       strict=True) if wi]:
        for key, coef in terms.items():
            c = weight * _exact(coef)
            if isinstance(key, tuple):
                a, b = pos.get(id(key[0])), pos.get(id(key[1]))
                if a is not None and b is not None:
                    m[a][b] += c / 2
                    m[b][a] += c / 2
            elif isinstance(key, int | float):
                const += c * _exact(key)
    mat = np.array([[float(v) for v in row] for row in m])
    eps = np.finfo(float).eps
    norm = float(np.linalg.norm(mat))
    top = float(np.linalg.eigvalsh(mat)[-1]) if len(z) else 0.0
    slope = top + ROUNDING * len(z) * eps * norm + eps * norm   # eigvalsh, then the entries
    upper = float(const)
    upper = np.nextafter(upper, np.inf) if Fraction(upper) < const else upper
    return (float(upper) if slope <= 0 else float("inf")), float(const), slope


def solve_two_runs(build, sigmas=SIGMAS) -> SolveInfo:
    """The certified solve of a two-run PEP (module docstring): for each margin ``sigma``,
    the objective ``o + sigma ||z||^2`` solved by the two Clarabel settings of
    :data:`.sdp.SOLVERS`, and the first bound within :func:`.certify.bracket_tolerance` of
    the primal value accepted.

    Parameters
    ----------
    build : callable
        ``build()`` returns ``(problem, parts)`` from :func:`.engine.build` (unsolved).
    sigmas : sequence of float
        Each finite and > 0.

    Returns
    -------
    SolveInfo
        The certified bound as ``worst`` (over the quadratic class: its stationary points
        pinned, :func:`pin_stationary`), ``gap`` the width of [primal value, bound], status
        ``certified (<solver status>)``.

    Raises
    ------
    ValueError
        Naming ``sigmas``, or ``runs`` when the problem is not a two-run one.
    PEPSolveError
        When no margin and solver give a bound within the bracket tolerance.
    """
    from PEPit import Point

    from .certify_tworuns_shift import shifted_first

    shifted = shifted_first(build)      # the second run pinned by a shift: rounding covered
    if shifted is not None:
        return shifted

    def attempt(sigma):
        problem, parts = build()
        if parts.get("runs") is None:
            raise ValueError("runs: not a two-run problem (flbounds.pep.engine.build)")
        if _quadratics(problem):        # the quadratic class: pinned, the margin certificate
            return _pinned(problem, parts, sigma)
        x, pairs = pairs_of(parts["runs"], parts["start"])
        metric = problem.list_of_performance_metrics[0]
        spread = x ** 2
        for a, b in pairs:
            spread = spread + (a - b) ** 2
        problem.list_of_performance_metrics = [metric + sigma * spread]

        def compute():
            tried = []
            for name, _dual, status, seconds in attempts(problem, SOLVERS[:2], tried):
                if problem.G_value is None or problem.wrapper.objective.value is None:
                    tried.append(f"{name}: status {status}, no values")
                    continue
                upper, dual, slope = two_run_bound(problem, metric, x, pairs)
                primal = float(metric.eval())
                width = abs(upper - primal)
                if math.isfinite(upper) and width <= bracket_tolerance(upper):
                    return SolveInfo(worst=upper, primal=primal, gap=width, solver=name,
                                     status=f"certified ({status})", seconds=seconds,
                                     gram_size=int(Point.counter), n_constraints=len(
                                         problem._list_of_constraints_sent_to_wrapper),
                                     dual_residual=upper - dual)
                tried.append(f"{name}: status {status}, slope {slope:.3g}, certified "
                             f"{upper:.9g}, primal {primal:.9g}")
            raise PEPSolveError("; ".join(tried))

        how = [("certified-two-runs", {"sigma": sigma, "rounding": ROUNDING, "safe": SAFE})]
        return reused(problem, compute, solvers=how)

    return first_margin(sigmas, attempt)


def _quadratics(problem):
    return [f for f in problem.list_of_functions
            if type(f).__name__ == "SmoothStronglyConvexQuadraticFunction"]


def pin_stationary(problem):
    """Pin every quadratic function's stationary point at the origin and its value at 0
    (constraints :math:`\\|x_s\\|^2 \\le 0`, :math:`f_s = 0`; same value for two runs:
    module docstring). Returns ``{leaf value f_s: (0, 0)}``, growth bounds for
    :func:`.certify_margin.value_growth`."""
    fixed = {}
    for f in _quadratics(problem):
        x_s, _g, f_s = f.list_of_stationary_points[0]
        problem.add_constraint(x_s ** 2 <= 0)
        problem.add_constraint(f_s == 0)
        fixed[f_s] = (0.0, 0.0)
    return fixed


def _pinned(problem, parts, sigma):
    """The certified solve of a two-run PEP over the quadratic class at the margin ``sigma``:
    its stationary points pinned (:func:`pin_stationary`), then
    :func:`.certify_margin.solve_margin`'s certificate."""
    from .certify_lmi import unused_leaves
    from .certify_margin import _margin, regularized, value_growth

    metric = problem.list_of_performance_metrics[0]
    fixed = pin_stationary(problem)
    funcs = list({id(f): f for f in parts["funcs"]}.values())
    growth = value_growth(funcs, float(max(f.L for f in funcs)), fixed)
    skip = unused_leaves(problem, funcs)    # the reduced form's replaced stationary leaves
    problem.list_of_performance_metrics = [regularized(metric, sigma, skip)]
    how = [("certified-pinned-margin", {"sigma": sigma, "rounding": ROUNDING})]
    return reused(problem, lambda: _margin(problem, metric, growth), solvers=how)


__all__ = ["SIGMAS", "exact_correction", "pairs_of", "pin_stationary", "solve_two_runs",
           "two_run_bound"]
