r"""A-priori bound on a gradient leaf, explicit or implicit (a proximal step).

:func:`.certify.leaf_bounds` bounds each gradient leaf :math:`g = \nabla f(u)` from an anchor
:math:`(a, g_a)` of the same function whose point and gradient are bounded. An explicit step
(``f.gradient(u)``) has :math:`u` made of earlier leaves, and
:math:`\|g\| \le \|g_a\| + L\|u - a\|` (:math:`L`-smoothness). A proximal step
(PEPit's ``proximal_step``, ``local_prox``) writes :math:`u = r - \gamma g` with :math:`r`
made of earlier leaves: :math:`u` depends on :math:`g` itself and the explicit bound is
circular. With :math:`D \ge \|r - a - \gamma g_a\|` (earlier leaves only, since
:math:`r - a - \gamma g_a = (u - a) + \gamma (g - g_a)`):

- :math:`f` convex (``f.mu >= 0``: the smooth strongly convex and quadratic classes). By
  monotonicity :math:`\langle g - g_a, u - a\rangle \ge 0`, so
  :math:`D^2 \ge \|u - a\|^2 + \gamma^2 \|g - g_a\|^2`: :math:`\|u - a\| \le D` (the proximal
  map is nonexpansive and :math:`a` is the image of :math:`a + \gamma g_a`; with a shared
  minimizer, :math:`a = x^\star = 0`, :math:`g_a = 0`, it is the fixed point) and
  :math:`\|g - g_a\| \le \min(L, 1/\gamma) D`.
- :math:`f` only :math:`L`-smooth (the smooth class, no ``mu``). By the triangle inequality
  :math:`\|u - a\| \le D + \gamma L \|u - a\|`, so :math:`\|u - a\| \le D / (1 - \gamma L)`
  and :math:`\|g - g_a\| \le L D / (1 - \gamma L)` when :math:`\gamma L < 1`; with
  :math:`\gamma L \ge 1` the proximal point need not be unique nor bounded, and no bound is
  given (:class:`~.sdp.PEPSolveError`: no certificate applies, the solver's own error
  stands).

Every feasible point of the SDP interpolates a function of the class (the conditions are
exact), so the bounds hold on the whole feasible set.
"""

from __future__ import annotations

from .certify_terms import _norm_bound
from .sdp import PEPSolveError


def gradient_bound(g, u, a, g_a, L, convex, points):
    r"""``(bound on ||g||, bound on ||u - a||)`` for the leaf :math:`g = \nabla f(u)` of an
    :math:`L`-smooth ``f`` anchored at bounded ``(a, g_a)`` (module docstring).

    Parameters
    ----------
    g : PEPit.Point
        A gradient leaf of ``f``.
    u : PEPit.Point
        Its point: earlier leaves only (explicit), or :math:`r - \gamma g` (implicit).
    a, g_a : PEPit.Point
        The anchor's point and gradient.
    L : float
        ``f``'s smoothness constant.
    convex : bool
        ``f`` is convex.
    points : dict
        ``{id(leaf point): norm bound}`` of the leaves bounded so far.

    Returns
    -------
    (float, float)

    Raises
    ------
    ValueError
        When ``u`` depends on ``g`` other than as :math:`-\gamma g` with :math:`\gamma > 0`.
    PEPSolveError
        When ``f`` is not convex and :math:`\gamma L \ge 1` (no certificate).
    """
    c = sum(float(k) for leaf, k in u.decomposition_dict.items() if leaf is g)
    if c == 0.0:
        d = _norm_bound(u - a, points)
        return _norm_bound(g_a, points) + L * d, d
    gamma = -c
    if not gamma > 0:
        raise ValueError("initial: a gradient leaf enters its own point with a coefficient "
                         f"{c:g} >= 0 (a proximal step has -gamma < 0)")
    rest = u - a - gamma * g_a
    d = sum(abs(float(k)) * points[id(leaf)] if id(leaf) in points else _missing()
            for leaf, k in rest.decomposition_dict.items() if leaf is not g)
    if convex:
        return _norm_bound(g_a, points) + min(L, 1.0 / gamma) * d, d
    if not gamma * L < 1:
        raise PEPSolveError(f"no certificate: a proximal step with gamma * L = {gamma * L:g} "
                            ">= 1 on the smooth (nonconvex) class has no a-priori bound (its "
                            "point need not be unique nor bounded)")
    d = d / (1.0 - gamma * L)
    return _norm_bound(g_a, points) + L * d, d


def _missing():
    raise ValueError("initial: a point depends on a leaf with no bound yet")


__all__ = ["gradient_bound"]
