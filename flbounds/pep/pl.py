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

References
----------
FOCUS: Ying, Li, Yang, NeurIPS 2025, Algorithm 1 (FOCUS) and Appendix E.6 (the Lyapunov
function's form).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import check_int, check_positive

from .anchor import minimizer
from .describe import Setting
from .described import focus_round
from .engine import initial_state
from .result import WorstCase, make_result, required_step
from .rounds import point_sum
from .scenarios import declare, unroll
from .sdp import solve_first
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

    # equivalent forms, tried in order (flbounds.pep.sdp.solve_first)
    info = solve_first([(lambda: build("pepit", 1.0), 1.0), (lambda: build("values", 1.0), 1.0),
                        (lambda: build("values", step), step)])
    return make_result(info, printed=printed,
                       metric="E[Phi_{r+1}] / Phi_r (PL relaxation: an upper bound), "
                              "Phi = F(x) - F* + c sum_i ||x - z_i||^2",
                       params=dict(beta=beta, L=L, p=np.asarray(p, dtype=float).tolist(),
                                   local_steps=tau, step=step, consensus_weight=c))


__all__ = ["focus_pl_rate"]
