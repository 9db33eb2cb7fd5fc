r"""A certified upper bound on a symmetric solve without a-priori bounds: the margin
certificate of :mod:`.certify_margin` on the reduced PEP (:mod:`.symmetric`).

Why. :mod:`.certify_symmetric` bounds every Gram coordinate before the solve, from the
measure's ``bounds`` on the start and a minimizer every client shares. Other one-run reduced
SDPs have no such bound: a minimizer the clients do not share (the gradients
:math:`\nabla f_i(x^\star)` are bounded only by what :math:`V \le 1` says of them, e.g. a
heterogeneity budget :math:`\|x - x^\star\|^2 + \sum_i \|\nabla f_i(x^\star)\|^2`, which
``Measure.bounds`` does not see), a measure without ``bounds``, a proximal step. The margin
certificate needs no a-priori bound, only growth bounds of the leaf function values in units
of :math:`\operatorname{tr} G` and a bounded feasible set. :func:`certified_reduced` takes
the certificate of :mod:`.certify_symmetric` where it applies and this one elsewhere.

**Growth of the values.** Each representative is an :math:`L_c`-smooth function; with
:math:`L = \max_c L_c` each is also L-smooth, and its point :math:`(x^\star, \nabla
f_c(x^\star), 0) = (0, \bar g_c + e_c, 0)` (:func:`.symmetric.build_symmetric`) is an anchor
of value 0 whose gradient is a combination of leaves, so
:func:`.certify_margin.value_growth` applies: :math:`|f_c(u)| \le \|g^\star\|\|u\| +
\tfrac L2 \|u\|^2`, growth :math:`(0, \|\alpha\|\|\beta\| + \tfrac L2\|\beta\|^2)`. Nothing
here asks in which order the leaves were made, so a proximal step (a gradient at a point
that depends on it, where :mod:`.certify_symmetric` has no a-priori bound) is covered too. So is
the quadratic class with :math:`\mu_c = 0`, shared minimizer or not: declared about its
first point (:mod:`.certify_quadratic`), it has no stationary vector, its anchor is that
point, and its LMI multipliers are made PSD (:mod:`.certify_lmi`).

**Bounded feasible set.** The slope of :mod:`.certify_margin` can be negative only when
:math:`\operatorname{tr} G` is bounded on the feasible set. With a heterogeneity budget it is
(the start and :math:`\nabla f_i(x^\star)` are bounded by :math:`V \le 1`, every later leaf is
within :math:`L` of earlier ones). With :math:`V = \|x - x^\star\|^2` alone and clients not
sharing :math:`x^\star` it is not (nor, in general, is the worst case finite): no multipliers
have a margin and the certified solve fails with :class:`.sdp.PEPSolveError` rather than
report a number it cannot prove. Nor is it bounded when the round and the measure share a
symmetry that moves the leaves: SCAFFOLD with :math:`V = \|x - x^\star\|^2 + c\sum_i
\|c_i - \nabla f_i(x^\star)\|^2` and :math:`x^\star` not shared is invariant under
:math:`f_i \to f_i + \langle a_i, \cdot\rangle`, :math:`c_i \to c_i + a_i`
(:math:`\sum_i a_i = 0`), which leaves :math:`c_i` and :math:`\nabla f_i(x^\star)` free
together (measured: slope > 0 at every margin, 6 clients in 2 classes). That symmetry
pins :math:`\nabla f_i(x^\star) = 0`, so the form with a shared minimizer has the same value
and the a-priori certificate of :mod:`.certify_symmetric`.

**Two runs: no certificate of this kind.** The reduced PEP of two runs is unbounded whatever
the round: each representative may be shifted by a linear function (:math:`f_c + \langle
a, \cdot\rangle` stays in the class), which moves the gradient at the second run's start,
:math:`\nabla f_c(\tilde x)`, without bound; the contraction of the two runs' difference stays
bounded, so the Gram matrix is unbounded along a direction where the objective is not. No
multipliers have a margin there (measured: FedAvg, 6 clients in 2 classes, Clarabel fails
on :math:`o + \sigma \operatorname{tr} G` for every margin of :data:`.certify_margin.SIGMAS`),
and this shift is not a symmetry of the objective (the shifted runs visit other points), so
it cannot be pinned as translations and constants are. A rigorous bound there needs
multipliers that are exactly dual feasible on that direction: :mod:`.certify_tworuns` (the
equalities made exact in rationals, a margin on the bounded coordinates), which
:func:`certified_reduced` uses for two runs, the reduced form's leaves (class means and
deviations) paired between the runs as the direct form's are (over the quadratic class, its
stationary class vectors pinned: :func:`.certify_tworuns.pin_stationary`);
:func:`margin_certifiable` is False for two runs.

**Growth with N.** The reduced SDP keeps its size, not its conditioning: under a
heterogeneity budget each client's share of :math:`\sum_i \|\nabla f_i(x^\star)\|^2 \le 1`
is about :math:`1/N`, so the deviation vectors' Gram entries shrink like :math:`1/N` (1e-3
beside 0.76 at N = 1000) while the constraints weigh them by the class sizes. Measured
(FedAvg, tau = 2, step 0.2, quadratic class, two classes of N/2 clients with
:math:`(\mu, L, p)` = (1, 2, 0.3) and (0.5, 4, 0.7)): at N = 1000 both Clarabel settings stop
``optimal_inaccurate`` with a dual 1.6e-4 above the value, so their multipliers certify
1.0001605 against the value 1.0000591 (bracket 1.0e-4, from the multipliers, not the
margin: :math:`\sigma \operatorname{tr} G^\star` = 1.5e-7 there); SCS solves the same SDP
``optimal``. So when Clarabel's status is not ``optimal`` SCS is tried too and the lower
bound kept (:func:`_best_margin`): 1.0000591353 at N = 1000, 9e-10 above the value.

Rounding, acceptance and the bracket are :mod:`.certify_margin`'s. The bound is one on the
reduced PEP's value, the worst case over the N clients (:mod:`.symmetric`).
"""

