r"""Lemma C.2 of FedALS (App. C, eqs. (66)-(69)): identities of the weights of Case II
participation.

Statement: let :math:`\{x_i\}_{i=1}^K` be any fixed deterministic sequence and
:math:`\mathcal P` the sampling of :math:`\hat K` clients uniformly without replacement,
followed by the weights :math:`\hat{\mathcal K}(k) = \mathcal K(k)K/\hat K`. Then
:math:`E_{\mathcal P}E_{k\sim\hat{\mathcal K}}\hat{\mathcal K}(k)^j x_k = (K/\hat K)^j
E_{k\sim\mathcal K}\mathcal K(k)^j x_k` for j = 0, 1, 2.

Checked by exact enumeration of the :math:`\binom K{\hat K}` subsets; the attack surface is
in :mod:`verify.fedals.attacks`. Instances carry ``x``, ``w``, ``n_clients`` and
``n_participants``.
"""

from __future__ import annotations

import itertools

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.tolerances import EPS

from ._predicates import is_distribution, positive_integers
from .lemmaC1 import ENUM, fixed_sequence


@hypothesis("sampling", "P: K_hat <= K clients sampled uniformly at random without "
                        "replacement, weighted K_hat(k) = K(k) K / K_hat (K a distribution)")
def without_replacement(*, w, n_clients, n_participants):
    return (is_distribution(w) and len(w) == n_clients and positive_integers(n_participants)
            and n_participants <= n_clients)


LEMMA_C2 = result(
    "fedals.lemmaC2", ref="Lemma C.2", title="identities for Case II, eqs. (66)-(69)",
    parts={"identities": "E_P E_{k~K_hat} K_hat(k)^j x_k = (K/K_hat)^j E_{k~K} K(k)^j x_k, "
                         "j = 0, 1, 2"},
    hypotheses=(fixed_sequence, without_replacement))


@claim("fedals.lemmaC2.identities", ref="Lemma C.2, eqs. (66)-(69)", kind="statement",
       expected="holds", result=LEMMA_C2, parts=("identities",),
       statement="Uniform K_hat-subsets without replacement, K_hat(k) = K(k) K / K_hat: "
                 "E_P E_{k~K_hat} K_hat(k)^j x_k = (K/K_hat)^j E_{k~K} K(k)^j x_k, j = 0, 1, 2.",
       quick=ENUM, full=dict(n_clients=8, n_participants=3,
                             weights=[.02, .05, .08, .1, .12, .15, .18, .3]))
def lemmaC2(*, rng, n_clients, n_participants, weights):
    r"""Exact enumeration over all C(K, K_hat) subsets; holds to rounding (tolerance 8 C(K,K_hat)
    eps sum|x|). Details log the per-subset weight sums, which differ from 1 for non-uniform K
    (spec 7.16: K_hat is then not a distribution)."""
    x = rng.standard_normal(n_clients)
    w = np.asarray(weights, dtype=float)
    subsets = list(itertools.combinations(range(n_clients), n_participants))
    got, sums = np.zeros(3), []
    for sub in subsets:
        kh = w[list(sub)] * n_clients / n_participants
        sums.append(float(kh.sum()))
        got += np.array([np.sum(kh ** (j + 1) * x[list(sub)]) for j in range(3)]) / len(subsets)
    ratio = n_clients / n_participants
    target = np.array([np.sum(w * x), ratio * np.sum(w ** 2 * x), ratio ** 2 * np.sum(w ** 3 * x)])
    tol = 8 * len(subsets) * EPS * float(np.abs(x).sum()) * ratio ** 2
    return Evidence(measured=got, theoretical=target, relation="==",
                    instance=dict(x=x, w=w, n_clients=n_clients,
                                  n_participants=n_participants),
                    tolerance=Tolerance.rounding(tol, "8 C(K,K_hat) eps sum|x| (K/K_hat)^2"),
                    details={"x": x, "weight_sums_per_subset": sums})
