r"""One FedAvg round's descent over the L-smooth non-convex class: how large can a weighted
:math:`\|\nabla f(x)\|^2` be against the round's decrease :math:`f(x) - f(x^+)`?

The round: identical clients with full-batch local steps and full participation, so it is
:math:`R` local gradient steps of :math:`\eta_l` from :math:`x`, the server moving
:math:`\eta_g` times the change. The SDP computes

.. math:: \sup_{f, x} \; w_g \|\nabla f(x)\|^2 \quad \text{s.t.} \quad
          w_d \,(f(x) - f(x^+)) \le 1

over every L-smooth :math:`f` (``gradient_weight`` :math:`w_g`, any sign; ``descent_weight``
:math:`w_d > 0`): a one-round inequality :math:`w_g\|\nabla f(x)\|^2 \le w_d(f(x) - f(x^+))`
holds on the class iff the value is at most 1. Such descent inequalities appear in
non-convex FedAvg analyses (e.g. K-Vib's eq. (36) of K-Vib, whose weights are the caller's,
``verify.kvib.pep_conditions``); sampling and noise terms, additive constants of the sampler
and the data, are outside this class.

The round is the description :func:`flbounds.pep.described.fedavg_round` (global step
:math:`\eta_g`) over one client, its next state from :func:`flbounds.pep.scenarios.unroll`.

References
----------
K-Vib: K-Vib, Appendix C.2 (where such a descent step is used).
"""

from __future__ import annotations

from flbounds.validation import check_finite, check_int, check_positive

from .anchor import origin, zero
from .certify_scaled import solve_scaled
from .describe import Setting
from .described import fedavg_round
from .engine import State
from .result import WorstCase, make_result
from .scenarios import declare, unroll
from .sdp import solve_first


def fedavg_descent_rate(L, local_steps, step_local, *, step_global=1.0, gradient_weight=1.0,
                        descent_weight=1.0, printed=None) -> WorstCase:
    r"""Worst :math:`w_g\|\nabla f(x)\|^2` with :math:`w_d(f(x) - f(x^+)) \le 1` over L-smooth
    :math:`f` (module docstring).

    Parameters
    ----------
    L : float
        Smoothness (> 0).
    local_steps : int
        :math:`R \ge 1` local steps.
    step_local : float
        :math:`\eta_l > 0`.
    step_global : float
        :math:`\eta_g > 0`.
    gradient_weight : float
        :math:`w_g` (finite, any sign).
    descent_weight : float
        :math:`w_d > 0`.
    printed : float, optional
        The value to report beside the worst case (1 for an inequality normalised as above);
        None: none.

    Returns
    -------
    WorstCase
        ``printed`` is the caller's ``printed``.
    """
    from PEPit import PEP, Point

    L = check_positive(L, "L")
    R = check_int(local_steps, "local_steps", minimum=1)
    eta_l = check_positive(step_local, "step_local")
    eta_g = check_positive(step_global, "step_global")
    w_g = check_finite(gradient_weight, "gradient_weight")
    w_d = check_positive(descent_weight, "descent_weight")

    def build(pinned):
        problem = PEP()
        funcs, _ = declare(problem, Setting(1, 0.0, L, "smooth", identical=True), None)
        func, x = funcs[0], origin()  # translation symmetry (.anchor)
        if pinned:  # f(x) = 0 (shift symmetry): the anchor of the certificate
            func.add_point((x, Point(), zero()))
        (_, after), = unroll(fedavg_round(R, eta_l, global_step=eta_g), funcs,
                             State({"x": x}, [{}]))[1]
        x_next = after["x"]
        problem.set_initial_condition(w_d * (func(x) - func(x_next)) <= 1)
        problem.set_performance_metric(w_g * func.gradient(x) ** 2)
        # every leaf in units of r = ||grad f(x)||, and the objective is w_g r^2
        return problem, funcs[:1], {func.gradient(x): 1.0}

    # when no solve is accurate: the scaled certified bound (flbounds.pep.certify_scaled)
    info = solve_first([(lambda: build(False)[0], 1.0)],
                       certified=lambda: solve_scaled(lambda: build(True), L, w_g,
                                                      exact=True))
    return make_result(info, printed=printed,
                       metric="w_g ||grad f(x)||^2 / (w_d (f(x) - f(x+)))",
                       params=dict(L=L, local_steps=R, step_local=eta_l, step_global=eta_g,
                                   gradient_weight=w_g, descent_weight=w_d))


__all__ = ["fedavg_descent_rate"]
