r"""[001]'s printed bounds as functions of their constants (``flbounds bound``)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import bound, positive, vector


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
    """sum_k w_k [kappa w_k^2 G_k + 2 sqrt(kappa) w_k sqrt(D_k G_k)] (the claims' formula,
    ``flbounds.theory.generalization._bound_terms`` with constants 1 and 2)."""
    from flbounds.theory.generalization import _bound_terms
    t1, t2 = _bound_terms(np.asarray(G), np.asarray(D), np.asarray(w), L / mu, 1.0, 2.0)
    return float(t1 + t2)
