r"""FOCUS (Algorithm 1 of FOCUS, push-pull gradient tracking): worst one-round Lyapunov
case from the proof's initialisation.

State between rounds (as in ``verify/focus``'s one-round checks): the model :math:`x` the
clients pull, the clients' last models :math:`z_i` where their stored gradients
:math:`g_i = \nabla f_i(z_i)` were taken, and the tracker :math:`y = \sum_i g_i` (the tracking
invariant of ``flbounds.algorithms.focus``). The Lyapunov function is a one-state function of
the form used in FOCUS's analysis (the proof of Theorem 1(a) of FOCUS, proof E.5, with its own
weight)

.. math:: \Psi = \|x - x^\star\|^2 + c \sum_i \|x - z_i\|^2, \qquad c > 0

given by the caller (``consensus_weight``), which equals :math:`\|x_0 - x^\star\|^2` at the
proof's initialisation (every node at :math:`x_0`, stored gradients :math:`\nabla f_i(x_0)`)
and bounds :math:`\|x - x^\star\|^2`, so a one-round worst ratio
:math:`\rho = \sup E[\Psi^+]/\Psi` gives :math:`E\|x_r - x^\star\|^2 \le \rho^r \|x_0 -
x^\star\|^2` for runs started there.
The supremum is over every L-smooth mu-strongly convex :math:`f_i` (any dimension) and every
state, with the exact expectation over the participating set (moments, see
:mod:`flbounds.pep.moments`). :func:`focus_rate` builds the round from its description
(:func:`flbounds.pep.described.focus_round`, :func:`~flbounds.pep.described.focus_lyapunov`,
built by :mod:`flbounds.pep.engine`); the same SDP written by hand in PEPit (the expectation
expanded in the moments, or as the :math:`2^N` scenario sum) lives outside the library, in
``benchmarks/_focus_reference.py``, as the independent cross-check the tests compare with.

Common minimizer, without loss. The round is invariant under :math:`f_i \to f_i + \langle
a_i, \cdot\rangle` with :math:`\sum_i a_i = 0`: stored gradients shift by :math:`a_i`, the
tracker :math:`y = \sum_i g_i` and every correction :math:`\nabla f_i(z_t) - g_i` do not, nor
do :math:`x^+`, :math:`z_i^+`, :math:`x^\star` and :math:`\Psi`. Choosing
:math:`a_i = -\nabla f_i(x^\star)` makes every client stationary at :math:`x^\star`, so the
worst case over heterogeneous clients equals the one with a common minimizer, pinned at the
origin with :math:`f_i(x^\star) = 0` (the tests check both forms agree). This also removes
the directions along which the heterogeneous Gram matrix is unbounded, and makes the feasible
set bounded: :math:`\|x\| \le 1` and :math:`\|x - z_i\| \le c^{-1/2}` from
:math:`\Psi \le 1`, and every gradient and iterate bounded from these.

Certified values. At small steps (p_min = 0.3, N >= 5: steps ~1e-3) no solver setting returns
an accurate solve (:mod:`.certify` lists what was measured): :math:`E\Psi^+ = 1 - O(\eta)`
on an O(1) Gram matrix. The reported ``worst`` is therefore the rigorous upper bound
:func:`.certify.certify` rebuilds from the solver's multipliers and the bounded feasible set,
and ``gap`` the width of the bracket down to the solver's primal value (1e-6 to 3e-5), unless
an accurate solve is found first (the common form, or the heterogeneous one when
N tau <= :data:`MAX_ALTERNATIVE`): then the value is as accurate as before (1e-6). The
quadratic class takes the same route: its extra LMIs are certified with their duals made PSD
(:mod:`.certify_lmi`), each client's own stationary point bounded from its point at the
shared :math:`x^\star` (:func:`.certify_lmi.stationary_bounds`). :func:`focus_rounds_rate`
(R rounds, no Lyapunov weight) tries the heterogeneous form first and falls back on the
certified bound of the shared-minimizer form, for both classes; with ``return_problem`` (a
witness reads the solved points) that fallback is solved afresh, never read from a store.

References
----------
FOCUS: Ying, Li, Yang, NeurIPS 2025, Algorithm 1 (FOCUS) and Appendix E.5 (the Lyapunov
function's form).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import check_int, check_positive

from .anchor import anchored_minimizer, minimizer
from .certify import solve_certified
from .certify_lmi import stationary_bounds
from .describe import CLASSES, Setting, model_copy
from .described import focus_lyapunov, focus_round
from .engine import build, certified_solve, initial_state
from .gd import check_class
from .result import WorstCase, make_result, required_step
from .scenarios import declare, unroll
from .sdp import PEPSolveError, solve, solve_first

#: largest N tau at which focus_rate retries the heterogeneous form for an accurate value
MAX_ALTERNATIVE = 15


def _process(p, participation):
    from flbounds.participation import Bernoulli

    if participation is not None:
        return participation
    p = np.asarray(p, dtype=float)
    if p.ndim != 1 or p.size < 1 or not np.all((p > 0) & (p <= 1)):
        raise ValueError(f"p must be a non-empty vector of probabilities in (0, 1], got {p}")
    return Bernoulli(p)


def required_weight(weight, name="consensus_weight") -> float:
    """``weight`` as a float > 0; ``ValueError`` naming it when it is None (the library has no
    default Lyapunov weight: a proof's weight lives with its theorem)."""
    if weight is None:
        raise ValueError(f"{name} is required: flbounds.pep has no default Lyapunov weight "
                         "(pass one, e.g. a proof's weight at this step)")
    return check_positive(weight, name)


def focus_rate(mu, L, p, local_steps, step=None, *, consensus_weight=None, printed=None,
               participation=None, function_class="smooth-strongly-convex") -> WorstCase:
    r"""Worst :math:`E[\Psi_{r+1}]/\Psi_r` of one FOCUS round (module docstring).

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L``: every client L-smooth and mu-strongly convex.
    p : array_like
        Bernoulli participation probabilities (one per client).
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`, required.
    consensus_weight : float
        :math:`c > 0` of :math:`\Psi`, required.
    printed : float, optional
        The rate to report beside the worst case; None: none.
    participation : process of ``flbounds.participation``, optional
        Replaces Bernoulli(p) (``p`` then only fixes N).
    function_class : {"smooth-strongly-convex", "quadratic"}
        The class the supremum runs over.

    Returns
    -------
    WorstCase
        ``printed`` is the caller's ``printed``.
    """
    mu, L = check_class(mu, L)
    if not mu > 0:
        raise ValueError(f"mu must be > 0, got {mu}")
    if function_class not in CLASSES:
        raise ValueError(f"function_class must be one of {CLASSES}, got {function_class!r}")
    tau = check_int(local_steps, "local_steps", minimum=1)
    process = _process(p, participation)
    n = process.n_clients
    step = required_step(step)
    c = required_weight(consensus_weight)
    rnd, measure = focus_round(tau, step), focus_lyapunov(c)

    def described(common, form="origin"):
        setting = Setting(n, mu, L, function_class, common_minimizer=common)
        return build(rnd, setting, measure, process, form=form)

    # the heterogeneous forms as further tries for an accurate value, on small SDPs only:
    # 2-10x slower than the common form at N tau >= 18 (61 s at N = 8, tau = 5) and
    # not accurate where the common form was not in the cases measured (N = 6, tau = 3
    # and N = 8, tau = 5 at p_min 0.2-0.3). Two forms: the same SDP reaches Clarabel
    # with its terms in another order when it is built from the description, and at
    # the edge of accuracy that decides (N = 3, tau = 2, p = 0.3, 0.5, 0.7 at Thm 1(a)'s
    # step: the "pepit" form optimal_inaccurate, the "origin" form optimal, 6e-8 from
    # the 2^N scenario sum). The quadratic class keeps the two forms it was solved in
    # before its certificate (PEPit's stationary point, or the values pinned), at any size.
    forms = ("pepit", "values") if function_class == "quadratic" else \
        ("pepit", "origin") if n * tau <= MAX_ALTERNATIVE else ()
    alternatives = [lambda form=form: described(False, form)[0] for form in forms]
    # clients share x* = 0 (module docstring): bounded, certifiable (quadratics: their
    # LMI duals, flbounds.pep.certify_lmi)
    info, _ = certified_solve(rnd, Setting(n, mu, L, function_class, common_minimizer=True),
                              measure, process, alternatives=alternatives)
    return make_result(info, printed=printed,
                       metric="E[Psi_{r+1}] / Psi_r, Psi = ||x - x*||^2 + c sum_i ||x - z_i||^2",
                       params=dict(mu=mu, L=L, p=np.asarray(p, dtype=float).tolist(),
                                   local_steps=tau, step=step, consensus_weight=c,
                                   function_class=function_class))


def focus_rounds_rate(mu, L, p, local_steps, step, n_rounds, *, printed=None,
                      function_class="smooth-strongly-convex", return_problem=False):
    r"""Worst :math:`E\|x_R - x^\star\|^2 / \|x_0 - x^\star\|^2` after ``n_rounds`` rounds from
    the proof's initialisation (``init="gradient"``), exact over the :math:`2^{NR}` patterns.

    The SDP grows like :math:`N \tau 2^{N(R-1)}` gradients (one local run per client and per
    reachable pull point), so only tiny N R are feasible (``benchmarks/pep_sizes.py``). The
    rounds are :func:`~flbounds.pep.described.focus_round` started with every client at
    :math:`x_0` (:func:`~flbounds.pep.describe.model_copy`), unrolled over every sequence of
    participating sets (:func:`flbounds.pep.scenarios.unroll`).

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L``: every client L-smooth and mu-strongly convex.
    p : array_like
        Bernoulli participation probabilities (one per client).
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`, required.
    n_rounds : int
        R, at least 1.
    printed : float, optional
        The caller's printed value (at :math:`\|x_0 - x^\star\|^2 = 1`); None without one.
    function_class : {"smooth-strongly-convex", "quadratic"}
        The class the supremum runs over.
    return_problem : bool
        Also return the PEPit points of the solved problem (for witnesses): the
        heterogeneous form's, or the shared-minimizer form's when only its certified bound
        is found (status ``certified (...)``, ``gap`` the bracket).

    Returns
    -------
    WorstCase
        With ``return_problem``: ``(WorstCase, (x0, x_star, client functions))``, the
        PEPit points of the solved problem.
    """
    from dataclasses import replace

    from PEPit import PEP

    mu, L = check_class(mu, L)
    tau = check_int(local_steps, "local_steps", minimum=1)
    rounds = check_int(n_rounds, "n_rounds", minimum=1)
    step = required_step(step)
    process = _process(p, None)
    n = process.n_clients
    rnd = focus_round(tau, step)
    # the proof's initialisation: every client at x_0, its stored gradient there
    rnd = replace(rnd, initial={**rnd.initial, "z": model_copy("x")})
    def rounds_problem(common):
        problem = PEP()
        funcs, _ = declare(problem, Setting(n, mu, L, function_class), None)
        # common: every client stationary at x* = 0 (the round's invariance, module docstring)
        x_star = anchored_minimizer(funcs, common=True) if common else minimizer(funcs, "pepit")
        start = initial_state(rnd, funcs)
        x0 = start["x"]
        problem.set_initial_condition((x0 - x_star) ** 2 <= 1)
        metric = None
        for prob, state in unroll((rnd, process), funcs, start, rounds)[-1]:
            term = prob * (state["x"] - x_star) ** 2
            metric = term if metric is None else metric + term
        problem.set_performance_metric(metric)
        return problem, funcs, x0, x_star

    problem, funcs, x0, x_star = rounds_problem(False)
    solved = []  # the common form's points, as built for its certificate

    def parts():
        common, funcs_c, x0_c, x_star_c = rounds_problem(True)
        funcs_c = list({id(f): f for f in funcs_c}.values())
        solved.append((x0_c, x_star_c, funcs_c))
        return common, funcs_c, stationary_bounds(funcs_c, {x0_c: 1.0})

    # no accurate solve: the certified bound of the common form (flbounds.pep.certify; the
    # quadratic class through its LMI duals, flbounds.pep.certify_lmi, which needs mu > 0 to
    # bound each client's own stationary point); with return_problem it is solved here
    # (its points are read), never taken from a store of earlier solves
    certified = (lambda: solve_certified(parts, L, reuse=not return_problem)) \
        if mu > 0 or function_class != "quadratic" else None
    if not return_problem:
        info = solve_first([(lambda: problem, 1.0)], certified=certified)
    else:
        try:
            info, points = solve(problem, reuse=False), (x0, x_star, funcs)
        except PEPSolveError as exc:
            if certified is None:
                raise
            try:
                info, points = certified(), solved[-1]
            except PEPSolveError as cert_exc:
                raise PEPSolveError(f"{exc} | certificate: {cert_exc}") from cert_exc
    result = make_result(info, printed=printed, metric="E||x_R - x*||^2 / ||x_0 - x*||^2",
                         params=dict(mu=mu, L=L, p=np.asarray(p, dtype=float).tolist(),
                                     local_steps=tau, step=step, n_rounds=rounds,
                                     function_class=function_class))
    if return_problem:
        return result, points
    return result


__all__ = ["focus_rate", "focus_rounds_rate", "required_weight"]
