r"""Lemma A.1 of FedALS (App. A, eqs. (9)-(13)): the leave-one-out identity.

Statement: for any algorithm A and datasets :math:`S_k \sim \mathcal D_k^{n_k}` drawn
independently, with :math:`S^{(k)}` the data with client k's whole dataset replaced by an
independent copy :math:`S'_k`,

.. math::
    E_S\Delta_{\mathcal A}(S) = E_{k\sim\mathcal K} E\Big[\frac1{n_k}\sum_i
    l(\mathcal A(S), z'_{k,i}) - l(\mathcal A(S^{(k)}), z'_{k,i})\Big].

The claim's instances carry ``w`` (the weights K) and ``model`` (the data model).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result

from ._predicates import is_distribution
from .instances import DIM, ridge_cell


@hypothesis("K", "K is a distribution over the K clients (the risks (1)-(2))")
def weights_distribution(*, w):
    return is_distribution(w)


LEMMA_A1 = result(
    "fedals.lemmaA1", ref="Lemma A.1", title="leave-one-out identities, eqs. (9)-(13)",
    parts={"loo": "E_S Delta_A(S) = E_{k~K} E[(1/n_k) sum_i l(A(S), z'_ki) - "
                  "l(A(S^(k)), z'_ki)], client k's whole dataset replaced by a copy"},
    hypotheses=(weights_distribution,))


@claim("fedals.lemmaA1.loo_identity", ref="Lemma A.1, eqs. (9)-(13)", kind="statement",
       expected="holds", result=LEMMA_A1, parts=("loo",),
       statement="E_S Delta_A(S) = E_{k~K} E[(1/n_k) sum_i l(A(S), z'_ki) - l(A(S^(k)), z'_ki)] "
                 "with client k's whole dataset replaced by an independent copy.",
       quick=dict(n_draws=1500, n_samples=40, lam=0.1, zeta=1.0),
       full=dict(n_draws=20000, n_samples=40, lam=0.1, zeta=1.0))
def loo_identity(*, rng, n_draws, n_samples, lam, zeta):
    r"""Both sides of (9), estimated from the same draws, K = 2 (uniform) and K = 5 (Dirichlet).

    The identity is exact for any algorithm (exchangeability of :math:`S_k` and :math:`S'_k`),
    so the mean per-draw difference must be 0 within 4 MC standard errors of that difference.
    The proof replaces client k's entire dataset (spec 7.4); that is what is simulated.
    """
    base = rng.standard_normal(DIM)
    diffs, ses, rows, instances = [], [], [], []
    for n_clients, kind in ((2, "uniform"), (5, "dirichlet")):
        model, w, draws, _ = ridge_cell(rng, base, n_samples=n_samples, lam=lam,
                                    n_clients=n_clients, zeta=zeta, weights=kind,
                                    n_draws=n_draws)
        instances.append(dict(w=w, model=model))
        per_draw = draws.gap - draws.loo @ w
        diffs.append(per_draw.mean())
        ses.append(per_draw.std(ddof=1) / np.sqrt(n_draws))
        rows.append(dict(K=n_clients, weights=kind, lhs=float(draws.gap.mean()),
                         rhs=float((draws.loo @ w).mean()), diff=float(diffs[-1]),
                         se=float(ses[-1])))
    return Evidence(measured=diffs, theoretical=[0.0, 0.0], relation="==", instance=instances,
                    tolerance=Tolerance.mc(ses, k=4, what="mean of gap - LOO per draw"),
                    details={"cells": rows})
