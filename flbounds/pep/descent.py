r"""K-Vib's one-round descent inequality (Theorem 4.1's proof, eq. (36) of [003]) over the
L-smooth non-convex class.

Eq. (36), for FedAvg with unbiased client sampling, :math:`\eta = R\eta_l\eta_g`:

.. math:: \tfrac1{16}(1-10\gamma\eta^2)\|\nabla f(x^t)\|^2 \le
   \tfrac{2(f(x^t) - E f(x^{t+1}))}{\eta} + (Q(S^t) + \tfrac54 L\sigma^2)\eta
   + \tfrac58\gamma\sigma^2\eta^2 .

What the PEP certifies: the deterministic descent part. The sampling terms (:math:`Q(S^t)`, the
excess variance of the sampler, and :math:`\sigma^2 = \sigma_l^2/R + 6\sigma_g^2`) are additive
constants fixed by the sampler and the data, not by the function class; they are set to zero
by taking identical clients (:math:`\sigma_g = 0`), full-batch local steps
(:math:`\sigma_l = 0`) and full participation (:math:`Q = 0`, :math:`\gamma = NW = 1` with
:math:`\lambda_i = 1/N`; the round is then :math:`R` local gradient steps of
:math:`\eta_l` scaled by :math:`\eta_g`). The sampling terms remain checked by Monte Carlo
(``kvib.thm4_1.descent_chain``). The SDP computes

.. math:: \sup_f \frac{\tfrac1{16}(1-10\gamma\eta^2)\|\nabla f(x)\|^2}
                      {2(f(x) - f(x^+))/\eta}

over every L-smooth :math:`f` and every :math:`x` (normalising the denominator to 1): eq. (36)
holds on the class iff the value is at most 1 (``printed`` = 1).

References
----------
[003] K-Vib, Theorem 4.1 and Appendix C.2, eq. (36).
"""

from __future__ import annotations

from flbounds.validation import check_int, check_positive

from .anchor import origin
from .result import WorstCase, make_result
from .sdp import solve


def kvib_descent_rate(L, local_steps, step, *, step_global=1.0, gamma=1.0) -> WorstCase:
    r"""Worst ratio of eq. (36)'s left side to its descent term (module docstring).

    Parameters
    ----------
    L : float
        Smoothness (> 0).
    local_steps : int
        :math:`R \ge 1` local steps.
    step : float
        :math:`\eta = R\eta_l\eta_g > 0` (the theorem: :math:`\eta \le 1/(8L)`).
    step_global : float
        :math:`\eta_g > 0`.
    gamma : float
        :math:`\gamma^t > 0` (1 at full participation with equal weights).

    Returns
    -------
    WorstCase
        ``printed`` is 1: the inequality holds on the class iff ``worst <= 1``.
    """
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    L = check_positive(L, "L")
    R = check_int(local_steps, "local_steps", minimum=1)
    eta = check_positive(step, "step")
    eta_g = check_positive(step_global, "step_global")
    gamma = check_positive(gamma, "gamma")
    eta_l = eta / (R * eta_g)
    problem = PEP()
    func = problem.declare_function(SmoothFunction, L=L)
    x = origin()  # translation symmetry (.anchor)
    x_next = _round(func, x, eta_l, eta_g, R)
    problem.set_initial_condition((2 / eta) * (func(x) - func(x_next)) <= 1)
    problem.set_performance_metric((1 - 10 * gamma * eta**2) / 16 * func.gradient(x) ** 2)
    return make_result(solve(problem), printed=1.0,
                       metric="(1 - 10 gamma eta^2)/16 ||grad f(x)||^2 / (2 (f(x) - f(x+))/eta)",
                       params=dict(L=L, local_steps=R, step=eta, step_local=eta_l,
                                   step_global=eta_g, gamma=gamma))


def _round(func, x, eta_l, eta_g, R):
    """R local gradient steps of eta_l from x, the server moving eta_g times the change."""
    z = x
    for _ in range(R):
        z = z - eta_l * func.gradient(z)
    return x + eta_g * (z - x)


__all__ = ["kvib_descent_rate"]
