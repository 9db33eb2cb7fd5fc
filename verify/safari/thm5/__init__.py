r"""Theorem 5 of SAFARI (strongly convex): the result, its parts, its hypotheses and
its printed bound. Claims: :mod:`.runs` (Monte Carlo and closed forms), :mod:`.constants`
(the q-condition's printed constants), :mod:`.tightness` and :mod:`.hetero_tightness` (PEP),
:mod:`.attacks`, :mod:`.large_step` (the printed bound broken at eta_s = 2/(L + mu), and
its statement under the proof's hypotheses, part ``bound_corrected``).

Statement: under Assumptions 3-5, every F_i mu-strongly convex, :math:`\eta_s \le 2/(L+\mu)`,
:math:`\bar\eta = \eta_c K\mu/2 = 2\eta_s L\mu/(L+\mu)` and, at every round, the q-condition

.. math::
    q \le 1\Big/\Big(1 + \frac{(4\bar\eta/\mu^2)(1 + (30L\bar\eta/\mu)(1 + 2L\bar\eta/\mu))G_3
    - (4/\mu)G_4}{(1/(L+\mu) - (L+\mu)^2\bar\eta/(4L^2\mu^2))G_3}\Big),

:math:`G_3 = \|\nabla F(x_r)\|^2`, :math:`G_4 = \frac1m\sum_{i\in S_r}[F_i(x_r) - F_i(x^*)]`,

.. math::
    E\|x_R - x^*\|^2 \le (1 - \bar\eta)^R\|x_0 - x^*\|^2 + \bar\delta .

Instances carry the values of :mod:`verify.safari.assumptions` plus ``mu``, ``step_client``,
``step_server``, ``local_steps`` and, for the q-condition, ``q``, ``eta_bar`` and the per-round
arrays ``G3``, ``G4`` of one seed.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, probability, result

from ...predicates import at_most
from ..assumptions import a3_smooth, a4_noise, a5_dissimilarity, strong_convexity
from ..closed_forms import thm5_delta_bar, thm5_q_condition


def client_step(*, step_server, L, mu, local_steps):
    """eta_c = 4 L eta_s/(K(L + mu)), from eta_bar = eta_c K mu/2 = 2 eta_s L mu/(L + mu)."""
    return 4 * L * step_server / (local_steps * (L + mu))


@hypothesis("step", "eta_s <= 2/(L + mu)")
def step_condition(*, step_server, L, mu):
    return at_most(step_server, 2.0 / (L + mu))


@hypothesis("coupling", "eta_bar = eta_c K mu/2 = 2 eta_s L mu/(L + mu)")
def coupling(*, step_client, step_server, local_steps, L, mu):
    want = client_step(step_server=step_server, L=L, mu=mu, local_steps=local_steps)
    return bool(np.isclose(step_client, want, rtol=1e-12, atol=0.0))


@hypothesis("q", "q <= 1/(1 + N/D) at every round, N = (4 eta_bar/mu^2)(1 + (30 L eta_bar/mu)"
                 "(1 + 2 L eta_bar/mu)) G_3 - (4/mu) G_4, D = (1/(L + mu) - (L + mu)^2 eta_bar"
                 "/(4 L^2 mu^2)) G_3 (printed constants, closed form as printed, read with "
                 "1 + N/D > 0)")
def q_condition(*, q, G3, G4, eta_bar, L, mu):
    closed, _ = thm5_q_condition(G3, G4, q=q, eta_bar=eta_bar, L=L, mu=mu)
    return bool(np.all(closed))


@hypothesis("q_linear", "the q-condition in the proof's linear form q N <= (1 - q) D with D > 0 "
                        "at every round (N, D as in the printed condition; the reading (83) "
                        "follows from, the closed form being vacuous when 1 + N/D <= 0)")
def q_linear(*, q, G3, G4, eta_bar, L, mu):
    _, linear = thm5_q_condition(G3, G4, q=q, eta_bar=eta_bar, L=L, mu=mu)
    return bool(np.all(linear))


@hypothesis("q_proof", "the q-condition with the constants the proof's (81)-(82) give, in its "
                       "linear form q N' <= (1 - q) D' with D' > 0 at every round: N' = (16 "
                       "eta_bar/mu^2)(1 + (30 L eta_bar/mu)(1 + 2 L eta_bar/mu)) G_3 - (4/mu) G_4, "
                       "D' = (1/(L mu) - (L + mu)^2 eta_bar/(4 L^2 mu^2)) G_3")
def q_proof(*, q, G3, G4, eta_bar, L, mu):
    _, linear = thm5_q_condition(G3, G4, q=q, eta_bar=eta_bar, L=L, mu=mu, corrected=True)
    return bool(np.all(linear))


@hypothesis("drift_step", "eta_c <= 1/(8 L K) (the local-drift lemma the proof's (77) uses)")
def drift_step(*, step_client, L, local_steps):
    return at_most(step_client, 1.0 / (8 * L * local_steps))


@hypothesis("mu_le_L", "0 < mu <= L (a mu-strongly convex, L-smooth F)")
def mu_le_L(*, mu, L):
    return 0 < mu <= L


_RUN = ("bound", "bound_linear", "bound_corrected", "one_round")
#: the proof steps about the q-condition itself: under the statement's other hypotheses
#: (Assumptions 3-5, strong convexity, the step and its coupling), the printed q-condition
#: being what they question (q_closed_form also under the proof's linear form it is compared
#: with)
_STEPS = ("q_closed_form", "q_constants")
THM5 = result(
    "safari.thm5", ref="Theorem 5", title="SAFARI's strongly convex rate under the q-condition",
    parts={"bound": "E||x_R - x*||^2 <= (1 - eta_bar)^R ||x_0 - x*||^2 + delta_bar, "
                    "delta_bar = 8 q eta_c K sigma_G^2/mu + 2 q eta_c sigma^2/(mu m) + "
                    "(4 q L (1 + K eta_c L)/mu) 5 K eta_c^2 (sigma^2 + 6K sigma_G^2) + (1 - q) "
                    "(L + mu)/(2 L mu) eta_s sigma_s^2",
           "bound_linear": "the same bound with the q-condition read in the proof's linear "
                           "form q N <= (1 - q) D, D > 0, at every round (the other reading; "
                           "the closed form is vacuous with identical clients)",
           "bound_corrected": "the same bound under the hypotheses the proof uses: the "
                              "q-condition with the constants (81)-(82) give (16 eta_bar/mu^2 "
                              "on G_3, 1/(L mu) for the printed 1/(L + mu)), linear form, at "
                              "every round, and eta_c <= 1/(8 L K) for the local-drift lemma",
           "one_round": "the proof's one-round inequality (83): E||x_{r+1} - x*||^2 <= "
                        "(1 - eta_bar)||x_r - x*||^2 + eta_bar delta_bar under the q-condition",
           "q_closed_form": "the printed closed form q <= 1/(1 + N/D) is the proof's linear "
                            "condition q N <= (1 - q) D solved for q",
           "q_constants": "the q-condition's coefficients 4 eta_bar/mu^2 (on G_3) and "
                          "1/(L + mu) follow from the proof's per-round terms"},
    hypotheses=(*(h.only(*_RUN, *_STEPS) for h in (a3_smooth, a4_noise, a5_dissimilarity,
                                                     strong_convexity, step_condition,
                                                     coupling)),
                q_condition.only("bound", "one_round"),
                q_linear.only("bound_linear", "q_closed_form"),
                q_proof.only("bound_corrected"), drift_step.only("bound_corrected"),
                mu_le_L.only("q_constants")))


def _mu_le_L(*, mu, L, **_):
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")


@bound("safari.thm5", ref="Thm 5 (strongly convex), as printed",
       constants=(positive("mu"), positive("L"), integer("local_steps"), integer("n_sampled"),
                  probability("q"), integer("R"), nonnegative("dist0", "||x_0 - x*||^2"),
                  nonnegative("sigma2", "client gradient noise sigma^2"),
                  nonnegative("sigma_s2", "server gradient noise sigma_s^2"),
                  nonnegative("sigma_G2", "heterogeneity sigma_G^2")),
       check=_mu_le_L, quantity="E||x_R - x*||^2",
       steps=lambda mu, L, **_: {"2/(L+mu)": 2.0 / (L + mu)})
def thm5(*, mu, L, local_steps, n_sampled, q, R, dist0, sigma2, sigma_s2, sigma_G2, step):
    """(1 - eta_bar)^R ||x_0 - x*||^2 + delta_bar (``thm5_delta_bar``); every claim calls it."""
    eta_c = client_step(step_server=step, L=L, mu=mu, local_steps=local_steps)
    eta_bar = eta_c * local_steps * mu / 2
    floor = thm5_delta_bar(q=q, step_client=eta_c, step_server=step, local_steps=local_steps,
                           n_sampled=n_sampled, L=L, mu=mu, sigma2=sigma2, sigma_s2=sigma_s2,
                           sigma_G2=sigma_G2)
    return (1 - eta_bar) ** R * dist0 + floor