from __future__ import annotations

from .certify_lmi import unused_leaves
from .certify_margin import SIGMAS, regularized, solve_margin, value_growth
from .certify_symmetric import certifiable_symmetric, certified_symmetric
from .certify_terms import margins
from .describe import Measure, Setting
from .sdp import SOLVERS, PEPSolveError


def margin_certifiable(setting: Setting, measure: Measure) -> bool:
    """Whether :func:`certified_symmetric_margin` applies: a one-run measure, clients not
    identical (the quadratic class's LMIs and unused stationary leaves: :mod:`.certify_lmi`).

    Parameters
    ----------
    setting : Setting
    measure : Measure

    Returns
    -------
    bool
    """
    return isinstance(measure, Measure) and measure.runs == 1 and not setting.identical


def certified_symmetric_margin(build, setting: Setting, measure: Measure, sigmas=SIGMAS):
    """The margin-certified solve of a reduced PEP (:func:`.certify_margin.solve_margin`).

    Parameters
    ----------
    build : callable
        ``build()`` returns a fresh reduced PEP and its parts
        (:func:`.symmetric.build_symmetric`).
    setting, measure : Setting, Measure
        Those of the reduced PEP; :func:`margin_certifiable` must hold.
    sigmas : sequence of float
        The margins tried (:data:`.certify_margin.SIGMAS`).

    Returns
    -------
    (SolveInfo, dict)
        The solve (``worst`` the certified bound, status ``certified (...)``, ``gap`` the
        bracket width) and the problem's parts.

    Raises
    ------
    ValueError
        Naming ``measure`` (two runs) or ``setting`` (quadratic class, identical clients)
        when the certificate does not apply, ``sigmas`` when a margin is not finite and > 0.
    PEPSolveError
        When no margin gives a bound within the bracket tolerance (an unbounded feasible
        set: module docstring).
    """
    if not isinstance(measure, Measure) or measure.runs != 1:
        raise ValueError("measure: two runs have no margin certificate (their feasible set is "
                         "unbounded: flbounds.pep.certify_tworuns instead)")
    if not margin_certifiable(setting, measure):
        raise ValueError("setting: a margin-certified symmetric solve needs clients that are "
                         "not identical")
    sigmas = margins(sigmas)
    kept = {}

    def one(sigma):
        problem, parts = build()
        metric = problem.list_of_performance_metrics[0]
        funcs = parts["funcs"]
        growth = value_growth(funcs, float(max(f.L for f in funcs)), {})
        problem.list_of_performance_metrics = [
            regularized(metric, sigma, skip=unused_leaves(problem, funcs))]
        kept.update(parts)
        return problem, metric, growth

    return _best_margin(one, sigmas), kept


