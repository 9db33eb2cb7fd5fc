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

**Direct form** (:class:`CountLaw`, any N up to :data:`MAX_COUNT_VECTORS` count vectors): the
law of :math:`c` is enumerated (every vector of N counts summing to K, its multinomial
probability), and every moment of the round is a sum over it, as :class:`.expect.
ParticipationLaw` does over sets.

**Symmetric form** (:class:`CountClassLaw`): with :math:`q` constant within each class the law
is exchangeable within classes. Let :math:`M_c` be the draws that fall in class c:
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

from functools import cached_property, lru_cache

import numpy as np
from scipy.special import gammaln

from .classlaw import ClassLaw
from .expect import ParticipationLaw

#: the direct form enumerates every count vector; above this many it refuses
MAX_COUNT_VECTORS = 200_000


@lru_cache(maxsize=64)
def _compositions(parts, total):
    """Every vector of ``parts`` nonnegative integers summing to ``total``, (rows, parts)."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    blocks = []
    for k in range(total + 1):
        rest = _compositions(parts - 1, total - k)
        blocks.append(np.column_stack([np.full(len(rest), k), rest]))
    return np.vstack(blocks)


def _n_compositions(parts, total):
    return float(np.exp(gammaln(total + parts) - gammaln(parts) - gammaln(total + 1)))


def _multinomial(counts, q, k):
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


class CountLaw(ParticipationLaw):
    """The exact law of one round's counts (direct form, module docstring).

    Parameters
    ----------
    counts : (R, N) int array
        The possible count vectors.
    probs : (R,) array
        Their probabilities.
    label : str
    """

    def __init__(self, counts, probs, label=""):
        counts = np.asarray(counts, dtype=np.int64)
        probs = np.asarray(probs, dtype=float)
        super().__init__(counts > 0, probs, label)
        self.counts = counts[probs > 0].astype(float)

    @cached_property
    def count_means(self) -> np.ndarray:
        r""":math:`E[c_i]`."""
        return self.probs @ self.counts

    def values(self, variable) -> np.ndarray:
        if variable[0] == "weight":
            rule, i = variable[1], variable[2]
            key = ("weights", rule)
            if key not in self._cache:
                self._cache[key] = np.asarray(rule.coefficients(self.counts, self.count_means),
                                              dtype=float)
            return self._cache[key][:, i]
        return super().values(variable)


def count_law(participation, n_clients) -> CountLaw:
    """The :class:`CountLaw` of a process drawing with replacement over ``n_clients``.

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
    if _n_compositions(n, k) > MAX_COUNT_VECTORS:
        raise ValueError(f"participation: {k} draws over {n} clients have more than "
                         f"{MAX_COUNT_VECTORS} count vectors; use classes= (the symmetric form)")
    counts = _compositions(n, k)
    return CountLaw(counts, _multinomial(counts, q, k),
                    f"WithReplacement(n_clients={n}, n_draws={k})")


def _falling(m, k):
    out = np.ones_like(m)
    for r in range(k):
        out = out * (m - r)
    return out


def _single(m, p, kind):
    """E[f(B)], B ~ Bin(m, p), f = s (kind 0: the indicator), c (1) or c^2 (2)."""
    if kind == 0:
        return 1.0 - (1.0 - p) ** m
    if kind == 1:
        return m * p
    return _falling(m, 2) * p**2 + m * p


def _pair(m, n, kind_i, kind_j):
    """E[f(c_i) g(c_j) | M_c = m] for two clients of one class of n."""
    if n < 2:
        return np.zeros_like(m)
    p = 1.0 / n
    if kind_i == 0 and kind_j == 0:
        return 1.0 - 2.0 * (1.0 - p) ** m + (1.0 - 2.0 * p) ** m
    if kind_i == 0:
        kind_i, kind_j = kind_j, kind_i
    if kind_j == 0:       # E[f(c_i)] - E[f(c_i); c_j = 0]
        return _single(m, p, kind_i) - (1.0 - p) ** m * _single(m, 1.0 / (n - 1), kind_i)
    # c = (c)_1, c^2 = (c)_2 + (c)_1: sums of E[(c_i)_r (c_j)_t] = (m)_{r+t} p^{r+t}
    expand = {1: ((1, 1.0),), 2: ((2, 1.0), (1, 1.0))}
    return sum(a * b * _falling(m, r + t) * p ** (r + t)
               for r, a in expand[kind_i] for t, b in expand[kind_j])


