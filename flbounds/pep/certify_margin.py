r"""A certified upper bound without a-priori bounds: multipliers with a margin.

Why. :mod:`.certify` and :mod:`.certify_scaled` need every leaf of the Gram matrix bounded
a priori (or in units of a scale the objective controls). Some PEPs have no such bound even
after their symmetries are pinned: in the PL relaxation (:mod:`.pl`) the gradient at the
pulled model is bounded only through the round's own descent (the next model's
:math:`F \ge F^\star`), an inequality the multipliers prove, not one known before. What those
PEPs do have is a bounded feasible set, and then the certificate may ask the multipliers to
carry their own slack.

The bound. For ANY multipliers :math:`\lambda_i` (inequalities clipped to :math:`\ge 0`),
rebuilt in float64 as in :mod:`.certify`, :math:`o - \sum_i \lambda_i e_i = k + \langle M,
G\rangle + d^\top F` identically in the Gram matrix :math:`G \succeq 0` and the leaf values
:math:`F`; on the feasible set :math:`e_i \le 0` (:math:`= 0`), so :math:`o \le k + \langle M,
G\rangle + d^\top F`, and :math:`\langle M, G\rangle \le \lambda_{\max}(M)\operatorname{tr} G`.
Each leaf value has a growth bound :math:`|F_k| \le C_k + \phi_k \operatorname{tr} G` on the
feasible set (:func:`value_growth`). Hence, with :math:`\varrho_0, \varrho_1` the rounding
allowances (below),

.. math:: o \le \Big(k + \sum_k |d_k| C_k + \varrho_0\Big)
          + \Big(\lambda_{\max}(M) + \sum_k |d_k| \phi_k + \varrho_1\Big)\operatorname{tr} G,

and when the second bracket (the *slope*) is :math:`\le 0`, the first is an upper bound on
the PEP's value, whatever :math:`\operatorname{tr} G`: a margin :math:`-\lambda_{\max}(M)`
paid for the leftovers replaces the a-priori bound of :mod:`.certify`.

Where the margin comes from. Exact optimal multipliers leave :math:`M = -S` singular
(complementary slackness with the worst Gram matrix), so a solver's multipliers, at best a
rounding away, have no margin. Solving the same constraints with the objective
:math:`o + \sigma\operatorname{tr} G` gives multipliers whose :math:`M_\sigma \preceq 0` up to
the solver's residual; for :math:`o` the same multipliers leave :math:`M = M_\sigma - \sigma I`,
a margin :math:`\sigma` minus that residual. Their dual value is at least
:math:`\max(o + \sigma \operatorname{tr} G) \ge \max o`: the price of the margin is about
:math:`\sigma \operatorname{tr} G^\star`. :func:`solve_margin` tries the margins of
:data:`SIGMAS` in turn and accepts the first bound within :func:`.certify.bracket_tolerance` of
the solver's primal value (the objective :math:`o` at its Gram matrix). A margin exists only
when the feasible set is bounded (along a direction of unbounded :math:`\operatorname{tr} G`
with bounded objective, :math:`\lambda_{\max}(M) < 0` is impossible): the PEP's symmetries
(translation, constants, a free minimizer) must be pinned first, as :mod:`.pl` does.

Growth of the values (:func:`value_growth`). For an L-smooth :math:`f` (convex or not) with an
anchor :math:`(a, g_a, f_a)` whose value has a growth bound :math:`|f_a| \le C_a + \phi_a
\operatorname{tr} G`, at every point :math:`u`: :math:`|f(u)| \le |f_a| + \|g_a\|\|u - a\| +
\tfrac L2\|u - a\|^2` (the SDP's smooth interpolation conditions are exact, so every feasible
point is such a function). Writing :math:`g_a = \sum_j \alpha_j \ell_j`, :math:`u - a = \sum_j
\beta_j \ell_j` over the leaves, Cauchy-Schwarz gives :math:`\|g_a\| \le \|\alpha\|_2
\sqrt{\operatorname{tr} G}` and the same for :math:`\beta`, so :math:`C = C_a`, :math:`\phi =
\phi_a + \|\alpha\|_2\|\beta\|_2 + \tfrac L2 \|\beta\|_2^2`.

Rounding. Each entry of :math:`k, M, d` is a float64 sum of :math:`m` products
:math:`\lambda_i c`; its error is at most :math:`\gamma_{m+1} \sum |\lambda_i c|`,
:math:`\gamma_m = m\varepsilon/(1 - m\varepsilon)` (counted per entry). The Frobenius norm of
those errors bounds their effect on :math:`\lambda_{\max}` (Weyl), and eigvalsh (backward
stable) adds at most :data:`ROUNDING` :math:`n \varepsilon \|M\|_F`. The coefficients of the
SDP itself (e.g. :math:`1/(4L)`) are floats: a relative :data:`ROUNDING`
:math:`\varepsilon` on every term of every weighted constraint is added, :math:`\sum |\lambda_i
c|` times the largest bound of a Gram entry (:math:`\operatorname{tr} G`) or value
(:math:`C + \phi \operatorname{tr} G`). :math:`\varrho_0` collects the constant parts,
:math:`\varrho_1` the parts proportional to :math:`\operatorname{tr} G`.
"""

