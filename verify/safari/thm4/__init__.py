r"""Theorem 4 of SAFARI (non-convex): the result, its parts, its hypotheses and its
printed bound. Claims: :mod:`.printed` (the counterexample and the proof steps), :mod:`.shrunk`
(the counterexample on the smallest instance found),
:mod:`.homogeneous`, :mod:`.drift` (the local-drift lemma of the proof), :mod:`.tightness`
(PEP), :mod:`.attacks`.

Statement: under Assumptions 3-5, with :math:`\eta_c \le 1/(4\sqrt{30}LK)`,
:math:`\eta_c = 2\eta_s/K` and the q-condition

.. math::
    q \le 1\Big/\Big(\frac{4\sigma_G^2 - 4G_2(1/(2K^2) - 2L\eta_s^2/K^2)}{(1 - L\eta_s)G_1}
    + 1\Big),

:math:`G_1 = \max_{r\in T_s}\|\nabla F(x_r)\|^2`, :math:`G_2 = \max_{r\in T_c}\|\frac1m
\sum_i\sum_k \nabla F_i(x^i_{r,k})\|^2`,

.. math::
    \frac1R\sum_{r=1}^R E\|\nabla F(x_r)\|^2 \le \frac{2(F(x_0) - F(x^*))}{R\eta_s} + \delta,

:math:`\delta = L\eta_s(1-q)\sigma_s^2 + \frac{80qL^2\eta_s^2}{K}(\sigma^2 + 6K\sigma_G^2)
+ \frac{8Lq\eta_s}{mK}\sigma^2`.

Instances carry the values of :mod:`verify.safari.assumptions` plus ``step_client``,
``step_server``, ``local_steps`` and, for the q-condition, ``q``, ``G1``, ``G2`` (one instance
per seed: the q-condition is an event of the trajectory).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, probability, result

from ...predicates import at_most
from ..assumptions import a3_smooth, a4_noise, a5_dissimilarity
from ..closed_forms import thm4_q_max, thm4_rhs


def step_limit(*, L, local_steps):
    """Theorem 4's largest client step 1/(4 sqrt(30) L K)."""
    return 1.0 / (4 * np.sqrt(30) * L * local_steps)


@hypothesis("step", "eta_c <= 1/(4 sqrt(30) L K)")
def step_condition(*, step_client, L, local_steps):
    return at_most(step_client, step_limit(L=L, local_steps=local_steps))


@hypothesis("coupling", "eta_c = 2 eta_s / K")
def coupling(*, step_client, step_server, local_steps):
    return bool(np.isclose(step_client, 2 * step_server / local_steps, rtol=1e-12, atol=0.0))


def q_condition_holds(*, q, G1, G2, sigma_G2, local_steps, L, step_server) -> bool:
    """The printed q-condition at the run's G_1, G_2, read as printed (eta_s^2) and with the
    proof's eta_s, each as the closed form with a positive denominator (so that it is the
    proof's linear condition q X <= (1 - q)(1 - L eta_s) G_1)."""
    ok = True
    for printed in (True, False):
        q_max, linear = thm4_q_max(G1, G2, sigma_G2=sigma_G2, local_steps=local_steps, L=L,
                                   step_server=step_server, printed=printed)
        ok = ok and bool(np.all(linear)) and bool(np.all(q <= q_max))
    return ok


@hypothesis("q", "q <= 1/([4 sigma_G^2 - 4 G_2 (1/(2K^2) - 2 L eta_s^2/K^2)]/((1 - L eta_s) G_1) "
                 "+ 1) with G_1, G_2 the max over the run's server / client rounds (as printed); "
                 "read per seed, with 1 + X/((1 - L eta_s) G_1) > 0, and required also with the "
                 "proof's eta_s for eta_s^2")
def q_condition(*, q, G1, G2, sigma_G2, local_steps, L, step_server):
    return q_condition_holds(q=q, G1=G1, G2=G2, sigma_G2=sigma_G2, local_steps=local_steps,
                             L=L, step_server=step_server)


@hypothesis("q_linear", "the q-condition in the proof's linear form q X <= (1 - q)(1 - L eta_s) "
                        "G_1, X = 4 sigma_G^2 - 4 G_2 (1/(2K^2) - 2 L eta_s/K^2) (the reading "
                        "(55) follows from; the printed closed form is vacuous when X + (1 - L "
                        "eta_s) G_1 <= 0, e.g. sigma_G = 0), per seed")
