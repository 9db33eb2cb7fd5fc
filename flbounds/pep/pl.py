r"""FOCUS (Algorithm 1 of FOCUS) under the PL inequality: a relaxed one-round worst case.

The class is "every :math:`f_i` L-smooth, :math:`F = \frac1N\sum_i f_i` :math:`\beta`-PL".
PL is not an interpolable class (no finite set of conditions on sampled points characterises
it), so the SDP here is a *relaxation*: each :math:`f_i` ranges over
PEPit's L-smooth (non-convex) class, and at every point where the whole :math:`F` is evaluated
(the pulled model and the next server model of every participation pattern) the PL inequality
:math:`F(v) - F^\star \le \|\nabla F(v)\|^2/(2\beta)` and :math:`F(v) \ge F^\star` are imposed,
with :math:`x^\star` a stationary point of :math:`F` and :math:`F^\star = F(x^\star)`. Every
instance of the class meets these constraints (PL makes every stationary point a global
minimiser), so the relaxed supremum is an UPPER bound on the class's worst case:
"relaxed worst <= printed" certifies a printed rate over the whole class; a relaxed worst
above it proves nothing by itself.

Lyapunov function: a one-state function of the form used in FOCUS's PL analysis (Appendix E.6
of FOCUS, with its own weight),

.. math:: \Phi = F(x) - F^\star + c \sum_i \|x - z_i\|^2, \qquad c > 0 \text{ (the caller's)},

with the same state as :func:`flbounds.pep.focus_rate` (pulled model :math:`x`, stored points
:math:`z_i`, tracker :math:`y = \sum_i \nabla f_i(z_i)`). :math:`F(x^+)` is a function value at
a pattern-dependent point, so the expectation is the exact :math:`2^N`-pattern sum (no
moment shortcut): N <= 4 is practical. The round is the description
:func:`flbounds.pep.described.focus_round`, unrolled over the participating sets
(:func:`flbounds.pep.scenarios.unroll`); the PL constraints are imposed on its states.

A certified bound (when no solve is accurate). :mod:`.certify` needs the leaves bounded a
priori, and none of the forms above has such a bound: over non-convex clients the state can
lie arbitrarily far from :math:`x^\star` with :math:`\Phi` bounded (F is flat along its set
of minimisers), the clients' gradients at :math:`x^\star` are free up to their sum (any
heterogeneity), and :math:`\|\nabla F(x)\|` is bounded only through the round's own
descent. The *pinned* form has the same value and a bounded feasible set:

1. :math:`x^\star` is dropped and :math:`F^\star` becomes a free scalar (PL and
   :math:`F \ge F^\star` still imposed at :math:`x` and every :math:`x^+`). This is a
   relaxation, and it loses nothing: given a feasible point of it, put :math:`x^\star` at
   distance :math:`D` from every other point with :math:`\nabla f_i(x^\star) = 0` and
   :math:`f_i(x^\star) = F^\star`; each smooth interpolation condition with :math:`x^\star`
   (:math:`f_i - f_j \ge -\tfrac L4\|x_i - x_j\|^2 + \tfrac12\langle g_i + g_j, x_i -
   x_j\rangle + \tfrac1{4L}\|g_i - g_j\|^2`) holds once :math:`D` is large, since its
   right side tends to :math:`-\infty`; so both suprema are equal.
2. The round and :math:`\Phi` are invariant under translations, under :math:`f_i \to f_i +
   c_i` (with :math:`F^\star` moved by the mean of the :math:`c_i`) and under :math:`f_i \to
   f_i + \langle a_i, \cdot\rangle` with :math:`\sum_i a_i = 0` (the tracking round reads
   gradient differences and their sum; :math:`F` does not change). So :math:`x = 0`,
   :math:`f_i(x) = 0` and :math:`\nabla f_i(x) = g` (one point for every client) lose
   nothing.

Then :math:`\Phi \le 1` gives :math:`-1 \le F^\star \le 0` and :math:`c\|z_i\|^2 \le 1`,
and the feasible set is bounded: at :math:`\Phi = 0` every :math:`z_i = x` and
:math:`F^\star = F(x)`, so the first round starts from :math:`y = N g` and the empty set's
(drawn with positive probability under Bernoulli participation) :math:`x^+ = -\eta N g`
has :math:`F(x^+) \le -\eta N (1 - \eta L N / 2)\|g\|^2` (descent lemma of the
interpolated :math:`F`), below :math:`F^\star = 0` unless
:math:`g = 0` for every :math:`\eta < 2/(LN)`; with :math:`g = 0` every point and gradient
is 0. The value is then certified by multipliers with a margin
(:mod:`.certify_margin`: a solve with the objective :math:`E\Phi^+ + \sigma
\operatorname{tr} G`, values grown from the anchor :math:`(0, g, 0)` of every client and
:math:`|F^\star| \le 1`). A step at or above :math:`2/(LN)` may leave the set unbounded;
no margin then certifies anything and the solve error stands. The gradient pin rests on the
round's invariance; :func:`invariant` checks it on the round actually built (a round that
is not invariant, e.g. one pushing raw gradients, gets no certificate).

References
----------
FOCUS: Ying, Li, Yang, NeurIPS 2025, Algorithm 1 (FOCUS) and Appendix E.6 (the Lyapunov
function's form).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import check_int, check_positive

from .anchor import minimizer, origin, zero
from .describe import Setting
from .described import focus_round
from .engine import initial_state
from .result import WorstCase, make_result, required_step
from .rounds import point_sum
from .scenarios import declare, unroll
from .sdp import PEPSolveError, solve_first
from .tracking import _process, required_weight


def _mean_value_and_gradient(funcs, v):
    n = len(funcs)
    values = [f(v) for f in funcs]
    grads = [f.gradient(v) for f in funcs]
    return (1 / n) * point_sum(values), (1 / n) * point_sum(grads)


def _impose_pl(problem, funcs, v, f_star, beta):
    """PL and F(v) >= F* at v; returns F(v) - F*."""
    value, grad = _mean_value_and_gradient(funcs, v)
    gap = value - f_star
    problem.add_constraint(gap <= (1 / (2 * beta)) * grad**2)
    problem.add_constraint(-gap <= 0)
    return gap


def focus_pl_rate(beta, L, p, local_steps, step=None, *, consensus_weight=None, printed=None,
                  participation=None) -> WorstCase:
    r"""Relaxed worst :math:`E[\Phi_{r+1}]/\Phi_r` of one FOCUS round under PL (module
    docstring): an upper bound on the worst case over the class.

    Parameters
    ----------
    beta : float
        PL constant of :math:`F`, ``0 < beta <= L``.
    L : float
        Smoothness of every :math:`f_i`.
    p : array_like
        Bernoulli participation probabilities (fixes N).
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`, required.
    consensus_weight : float
        :math:`c > 0` of :math:`\Phi`, required.
    printed : float, optional
        The rate to report beside the worst case; None: none.
    participation : process of ``flbounds.participation``, optional
        Replaces Bernoulli(p).

    Returns
    -------
    WorstCase
        ``printed`` is the caller's ``printed``.
    """
    from PEPit import PEP

    from . import sdp

    beta = check_positive(beta, "beta")
    L = check_positive(L, "L")
    if beta > L:
        raise ValueError(f"L must be >= beta, got L={L}, beta={beta}")
    tau = check_int(local_steps, "local_steps", minimum=1)
    process = _process(p, participation)
    n = process.n_clients
    step = required_step(step)
    c = required_weight(consensus_weight)

    rnd = focus_round(tau, step)

    def build(form, scale):
        problem = PEP()
        funcs, _ = declare(problem, Setting(n, 0.0, L, "smooth"), None)
        x_star = minimizer(funcs, form)
        f_star = (1 / n) * point_sum([f(x_star) for f in funcs])
        start = initial_state(rnd, funcs)
        x = start["x"]
        gap0 = _impose_pl(problem, funcs, x, f_star, beta)
        problem.set_initial_condition(gap0 + c * point_sum([(x - zi) ** 2
                                                            for zi in start.client("z")])
                                      <= scale)
        metric = None
        for prob, state in unroll((rnd, process), funcs, start)[1]:
            x_new = state["x"]
            phi = _impose_pl(problem, funcs, x_new, f_star, beta) \
                + c * point_sum([(x_new - zi) ** 2 for zi in state.client("z")])
            metric = prob * phi if metric is None else metric + prob * phi
        problem.set_performance_metric(metric)
        return problem

    # equivalent forms, tried in order (flbounds.pep.sdp.solve_first), every one with the
    # Clarabel settings of SOLVERS before any with SCS (20,000 iterations: 6 s a form at
    # N = 3, never accepted on the claims' grids, where a later form's Clarabel solve was);
    # then the certified bound of the pinned form (module docstring)
    forms = [(lambda: build("pepit", 1.0), 1.0), (lambda: build("values", 1.0), 1.0),
             (lambda: build("values", step), step)]
    interior = tuple(pair for pair in sdp.SOLVERS if pair[0] != "SCS")
    first_order = tuple(pair for pair in sdp.SOLVERS if pair[0] == "SCS")
    info = solve_first([(*form, solvers) for solvers in (interior, first_order)
                        for form in forms],
                       certified=lambda: _certified(rnd, process, beta, L, c))
    return make_result(info, printed=printed,
                       metric="E[Phi_{r+1}] / Phi_r (PL relaxation: an upper bound), "
                              "Phi = F(x) - F* + c sum_i ||x - z_i||^2",
                       params=dict(beta=beta, L=L, p=np.asarray(p, dtype=float).tolist(),
                                   local_steps=tau, step=step, consensus_weight=c))


def pinned(rnd, process, beta, L, c, sigma=0.0):
    r"""The PL PEP in its pinned form (module docstring): :math:`x = 0`, every
    :math:`f_i(x) = 0` and :math:`\nabla f_i(x) = g`, :math:`F^\star` a free scalar, no
    :math:`x^\star`; the performance metric is :math:`E\Phi^+ + \sigma \operatorname{tr} G`.

    Parameters
    ----------
    rnd : Round
        :func:`.described.focus_round`.
    process : participation process
        Its law over the participating sets (``n_clients`` fixes N).
    beta, L, c : float
        PL constant, smoothness, the weight of :math:`\Phi` (checked by the caller).
    sigma : float
        The margin's weight :math:`\sigma \ge 0` (:mod:`.certify_margin`).

    Returns
    -------
    (PEPit.PEP, PEPit.Expression, dict)
        The problem, :math:`E\Phi^+` and the values' growth bounds
        (:func:`.certify_margin.value_growth`).
    """
    from .certify_margin import regularized, value_growth

    problem, metric, funcs, f_star, _ = _pinned_problem(rnd, process, beta, L, c)
    problem.set_performance_metric(regularized(metric, sigma))
    return problem, metric, value_growth(funcs, L, {f_star: (1.0, 0.0)})


class _Shifted:
    """``f + <a, .>``: what the round reads from a client shifted by ``a``."""

    def __init__(self, f, a):
        self._f, self._a = f, a

    def gradient(self, u):
        return self._f.gradient(u) + self._a

    def __call__(self, u):
        return self._f(u) + self._a * u

    value = __call__


def invariant(rnd, process, beta, L, c, rel=1e-9) -> bool:
    r"""Whether the pinned form's gradient pin is exact for ``rnd``: built with every client
    read as :math:`f_i + \langle a_i, \cdot\rangle` (:math:`a_i` free points, :math:`\sum_i
    a_i = 0`), no point a client is evaluated at, no constraint and not the metric depends on
    the :math:`a_i` (coefficients below ``rel`` times the expression's largest, i.e. cancelled
    up to rounding). FOCUS's tracking round passes; a round that reads raw gradients does
    not.

    Parameters
    ----------
    rnd, process, beta, L, c
        As :func:`pinned`.
    rel : float
        Relative size below which a coefficient counts as cancelled.

    Returns
    -------
    bool
    """
    from PEPit import Point

    n = process.n_clients
    shifts = [Point() for _ in range(n - 1)]
    shifts.append(-1.0 * point_sum(shifts) if shifts else origin())
    problem, metric, funcs, _, base = _pinned_problem(rnd, process, beta, L, c, shifts)
    leaves = {id(a) for a in shifts[:-1]}

    def free(expr):
        coefs = [abs(float(v)) for v in expr.decomposition_dict.values()]
        top = max(coefs, default=0.0)
        return all(abs(float(v)) <= rel * top for k, v in expr.decomposition_dict.items()
                   if (id(k[0]) in leaves or id(k[1]) in leaves if isinstance(k, tuple)
                       else id(k) in leaves))

    points = [u for f in base for u, _g, _v in f.list_of_points]
    return all(free(e) for e in [*points, metric,
                                 *(k.expression for k in problem.list_of_constraints)])


def _pinned_problem(rnd, process, beta, L, c, shifts=None):
    """(problem, E Phi+, the functions, F*, the underlying functions) of the pinned form, the
    round reading ``f_i + <shifts[i], .>`` when ``shifts`` is given (:func:`invariant`)."""
    from PEPit import PEP, Expression, Point

    n = process.n_clients
    problem = PEP()
    base, _ = declare(problem, Setting(n, 0.0, L, "smooth"), None)
    g = Point()
    for f in base:
        f.add_point((origin(), g, zero()))
    funcs = base if shifts is None else [_Shifted(f, a) for f, a in zip(base, shifts,
                                                                          strict=True)]
    f_star = Expression()
    start = initial_state(rnd, funcs, pin_model=True)
    x = start["x"]
    gap0 = _impose_pl(problem, funcs, x, f_star, beta)
    problem.set_initial_condition(gap0 + c * point_sum([(x - zi) ** 2
                                                        for zi in start.client("z")]) <= 1)
    metric = None
    for prob, state in unroll((rnd, process), funcs, start)[1]:
        x_new = state["x"]
        phi = _impose_pl(problem, funcs, x_new, f_star, beta) \
            + c * point_sum([(x_new - zi) ** 2 for zi in state.client("z")])
        metric = prob * phi if metric is None else metric + prob * phi
    return problem, metric, funcs, f_star, base


def _certified(rnd, process, beta, L, c):
    from .certify_margin import solve_margin

    if not invariant(rnd, process, beta, L, c):
        raise PEPSolveError("pinned form: the round is not invariant under f_i -> f_i + "
                            "<a_i, .> with sum_i a_i = 0 (checked), so its gradient pin may "
                            "change the value; no certificate")
    try:
        return solve_margin(lambda sigma: pinned(rnd, process, beta, L, c, sigma))
    except PEPSolveError as exc:
        raise PEPSolveError(f"pinned form: {exc}") from None


__all__ = ["focus_pl_rate"]
