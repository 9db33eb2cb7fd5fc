r"""The start bounds a certified solve needs, derived from the measure's own :math:`V`.

Why. A certified solve (:mod:`.certify`) needs an a-priori bound on the norm of every free
start point and, when the clients do not share :math:`x^\star`, of every free gradient
:math:`g_i^\star = \nabla f_i(x^\star)` (``Measure.bounds``, ``Measure.star_bounds``). A
measure such as :math:`V = \|x - x^\star\|^2 + c\sum_i \|g_i^\star\|^2` already implies them
through :math:`V \le 1`; :func:`derived_bounds` computes them from :math:`V` when the user gives
neither (:attr:`.measures.Measure.derives_bounds`).

The exact bound. With :math:`x^\star = 0`, :math:`V(\text{start}, \star) = \sum_{a,b} Q_{ab}
\langle \ell_a, \ell_b\rangle + c_0 = \operatorname{tr}(QG) + c_0` over the leaves
:math:`\ell_a` it reads (:math:`G` their Gram matrix, :math:`Q` symmetric). For a leaf
:math:`k`, let :math:`s_k = \inf\{v^\top Q v : v_k = 1\}`. Then

.. math:: \sup\{G_{kk} : G \succeq 0,\ \operatorname{tr}(QG) + c_0 \le 1\}
          = \frac{\max(1 - c_0, 0)}{s_k}

when :math:`Q \succeq 0` (:math:`+\infty` at :math:`s_k = 0`, the leaf outside the range of
:math:`Q`; then :math:`1/s_k = (Q^+)_{kk}`). Proof: for a unit-free :math:`v` with
:math:`v_k \ne 0`, :math:`v^\top Q v \ge s_k v_k^2`, so for :math:`G = \sum_j v_j v_j^\top`,
:math:`\operatorname{tr}(QG) \ge s_k G_{kk}`, which gives :math:`\le`; the :math:`v` attaining
:math:`s_k` (scaled) attains it, and along :math:`v^{(t)}` with :math:`v^{(t)\top} Q v^{(t)}
\to 0`, :math:`v_k^{(t)} = 1`, the norm grows without bound when :math:`s_k = 0`. If :math:`Q`
has a negative direction :math:`w`, :math:`G = t\,ww^\top + s\,e_k e_k^\top` is feasible for
every :math:`s` once :math:`t` is large: every leaf is unbounded. A leaf that :math:`V` does
not read is unbounded (:math:`s_k = 0`). The bound uses :math:`V \le 1` alone (no
interpolation condition), so it is valid on the PEP's feasible set, exact when the rest of
the PEP does not constrain the start.

Rounding. The coefficients of :math:`Q` and :math:`c_0` are the float64 numbers the SDP is
built with, read as exact rationals (:class:`fractions.Fraction`, no rounding). :math:`s_k`
is computed exactly by symmetric Gaussian elimination of every other leaf: a positive pivot
is eliminated (its Schur complement is the infimum over that coordinate), a zero pivot must
have a zero row (else a :math:`2\times 2` minor :math:`\begin{pmatrix}0 & a\\ a & d
\end{pmatrix}` is negative: :math:`Q \not\succeq 0`), a negative pivot means :math:`Q \not
\succeq 0`; the remaining :math:`1 \times 1` entry is :math:`s_k` (this is the
:math:`LDL^\top` factorisation, so the test of :math:`Q \succeq 0` is exact too). The norm
bound :math:`\sqrt{(1 - c_0)/s_k}` is the float64 :math:`r` obtained by rounding the square
root and then stepping up (``math.nextafter``) until :math:`r^2 \ge (1 - c_0)/s_k` holds in
exact rational arithmetic: the only rounding is upwards, so the bound is valid, and it is
within a few units in the last place of the exact one.

Where a leaf the certificate needs is unbounded, no certificate exists from :math:`V` alone:
:func:`derived_bounds` raises :class:`.sdp.PEPSolveError` naming the points, and the engine
then tells an unbounded worst case apart (:mod:`.certify_unbounded`).
"""

from __future__ import annotations

import math
from fractions import Fraction


