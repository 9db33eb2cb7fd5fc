r"""Definitions 1-5 and Assumptions 1-3 of SubTrunc, and the hypotheses of Theorem 1 and
Lemmas 1-3 built from them.

The definitions and assumptions are declared as results no claim checks on their own: the
definitions are used by the set-function results (Props 1-4, Sec. III) and the assumptions
are hypotheses of Theorem 1 and Lemmas 1-3, as the predicates below, which those results
scope to their parts. The proof also uses, without stating them, unbiased stochastic
gradients with :math:`E\|\nabla\tilde f_i(w; B) - \nabla f_i(w)\|^2 \le \sigma^2`,
independent across clients and steps (spec 004 s.3, "implicit assumptions"): ``noise``.

Instances carry the ``problem`` (an object with the exact smoothness constant ``L`` and the
client minima ``minima()``, :mod:`verify.subtrunc.toy_problems`), the constant ``L`` the
result is applied with, the step ``step``, the local steps ``local_steps``, and the noise as
``noise_mean`` / ``noise_var`` (per-step mean and E||xi||^2 of the injected noise),
``sigma2`` and ``independent_noise``; Assumption 3's ``bias_sq`` (the largest
E||b_{k,tau}||^2 of the run) and ``gamma``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis, result

from ..predicates import at_most
from ._predicates import l_smooth, nonnegative_losses, step_at_most_third

DEFINITION = "a definition: nothing to check on its own; used by the claims of the results"
ASSUMPTION = "an assumption: a hypothesis of Theorem 1 and Lemmas 1-3 (see their claims)"

DEF1 = result("subtrunc.def1", ref="Definition 1", title="marginal gain", not_checked=DEFINITION)
DEF2 = result("subtrunc.def2", ref="Definition 2", title="submodularity", not_checked=DEFINITION)
DEF3 = result("subtrunc.def3", ref="Definition 3", title="monotonicity", not_checked=DEFINITION)
DEF4 = result("subtrunc.def4", ref="Definition 4", title="supermodularity",
              not_checked=DEFINITION)
DEF5 = result("subtrunc.def5", ref="Definition 5", title="L-smoothness", not_checked=DEFINITION)
ASSUMPTION1 = result("subtrunc.assumption1", ref="Assumption 1", title="L-smooth client losses",
                     not_checked=ASSUMPTION)
ASSUMPTION2 = result("subtrunc.assumption2", ref="Assumption 2", title="nonnegative losses",
                     not_checked=ASSUMPTION)
ASSUMPTION3 = result("subtrunc.assumption3", ref="Assumption 3",
                     title="bounded bias of the selected gradient", not_checked=ASSUMPTION)


@hypothesis("A1", "Assumption 1: l(x, w) is L-smooth in w, so every f_i and f are L-smooth")
def a1(*, problem, L):
    return l_smooth(problem, L)


@hypothesis("A2", "Assumption 2: f_i(w) >= 0, hence f_i* >= 0")
def a2(*, problem):
    return nonnegative_losses(problem)


@hypothesis("A3", "Assumption 3: the selection's bias is bounded, E||b_{k,tau}||^2 <= gamma "
                  "(the vector 'b_{k,tau} <= gamma' read as in eq. (33))")
def a3(*, bias_sq, gamma):
    return at_most(bias_sq, gamma)


@hypothesis("noise", "stochastic gradients unbiased (eq. (30)) with E||xi||^2 <= sigma^2, "
                     "independent across clients and steps (used in (31), never stated)")
def noise(*, noise_mean, noise_var, sigma2, independent_noise):
    return (bool(np.all(np.asarray(noise_mean) == 0)) and at_most(noise_var, sigma2)
            and bool(independent_noise))


@hypothesis("step", "eta_k L E <= 1/3")
def step_third(*, step, L, local_steps):
    return step_at_most_third(step, L, local_steps)


def gaussian_noise(sigma2: float) -> dict:
    """The instance values of the injected noise: N(0, sigma^2/d I) per client and step,
    drawn independently, so E xi = 0 and E||xi||^2 = sigma^2."""
    return dict(noise_mean=0.0, noise_var=sigma2, sigma2=sigma2, independent_noise=True)
