r"""Theorem 5.2 of K-Vib (static expected regret of K-Vib with partial feedback): the result,
its parts and its hypotheses; its claims are the sibling modules of this folder.

Statement (eq. (13)): under Assumption 5.1, sampling :math:`S^t\sim\tilde p^t` (ISP) with
:math:`E|S^t|=K`, :math:`\gamma=G^2N/(K\theta)`, :math:`\theta=(N/(TK))^{1/3}` and
:math:`TK\ge N`, :math:`E[\mathrm{Regret}_S(T)]\le\tilde O(N^{1/3}T^{2/3}/K^{4/3})`. The proof
(App. D.3, eqs. (52)-(54)) splits the regret into the cost of mixing (eq. (12)) and Theorem
D.1 with :math:`G^2\to G^2N/(\theta K)`. The end of Sec. 5 reads it into Theorem 4.1's
:math:`\beta_1` ("enhanced convergence"). Instances carry ``feedback``, ``n_rounds``,
``budget``, ``n_clients`` and ``G`` (the G the sampler's gamma is set from).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, result

from ..conditions import assumption_5_1, budget_in_range, feedback_max


@hypothesis("A5.1", "Assumption 5.1: feedback pi_t(i) in [0, G] with |pi_t(i) - pi_*(i)| <= "
                    "O(1/sqrt t) over the T rounds")
def a5_1(*, feedback, n_rounds):
    return assumption_5_1(feedback, n_rounds)


@hypothesis("K", "S^t ~ p~^t (ISP) with E|S^t| = K in [1, N]")
def budget(*, budget, n_clients):
    return budget_in_range(budget, n_clients)


@hypothesis("settings", "gamma = G^2 N/(K theta), theta = (N/(TK))^{1/3} with T K >= N, and "
                        "G bounds the feedback (Assumption 5.1's G)")
def settings(*, n_clients, budget, n_rounds, G, feedback):
    top = max(feedback_max(feedback, t) for t in np.ravel(n_rounds))
    return bool(np.all(np.asarray(n_rounds) * np.asarray(budget) >= np.asarray(n_clients))
                and G >= top * (1 - 1e-12))


THM5_2 = result(
    "kvib.thm5_2", ref="Theorem 5.2", title="static expected regret of K-Vib",
    parts={"k_rate": "eq. (13): E Regret_S(T) <= O~(N^{1/3} T^{2/3}/K^{4/3}), its K^{-4/3}",
           "t_rate": "eq. (13)'s T^{2/3}: the regret is sublinear in T",
           "n_rate": "eq. (13)'s N^{1/3} (App. D.3 normalises the regret by N^2 G^2)",
           "explicit": "App. D.3 eqs. (52)-(54): the explicit bound before the O~",
           "mixing": "eq. (12): p~^t >= theta K/N, pi~_t^2(i) <= G^2 N/(theta K), and "
                     "E[pi~_t^2(i) | p~^t] = pi_t^2(i) (proof sketch)",
           "enhanced": "end of Sec. 5: K-Vib's beta_1 <= E Regret/T decays like N^{1/3} "
                       "T^{-1/3} K^{-4/3}, improving Theorem 4.1's O((M beta_1/T)^{1/2}) to "
                       "O(M^{1/2} N^{1/6} T^{-2/3} K^{-2/3})"},
    hypotheses=(a5_1.only("k_rate", "t_rate", "n_rate", "explicit", "mixing"),
                budget,
                settings.only("k_rate", "t_rate", "n_rate", "explicit")))


def regret_instances(fb, *, ks, rounds, G):
    """The values Theorem 5.2's hypotheses read, one per cell (K, T) of a regret grid."""
    return [dict(feedback=fb, n_rounds=t, budget=k, n_clients=fb.n_clients, G=G)
            for k in ks for t in rounds]


def explicit_bound_value(*, N, T, K, G, zbar, root):
    r"""App. D.3's explicit bound (eqs. (52)-(54)) at the theory's :math:`\theta=(N/(TK))^{1/3}`:
    :math:`\theta G^2N^2T/K+(\frac{22N^{3/2}G}{\bar z\sqrt{\theta K}}+\frac{2\sqrt6N^{3/2}G}
    {\sqrt{\theta K^3}})\sum_i\sqrt{\pi^2_{1:T}(i)}+\frac{22G^2N^2}{\bar z\theta K}` (the last
    term as printed, Theorem D.1's with :math:`G^2\to G^2N/(\theta K)`)."""
    theta = (N / (T * K)) ** (1 / 3)
    return (theta * G**2 * N**2 * T / K
            + (22 * N**1.5 * G / (zbar * np.sqrt(theta * K))
               + 2 * np.sqrt(6) * N**1.5 * G / np.sqrt(theta * K**3)) * root
            + 22 * G**2 * N**2 / (zbar * theta * K))


@bound("kvib.thm5_2", ref="Thm 5.2, explicit bound of App. D.3 (eqs. (52)-(54))",
       constants=(integer("N", "clients"), integer("T", "rounds"),
                  positive("K", "expected sample size"), positive("G", "largest feedback"),
                  positive("zbar", "min_t z_t"),
                  nonnegative("root", "sum_i sqrt(pi^2_{1:T}(i))")),
       quantity="E Regret_S(T) of K-Vib (theta = (N/(TK))^{1/3}, gamma = G^2 N/(K theta))")
def thm5_2_bound(*, N, T, K, G, zbar, root):
    """App. D.3's explicit bound (:func:`explicit_bound_value`)."""
    return explicit_bound_value(N=N, T=T, K=K, G=G, zbar=zbar, root=root)
