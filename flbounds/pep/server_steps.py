r"""SAFARI (a server-assisted FedAvg, Algorithm 1 of SAFARI): worst cases of its mixed rounds.

A round is, with probability :math:`q`, a FedAvg client round (each sampled client runs
:math:`K` local steps with :math:`\eta_c` from :math:`x_r`, the server averages) and otherwise
one server step :math:`x_{r+1} = x_r - \eta_s \nabla F(x_r)`. The expectation over the coin is
exact (a weighted sum over the two branches, or over the :math:`2^R` coin sequences). Both
steps are arguments: the library couples neither to the other.

What the classes express (and what they do not)
------------------------------------------------
A PEP normalised by the initial distance or gap computes a *rate*, so both SDPs here are the
deterministic, homogeneous case (no gradient noise, every client the same :math:`F`; the
sampled set does not matter); additive floors from noise or heterogeneity are outside them.

- :func:`safari_rate` (strongly convex): the worst one-round
  :math:`E\|x_{r+1} - x^\star\|^2 / \|x_r - x^\star\|^2` over L-smooth mu-strongly convex
  :math:`F`. An optional constraint on the round's state,
  :math:`a\|\nabla F(x_r)\|^2 - b\,(F(x_r) - F^\star) \le 0` (``state_constraint=(a, b)``), is
  linear in the Gram matrix and the function values, so it is imposed as a constraint of the
  SDP: the supremum runs only over states meeting it.
- :func:`safari_nonconvex_rate`: the worst
  :math:`\frac1R\sum_{r=1}^R E\|\nabla F(x_r)\|^2 / (F(x_0) - F^\star)` over L-smooth
  (non-convex) :math:`F`. :math:`F^\star` is relaxed to a free scalar below every computed
  value (any instance meets it with its true infimum), so the SDP value is an *upper* bound
  on the class's worst case: "worst <= printed" certifies a printed bound.

Both are built from the description :func:`flbounds.pep.described_server.safari_round` (a
:class:`~flbounds.pep.describe.Mixture` of a client round and the server's gradient step):
one round in exact expectation over the coin (:func:`flbounds.pep.scenarios.expected`), R
rounds over the :math:`2^R` coin sequences (:func:`flbounds.pep.scenarios.unroll`).

Heterogeneous clients for one strongly convex round are in :mod:`flbounds.pep.server_hetero`
(:func:`~flbounds.pep.server_hetero.safari_hetero_rate`). Which steps, constraints and printed
values a paper's theorem asks for is the caller's (e.g. ``verify.safari.pep_conditions``).

References
----------
SAFARI: Server-assisted FL under incomplete client participation, Algorithm 1.
"""

from __future__ import annotations

import math
from dataclasses import replace

from flbounds.validation import check_int, check_positive

from .anchor import origin, zero
from .certify import solve_certified
from .certify_scaled import gradient_weight, solve_scaled
from .describe import Setting, distance
from .described_server import safari_round
from .engine import State, initial_state, next_state
from .gd import check_class
from .result import WorstCase, make_result
from .scenarios import Recorder, branches, declare, expected, realize
from .sdp import solve_first


def check_round_args(mu, L, q, local_steps, step_client, step_server, state_constraint):
    """Validated ``(mu, L, q, K, step_client, step_server, state_constraint)`` of a strongly
    convex SAFARI round."""
    mu, L = check_class(mu, L)
    if not mu > 0:
        raise ValueError(f"mu must be > 0, got {mu}")
    q = _check_q(q)
    K = check_int(local_steps, "local_steps", minimum=1)
    eta_c = check_positive(step_client, "step_client")
    step = check_positive(step_server, "step_server")
    return mu, L, q, K, eta_c, step, check_state_constraint(state_constraint)


def check_state_constraint(state_constraint):
    r"""None, or ``(a, b)`` as two finite floats: the constraint
    :math:`a\|\nabla F(x)\|^2 - b\,(F(x) - F^\star) \le 0` on a round's state."""
    if state_constraint is None:
        return None
    try:
        a, b = (float(v) for v in state_constraint)
    except (TypeError, ValueError):
        a = b = float("nan")
    if not (math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"state_constraint must be None or a pair (a, b) of finite numbers, "
                         f"got {state_constraint!r}")
    return a, b