from __future__ import annotations

import math

import numpy as np

from .certify import bracket_tolerance
from .certify_terms import ROUNDING, MarginCertificate, _Sums, first_margin
from .sdp import SOLVERS, PEPSolveError, SolveInfo, attempts, prepared_multipliers, reused

#: margins sigma tried in turn (the objective o + sigma tr G), in the problem's units; the
#: price of each is about sigma tr G* (module docstring). Measured on FOCUS under PL (p = (0.5,
#: 0.8), tau = 2, the printed step, tr G* = 25.6): sigma = 1e-7 leaves lambda_max(M) = -1.0e-7
#: and a bound 2.6e-6 above the primal value; the rounding allowances are below 1e-13.
SIGMAS = (1e-7, 1e-6, 1e-5)


def _norm2(point, index):
    """||coefficients||_2 of ``point`` over the leaf points (``index``: id -> position)."""
    return math.sqrt(sum(float(c) ** 2 for k, c in point.decomposition_dict.items()
                         if id(k) in index))


def value_growth(funcs, L, fixed):
    r"""Growth bounds :math:`|F_k| \le C_k + \phi_k \operatorname{tr} G` of every leaf
    function value (module docstring).

    Parameters
    ----------
    funcs : list of PEPit functions
        L-smooth (convex or not); each needs an anchor: a point whose value is built from
        constants and leaves of ``fixed`` only (e.g. a value pinned at 0).
    L : float
        Smoothness constant of every function.
    fixed : dict
        ``{leaf expression: (C, phi)}`` for leaf values that are no function's value at a
        point (e.g. a free :math:`F^\star`), each a bound valid on the feasible set.

    Returns
    -------
    dict
        ``{id(leaf value): (C, phi)}``, ``fixed`` included.

    Raises
    ------
    ValueError
        When ``L`` is not finite and > 0, a bound is negative or not finite, or a function has
        no anchor.
    """
    from PEPit import Point

    if not (np.isfinite(L) and L > 0):
        raise ValueError(f"L must be finite and > 0, got {L}")
    growth = {}
    for key, (c, phi) in fixed.items():
        if not (np.isfinite(c) and np.isfinite(phi) and c >= 0 and phi >= 0):
            raise ValueError(f"fixed: bounds must be finite and >= 0, got {(c, phi)}")
        growth[id(key)] = (float(c), float(phi))
    index = {id(p): k for k, p in enumerate(Point.list_of_leaf_points)}
    for f in list({id(f): f for f in funcs}.values()):
        if not getattr(f, "L", L) <= L:
            raise ValueError(f"L={L} is below a function's smoothness constant {f.L}")
        anchor = next(((a, g, b) for a, g, v in f.list_of_points
                       if (b := _expression_growth(v, growth)) is not None), None)
        if anchor is None:
            raise ValueError("funcs: a function has no point whose value is bounded (an "
                             "anchor, e.g. a value pinned at 0)")
        a, g_a, (c_a, phi_a) = anchor
        alpha = _norm2(g_a, index)
        for u, _g, v in f.list_of_points:
            if v.get_is_leaf() and id(v) not in growth:
                beta = _norm2(u - a, index)
                growth[id(v)] = (c_a, phi_a + alpha * beta + 0.5 * L * beta**2)
    return growth


def _expression_growth(v, growth):
    """(C, phi) of an expression built from constants and bounded leaves, else None."""
    c_total, phi_total = 0.0, 0.0
    for leaf, coef in v.decomposition_dict.items():
        if isinstance(leaf, int | float):
            c_total += abs(float(coef) * float(leaf))
        elif id(leaf) in growth:
            c, phi = growth[id(leaf)]
            c_total += abs(float(coef)) * c
            phi_total += abs(float(coef)) * phi
        else:
            return None
    return c_total, phi_total