class CountClassLaw(ClassLaw):
    r"""The law of the class totals :math:`M` of one round drawn with replacement, and the
    round's moments (symmetric form, module docstring).

    Parameters
    ----------
    classes : Classes
    totals : (R, C) int array
        The support of :math:`M`.
    probs : (R,) array
    n_draws : int
        K.
    label : str
    """

    def __init__(self, classes, totals, probs, n_draws, label=""):
        super().__init__(classes, totals, probs, label)
        self.n_draws = int(n_draws)

    @property
    def count_means(self) -> np.ndarray:
        r""":math:`E[c_i]` for a client of each class."""
        return self.probs @ self.counts / self.sizes

    @property
    def inclusion(self) -> np.ndarray:
        r""":math:`P(c_i > 0)` for a client of each class."""
        return self.probs @ (1.0 - (1.0 - 1.0 / self.sizes) ** self.counts)

    def omega(self, rule, c) -> np.ndarray:
        r""":math:`\omega_c(M)`: a weight is :math:`c_i \omega_c(M)`."""
        from .aggregation import FixedWeights, Normalized, Sum, Unbiased, Uniform

        if isinstance(rule, Unbiased):
            first = self.classes.groups[c][0]
            p = 1.0 / self.classes.n_clients if rule.weights is None else rule.weights[first]
            mean = self.count_means[c]
            return np.full(self.probs.size, p / mean if mean > 0 else 0.0)
        if isinstance(rule, Sum | Uniform | FixedWeights | Normalized):
            return super().omega(rule, c)
        raise ValueError(f"participation: with counts (sampling with replacement) the "
                         f"symmetric form takes the rules of flbounds.pep.aggregation, not "
                         f"{type(rule).__name__}")

    def moment(self, a, b=None, same=False) -> float:
        key = ("counts", a, b, same)
        if key in self._cache:
            return self._cache[key]
        value = self.probs.copy()
        sides = []
        for slot in (a, b):
            if slot is None:
                continue
            cls, variables = slot
            power, indicator = 0, False
            for var in variables:
                if var[0] == "empty":
                    value = value * (self.counts.sum(axis=1) == 0)
                elif var[0] == "in":
                    indicator = True
                elif var[0] == "weight":
                    power += 1
                    value = value * self.omega(var[1], cls)
                else:
                    raise ValueError(f"unknown random variable {var!r}")
            if power or indicator:
                if cls is None:
                    raise ValueError(f"variable of no client in {variables!r}")
                sides.append((cls, power))
        if same and len(sides) == 2:
            sides = [(sides[0][0], sides[0][1] + sides[1][1])]
        if any(k > 2 for _, k in sides):
            raise ValueError("a product of more than two counts of one client")
        m = self.counts
        if len(sides) == 1:
            (c, k), = sides
            value = value * _single(m[:, c], 1.0 / self.sizes[c], k)
        elif len(sides) == 2:
            (c, k), (d, t) = sides
            if c == d:
                value = value * _pair(m[:, c], self.sizes[c], k, t)
            else:
                value = value * _single(m[:, c], 1.0 / self.sizes[c], k) \
                    * _single(m[:, d], 1.0 / self.sizes[d], t)
        self._cache[key] = out = float(value.sum())
        return out


def count_class_law(participation, classes) -> CountClassLaw:
    """The :class:`CountClassLaw` of a process drawing with replacement over ``classes``.

    Raises
    ------
    ValueError
        Naming ``participation`` (N mismatch) or ``classes`` (draw probabilities that differ
        within a class).
    """
    from .classlaw import _constant

    q, k = draws_of(participation)
    n = classes.n_clients
    if q.size != n:
        raise ValueError(f"participation has {q.size} clients, the setting has {n}")
    per = np.array(_constant(q, classes, "the draw probability"))
    sizes = np.asarray(classes.sizes, dtype=float)
    if _n_compositions(len(sizes), k) > MAX_COUNT_VECTORS:
        raise ValueError(f"participation: {k} draws over {len(sizes)} classes have more than "
                         f"{MAX_COUNT_VECTORS} values of the class totals")
    totals = _compositions(len(sizes), k)
    label = f"WithReplacement(n_clients={n}, n_draws={k})"
    return CountClassLaw(classes, totals, _multinomial(totals, per * sizes, k), k, label)


__all__ = ["MAX_COUNT_VECTORS", "CountClassLaw", "CountLaw", "count_class_law", "count_law",
           "draws_of"]
