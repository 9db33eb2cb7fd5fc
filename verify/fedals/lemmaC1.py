r"""Lemma C.1 of FedALS (App. C, eqs. (62)-(65)): identities of the random weights of
Case I participation.

Statement: let :math:`\{x_i\}_{i=1}^K` be any fixed deterministic sequence and
:math:`\mathcal P` the sampling of :math:`\hat K` clients with replacement based on
:math:`\mathcal K`, followed by equal weights :math:`\hat{\mathcal K}(k) = 1/\hat K` on the
sampled clients. Then :math:`E_{\mathcal P}E_{k\sim\hat{\mathcal K}}\hat{\mathcal K}(k)^j
x_k = \hat K^{-j}E_{k\sim\mathcal K}x_k` for j = 0, 1, 2.

Checked by exact enumeration of the :math:`K^{\hat K}` ordered draws; the attack surface is
in :mod:`verify.fedals.attacks`. How Remark 4.2 uses the lemma (with the weight of a client in
the averaged model, which merges duplicates) is a part of Remark 4.2:
``fedals.lemmaC1.merged_duplicates`` lives in :mod:`verify.fedals.remark4_2.case1`.
Instances carry ``x``, ``w`` and ``n_participants``.
"""

from __future__ import annotations

import itertools

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.tolerances import EPS

from ._predicates import is_distribution, positive_integers

ENUM = dict(n_clients=4, n_participants=2, weights=[0.1, 0.2, 0.3, 0.4])


@hypothesis("sequence", "{x_i}_{i=1}^K is a fixed deterministic (finite) sequence")
def fixed_sequence(*, x):
    return bool(np.all(np.isfinite(np.asarray(x, dtype=float))))


@hypothesis("sampling", "P: K_hat >= 1 clients sampled with replacement based on K (a "
                        "distribution), equal probability K_hat(k) = 1/K_hat on the sampled "
                        "clients")
def with_replacement(*, w, n_participants):
    return is_distribution(w) and positive_integers(n_participants)


LEMMA_C1 = result(
    "fedals.lemmaC1", ref="Lemma C.1",
    title="identities of the random participation weights, eqs. (62)-(65)",
    parts={"identities": "E_P E_{k~K_hat} K_hat(k)^j x_k = K_hat^{-j} E_{k~K} x_k, j = 0, 1, 2"},
    hypotheses=(fixed_sequence, with_replacement))


def _case1_moments(x, weights, n_participants, merged: bool):
    r"""E_P E_{k~K_hat}[K_hat(k)^j x_k], j = 0, 1, 2, over ordered draws with replacement.

    Per instance: each of the K_hat draws has weight 1/K_hat. Merged: client k drawn m_k times
    has the aggregation weight m_k/K_hat (what averaging the drawn models actually gives).
    """
    K, n = len(x), n_participants
    out = np.zeros(3)
    for draw in itertools.product(range(K), repeat=n):
        prob = np.prod([weights[k] for k in draw])
        if merged:
            m = np.bincount(draw, minlength=K) / n
            vals = [np.sum(m ** (j + 1) * x) for j in range(3)]
        else:
            vals = [sum(x[k] / n ** (j + 1) for k in draw) for j in range(3)]
        out += prob * np.array(vals)
    return out


def _case1_targets(x, weights, n_participants):
    base = float(np.dot(weights, x))
    return np.array([base, base / n_participants, base / n_participants ** 2])


@claim("fedals.lemmaC1.per_instance", ref="Lemma C.1, eqs. (62)-(65)", kind="statement",
       expected="holds", result=LEMMA_C1, parts=("identities",),
       statement="Sampling K_hat clients i.i.d. from K, each draw weighted 1/K_hat: "
                 "E_P E_{k~K_hat} K_hat(k)^j x_k = K_hat^-j E_{k~K} x_k for j = 0, 1, 2.",
       quick=ENUM, full=dict(n_clients=5, n_participants=3, weights=[.05, .1, .2, .25, .4]))
def lemmaC1_per_instance(*, rng, n_clients, n_participants, weights):
    r"""Exact enumeration of all K^K_hat ordered draws, each drawn instance kept separate (the
    proof's reading, by linearity). Identity up to rounding: tolerance 8 K^K_hat eps times
    the scale of |x| (one rounding per product and per accumulated term)."""
    x = rng.standard_normal(n_clients)
    w = np.asarray(weights, dtype=float)
    got = _case1_moments(x, w, n_participants, merged=False)
    tol = 8 * n_clients ** n_participants * EPS * float(np.abs(x).sum())
    return Evidence(measured=got, theoretical=_case1_targets(x, w, n_participants),
                    relation="==", instance=dict(x=x, w=w, n_participants=n_participants),
                    tolerance=Tolerance.rounding(tol, "8 K^K_hat eps sum|x|"),
                    details={"x": x})
