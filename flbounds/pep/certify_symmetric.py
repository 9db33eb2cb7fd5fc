r"""A certified upper bound on the worst case of a symmetric solve (one representative per
class, :mod:`flbounds.pep.symmetric`), valid whatever the solver's accuracy.

The bound is :mod:`.certify`'s: for any multipliers, rebuilt in float64, the objective is at
most :math:`k + \langle M, G\rangle + d^\top F` on the feasible set, and the last two terms
are bounded with a-priori bounds on the norms of the Gram coordinates (the leaves) and on the
leaf function values. What changes is where those bounds come from: a representative's
gradient is not one leaf but a class mean plus a deviation, :math:`g = \bar g + e`
(:meth:`.symgram.Space.client`).

**Bounds on the reduced feasible set.** Let the clients share a stationary point
:math:`x^\star = 0` where every value is 0 (``common_minimizer``; the representative of class
c then has the point :math:`(0, 0, 0)`, its anchor) and let the measure give bounds on the
start points (``Measure.bounds``, valid for every client's point of the direct PEP when
:math:`V \le 1`).

* A feasible point of the reduced SDP is a symmetric feasible point of the direct one (the
  realisation :math:`e_i = U_i \otimes \Delta_c^{1/2}` of the module docstring of
  :mod:`.symmetric`), so the measure's bound on a client's start point
  :math:`u_i = \bar u + e_i` holds for :math:`\|\bar u + e\|`, the representative's.
* The reduced SDP makes every deviation of class c orthogonal to every other coordinate
  (equality constraints, exact on the feasible set), so :math:`\|\bar u + e\|^2 = \|\bar
  u\|^2 + \|e\|^2` and a bound :math:`B` on the client vector bounds both its mean leaf and
  its deviation leaf by :math:`B`.
* The representative of class c interpolates an :math:`L_c`-smooth function (the SDP's
  conditions of the smooth strongly convex and smooth classes are exact), so at each of its
  points :math:`u`, :math:`\|\bar g + e\| \le \|g_a\| + L_c\|u - a\|` with the anchor
  :math:`(a, g_a) = (0, 0)`, and :math:`|f(u)| \le |f_a| + \|g_a\|\|u - a\| + \tfrac{L_c}2
  \|u - a\|^2`; :math:`\|u - a\|` is bounded by the triangle inequality over the leaves of
  :math:`u` (all created before the gradient, in the order the round makes them).

**Classes of different constants.** Each bullet above is about one representative and
its own class's constants only: the representative of class c is declared in
:math:`\mathcal F_{\mu_c, L_c}` (``Setting(n, mu=(...), L=(...))`` with ``classes=``,
:func:`.symmetric.class_constants`), so its gradient leaves are bounded with :math:`L_c`, its
values with :math:`\tfrac{L_c}2`, and over quadratics its stationary point with
:math:`\mu_c` (:func:`.certify_lmi.stationary_bounds`: :math:`\|x_s - a\| \le
\|g_a\|/\mu_c`). The largest :math:`L_c` handed to :func:`.certify.solve_certified` is a
label of the solve, not a bound used. Bounding every class with the first class's smaller
constant is no bound (``tests/flbounds/pep/test_certify_per_client.py``).

With these bounds :func:`.certify.certify` gives the rigorous upper bound, and the value of
the reduced SDP is the worst case over the N clients (:mod:`.symmetric`), so the bound is one
on the worst case. :func:`.certify.solve_certified` accepts it as there (an accurate solve is
preferred; otherwise the bracket [solver's primal value, bound] within
:func:`.certify.bracket_tolerance`).

**Bounds derived from V.** A measure without ``bounds`` has its leaves bounded by the reduced
SDP's own initial condition :math:`\sum_c V_c \le 1` (:func:`.certify_derived.condition_bounds`:
the exact supremum of each leaf's norm over :math:`G \succeq 0` with that condition, read from
the float coefficients the SDP is built with and rounded upwards), which holds on the reduced
feasible set; each mean and deviation leaf is then bounded directly. A leaf :math:`V` leaves
unbounded gets no bound (``ValueError`` naming ``measure``;
:func:`.certify_symmargin.certified_reduced` then takes the margin certificate).

**Clients not sharing** :math:`x^\star`. The representative of class c then has the point
:math:`(0, g_c, 0)` at :math:`x^\star = 0`, :math:`g_c` a class mean (the last class's minus
the weighted sum of the others) plus a deviation. Its anchor is that point, with
:math:`\|g_c\|` bounded by the triangle inequality over the leaves the initial condition
bounds (the derived bounds, with the measure's ``bounds`` where given): the third bullet
above then holds from :math:`(0, g_c)` as in :func:`.certify.certified_star`, which reads only
each function's smoothness and the exactness of its interpolation conditions.

Where it applies (:func:`certifiable_symmetric`): a one-run measure (``bounds`` given or
derived), clients sharing :math:`x^\star` or not, not identical, any class (the quadratic one with
:math:`\mu_c > 0`: its LMI duals and its stationary points' bounds, :mod:`.certify_lmi`);
each class keeps its own (mu_c, L_c). A proximal step's gradient is evaluated at a point
that depends on it, so no a-priori bound is derived for it: ``ValueError`` naming ``round``.
"""

from __future__ import annotations

import numpy as np

from .certify import _anchor, _norm_bound, solve_certified
from .certify_derived import condition_bounds
from .certify_lmi import stationary_bounds, unused_leaves
from .describe import Measure, Setting


