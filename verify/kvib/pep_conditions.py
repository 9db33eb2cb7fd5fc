r"""K-Vib's one-round descent inequality (eq. (36) of K-Vib, proof of Theorem 4.1) as the
weights of ``flbounds.pep.descent.fedavg_descent_rate``.

Eq. (36), for FedAvg with unbiased client sampling, :math:`\eta = R\eta_l\eta_g`:

.. math:: \tfrac1{16}(1-10\gamma\eta^2)\|\nabla f(x^t)\|^2 \le
   \tfrac{2(f(x^t) - E f(x^{t+1}))}{\eta} + (Q(S^t) + \tfrac54 L\sigma^2)\eta
   + \tfrac58\gamma\sigma^2\eta^2 .

The PEP certifies the deterministic descent part: identical clients (:math:`\sigma_g = 0`),
full-batch local steps (:math:`\sigma_l = 0`) and full participation (:math:`Q = 0`,
:math:`\gamma = NW = 1` with :math:`\lambda_i = 1/N`), with
:math:`w_g = (1 - 10\gamma\eta^2)/16` and :math:`w_d = 2/\eta`: eq. (36) holds on the class iff
the value is at most 1 (``printed`` = 1). The sampling terms remain checked by Monte Carlo
(``kvib.thm4_1.descent_chain``).

References
----------
K-Vib: K-Vib, Theorem 4.1 and Appendix C.2, eq. (36).
"""

from __future__ import annotations

from flbounds.pep.descent import fedavg_descent_rate
from flbounds.pep.result import WorstCase
from flbounds.validation import check_int, check_positive


def eq36_descent_rate(L, local_steps, step, *, step_global=1.0, gamma=1.0) -> WorstCase:
    r"""Worst ratio of eq. (36)'s left side to its descent term over L-smooth :math:`f`:
    ``step`` is :math:`\eta = R\eta_l\eta_g` (the theorem: :math:`\eta \le 1/(8L)`),
    ``gamma`` :math:`\gamma^t > 0` (1 at full participation with equal weights)."""
    R = check_int(local_steps, "local_steps", minimum=1)
    eta = check_positive(step, "step")
    eta_g = check_positive(step_global, "step_global")
    gamma = check_positive(gamma, "gamma")
    eta_l = eta / (R * eta_g)
    return fedavg_descent_rate(L, R, eta_l, step_global=eta_g,
                               gradient_weight=(1 - 10 * gamma * eta**2) / 16,
                               descent_weight=2 / eta, printed=1.0)


__all__ = ["eq36_descent_rate"]