def _best_margin(one, sigmas):
    """:func:`.certify_margin.solve_margin` with Clarabel; unless its solve is ``optimal``,
    also with SCS (cheap: the reduced SDP's size does not grow with N), and the lower of the
    two bounds (each rigorous; module docstring, "Growth with N")."""
    try:
        first, failed = solve_margin(one, sigmas), None
    except PEPSolveError as exc:
        first, failed = None, exc
    if first is not None and first.status == "certified (optimal)":
        return first
    try:
        other = solve_margin(one, sigmas, solvers=SOLVERS[2:])
    except PEPSolveError as exc:
        if first is None:
            raise PEPSolveError(f"{failed}; SCS: {exc}") from exc
        return first
    return other if first is None or other.worst < first.worst else first


def reduced_certifiable(setting: Setting, measure: Measure) -> bool:
    """Whether :func:`certified_reduced` applies (any of its certificates).

    Parameters
    ----------
    setting : Setting
    measure : Measure

    Returns
    -------
    bool
    """
    return certifiable_symmetric(setting, measure) or margin_certifiable(setting, measure) \
        or measure.runs == 2


def certified_reduced(build, setting: Setting, measure: Measure):
    """A certified solve of a reduced PEP: :func:`.certify_tworuns.solve_two_runs` for two
    runs, :func:`.certify_symmetric.certified_symmetric` where its a-priori bounds exist, else
    :func:`certified_symmetric_margin`.

    Parameters
    ----------
    build : callable
        ``build()`` returns a fresh reduced PEP and its parts.
    setting, measure : Setting, Measure

    Returns
    -------
    (SolveInfo, dict)

    Raises
    ------
    ValueError
        Naming ``setting`` (quadratic class without a shared minimizer, identical clients).
    PEPSolveError
        When no certificate is found.
    """
    if isinstance(measure, Measure) and measure.runs == 2:
        return _two_runs(build, setting)
    if not setting.common_minimizer and certifiable_symmetric(setting, measure):
        try:    # the margin first (at N = 1000 its SCS bracket is 9e-10, the a-priori 3.7e-5)
            return certified_symmetric_margin(build, setting, measure)
        except PEPSolveError as exc:    # then the class bounds derived from V
            try:
                return certified_symmetric(build, setting, measure)
            except (ValueError, PEPSolveError) as again:
                raise PEPSolveError(f"{exc} | a-priori class bounds: {again}") from again
    if certifiable_symmetric(setting, measure):
        derived = measure.bounds is None    # bounds derived from V: the margin the fallback
        try:
            return certified_symmetric(build, setting, measure)
        except ValueError as exc:       # a proximal step, or V leaving a leaf unbounded
            if not (str(exc).startswith("round")
                    or derived and str(exc).startswith(("measure", "funcs"))):
                raise
    return certified_symmetric_margin(build, setting, measure)


def _two_runs(build, setting):
    """:func:`.certify_tworuns.solve_two_runs` on the reduced PEP (its runs' class vectors
    paired leaf by leaf, as in the direct form; quadratics pinned)."""
    from .certify_tworuns import solve_two_runs

    kept = {}

    def built():
        problem, parts = build()
        kept.update(parts)
        return problem, dict(parts, start=parts["start"][0])

    return solve_two_runs(built), kept


__all__ = ["certified_reduced", "certified_symmetric_margin", "margin_certifiable",
           "reduced_certifiable"]
