r"""The quadratic class with :math:`\mu = 0`, written so that its PEPs have a bounded feasible
set (and so an accurate solve and a certificate, :mod:`.certify`).

Why. PEPit's smooth strongly convex quadratic class (Bousselmi, Hendrickx and Glineur 2023,
Thm 3.9) declares every function's stationary point :math:`x_s` as a leaf of its own and
writes its conditions relative to it: :math:`f_i - f_s = \tfrac12\langle x_i - x_s,
g_i\rangle`, :math:`\langle x_i - x_s, g_j\rangle = \langle x_j - x_s, g_i\rangle` and
:math:`T(G) \succeq 0` with :math:`T_{ij} = (L + \mu)\langle g_i, x_j - x_s\rangle - \langle
g_i, g_j\rangle - \mu L\langle x_i - x_s, x_j - x_s\rangle`. With :math:`\mu > 0` a point
:math:`(a, g_a)` bounds :math:`\|a - x_s\| \le \|g_a\|/\mu` (:func:`.certify_lmi.
stationary_bounds`). With :math:`\mu = 0` nothing bounds it: a Hessian :math:`H` with a
kernel leaves :math:`x_s + t e` (:math:`e` in the kernel, e.g. a direction orthogonal to
every other leaf, which the Gram matrix always has) a stationary point for every :math:`t`,
with every constraint unchanged (at :math:`\mu = 0`, :math:`x_s` enters them linearly, through
:math:`\langle x_s, g\rangle` only). So :math:`\operatorname{tr} G` is unbounded on the
feasible set, no a-priori bound exists, and when the clients do not share :math:`x^\star` the
solvers fail outright (measured: Clarabel ``SolverError`` and SCS inaccurate on FedAvg, N = 3,
tau = 3, a heterogeneity budget), since the primal optimum is not attained. (With a shared
:math:`x^\star = 0` the point :math:`(0, 0, 0)` is itself stationary and the solve is
accurate, but :math:`x_s` is still free along the kernel.) A bound on :math:`x_s` is not
implied by any :math:`V \le 1`; it would be a new hypothesis, so ``star_bounds`` cannot supply
it.

The form used instead (:func:`quadratic_class`): the same conditions written relative to the
function's first point :math:`(x_0, g_0, f_0)` (the engine adds :math:`x^\star` first: its
point, its gradient :math:`g_i^\star` and value 0) instead of a stationary point:

.. math:: f_i - f_0 = \tfrac12\langle x_i - x_0, g_i + g_0\rangle, \quad
          \langle x_i - x_0, g_j - g_0\rangle = \langle x_j - x_0, g_i - g_0\rangle, \quad
          T(G) \succeq 0,\ T_{ij} = (L + \mu)\langle g_i - g_0, x_j - x_0\rangle
          - \langle g_i - g_0, g_j - g_0\rangle - \mu L\langle x_i - x_0, x_j - x_0\rangle.

*Exact interpolation.* The data are those of :math:`f(x) = \tfrac12\langle x - x_0, H(x -
x_0)\rangle + \langle g_0, x - x_0\rangle + f_0` with :math:`H` symmetric, :math:`\mu I
\preceq H \preceq LI`, iff :math:`H(x_i - x_0) = g_i - g_0` for every :math:`i` (the gradients)
and the values hold. The first two conditions are those of Thm 3.9 for the linear operator
mapping :math:`x_i - x_0` to :math:`g_i - g_0` (PEPit applies the same theorem to
:math:`x_i - x_s \mapsto g_i - 0`), so they are equivalent to such an :math:`H` existing; the
values of :math:`f` at :math:`x_i` are then exactly the first condition. So the feasible set is
the data of every L-smooth convex (:math:`\mu`-strongly convex) quadratic, whether or not it
has a stationary point.

*Same value as PEPit's class.* For :math:`\mu > 0` the two classes are the same (every such
quadratic has a stationary point). For :math:`\mu = 0` PEPit's class (a stationary point
exists) is a subset, so its PEP value is at most this one; conversely, given clients
:math:`f_i` in this class, :math:`f_i^\varepsilon` with Hessian :math:`(1-\varepsilon)H_i +
\varepsilon L I` (spectrum in :math:`[\varepsilon L, L]`: a stationary point exists) and the
same gradient and value at :math:`x_0 = x^\star` keeps every anchor of the engine's PEP
(:math:`x^\star` at the origin, :math:`g_i^\star`, values 0, :math:`\sum_i g_i^\star = 0`); a
round is a finite composition of linear maps and gradients, so the start measure :math:`V`
and the performance metric move continuously in :math:`\varepsilon`. The class is closed
under :math:`f \mapsto t^2 f(\cdot/t)`, which scales every point by :math:`t` and both
:math:`V` and the metric by :math:`t^2`, so the supremum is that of the ratio metric / V, and
the ratios of :math:`f^\varepsilon` tend to that of :math:`f`. The values are equal
(``tests/flbounds/pep/test_certify_quadratic.py`` checks the equality at :math:`\mu > 0` and,
at :math:`\mu = 0` with a shared minimizer, against PEPit's class, where both solve).

*The certificate.* Every point of a client with :math:`x^\star`'s point first is then bounded
from that anchor by :func:`.certify.leaf_bounds` (an L-smooth function), its values too, and
there is no stationary leaf: :func:`.certify.solve_certified` (shared :math:`x^\star`) and
:func:`.certify.certified_star` (``star_bounds`` on the :math:`g_i^\star`) apply unchanged, the
LMI multipliers made PSD as in :mod:`.certify_lmi`.

*In the symmetric form* (:mod:`.symmetric`, one representative per class of interchangeable
clients). :func:`.symmetric.build_symmetric` declares a class with :math:`\mu_c = 0` (one-run
measures) in this form too, the representative's first point :math:`(x^\star, g^\star_c, 0)`
with :math:`g^\star_c = \bar g^\star_c + e^\star_c` (0 with a shared minimizer), added
before any other. The reduction stays exact, i.e. the first-point form commutes with the
symmetrisation:

1. *Invariance.* In the direct PEP client i's conditions :math:`C_i` (values, symmetry,
   :math:`T_i(G) \succeq 0`) are written with client i's points only, about its own first
   point :math:`(x^\star, \nabla f_i(x^\star), 0)`. A permutation :math:`\sigma` within the
   classes sends client i's points, in the order made (the same local update from states
   named alike), to client :math:`\sigma(i)`'s, its first point to :math:`\sigma(i)`'s first
   point, so :math:`C_i(\sigma\cdot(G, F)) = C_{\sigma(i)}(G, F)`: the feasible set is mapped
   onto itself, and so is the objective.
2. *Convexity.* The equalities are linear in :math:`(G, F)` and :math:`T_i` is linear in
   :math:`G`, so the group average :math:`(\bar G, \bar F)` of a feasible point is feasible:
   :math:`T_i(\bar G) = |\Gamma|^{-1}\sum_\sigma T_{\sigma(i)}(G) \succeq 0`, a mean of PSD
   matrices; its objective is the same. The worst case is attained at a symmetric point.
3. *The representative.* At a symmetric point the Gram entries between two vectors of one
   client are :math:`\langle \bar u_a + e_a, \bar u_b + e_b\rangle = \langle \bar u_a, \bar
   u_b\rangle + \Delta_c^{ab}`, the reduced Gram matrix's entries between the
   representative's vectors (deviations orthogonal to every other coordinate). So every
   :math:`C_i` of class c is the representative's conditions in the reduced SDP, whose
   feasible set is that of the symmetric feasible points (the simplex realisation in
   :mod:`.symmetric`).

Hence the reduced PEP over this class has the direct PEP's value over it, which is PEPit's
class's value (above). With :math:`\mu_c > 0` PEPit's class is kept (the same class; the tests
compare the two forms there). Two runs keep PEPit's class with its stationary vectors pinned
(:mod:`.certify_tworuns`). The certificate: no stationary leaf is left, every representative
is :math:`L_c`-smooth with the anchor :math:`(0, g^\star_c, 0)`, so the margin certificate
(:mod:`.certify_symmargin`, the LMI multipliers made PSD) applies whenever :math:`V \le 1`
bounds the feasible set (a shared minimizer and a measure bounding the start, or a
heterogeneity budget); the a-priori route of :mod:`.certify_symmetric` keeps to
:math:`\mu_c > 0`.
"""

