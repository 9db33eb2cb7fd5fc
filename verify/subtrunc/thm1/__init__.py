r"""Theorem 1 of SubTrunc (convergence of SubTrunc and UnionFL): the result, its parts, its
hypotheses and its printed bound; the claims are in the sibling modules (``algebra``: the
proof's algebra, symbolic; ``self_bounding``: the step before eq. (21); ``end_to_end``: the
statement on FL runs with a controlled bias).

Statement: let Assumptions 1, 2 and 3 hold, set :math:`\eta_k = 1/(LE\sqrt K)` and draw
:math:`k^* \sim P(k) \propto (1+\zeta)^{K-1-k}`, :math:`\zeta = (9/4)\eta^3L^3E^3`. Then for
:math:`K \ge 9`, eq. (19):

.. math:: E\|\nabla f(w_{k^*})\|^2 \le \frac{12Lf(w_0)}{\sqrt K} + \Bigl(\frac{2}{EnK} +
   \frac3K + \frac{4}{En\sqrt K}\Bigr)\sigma^2 + \Bigl(4 + \frac{4}{\sqrt K}\Bigr)\gamma .

Instances carry the values of :mod:`verify.subtrunc.assumptions` and ``K``; the proof-step
parts carry what their step reads (``zeta`` and ``K`` for the auxiliary inequality). The
statement's hypotheses apply to the proof steps too, so a ``violated`` step rests on an
instance that meets all of them.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, integer, nonnegative, positive, result

from ..assumptions import a1, a2, a3, noise, step_third


@hypothesis("eta", "eta_k = (1/(L E)) sqrt(1/K) for every k")
def printed_step(*, step, L, local_steps, K):
    target = 1.0 / (L * np.asarray(local_steps) * np.sqrt(np.asarray(K, dtype=float)))
    return bool(np.allclose(step, target, rtol=1e-12, atol=0.0))


@hypothesis("K", "K >= 9")
def enough_rounds(*, K):
    return bool(np.all(np.asarray(K) >= 9))


@hypothesis("zeta", "zeta > 0 and K >= 1 (the auxiliary inequality's range)")
def aux_range(*, zeta, K):
    return bool(np.all(np.asarray(zeta) > 0) and np.all(np.asarray(K) >= 1))


BOUND_PARTS = ("bound",)
#: the parts under the statement's hypotheses (Assumptions 1-3, the noise the proof uses, the
#: printed step and K >= 9): the bound and every proof step but the auxiliary inequality,
#: which is a fact about (zeta, K) alone
STATEMENT = ("bound", "self_bounding", "recursion", "step_26", "eq24_to_19")
THM1 = result(
    "subtrunc.thm1", ref="Theorem 1", title="convergence of SubTrunc and UnionFL, eq. (19)",
    parts={"bound": "eq. (19): E||grad f(w_k*)||^2 <= 12 L f(w_0)/sqrt K + (2/(EnK) + 3/K + "
                    "4/(En sqrt K)) sigma^2 + (4 + 4/sqrt K) gamma, k* ~ P",
           "self_bounding": "proof, before (21): sum_i ||grad f_i(w)||^2 <= 2L sum_i (f_i(w) - "
                            "f_i*) <= 2nL f(w)",
           "recursion": "proof, eq. (21): Lemma 1 with the self-bounding step gives E f(w_{k+1}) "
                        "<= (1 + zeta) E f(w_k) - ..., zeta = eta^2 L^2 E^2 (9 eta L E/4)",
           "aux": "proof, before (25): 1 - (1 + zeta)^-K > zeta K (1 - zeta K)",
           "step_26": "proof, (25) -> (26): with eta = 1/(LE sqrt K), K >= 9, 1 - zeta K >= 1/3",
           "eq24_to_19": "proof: (24) with eta = 1/(LE sqrt K) and K >= 9 gives (19) term by "
                         "term"},
    hypotheses=(*(h.only(*STATEMENT) for h in (a1, a2, a3, noise, printed_step,
                                                enough_rounds)),
                step_third.only("recursion"), aux_range.only("aux")))


def printed_terms(*, L, f0, K, E, n, sigma2, gamma):
    """The three terms of eq. (19): (f(w_0) term, sigma^2 term, gamma term)."""
    root = np.sqrt(K)
    return (12 * L * f0 / root, (2 / (E * n * K) + 3 / K + 4 / (E * n * root)) * sigma2,
            (4 + 4 / root) * gamma)


@bound("subtrunc.thm1", ref="Thm 1, eq. (19)",
       constants=(positive("L", "smoothness"), nonnegative("f0", "f(w_0) (f >= 0)"),
                  integer("K", "rounds (K >= 9)", low=9), integer("E", "local epochs"),
                  integer("n", "clients, n = |N|"), nonnegative("sigma2", "gradient noise"),
                  nonnegative("gamma", "selection bias")),
       quantity="E||grad f(w_k*)||^2, k* ~ P")
def thm1(*, L, f0, K, E, n, sigma2, gamma):
    """12 L f(w_0)/sqrt K + (2/(EnK) + 3/K + 4/(En sqrt K)) sigma^2 + (4 + 4/sqrt K) gamma."""
    return sum(printed_terms(L=L, f0=f0, K=K, E=E, n=n, sigma2=sigma2, gamma=gamma))


def aux_inequality_sides(k, x):
    """Both sides of the proof's auxiliary inequality zeta K (1 - zeta K) <= 1 - (1 + zeta)^-K
    at zeta K = x, the right side through expm1/log1p (accurate as x -> 0)."""
    return x * (1 - x), -np.expm1(-k * np.log1p(x / k))