def _check_q(q):
    q = float(q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    return q


def safari_rate(mu, L, q, local_steps, step_client, step_server, *, printed=None,
                state_constraint=None, drop_server_step=False) -> WorstCase:
    r"""Worst one-round :math:`E\|x_{r+1}-x^\star\|^2/\|x_r-x^\star\|^2` of SAFARI.

    Parameters
    ----------
    mu, L : float
        ``0 < mu <= L``: :math:`F` (every client) L-smooth and mu-strongly convex.
    q : float
        Probability of a client round, in [0, 1].
    local_steps : int
        :math:`K \ge 1`.
    step_client : float
        :math:`\eta_c > 0`, the clients' local step.
    step_server : float
        :math:`\eta_s > 0`, the server step (no bound enforced: callers decide which steps
        are admissible).
    printed : float, optional
        The per-round factor to report beside the worst case; None: none.
    state_constraint : (float, float), optional
        ``(a, b)``: only states with :math:`a\|\nabla F(x_r)\|^2 - b\,(F(x_r) - F^\star)
        \le 0` (a constraint of the SDP); None: every state.
    drop_server_step : bool
        A deliberately wrong round (server rounds leave :math:`x` unchanged), for the tests
        that show a tightness claim catches it.

    Returns
    -------
    WorstCase
        ``printed`` is the caller's ``printed``.
    """
    from PEPit import PEP

    mu, L, q, K, eta_c, step, constraint = check_round_args(mu, L, q, local_steps, step_client,
                                                            step_server, state_constraint)
    program = safari_round(q, K, eta_c, step, drop_server_step=drop_server_step)
    measure = distance()

    def build():
        problem = PEP()
        # every client the same F: one client, stationary at x* = 0 with F(x*) = 0 (.anchor)
        funcs, star = declare(problem, Setting(1, mu, L, identical=True))
        start = initial_state(program.branches[0].round, funcs)
        problem.set_initial_condition(measure.value(start, star) <= 1)
        if constraint is not None:
            a, b = constraint
            x, f = start["x"], funcs[0]
            problem.add_constraint(a * f.gradient(x) ** 2 - b * (f(x) - f(star.x)) <= 0)
        problem.set_performance_metric(expected(program, funcs, start, measure.value, star))
        return problem, funcs[:1], {start["x"]: 1.0}  # ||x_r - x*|| <= 1, x* = 0

    # when the solve is not accurate: the certified bound (flbounds.pep.certify)
    info = solve_first([(lambda: build()[0], 1.0)],
                       certified=lambda: solve_certified(build, L))
    return make_result(info, printed=printed,
                       metric="E||x_{r+1} - x*||^2 / ||x_r - x*||^2 (one SAFARI round)",
                       params=dict(mu=mu, L=L, q=q, local_steps=K, step_server=step,
                                   step_client=eta_c, state_constraint=constraint))


def safari_nonconvex_rate(L, q, local_steps, step_client, step_server, n_rounds, *,
                          printed=None, drop_server_step=False) -> WorstCase:
    r"""Worst :math:`\frac1R\sum_{r=1}^R E\|\nabla F(x_r)\|^2/(F(x_0)-F^\star)` of R SAFARI
    rounds over L-smooth :math:`F`, exact over the :math:`2^R` coin sequences.

    Parameters
    ----------
    L : float
        Smoothness (> 0).
    q : float
        Probability of a client round, in [0, 1].
    local_steps : int
        :math:`K \ge 1`.
    step_client : float
        :math:`\eta_c > 0`, the clients' local step.
    step_server : float
        :math:`\eta_s > 0`, the server step.
    n_rounds : int
        :math:`R \ge 1` (the SDP has :math:`\sim 2^R K` gradients: R <= 6 is quick).
    printed : float, optional
        The bound to report beside the worst case (at :math:`F(x_0) - F^\star = 1`); None:
        none.
    drop_server_step : bool
        Deliberately wrong round, for the tests.

    Returns
    -------
    WorstCase
        An upper bound on the class's worst case (module docstring); ``printed`` is the
        caller's ``printed``.
    """
    from PEPit import PEP, Expression, Point

    L = check_positive(L, "L")
    q = _check_q(q)
    K = check_int(local_steps, "local_steps", minimum=1)
    eta_c = check_positive(step_client, "step_client")
    step = check_positive(step_server, "step_server")
    R = check_int(n_rounds, "n_rounds", minimum=1)
    program = safari_round(q, K, eta_c, step, drop_server_step=drop_server_step)

    def build(pinned, scale):
        problem = PEP()
        funcs, _ = declare(problem, Setting(1, 0.0, L, "smooth", identical=True), None)
        func = funcs[0]
        # F* relaxed to a scalar (pinned at 0 by the shift symmetry, or free); the start at
        # the origin or free (translation symmetry, .anchor)
        f_low = zero() if pinned else Expression(is_leaf=True)
        x0 = origin() if pinned else Point()
        problem.set_initial_condition(func(x0) - f_low <= scale)
        metric, visited, terms = _coin_tree(program, funcs, x0, R)
        for point in visited:
            problem.add_constraint(f_low <= func(point))
        problem.set_performance_metric(metric)
        return problem, func, x0, terms

    def scaled():
        # pinned form: x0 = 0 and F* = 0, so 0 <= f(x0) <= eta_s; every leaf in units of
        # r = ||grad f(x0)||, the metric >= w r^2 (flbounds.pep.certify_scaled)
        problem, func, x0, terms = build(True, step)
        return problem, [func], {func.gradient(x0): 1.0, func(x0): step}, \
            lambda bound_of: gradient_weight(terms, x0, L, bound_of)

    # initial gap bounded by eta_s, not 1: gradients O(1) instead of O(1/sqrt(eta_s))
    # (flbounds.pep.sdp, 'Scale'); equivalent forms tried in order (solve_first); none
    # accurate: the scaled certified bound of the pinned form, divided by its scale
    info = solve_first([(lambda: build(True, step)[0], step),
                        (lambda: build(False, step)[0], step),
                        (lambda: build(True, step / 10)[0], step / 10)],
                       certified=lambda: _unscaled(solve_scaled(scaled, L), step))
    return make_result(info, printed=printed,
                       metric="(1/R) sum_{r=1}^R E||grad F(x_r)||^2 / (F(x_0) - F*)",
                       params=dict(L=L, q=q, local_steps=K, step_server=step, step_client=eta_c,
                                   n_rounds=R))


def _unscaled(info, scale):
    """``info`` of a PEP whose initial condition is bounded by ``scale``, at scale 1 (the PEP
    is homogeneous: every value is proportional to ``scale``)."""
    return replace(info, worst=info.worst / scale, primal=info.primal / scale,
                   gap=info.gap / scale, dual_residual=info.dual_residual / scale)


def _coin_tree(program, funcs, x0, R):
    """(1/R) sum_r E||grad F(x_r)||^2 over every coin sequence of ``program`` (unrolled as
    :func:`flbounds.pep.scenarios.unroll`), its terms ``(weight, x_r)``, and every point
    visited: the start, then for each
    node and branch the points the round took a gradient at and the branch's next model.
    Each level's gradients are taken before the next level is expanded (the order of the SDP's
    rows, on which the interior-point iterations depend)."""
    recorder = Recorder(funcs)
    parts = branches(program, len(funcs))
    metric, visited, level = None, {id(x0): x0}, [(1.0, State({"x": x0}, [{}]))]
    terms = []
    for _ in range(R):
        children = []
        for prob, state in level:
            for weight, round_, law in parts:
                after = next_state(round_, recorder.funcs, state)
                visited.update((id(p), p) for p in recorder.points)
                for k, pk in enumerate(law.probs):
                    child = realize(after, law, k)
                    visited.setdefault(id(child["x"]), child["x"])
                    children.append((prob * weight * float(pk), child))
        for prob, state in children:
            term = (prob / R) * funcs[0].gradient(state["x"]) ** 2
            terms.append((prob / R, state["x"]))
            metric = term if metric is None else metric + term
        level = children
    return metric, list(visited.values()), terms


__all__ = ["check_state_constraint", "safari_nonconvex_rate", "safari_rate"]