def quadratic_form(expr):
    """The quadratic form and constant of a PEPit expression, every float read exactly.

    Parameters
    ----------
    expr : PEPit.Expression
        A quadratic form of leaf points plus a constant.

    Returns
    -------
    (list, list of list of Fraction, Fraction)
        ``(leaves, Q, c0)``: the leaf points in order of appearance, ``Q`` symmetric,
        ``expr = sum_ab Q_ab <leaf_a, leaf_b> + c0``.

    Raises
    ------
    ValueError
        Naming ``measure`` when the expression reads a function value.
    """
    leaves, index, terms, c0 = [], {}, {}, Fraction(0)
    for key, coef in expr.decomposition_dict.items():
        if isinstance(key, tuple):
            for p in key:
                if id(p) not in index:
                    index[id(p)] = len(leaves)
                    leaves.append(p)
            a, b = index[id(key[0])], index[id(key[1])]
            terms[a, b] = terms.get((a, b), Fraction(0)) + Fraction(float(coef))
        elif isinstance(key, int | float):
            c0 += Fraction(float(key)) * Fraction(float(coef))
        else:
            raise ValueError("measure: V reads a function value; bounds derived from V need V "
                             "quadratic in the points (give bounds and star_bounds)")
    n = len(leaves)
    q = [[Fraction(0)] * n for _ in range(n)]
    for (a, b), c in terms.items():
        q[a][b] += c / 2
        q[b][a] += c / 2
    return leaves, q, c0


def schur_entry(q, k):
    r""":math:`s_k = \inf\{v^\top Q v : v_k = 1\}` in exact arithmetic (module docstring).

    Parameters
    ----------
    q : list of list of Fraction
        Symmetric.
    k : int
        The leaf.

    Returns
    -------
    Fraction or None
        :math:`s_k \ge 0`, or None when :math:`Q \not\succeq 0`.
    """
    rest = [j for j in range(len(q)) if j != k]
    a = {(i, j): q[i][j] for i in range(len(q)) for j in range(len(q))}
    alive = set(range(len(q)))
    for j in rest:
        alive.discard(j)
        pivot = a[j, j]
        if pivot < 0:
            return None
        if pivot == 0:
            if any(a[j, i] != 0 for i in alive):
                return None
            continue
        for i in alive:
            if a[i, j] == 0:
                continue
            factor = a[i, j] / pivot
            for m in alive:
                a[i, m] -= factor * a[j, m]
    s = a[k, k]
    return None if s < 0 else s


def norm_bound(q, c0, k):
    r"""The largest :math:`\|\ell_k\|` under :math:`\operatorname{tr}(QG) + c_0 \le 1`
    (module docstring).

    Parameters
    ----------
    q : list of list of Fraction
        Symmetric.
    c0 : Fraction
    k : int
        The leaf.

    Returns
    -------
    float
        The exact bound rounded upwards (``inf`` when the leaf is unbounded).
    """
    s = schur_entry(q, k)
    if s is None or s == 0:
        return math.inf
    square = max(1 - c0, Fraction(0)) / s
    r = math.sqrt(float(square))
    while Fraction(r) ** 2 < square:
        r = math.nextafter(r, math.inf)
    return r


def _named_leaves(start, star, funcs):
    """``[(name, leaf)]`` of every leaf a certificate needs a start bound on: the leaves of the
    start points that are not a gradient at a point of the round, and of the gradients at
    :math:`x^\\star`."""
    at_star = {id(p): p for g in (star.gradients if star is not None else ())
               for p in g.decomposition_dict}
    made = {id(g) for f in funcs for _u, g, _v in f.list_of_points
            if g.get_is_leaf() and id(g) not in at_star}
    named, seen = [], set()
    points = [(k, v) for k, v in start.server.items()] + \
        [(f"{k} of client {i}", v) for i, c in enumerate(start.clients) for k, v in c.items()]
    if star is not None:
        points += [(f"grad f_{i}(x*)", g) for i, g in enumerate(star.gradients)]
    for name, point in points:
        for leaf in point.decomposition_dict:
            if id(leaf) not in made and id(leaf) not in seen:
                seen.add(id(leaf))
                named.append((name, leaf))
    return named