from __future__ import annotations

import numpy as np

_CLASS = []


def quadratic_class():
    """The PEPit function class :class:`ConvexQuadraticFunction` (``mu >= 0``, ``L``) of the
    module docstring: the smooth (strongly) convex quadratic class interpolated about the
    function's first point, with no stationary leaf."""
    if _CLASS:
        return _CLASS[0]
    from PEPit import Expression, PSDMatrix
    from PEPit.function import Function

    class ConvexQuadraticFunction(Function):
        """L-smooth, mu-strongly convex (mu >= 0) quadratics, interpolated about their first
        point (:mod:`flbounds.pep.certify_quadratic`)."""

        def __init__(self, mu, L, is_leaf=True, decomposition_dict=None, reuse_gradient=True,
                     name=None):
            if not (np.isfinite(L) and L > 0 and 0 <= mu <= L):
                raise ValueError(f"mu and L must satisfy 0 <= mu <= L, L > 0, got {mu}, {L}")
            super().__init__(is_leaf=is_leaf, decomposition_dict=decomposition_dict,
                             reuse_gradient=True, name=name)
            self.mu, self.L = mu, L

        def add_class_constraints(self):
            points = self.list_of_points
            if len(points) < 2:
                return
            x0, g0, f0 = points[0]
            rest = points[1:]
            self.add_constraints_from_one_list_of_points(
                list_of_points=rest, constraint_name="value",
                set_class_constraint_i=lambda x, g, f: f - f0 == 0.5 * (x - x0) * (g + g0))
            self.add_constraints_from_two_lists_of_points(
                list_of_points_1=rest, list_of_points_2=rest, constraint_name="symmetry",
                set_class_constraint_i_j=lambda xi, gi, fi, xj, gj, fj:
                    (xi - x0) * (gj - g0) == (xj - x0) * (gi - g0),
                symmetry=True)
            n = len(rest)
            t = np.empty((n, n), dtype=Expression)
            for i, (xi, gi, _fi) in enumerate(rest):
                for j, (xj, gj, _fj) in enumerate(rest):
                    t[i, j] = (self.L + self.mu) * (gi - g0) * (xj - x0) \
                        - (gi - g0) * (gj - g0) - self.mu * self.L * (xi - x0) * (xj - x0)
            self.list_of_class_psd.append(PSDMatrix(matrix_of_expressions=t))

    _CLASS.append(ConvexQuadraticFunction)
    return ConvexQuadraticFunction


def client_functions(problem, setting, *, about=True):
    """One PEPit function per client of ``setting`` (one for all when identical): PEPit's
    class, except a quadratic with ``mu = 0``, which is :func:`quadratic_class` when
    ``about`` (one-run measures; two runs keep PEPit's class and pin its stationary points,
    :mod:`.certify_tworuns`). The engine's ``_functions``."""
    from PEPit.functions import (
        SmoothFunction,
        SmoothStronglyConvexFunction,
        SmoothStronglyConvexQuadraticFunction,
    )

    cls = {"smooth-strongly-convex": SmoothStronglyConvexFunction, "smooth": SmoothFunction,
           "quadratic": SmoothStronglyConvexQuadraticFunction}[setting.function_class]

    def declared(i):
        mu, L = setting.constants(i)
        if cls is SmoothFunction:
            return problem.declare_function(cls, L=L)
        flat = cls is SmoothStronglyConvexQuadraticFunction and about and mu == 0
        return problem.declare_function(quadratic_class() if flat else cls, mu=mu, L=L)

    n = setting.n_clients
    if setting.identical:
        return [declared(0)] * n
    return [declared(i) for i in range(n)]


__all__ = ["client_functions", "quadratic_class"]