def certifiable_symmetric(setting: Setting, measure: Measure) -> bool:
    """Whether :func:`certified_symmetric` applies (module docstring).

    Parameters
    ----------
    setting : Setting
    measure : Measure

    Returns
    -------
    bool
    """
    return (measure.runs == 1 and not setting.identical and (setting.function_class != "quadratic"
                                           or bool(np.all(np.asarray(setting.mu) > 0))))


class _StartState:
    """The start state as the measure's ``bounds`` reads it: server points by name, and one
    entry per class for each client point (the representative's)."""

    def __init__(self, server, clients):
        self.server, self.clients = server, clients

    def __getitem__(self, name):
        return self.server[name]

    def client(self, name):
        return [own[name] for own in self.clients]


def _single(part):
    """The one leaf of ``part`` with coefficient +-1, None for an empty part, else
    ValueError."""
    items = list(part.decomposition_dict.items())
    if not items:
        return None
    if len(items) != 1 or abs(abs(float(items[0][1])) - 1.0) > 0:
        raise ValueError("measure: bounds must name start points that are one Gram coordinate "
                         "per class (a mean plus a deviation)")
    return items[0][0]


def class_leaf_bounds(funcs, initial, space):
    """A-priori bounds on every leaf norm and leaf function value of a reduced PEP (module
    docstring).

    Parameters
    ----------
    funcs : list of PEPit functions
        The representatives, each with the anchor :math:`(0, 0, 0)` and its own ``L``.
    initial : dict
        ``{start point: bound on its norm}``, the measure's ``bounds`` on the
        representatives' start points.
    space : symgram.Space
        The reduced PEP's coordinates.

    Returns
    -------
    (dict, dict)
        ``{id(leaf point): norm bound}``, ``{id(leaf value): |value| bound}``, as
        :func:`.certify.leaf_bounds`.

    Raises
    ------
    ValueError
        Naming ``measure`` (a bound on a point that is not one coordinate per class, or a
        leaf left without a bound) or ``round`` (a gradient at a point that depends on it).
    """
    from PEPit import Point

    points, values = {}, {}
    for key, b in initial.items():
        if not b >= 0:
            raise ValueError(f"measure: bounds must be >= 0, got {b}")
        for part in space.split(key):
            leaf = _single(part)
            if leaf is not None:
                points[id(leaf)] = min(float(b), points.get(id(leaf), float("inf")))
    source = {}
    for f in funcs:
        for u, g, _v in f.list_of_points:
            for part in space.split(g):
                leaf = _single(part)
                if leaf is not None and id(leaf) not in points:
                    source.setdefault(id(leaf), (f, u))
    anchors = {}
    for leaf in Point.list_of_leaf_points:
        if id(leaf) in points:
            continue
        if id(leaf) not in source:
            raise ValueError("measure: a start point has no bound (Measure.bounds)")
        f, u = source[id(leaf)]
        a, g_a, _ = anchors.get(id(f)) or anchors.setdefault(id(f), _anchor(f, points, values))
        try:
            points[id(leaf)] = _norm_bound(g_a, points) + f.L * _norm_bound(u - a, points)
        except ValueError:
            raise ValueError("round: a gradient is evaluated at a point that depends on it "
                             "(a proximal step): no a-priori bound, no certificate") from None
    for f in funcs:
        a, g_a, f_a = anchors.get(id(f)) or anchors.setdefault(id(f), _anchor(f, points, values))
        for u, _g, v in f.list_of_points:
            if v.get_is_leaf() and id(v) not in values:
                d = _norm_bound(u - a, points)
                values[id(v)] = f_a + _norm_bound(g_a, points) * d + 0.5 * f.L * d**2
    return points, values


def certified_symmetric(build, setting: Setting, measure: Measure):
    """The certified solve of a reduced PEP (:func:`.certify.solve_certified` with
    :func:`class_leaf_bounds`).

    Parameters
    ----------
    build : callable
        ``build()`` returns a fresh reduced PEP and its parts
        (:func:`.symmetric.build_symmetric`).
    setting, measure : Setting, Measure
        Those of the reduced PEP; :func:`certifiable_symmetric` must hold.

    Returns
    -------
    (SolveInfo, dict)
        The solve (``worst`` the dual value of an accurate solve, or the certified bound with
        status ``certified (...)`` and ``gap`` the bracket width) and the problem's parts.

    Raises
    ------
    ValueError
        Naming ``measure`` or ``setting`` when the certificate does not apply, ``round`` for
        a proximal step.
    PEPSolveError
        When no solve gives a bracket within the tolerance.
    """
    if measure.runs != 1:
        raise ValueError("measure: a certified solve needs a one-run measure")
    if not certifiable_symmetric(setting, measure):
        raise ValueError("setting: a certified symmetric solve needs clients not identical "
                         "(and mu > 0 in the quadratic class)")
    kept = {}

    def problem_and_bounds():
        problem, parts = build()
        server, clients = parts["start"]
        if measure.bounds is not None and setting.common_minimizer:
            given = measure.bounds(_StartState(server, clients))
        else:   # derived from V, with what the measure gives (module docstring)
            given = condition_bounds(problem)
            if measure.bounds is not None:
                given.update(measure.bounds(_StartState(server, clients)))
        initial = stationary_bounds(parts["funcs"], given)
        initial.update(dict.fromkeys(unused_leaves(problem, parts["funcs"]), 0.0))
        kept.update(parts, bounds=class_leaf_bounds(parts["funcs"], initial, parts["space"]))
        return problem, parts["funcs"], initial

    info = solve_certified(problem_and_bounds, float(np.max(setting.L)),
                           bounds=lambda funcs, initial: kept["bounds"])
    return info, kept


__all__ = ["certifiable_symmetric", "certified_symmetric", "class_leaf_bounds"]
