r"""The LMI of the Lyapunov search (:mod:`.lyapunov_search`) and its lifted state.

:class:`Search` writes, over one round's leaves, the condition of
:func:`~flbounds.pep.lyapunov_search.lyapunov_rate` at a fixed :math:`\rho` (module docstring
there) and re-solves it for each :math:`\rho` of the bisection.

The lifted state (``values=True``, :func:`value_lift`). A quadratic of the state's points
cannot weigh a function value, and FOCUS's rate at low participation needs one (measured:
p = 0.2, N = 3, tau = 3, L/mu = 4, step 1/(4 L tau), the quadratic of the state certifies
0.9395, the witness reaches 0.9031). So the search may take

.. math:: V(\xi) = \sum_{a, b} P_{ab}\langle \xi_a, \xi_b\rangle
          + \sum_i q_i (f_i(x) - f_i^\star) + \sum_i r_i (f_i(z_i) - f_i^\star),

with the coordinates :math:`\xi` extended by every client's :math:`\nabla f_i(x)` (functions
of the state: the client's gradient at the server's model), :math:`z_i` every client point
where the state stores a gradient (``gradient_at``, FOCUS's :math:`z_i`), and
:math:`q, r \ge 0`. Since :math:`f_i \ge f_i^\star` at the shared minimizer,
:math:`V \ge \xi^\top P \xi \ge \|x - x^\star\|^2` still, and the decrease
:math:`E V(\xi^+) \le \rho V(\xi)` is still linear in :math:`(P, q, r)` and in the Gram matrix
and the function values: one LMI at fixed :math:`\rho`. The next state's :math:`x^+` depends on
the participating set :math:`S`, so :math:`\nabla f_i(x^+)` and :math:`f_i(x^+)` are taken at
each possible :math:`x^+(S)` (a point per set and client) and weighed by :math:`P(S)`: the
expectation stays exact.

The check. With the lift, :math:`V` is not a quadratic of the state's points, so it is not a
:class:`~.measures.Measure` of the engine; :func:`lifted_check` builds the same one-round PEP
(:math:`\sup E[V(\xi^+)]` over :math:`V(\xi) \le 1`) on the engine's own round
(:func:`.engine.initial_state`, :func:`.engine.next_state`) and solves it with the project's
discipline (:func:`.sdp.solve_first`: an inaccurate solve raises; with one :math:`(\mu, L)`
and :math:`P \succ 0`, the certified bound of :mod:`.certify`, the start's norms bounded by
:math:`\xi^\top P\xi \le V \le 1`).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import warnings

import numpy as np

from .describe import lyapunov
from .expect import ParticipationLaw, RandomPoint, expectation
from .second_moment import free_points


def coordinates(round_, n_clients: int, lifted_funcs: int = 0):
    """The state's points V reads: free server points, then each client's points (then, when
    lifted, each client function's gradient at ``x``)."""
    server, _ = free_points(round_)
    return tuple(server) + tuple(f"{k}[{i}]" for i in range(n_clients)
                                 for k in round_.client_state) + \
        tuple(f"grad f[{i}](x)" for i in range(lifted_funcs))


def points(state, round_):
    server, _ = free_points(round_)
    return [state[k] for k in server] + [c[k] for c in state.clients for k in round_.client_state]


def decrease(after, before, rho):
    """The matrix of E[V+] - rho V, whose negativity (with the multipliers) certifies rho."""
    return after - rho * before


# --------------------------------------------------------------------------- the lift


class _SetLaw(ParticipationLaw):
    """``law`` with one more kind of variable, ``("set", s)``: the indicator of outcome s."""

    def __init__(self, law):
        super().__init__(law.masks, law.probs, law.label, law.counts)

    def values(self, variable):
        if variable[0] == "set":
            out = np.zeros(self.probs.size)
            out[variable[1]] = 1.0
            return out
        return super().values(variable)


def realize(point, law, s):
    """A :class:`~.expect.RandomPoint` on outcome ``s`` of ``law``: a PEPit point."""
    from .anchor import origin

    total = origin()
    for monomial, pt in point.terms.items():
        c = float(np.prod([law.values(v)[s] for v in monomial])) if monomial else 1.0
        if c != 0.0:
            total = total + c * pt
    return total


def value_lift(round_, funcs, start, after_state, law):
    """The lifted coordinates and value terms (module docstring).

    Returns
    -------
    (law, extra_before, extra_after, values_before, values_after)
        ``law`` knows the outcome indicators; ``extra_*`` the gradients at ``x`` (before:
        PEPit points; after: random points over the outcomes); ``values_*`` the value terms
        (before: PEPit expressions; after: their exact expectations).
    """
    law = _SetLaw(law)
    unique = list({id(f): f for f in funcs}.values())
    x0, K = start["x"], law.probs.size
    xs = [realize(after_state["x"], law, s) for s in range(K)]
    extra_before = [f.gradient(x0) for f in unique]
    extra_after = [RandomPoint({(("set", s),): f.gradient(xs[s]) for s in range(K)})
                   for f in unique]
    values_before = [f.value(x0) for f in unique]
    values_after = [_mean(law, [f.value(xs[s]) for s in range(K)]) for f in unique]
    stored = [how.of for how in round_.initial.values() if how.kind == "gradient"]
    for name in stored:
        for i, f in enumerate(funcs):
            old, new = start.clients[i][name], after_state.clients[i][name]
            values_before.append(f.value(old))
            values_after.append(_mean(law, [f.value(realize(new, law, s)) for s in range(K)]))
    return law, extra_before, extra_after, values_before, values_after


def _mean(law, exprs):
    total = 0.0 * exprs[0]
    for p, e in zip(law.probs, exprs, strict=True):
        total = total + float(p) * e
    return total


# --------------------------------------------------------------------------- the search


def class_lmis(psd, affine):
    r"""The class's LMIs :math:`T(G, F) \succeq 0` (the quadratic class's,
    :mod:`.certify_quadratic`) in the search: :math:`+\langle \Lambda, T\rangle` with
    :math:`\Lambda \succeq 0` per LMI, which is :math:`\ge 0` wherever :math:`T \succeq 0`,
    so the S-procedure of :mod:`.lyapunov_search` still bounds :math:`E V^+ - \rho V`.

    Parameters
    ----------
    psd : list of ndarray
        Each LMI's matrix of PEPit expressions.
    affine : callable
        ``T -> `` the (n*n + values + 1, T.size) columns of its entries' affine maps.

    Returns
    -------
    (expression or 0, list of constraints)
        The term added to the decrease and the constraints :math:`\Lambda \succeq 0`.
    """
    import cvxpy as cp

    term, rules = 0, []
    for T in psd:
        W = cp.Variable(T.shape, symmetric=True)
        term = term + affine(T) @ cp.vec(W, order="C")
        rules.append(W >> 0)
    return term, rules



class Search:
    """The LMI of :mod:`.lyapunov_search`'s docstring over one round's leaves, re-solved at
    each rho; ``values=True`` lifts the state (module docstring)."""

    def __init__(self, round_, setting, participation, values=False):
        import cvxpy as cp
        from PEPit import PEP, Point

        from .anchor import anchored_minimizer
        from .engine import _functions, initial_state, next_state
        from .expect import law_of

        law = law_of(participation, setting.n_clients)
        problem = PEP()
        funcs = _functions(problem, setting)
        anchored_minimizer(funcs, common=True)
        start = initial_state(round_, funcs)
        after_state = next_state(round_, funcs, start)
        before, after = points(start, round_), points(after_state, round_)
        vb, va = [], []
        if values:
            law, eb, ea, vb, va = value_lift(round_, funcs, start, after_state, law)
            before, after = before + eb, after + ea
        self.n_lifted = len(before) - len(points(start, round_))
        k = len(before)
        self.pairs = [(a, b) for a in range(k) for b in range(a, k)]
        exprs_after = [expectation(after[a] * after[b], law) for a, b in self.pairs]
        exprs_before = [before[a] * before[b] for a, b in self.pairs]
        problem.set_performance_metric(exprs_after[0])
        problem._prepare_constraints(verbose=0)
        psd = [np.asarray(m.matrix_of_expressions) for m in problem._list_of_prepared_psd]
        constraints = [c for c in problem._list_of_prepared_constraints
                       if id(problem.objective) not in {id(q) for q in
                                                        c.expression.decomposition_dict}]
        self.leaves = {id(p): i for i, p in enumerate(Point.list_of_leaf_points)}
        self.values = {}
        for e in [c.expression for c in constraints] + vb + va + \
                [e for T in psd for e in T.ravel() if hasattr(e, "decomposition_dict")]:
            for key in e.decomposition_dict:
                if not isinstance(key, tuple | int | float):
                    self.values.setdefault(id(key), len(self.values))
        lin = [self._affine(e) for e in (*exprs_after, *exprs_before)]
        cons = [self._affine(c.expression) for c in constraints]
        ineq = [c.equality_or_inequality == "inequality" for c in constraints]
        n = len(self.leaves)
        weight = [1.0 if a == b else 2.0 for a, b in self.pairs]
        self.rho = cp.Parameter(nonneg=True)
        self.P = cp.Variable((k, k), symmetric=True)
        p = cp.hstack([self.P[a, b] for a, b in self.pairs])
        npair = len(self.pairs)

        def stack(parts, scale=None):  # (n*n + nf + 1, m) columns of flattened affine maps
            cols = [np.concatenate([M.ravel(), d, [c]]) for M, d, c in parts]
            out = np.column_stack(cols) if cols else np.zeros((n * n + len(self.values) + 1, 0))
            return out * (np.asarray(scale) if scale is not None else 1.0)

        A, B = stack(lin[:npair], weight), stack(lin[npair:], weight)
        E = stack(cons)
        lam = cp.Variable(E.shape[1])
        total = decrease(A @ p, B @ p, self.rho) - E @ lam
        term, lmis = class_lmis(psd, lambda T: stack([self._affine(e) for e in T.ravel()]))
        total = total + term
        self.q = None
        if vb:
            self.q = cp.Variable(len(vb), nonneg=True)
            total = total + decrease(stack([self._affine(e) for e in va]) @ self.q,
                                     stack([self._affine(e) for e in vb]) @ self.q, self.rho)
        M = cp.reshape(total[:n * n], (n, n), order="C")
        Z = cp.Variable((n, n), symmetric=True)
        ex = np.zeros((k, k))
        ex[0, 0] = 1.0
        rules = [Z == M, Z << 0, total[n * n:n * n + len(self.values)] == 0,
                 total[-1] <= 0, self.P - ex >> 0]
        rules += [lam[i] >= 0 for i in np.flatnonzero(ineq)] + lmis
        self.problem = cp.Problem(cp.Minimize(cp.trace(self.P)), rules)
        self.n_leaves, self.n_constraints = n, len(constraints)
        self.unknown = 0  # solves that neither found P nor proved infeasibility

    def _affine(self, expr):
        n = len(self.leaves)
        M, d, const = np.zeros((n, n)), np.zeros(len(self.values)), 0.0
        if not hasattr(expr, "decomposition_dict"):  # a number in a class's LMI
            return M, d, float(expr)
        for key, c in expr.decomposition_dict.items():
            c = float(c)
            if isinstance(key, tuple):
                a, b = self.leaves[id(key[0])], self.leaves[id(key[1])]
                M[a, b] += 0.5 * c
                M[b, a] += 0.5 * c
            elif isinstance(key, int | float):
                const += c * float(key)
            else:
                d[self.values[id(key)]] += c
        return M, d, const

    def feasible(self, rho):
        """``(P, q)`` (arrays; ``q`` None without the lift) when Clarabel solves the LMI at
        ``rho``, else None; a solve that neither finds P nor proves infeasibility is counted
        in ``unknown`` (measured: Clarabel fails or ends ``infeasible_inaccurate`` below the
        optimum, in 0.01 s; SCS then takes seconds and decides no more)."""
        self.rho.value = float(rho)
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                self.problem.solve(solver="CLARABEL")
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001  (Clarabel's Rust panics are BaseException)
            self.unknown += 1
            return None
        if self.problem.status == "optimal" and self.P.value is not None:
            q = None if self.q is None else np.maximum(np.asarray(self.q.value, float), 0.0)
            return 0.5 * (self.P.value + self.P.value.T), q
        self.unknown += self.problem.status != "infeasible"
        return None


# --------------------------------------------------------------------------- the checks


def _quadratic(P, pts):
    total = P[0, 0] * (pts[0] * pts[0])
    for a, b in itertools.product(range(len(pts)), repeat=2):
        if (a, b) != (0, 0) and P[a, b] != 0.0:
            total = total + P[a, b] * (pts[a] * pts[b])
    return total


def _norm_bounds(P, pts, names, free):
    """xi' P xi <= 1 gives ||xi_a|| <= sqrt((P^-1)_aa) for every coordinate."""
    inv = np.linalg.inv(P)
    return {pt: float(np.sqrt(max(inv[a, a], 0.0)))
            for a, (pt, name) in enumerate(zip(pts, names, strict=False)) if name in free}


def lyapunov_measure(P, round_):
    """:math:`V_P` of the state's points as a :class:`~.measures.Measure` (with the start's
    norm bounds when :math:`P \\succ 0`)."""
    P = np.asarray(P, float)

    def bounds(state):
        server, own = free_points(round_)
        names = list(server) + [k for _ in state.clients for k in round_.client_state]
        return _norm_bounds(P, points(state, round_), names, set(server) | set(own))

    return lyapunov(lambda state, star: _quadratic(P, points(state, round_)),
                    "E[V_P(xi+)] / V_P(xi), P searched",
                    bounds if np.linalg.eigvalsh(P)[0] > 0 else None)


def lifted_check(round_, setting, participation, P, q):
    r""":math:`\sup E[V(\xi^+)]` over :math:`V(\xi) \le 1` for the lifted :math:`V` of
    ``(P, q)`` (module docstring): the certified bound of :func:`.lyapunov_check.certified_value`,
    the free start leaves bounded by the quadratic part of :math:`V` and the class's
    inequalities (:func:`.lyapunov_check.start_bounds`; the value terms are
    :math:`\ge 0` on the feasible set, so the quadratic part is :math:`\le V \le 1`).

    Returns
    -------
    (SolveInfo, float or None)
        The certified bound and the accurate solve's value (None when not accurate).
    """
    from PEPit import PEP

    from .anchor import anchored_minimizer
    from .engine import _functions, initial_state, next_state
    from .expect import law_of
    from .lyapunov_check import certified_value, free_leaves, start_bounds

    P, q = np.asarray(P, float), np.asarray(q, float)

    def parts():
        law = law_of(participation, setting.n_clients)
        problem = PEP()
        funcs = _functions(problem, setting)
        anchored_minimizer(funcs, common=True)
        start = initial_state(round_, funcs)
        after_state = next_state(round_, funcs, start)
        law, eb, ea, vb, va = value_lift(round_, funcs, start, after_state, law)
        before, after = points(start, round_) + eb, points(after_state, round_) + ea
        quad, v1 = _quadratic(P, before), _quadratic(P, after)
        v0 = quad
        for c, b, a in zip(q, vb, va, strict=True):
            if c != 0.0:
                v0, v1 = v0 + float(c) * b, v1 + float(c) * a
        problem.set_initial_condition(v0 <= 1)
        problem.set_performance_metric(expectation(v1, law))
        unique = list({id(f): f for f in funcs}.values())
        return problem, unique, start_bounds(quad, free_leaves(start, unique), unique)

    return certified_value(parts, setting.L)


__all__ = ["Search", "class_lmis", "coordinates", "decrease", "lifted_check", "lyapunov_measure",
           "points", "realize", "value_lift"]