def derived_bounds(measure, start, star, funcs, given=None):
    """``{leaf point: bound on its norm}`` implied by ``measure``'s :math:`V \\le 1` at the
    start (module docstring), for every leaf :math:`V` reads and bounds, with ``given``.

    Parameters
    ----------
    measure : Measure
        One run; ``measure.value(start, star)`` quadratic in the points, :math:`x^\\star` at
        the origin.
    start : State
        The start state of the built PEP (:func:`.engine.build`).
    star : Star or None
        Its minimizer (``x`` and the clients' ``gradients``).
    funcs : list of PEPit functions
        The PEP's functions (their gradients at the round's points are bounded by
        smoothness, not by :math:`V`).
    given : dict, optional
        ``{point: bound}`` the caller already has (``measure.bounds``, ``star_bounds``):
        these points need no derived bound, and their given bound is kept (both are valid).

    Returns
    -------
    dict
        ``{leaf: bound}`` with ``given``, each bound a valid upper bound (rounded upwards).

    Raises
    ------
    PEPSolveError
        When a free start point or a gradient at :math:`x^\\star` is unbounded under
        :math:`V \\le 1` (named in the message): no certificate exists from :math:`V`.
    ValueError
        Naming ``measure`` when :math:`V` reads a function value.
    """
    from .sdp import PEPSolveError

    leaves, q, c0 = quadratic_form(measure.value(start, star))
    bounds, found = {}, set()
    for k, leaf in enumerate(leaves):
        b = norm_bound(q, c0, k)
        if math.isfinite(b):
            bounds[leaf] = b
            found.add(id(leaf))
    given = dict(given or {})
    found.update(id(leaf) for point in given for leaf in _single_leaf(point))
    free = []
    for name, leaf in _named_leaves(start, star, funcs):
        if id(leaf) not in found and name not in free:
            free.append(name)
    if free:
        why = "V is not positive semidefinite in the points it reads" \
            if leaves and schur_entry(q, 0) is None else "V does not bound them"
        raise PEPSolveError(f"no certificate: V <= 1 leaves {free} unbounded ({why}), so no "
                            "a-priori bound exists (measure: give bounds and star_bounds, or "
                            "put those points in V)")
    return {**bounds, **given}


def _single_leaf(point):
    """The leaf of a point that is one leaf up to sign (a bound on it bounds the leaf)."""
    items = list(getattr(point, "decomposition_dict", {}).items())
    return [items[0][0]] if len(items) == 1 and abs(items[0][1]) == 1 else []





def condition_bounds(problem):
    r"""``{leaf point: bound on its norm}`` implied by the problem's own initial condition
    :math:`V - 1 \le 0` (as sent to the solver, every float read exactly), for every leaf it
    bounds (module docstring); what the symmetric form's certificate needs
    (:func:`.certify_symmetric.certified_symmetric`), whose :math:`V` is summed over the
    classes (:func:`.symgram.summed`) and read here as built.

    Parameters
    ----------
    problem : PEPit.PEP
        With exactly one constraint named ``"Initial condition"``, an inequality.

    Returns
    -------
    dict
        ``{leaf: bound}``, each rounded upwards; leaves :math:`V` leaves unbounded are absent.

    Raises
    ------
    ValueError
        Naming ``measure`` when there is no such condition or it reads a function value.
    """
    found = [c for c in problem.list_of_constraints if c.get_name() == "Initial condition"]
    if len(found) != 1 or found[0].equality_or_inequality != "inequality":
        raise ValueError("measure: bounds derived from V need one initial condition V <= 1")
    leaves, q, c0 = quadratic_form(found[0].expression)   # V - 1 <= 0, i.e. tr(QG) + c0 + 1 <= 1
    bounds = {}
    for k, leaf in enumerate(leaves):
        b = norm_bound(q, c0 + 1, k)
        if math.isfinite(b):
            bounds[leaf] = b
    return bounds

__all__ = ["condition_bounds", "derived_bounds", "norm_bound", "quadratic_form", "schur_entry"]