def q_linear(*, q, G1, G2, sigma_G2, local_steps, L, step_server):
    K, eta = np.asarray(local_steps, dtype=float), np.asarray(step_server, dtype=float)
    X = 4 * np.asarray(sigma_G2) - 4 * np.asarray(G2) * (1 / (2 * K**2) - 2 * L * eta / K**2)
    return at_most(np.asarray(q) * X, (1 - np.asarray(q)) * (1 - L * eta) * np.asarray(G1))


def drift_step_limit(*, L, local_steps):
    return 1.0 / (8 * L * local_steps)


@hypothesis("drift_step", "eta_c <= 1/(8 L K) (the local-drift lemma's condition)")
def drift_step(*, step_client, L, local_steps):
    return at_most(step_client, drift_step_limit(L=L, local_steps=local_steps))


_MAIN = ("bound", "bound_linear", "q_condition", "proof_55")
THM4 = result(
    "safari.thm4", ref="Theorem 4", title="SAFARI's non-convex rate under the q-condition",
    parts={"bound": "(1/R) sum_{r=1}^R E||grad F(x_r)||^2 <= 2(F(x_0) - F(x*))/(R eta_s) "
                    "+ delta, delta = L eta_s (1-q) sigma_s^2 + 80 q L^2 eta_s^2/K (sigma^2 "
                    "+ 6K sigma_G^2) + 8 L q eta_s sigma^2/(mK)",
           "bound_linear": "the same bound with the q-condition read in the proof's linear "
                           "form q X <= (1 - q)(1 - L eta_s) G_1 (the other reading of the "
                           "condition; the closed form is vacuous when X + (1 - L eta_s) G_1 "
                           "<= 0, as with identical clients)",
           "q_condition": "the q-condition as stated (term 2 L eta_s^2/K^2, G_1 and G_2 "
                          "maxima over rounds) is the condition the proof needs",
           "proof_55": "proof (54)-(55): the q-condition gives 4 R_c sigma_G^2 <= sum_{T_s} "
                       "(1 - L eta_s)||grad F(x_r)||^2 + sum_{T_c} (2 - 8 L eta_s)/K^2 "
                       "||(1/m) sum_i sum_k grad F_i(x^i_{r,k})||^2",
           "drift": "the proof's local-drift lemma: for eta_c <= 1/(8LK), E||x_r - "
                    "x^i_{r,k}||^2 <= 5K eta_c^2 (sigma^2 + 6K sigma_G^2) + 30 K^2 eta_c^2 "
                    "||grad F(x_r)||^2"},
    hypotheses=(a3_smooth, a4_noise, a5_dissimilarity, step_condition.only(*_MAIN),
                coupling.only(*_MAIN), q_condition.only("bound", "q_condition", "proof_55"),
                q_linear.only("bound_linear"),
                drift_step.only("drift")))

_NOISE = (nonnegative("sigma2", "client gradient noise sigma^2"),
          nonnegative("sigma_s2", "server gradient noise sigma_s^2"),
          nonnegative("sigma_G2", "heterogeneity sigma_G^2"))


def _thm4_steps(*, L, local_steps, **_):
    """eta_c <= 1/(4 sqrt30 L K) with eta_c = 2 eta_s/K, i.e. eta_s <= 1/(8 sqrt30 L)."""
    return {"eta_c = 2 eta_s/K <= 1/(4 sqrt30 L K)":
            step_limit(L=L, local_steps=local_steps) * local_steps / 2}


@bound("safari.thm4", ref="Thm 4 (non-convex), as printed",
       constants=(positive("L"), integer("local_steps", "K local steps"),
                  integer("n_sampled", "m sampled clients"), probability("q", "FL-round prob."),
                  integer("R", "rounds"), nonnegative("delta_f", "F(x_0) - F*")) + _NOISE,
       quantity="(1/R) sum_r E||grad F(x_r)||^2", steps=_thm4_steps)
def thm4(*, L, local_steps, n_sampled, q, R, delta_f, sigma2, sigma_s2, sigma_G2, step):
    """2 Delta F/(R eta_s) + delta (``closed_forms.thm4_rhs``, which every claim calls)."""
    return thm4_rhs(delta_f=delta_f, n_rounds=R, step_server=step, q=q, L=L, sigma2=sigma2,
                    sigma_s2=sigma_s2, sigma_G2=sigma_G2, local_steps=local_steps,
                    n_sampled=n_sampled)
