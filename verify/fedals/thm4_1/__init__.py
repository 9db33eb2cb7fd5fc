r"""Theorem 4.1 of FedALS (Sec. 4.1) and its restatement Theorem A.2 (App. A): the
results, their parts, their hypotheses and the printed bound.

Statement: let :math:`l(M_\theta, z)` be mu-strongly convex and L-smooth in
:math:`M_\theta`, :math:`M_{\theta_k} = \mathcal A_k(S_k)` the local ERM and
:math:`\hat\theta = E_{k\sim\mathcal K}\theta_k` one round of FedAvg. Then

.. math::
    E_S\Delta_{\mathcal A}(S) \le E_{k\sim\mathcal K}\Big[\frac{L\mathcal K(k)^2}{\mu}
    E\Delta_{\mathcal A_k}(S_k) + 2\sqrt{\frac L\mu}\,\mathcal K(k)
    \big(E\delta_{k,\mathcal A}(S)\,E\Delta_{\mathcal A_k}(S_k)\big)^{1/2}\Big].

The discussion after the theorem reads it in the iid setting ("the sole term", "a factor
1/K^2") and in the non-iid one; those sentences are parts of the result too.

Claims: :mod:`.claims` (the bound, the proof steps, the non-iid discussion),
:mod:`.logistic` (the bound on a logistic-loss instance), :mod:`.smoothness_step` (proof
step (16) on quadratics), :mod:`.iid_discussion` (the iid reading, expected violated).
Instances carry ``model``, ``w`` and ``local``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, hypothesis, positive, result, vector
from flbounds.theory.generalization import _bound_terms

from .._predicates import convex_smooth, iid, local_erm, one_round


@hypothesis("uniform", "the uniform case K(k) = 1/K")
def uniform_weights(*, w):
    w = np.asarray(w, dtype=float)
    return bool(np.allclose(w, 1.0 / w.size, rtol=1e-12, atol=0.0))


def _check(*, mu, L, G, D, w):
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")
    if not (G.size == D.size == w.size):
        raise ValueError(f"G, D and w must have one entry per client, got sizes "
                         f"{G.size}, {D.size}, {w.size}")
    if abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"w must sum to 1, got {w.sum()!r}")


@bound("fedals.thm4_1", ref="Thm 4.1 (= Thm A.2), one-round FedAvg with local ERM",
       constants=(positive("mu", "strong convexity of the loss"), positive("L", "smoothness"),
                  vector("G", "expected local generalization G_k, one per client"),
                  vector("D", "expected non-iidness D_k, one per client"),
                  vector("w", "aggregation weights K(k), summing to 1")),
       check=_check, quantity="E_S generalization gap of the averaged model")
def thm4_1(*, mu, L, G, D, w):
    """sum_k w_k [kappa w_k^2 G_k + 2 sqrt(kappa) w_k sqrt(D_k G_k)]: the function
    (``flbounds.theory.generalization._bound_terms`` with constants 1 and 2) that
    ``summarize_bound`` evaluates for every Thm 4.1 claim."""
    t1, t2 = _bound_terms(np.asarray(G), np.asarray(D), np.asarray(w), L / mu, 1.0, 2.0)
    return float(t1 + t2)


THM41 = result(
    "fedals.thm4_1", ref="Theorem 4.1",
    title="one-round generalization bound: sum_k K(k)(L/mu)(K(k)^2 G_k + ...)",
    parts={"bound": "E_S Delta_A(S) <= E_{k~K}[(L K(k)^2/mu) G_k + 2 sqrt(L/mu) K(k) "
                    "sqrt(D_k G_k)], G_k the expected local generalization, D_k the expected "
                    "non-iidness",
           "proof": "Proof: Appendix A (Theorem A.2 and its steps (9)-(36))",
           "iid_sole_term": "Discussion: the first term (L/mu) K(k)^2 G_k 'is the sole term in "
                            "the iid setting'",
           "iid_rate": "Discussion: in the uniform case K(k) = 1/K the generalization error "
                       "improves by a factor 1/K^2 in the iid case (after each averaging)",
           "noniid": "Discussion: the non-iidness of each client deteriorates generalization"},
    hypotheses=(convex_smooth, local_erm, one_round,
                iid.only("iid_sole_term", "iid_rate"), uniform_weights.only("iid_rate")))

THMA2 = result(
    "fedals.thmA2", ref="Theorem A.2",
    title="stability-based generalization bound behind Thm 4.1, App. A",
    parts={"bound": ("Theorem 4.1's bound, restated for the proof",
                     "the same inequality as fedals.thm4_1:bound, checked there"),
           "proof_16": "(16): the L-smoothness step R(x) - R(y) <= g'(x - y) + (L/2)||x - y||^2 "
                       "per draw",
           "proof_18_20": "(18)-(20): Cauchy-Schwarz on the sample means",
           "proof_21_22": "(21)-(22): strong convexity, E||v||^2 <= 2 K(k)^2 G_k / mu",
           "proof_29": "(28)-(29): ||g||^2 <= 2L (excess risk) per draw",
           "proof_35": "(35): exchangeability, E excess = D_k"},
    hypotheses=(convex_smooth, local_erm, one_round))