def margin_certificate(problem, metric, growth, multipliers=None) -> MarginCertificate:
    """Rigorous upper bound on ``metric`` over the feasible set of a solved PEP (module
    docstring).

    Parameters
    ----------
    problem : PEPit.PEP
        After ``problem.solve`` (any status with values); extra LMIs go to
        :func:`.certify_lmi.margin_certificate_lmi`. Its performance metric may differ
        from ``metric`` (e.g. ``metric + sigma tr G``).
    metric : PEPit.Expression
        The objective :math:`o` to bound.
    growth : dict
        From :func:`value_growth`: every leaf value's ``(C, phi)``.
    multipliers : array_like, optional
        One per prepared constraint (default: the solver's); inequality multipliers are
        clipped at 0.

    Returns
    -------
    MarginCertificate

    Raises
    ------
    ValueError
        On a multiplier vector of the wrong length or not finite, or a leaf value
        without a growth bound.
    """
    from PEPit import Point

    if problem._list_of_prepared_psd:   # the quadratic class: its LMI duals too
        from .certify_lmi import margin_certificate_lmi
        return margin_certificate_lmi(problem, metric, growth, multipliers)
    constraints, lam = prepared_multipliers(problem, multipliers)
    leaves = Point.list_of_leaf_points
    acc = _Sums(len(leaves), {id(p): k for k, p in enumerate(leaves)})
    acc.add(metric.decomposition_dict, 1.0, model=True)
    objective = id(problem.objective)
    for c, lam_i in zip(constraints, lam, strict=True):
        if objective in {id(k) for k in c.expression.decomposition_dict}:
            continue  # PEPit's "objective <= performance metric": the metric is ``metric``
        weight = max(lam_i, 0.0) if c.equality_or_inequality == "inequality" else lam_i
        if weight != 0.0:
            acc.add(c.expression.decomposition_dict, -weight, model=True)
    return acc.bound(growth, float(metric.eval()))


def solve_margin(build, sigmas=SIGMAS, solvers=None) -> SolveInfo:
    """Solve a PEP with the objective ``o + sigma tr G`` for each margin ``sigma`` in turn
    (the two Clarabel settings of :data:`.sdp.SOLVERS`; SCS, slow, is left out) and accept
    the first certified bound on ``o`` (:func:`margin_certificate`) within
    :func:`.certify.bracket_tolerance` of the primal value.

    Parameters
    ----------
    build : callable
        ``build(sigma)`` returns ``(problem, metric, growth)``: a fresh :class:`PEPit.PEP`
        whose performance metric is ``metric + sigma tr G`` (every leaf point's squared
        norm), the objective ``metric`` and :func:`value_growth`'s bounds.
    sigmas : sequence of float
        The margins, each > 0 (default :data:`SIGMAS`).
    solvers : sequence of (name, options), optional
        Instead of the two Clarabel settings (e.g. SCS on a small reduced SDP).

    Returns
    -------
    SolveInfo
        ``worst`` the bound, status ``certified (<solver status>)``, ``gap`` the bracket
        width, ``dual_residual`` the bound minus the multipliers' dual value.

    Raises
    ------
    ValueError
        When ``sigmas`` is empty or has a value that is not finite and > 0.
    PEPSolveError
        When no margin and solver give a bound within the bracket tolerance.
    """
    def attempt(sigma):
        problem, metric, growth = build(sigma)
        how = {"sigma": sigma, "rounding": ROUNDING, **({} if solvers is None else
                                                          {"solvers": list(solvers)})}
        return reused(problem, lambda: _margin(problem, metric, growth, solvers),
                      solvers=[("certified-margin", how)])

    return first_margin(sigmas, attempt)


def _margin(problem, metric, growth, solvers=None) -> SolveInfo:
    from PEPit import Point

    failures = []
    for name, _dual, status, seconds in attempts(
            problem, SOLVERS[:2] if solvers is None else solvers, failures):
        if problem.G_value is None or problem.wrapper.objective.value is None:
            failures.append(f"{name}: status {status}, no values")
            continue
        cert = margin_certificate(problem, metric, growth)
        width = abs(cert.upper - cert.primal)
        if math.isfinite(cert.upper) and width <= bracket_tolerance(cert.upper):
            return SolveInfo(worst=cert.upper, primal=cert.primal, gap=width, solver=name,
                             status=f"certified ({status})", seconds=seconds,
                             gram_size=int(Point.counter),
                             n_constraints=len(problem._list_of_constraints_sent_to_wrapper),
                             dual_residual=cert.upper - cert.dual)
        failures.append(f"{name}: status {status}, slope {cert.slope:.3g}, certified "
                        f"{cert.upper:.9g}, primal {cert.primal:.9g}")
    raise PEPSolveError("; ".join(failures))


def regularized(metric, sigma, skip=()):
    """``metric + sigma * sum of every leaf point's squared norm`` (``sigma tr G``), for
    :func:`solve_margin`'s ``build``; call it once the problem's points are all made.

    Parameters
    ----------
    metric : PEPit.Expression
    sigma : float
        >= 0.
    skip : iterable of PEPit.Point
        Leaves left out (:func:`.certify_lmi.unused_leaves`).

    Returns
    -------
    PEPit.Expression
    """
    from PEPit import Expression, Point

    if not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be finite and >= 0, got {sigma}")
    skip = {id(p) for p in skip}
    trace = Expression(is_leaf=False, decomposition_dict={
        (p, p): float(sigma) for p in Point.list_of_leaf_points if id(p) not in skip})
    return metric + trace


__all__ = ["SIGMAS", "MarginCertificate", "margin_certificate", "regularized", "solve_margin",
           "value_growth"]
