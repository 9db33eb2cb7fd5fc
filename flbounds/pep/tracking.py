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
built by :mod:`flbounds.pep.engine`); :func:`round_problem` writes the same SDP by hand in
PEPit (the expectation expanded in the moments), kept as the independent cross-check of the
description (the tests compare both on the README's cells) and for :mod:`.certify`'s tests.

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
quadratic class
(extra LMIs, no certificate) keeps the checked solve of :mod:`.sdp`.

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
from .describe import CLASSES, Setting, model_copy
from .described import focus_lyapunov, focus_round
from .engine import build, certified_solve, initial_state
from .gd import check_class
from .result import WorstCase, make_result, required_step
from .rounds import focus_local_run, point_sum
from .scenarios import declare, unroll
from .sdp import solve, solve_first

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


def _expected_psi(x, x_star, y, z, V, Z, step, c, pair):
    """E Psi^+ from the moments: x+ - x* = a + sum_i s_i b_i, z_k+ = z_k + s_k d_k."""
    n = len(z)
    a = x - step * y - x_star
    b = [-step * v for v in V]
    d = [Z[k] - z[k] for k in range(n)]
    cross = [[b[i] * b[j] for j in range(n)] for i in range(n)]
    bb = sum(pair[i, j] * cross[i][j] for i in range(n) for j in range(n))
    total = a**2 + 2 * sum(pair[i, i] * (a * b[i]) for i in range(n)) + bb
    for k in range(n):
        ck = x - step * y - z[k]
        total = total + c * (ck**2 + 2 * sum(pair[i, i] * (ck * b[i]) for i in range(n))
                             - 2 * pair[k, k] * (ck * d[k]) + bb
                             - 2 * sum(pair[i, k] * (b[i] * d[k]) for i in range(n))
                             + pair[k, k] * d[k] ** 2)
    return total


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

    if function_class == "quadratic":  # extra LMIs: no certificate, the checked solve
        info = solve_first([(lambda: described(False, "pepit")[0], 1.0),
                            (lambda: described(False, "values")[0], 1.0)])
    else:
        # the heterogeneous forms as further tries for an accurate value, on small SDPs only:
        # 2-10x slower than the common form at N tau >= 18 (61 s at N = 8, tau = 5) and
        # not accurate where the common form was not in the cases measured (N = 6, tau = 3
        # and N = 8, tau = 5 at p_min 0.2-0.3). Two forms: the same SDP reaches Clarabel
        # with its terms in another order when it is built from the description, and at
        # the edge of accuracy that decides (N = 3, tau = 2, p = 0.3, 0.5, 0.7 at Thm 1(a)'s
        # step: the "pepit" form optimal_inaccurate, the "origin" form optimal, 6e-8 from
        # the 2^N scenario sum)
        alternatives = [lambda form=form: described(False, form)[0]
                        for form in ("pepit", "origin")] if n * tau <= MAX_ALTERNATIVE else []
        # clients share x* = 0 (module docstring): bounded, certifiable
        info, _ = certified_solve(rnd, Setting(n, mu, L, function_class, common_minimizer=True),
                                  measure, process, alternatives=alternatives)
    return make_result(info, printed=printed,
                       metric="E[Psi_{r+1}] / Psi_r, Psi = ||x - x*||^2 + c sum_i ||x - z_i||^2",
                       params=dict(mu=mu, L=L, p=np.asarray(p, dtype=float).tolist(),
                                   local_steps=tau, step=step, consensus_weight=c,
                                   function_class=function_class))


def round_problem(mu, L, local_steps, step, c, pair, function_class="smooth-strongly-convex",
                  form="common"):
    """The one-round PEP of :func:`focus_rate`, unsolved.

    Parameters
    ----------
    mu, L, local_steps, step, c :
        As in :func:`focus_rate` (``c`` the consensus weight).
    pair : (N, N) array
        Participation moments P(i, j in S).
    form : {"common", "pepit", "values", "origin"}
        ``"common"``: every client stationary at x* = 0 with value 0 there (module
        docstring); otherwise the heterogeneous minimizer in that form (:mod:`.anchor`).

    Returns
    -------
    (PEPit.PEP, list, dict)
        The problem, its client functions and the norm bounds of the initial points for
        :func:`.certify.leaf_bounds` (from Psi <= 1 with x* = 0: ||x|| <= 1 and
        ||z_i|| <= 1 + c^{-1/2}; valid for ``form="common"``).
    """
    from PEPit import PEP

    n = len(pair)
    problem = PEP()
    funcs = _client_functions(problem, mu, L, n, function_class)
    x_star = anchored_minimizer(funcs, common=True) if form == "common" else \
        minimizer(funcs, form)
    x = problem.set_initial_point()
    z = [problem.set_initial_point() for _ in range(n)]
    g = [f.gradient(zi) for f, zi in zip(funcs, z, strict=True)]
    y = point_sum(g)
    problem.set_initial_condition((x - x_star) ** 2 + c * sum((x - zi) ** 2 for zi in z) <= 1)
    runs = [focus_local_run(f, x, gi, step, local_steps) for f, gi in zip(funcs, g, strict=True)]
    Z, V = [r[0] for r in runs], [r[1] for r in runs]
    problem.set_performance_metric(_expected_psi(x, x_star, y, z, V, Z, step, c, pair))
    return problem, funcs, {x: 1.0, **{zi: 1.0 + c**-0.5 for zi in z}}


def _client_functions(problem, mu, L, n, function_class):
    from PEPit.functions import SmoothStronglyConvexFunction, SmoothStronglyConvexQuadraticFunction

    classes = {"smooth-strongly-convex": SmoothStronglyConvexFunction,
               "quadratic": SmoothStronglyConvexQuadraticFunction}
    if function_class not in classes:
        raise ValueError(f"function_class must be one of {sorted(classes)}, got {function_class!r}")
    return [problem.declare_function(classes[function_class], mu=mu, L=L) for _ in range(n)]


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
        Also return the PEPit points (for witnesses).

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
    if return_problem or function_class == "quadratic":  # no certificate (points, LMIs)
        info = solve(problem, reuse=not return_problem)
    else:  # no accurate solve: the certified bound of the common form (flbounds.pep.certify)
        def parts():
            common, funcs_c, x0_c, _ = rounds_problem(True)
            return common, list({id(f): f for f in funcs_c}.values()), {x0_c: 1.0}

        info = solve_first([(lambda: problem, 1.0)],
                           certified=lambda: solve_certified(parts, L))
    result = make_result(info, printed=printed, metric="E||x_R - x*||^2 / ||x_0 - x*||^2",
                         params=dict(mu=mu, L=L, p=np.asarray(p, dtype=float).tolist(),
                                     local_steps=tau, step=step, n_rounds=rounds,
                                     function_class=function_class))
    if return_problem:
        return result, (x0, x_star, funcs)
    return result


def scenario_focus_rate(mu, L, p, local_steps, step, consensus_weight, participation=None):
    """The one-round PEP with the expectation written as the :math:`2^N` scenario sum (no
    moments): the independent formulation the tests compare :func:`focus_rate` with."""
    from PEPit import PEP

    process = _process(p, participation)
    n = process.n_clients
    from flbounds.participation import subset_distribution
    masks, probs = subset_distribution(process)
    problem = PEP()
    funcs = _client_functions(problem, mu, L, n, "smooth-strongly-convex")
    x_star = minimizer(funcs, "pepit")
    x = problem.set_initial_point()
    z = [problem.set_initial_point() for _ in range(n)]
    g = [f.gradient(zi) for f, zi in zip(funcs, z, strict=True)]
    c = consensus_weight
    problem.set_initial_condition((x - x_star) ** 2 + c * sum((x - zi) ** 2 for zi in z) <= 1)
    runs = [focus_local_run(f, x, gi, step, local_steps) for f, gi in zip(funcs, g, strict=True)]
    metric = None
    for mask, pr in zip(masks, probs, strict=True):
        y = point_sum(g + [r[1] for r, s in zip(runs, mask, strict=True) if s])
        x_new = x - step * y
        z_new = [r[0] if s else zi for r, zi, s in zip(runs, z, mask, strict=True)]
        psi = (x_new - x_star) ** 2 + c * sum((x_new - zi) ** 2 for zi in z_new)
        metric = pr * psi if metric is None else metric + pr * psi
    problem.set_performance_metric(metric)
    return solve(problem)


__all__ = ["focus_rate", "focus_rounds_rate", "required_weight", "round_problem",
           "scenario_focus_rate"]
