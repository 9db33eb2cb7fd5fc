r"""Sampling with replacement in the PEP engine: exact moments of the counts.

A round of Li et al.'s Scheme I (:class:`flbounds.participation.WithReplacement`, or a sampler
of ``procedure = "multinomial"``) draws K client indices independently with probabilities
:math:`q_i`; client i is drawn :math:`c_i` times, :math:`c \sim \mathrm{Multinomial}(K; q)`.
As in :func:`flbounds.algorithms.fedavg`, a client drawn at least once runs its local update
once (its state changes: the indicator :math:`s_i = 1\{c_i > 0\}`) and enters each aggregate
with multiplicity :math:`c_i`: every rule of :mod:`flbounds.pep.aggregation` is applied to the
counts in place of the participation mask, with the count means :math:`E[c_i] = K q_i` in
place of the inclusion probabilities. So the mean over S is :math:`c_i / K`, the plain sum
:math:`c_i`, the unbiased rule :math:`c_i p_i / (K q_i)` (unbiased for :math:`\sum_i p_i m_i`),
fixed weights :math:`\text{scale}\; c_i p_i`, the renormalised one :math:`c_i p_i / \sum_j c_j
p_j`. A round is never empty (K >= 1).

**Direct form** (:func:`count_vectors`, any N up to :data:`MAX_COUNT_VECTORS` count vectors):
the law of :math:`c` is enumerated (every vector of N counts summing to K, its multinomial
probability), and every moment of the round is a sum over it
(:class:`.expect.ParticipationLaw` with ``counts``).

**Symmetric form** (:class:`.classcounts.CountClassLaw`): with :math:`q` constant within each
class the law is exchangeable within classes. Let :math:`M_c` be the draws that fall in class c:
:math:`M \sim \mathrm{Multinomial}(K; (n_c q_c)_c)`, and given :math:`M` the counts within
class c are :math:`\mathrm{Multinomial}(M_c; \text{uniform over its } n_c \text{ clients})`.
Every rule's weight is :math:`c_i\,\omega_c(M)` with :math:`\omega_c` a function of the class
totals (:math:`1/K`, 1, :math:`p_c/(K q_c)`, :math:`\text{scale}\; p_c`, :math:`p_c/\sum_d p_d
M_d`); a user's rule has no such form guaranteed and is refused. A moment of the round is then
:math:`E_M[\omega(M) \cdot E[f(c_i) g(c_j) \mid M]]` with :math:`f, g \in \{1, s, c, c^2\}`
(one client's variables multiply: :math:`s\,c = c`), exactly, from :math:`m = M_c`,
:math:`n = n_c`, :math:`p = 1/n`:

.. math:: E[s_i] = 1 - (1 - p)^m, \quad E[c_i] = m p, \quad E[c_i^2] = m(m-1)p^2 + m p,

two clients of one class (:math:`i \ne j`, falling factorials :math:`E[(c_i)_r (c_j)_t] =
(m)_{r+t} p^{r+t}`, and :math:`E[f(c_i); c_j = 0] = (1 - p)^m E[f(B)]`,
:math:`B \sim \mathrm{Bin}(m, 1/(n-1))`, the draws of class c that miss j):

.. math:: E[c_i c_j] = m(m-1)p^2, \quad E[s_i s_j] = 1 - 2(1-p)^m + (1 - 2p)^m, \quad
          E[f(c_i) s_j] = E[f(c_i)] - (1 - p)^m E[f(B)],

and clients of two classes are independent given :math:`M`. :math:`M` has
:math:`\binom{K + C - 1}{C - 1}` values for C classes: the SDP's coefficients cost that many
terms, its size does not depend on N.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gammaln

#: the direct form enumerates every count vector; above this many it refuses
MAX_COUNT_VECTORS = 200_000


@lru_cache(maxsize=64)
def compositions(parts, total):
    """Every vector of ``parts`` nonnegative integers summing to ``total``, (rows, parts)."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    blocks = []
    for k in range(total + 1):
        rest = compositions(parts - 1, total - k)
        blocks.append(np.column_stack([np.full(len(rest), k), rest]))
    return np.vstack(blocks)


def n_compositions(parts, total):
    return float(np.exp(gammaln(total + parts) - gammaln(parts) - gammaln(total + 1)))


def multinomial_probabilities(counts, q, k):
    """Multinomial (k; q) probabilities of the rows of ``counts``."""
    with np.errstate(divide="ignore"):
        logq = np.log(q)
    terms = np.where(counts > 0, counts * logq, 0.0)
    logp = gammaln(k + 1) - gammaln(counts + 1).sum(axis=1) + terms.sum(axis=1)
    return np.exp(logp)


def draws_of(participation):
    """``(q, K)`` of a :class:`~flbounds.participation.WithReplacement` process or of a
    sampler of ``procedure = "multinomial"``; None for anything else."""
    from flbounds.participation import WithReplacement

    if isinstance(participation, WithReplacement):
        return np.asarray(participation.p, dtype=float), int(participation.n_draws)
    if getattr(participation, "procedure", None) == "multinomial":
        return np.asarray(participation.probabilities(), dtype=float), int(participation.budget)
    return None


def count_vectors(participation, n_clients):
    """Every count vector of a process drawing with replacement over ``n_clients`` clients and
    its probability (the direct form, module docstring).

    Parameters
    ----------
    participation : WithReplacement or a sampler of ``procedure = "multinomial"``
    n_clients : int

    Returns
    -------
    (counts, probs, label)
        ``counts`` (R, N) int, ``probs`` (R,), a label for reports.

    Raises
    ------
    ValueError
        Naming ``participation`` (N mismatch, or more count vectors than
        :data:`MAX_COUNT_VECTORS`).
    """
    q, k = draws_of(participation)
    n = int(n_clients)
    if q.size != n:
        raise ValueError(f"participation has {q.size} clients, the setting has {n}")
    if n_compositions(n, k) > MAX_COUNT_VECTORS:
        raise ValueError(f"participation: {k} draws over {n} clients have more than "
                         f"{MAX_COUNT_VECTORS} count vectors; use classes= (the symmetric form)")
    counts = compositions(n, k)
    label = f"WithReplacement(n_clients={n}, n_draws={k})"
    return counts, multinomial_probabilities(counts, q, k), label


__all__ = ["MAX_COUNT_VECTORS", "compositions", "count_vectors", "draws_of",
           "multinomial_probabilities", "n_compositions"]
