r"""Exact expectations over one round's participation: points affine in random coefficients.

Within one round the clients' local runs start from the state the round began with, so they do
not depend on who else participates; only the recombination of their results does. Every
next state of the rounds described in :mod:`flbounds.pep.describe` is therefore

.. math:: X^+ = A_0 + \sum_m r_m A_m,

with :math:`A_0, A_m` fixed PEPit points (linear combinations of the Gram basis) and
:math:`r_m` random scalars that depend only on the participating set :math:`S`: the
indicators :math:`s_i = 1\{i \in S\}`, the aggregation coefficients :math:`w_i(S)` of a rule
(:math:`s_i/|S|`, :math:`s_i/(N \pi_i)`, :math:`s_i p_i`, ...), the empty-round indicator
:math:`1\{S = \emptyset\}`, and products of these (monomials). A quadratic performance
measure then has the exact expectation

.. math:: E\langle X^+, Y^+\rangle = \sum_{m, m'} E[r_m r_{m'}]\, \langle A_m, B_{m'}\rangle
          \qquad (r_0 = 1),

a linear function of the Gram matrix whose coefficients are moments of the participation
law. For indicators the moments are the inclusion probabilities :math:`\pi_i = P(i \in S)`
and :math:`\pi_{ij} = P(i, j \in S)`; for the mean over :math:`S` they are
:math:`E[s_i s_j / |S|^2; S \ne \emptyset]`; for the unbiased rule
:math:`\pi_{ij} / (N^2 \pi_i \pi_j)`. So one Gram matrix carries the whole expectation with
:math:`O(N^2)` terms instead of one branch per participation pattern (:math:`2^N`), which is
what :mod:`flbounds.pep.moments` does for FedAvg and FOCUS; here it holds for any round
written in the vocabulary. The moments are computed exactly from the law of :math:`S`
(:class:`ParticipationLaw`: the process's subset law, a fixed set, or full participation).

Example (FedAvg, the mean over S, global step 1): with :math:`w_i = s_i/|S|` (0 on an empty
round) and :math:`d_i = z_i - x` the local displacement,
:math:`x^+ - x^\star = (x - x^\star) + \sum_i w_i d_i`, so

.. math:: E\|x^+ - x^\star\|^2 = \|x - x^\star\|^2 + 2 \sum_i E[w_i] \langle x - x^\star,
          d_i\rangle + \sum_{i,j} E[w_i w_j] \langle d_i, d_j\rangle,

:math:`E[w_i] = E[s_i/|S|; S \ne \emptyset]` and :math:`E[w_i w_j] = W_{ij}` of
:mod:`flbounds.pep.moments`; since :math:`\sum_i w_i = 1 - 1\{S = \emptyset\}`, this is
the form :func:`flbounds.pep.fedavg_rate` writes, :math:`\sum_{ij} W_{ij}\langle z_i -
x^\star, z_j - x^\star\rangle + P(S = \emptyset)\|x - x^\star\|^2` (an empty round keeps
:math:`x`). For FOCUS, :math:`x^+ = x - \eta(y + \sum_i s_i v_i)` and :math:`z_k^+ = z_k +
s_k (Z_k - z_k)` need only :math:`\pi_i` and :math:`\pi_{ij}`. Products of coefficients
(a participant's state times an aggregate) are monomials of degree > 1; their moments are
computed the same way, from the law.

:class:`RandomPoint` is :math:`X^+` as a dict from monomials to PEPit points; it supports
``+``, ``-``, scaling by a float or a random scalar (:class:`Coefficient`), and ``*`` / ``**2``
with another point, which give a :class:`RandomExpression` (a dict from monomials to PEPit
expressions) whose :meth:`RandomExpression.expectation` is the exact expectation above.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .anchor import origin, zero


class Coefficient:
    """A random scalar of one round: ``scale`` times a product of variables (a monomial),
    each a key that :class:`ParticipationLaw` evaluates on every participating set."""

    __slots__ = ("monomial", "scale")

    def __init__(self, monomial, scale=1.0):
        self.monomial = tuple(sorted(monomial, key=repr))
        self.scale = float(scale)

    def __mul__(self, other):
        if isinstance(other, Coefficient):
            return Coefficient(self.monomial + other.monomial, self.scale * other.scale)
        if isinstance(other, int | float | np.floating):
            return Coefficient(self.monomial, self.scale * float(other))
        point = _as_random(other).times(self.monomial)
        return point if self.scale == 1.0 else self.scale * point

    __rmul__ = __mul__


def indicator(i):
    r""":math:`s_i = 1\{i \in S\}`."""
    return Coefficient((("in", int(i)),))


def empty():
    r""":math:`1\{S = \emptyset\}`."""
    return Coefficient((("empty",),))


def weight(rule, i):
    """Client ``i``'s aggregation coefficient under ``rule`` (a rule of
    :mod:`flbounds.pep.describe`: ``rule.coefficients(masks, inclusion)``)."""
    return Coefficient((("weight", rule, int(i)),))


def _as_random(value):
    if isinstance(value, RandomPoint):
        return value
    if isinstance(value, int | float) and value == 0:
        return RandomPoint({})  # the 0 that sum() starts from
    return RandomPoint({(): value})


def _add_into(terms, key, value):
    terms[key] = terms[key] + value if key in terms else value


class RandomPoint:
    r"""A point affine in the round's random coefficients: ``{monomial: PEPit point}``.

    Deterministic PEPit points mix in freely (``x + s * v``); ``a * b`` and ``a ** 2`` between
    points give a :class:`RandomExpression`.
    """

    __slots__ = ("terms",)

    def __init__(self, terms):
        self.terms = dict(terms)

    def times(self, monomial):
        out = {}
        for key, point in self.terms.items():
            _add_into(out, tuple(sorted(key + monomial, key=repr)), point)
        return RandomPoint(out)

    def __add__(self, other):
        out = dict(self.terms)
        for key, point in _as_random(other).terms.items():
            _add_into(out, key, point)
        return RandomPoint(out)

    __radd__ = __add__

    def __neg__(self):
        return RandomPoint({k: -p for k, p in self.terms.items()})

    def __sub__(self, other):
        return self + (-_as_random(other))

    def __rsub__(self, other):
        return _as_random(other) + (-self)

    def __mul__(self, other):
        if isinstance(other, int | float | np.floating):
            return RandomPoint({k: float(other) * p for k, p in self.terms.items()})
        if isinstance(other, Coefficient):
            return other * self
        other = _as_random(other)
        out = {}
        for ka, a in self.terms.items():
            for kb, b in other.terms.items():
                _add_into(out, tuple(sorted(ka + kb, key=repr)), a * b)
        return RandomExpression(out)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self * (1.0 / float(other))

    def __pow__(self, power):
        if power != 2:
            raise ValueError(f"power must be 2 (a squared norm), got {power}")
        return self * self


class RandomExpression:
    """A scalar quadratic in the points, affine in the random coefficients:
    ``{monomial: PEPit expression}``; :meth:`expectation` takes the exact mean."""

    __slots__ = ("terms",)

    def __init__(self, terms):
        self.terms = dict(terms)

    def __add__(self, other):
        out = dict(self.terms)
        if isinstance(other, RandomExpression):
            other = other.terms
        elif isinstance(other, int | float) and other == 0:
            other = {}
        else:
            other = {(): other}
        for key, expr in other.items():
            _add_into(out, key, expr)
        return RandomExpression(out)

    __radd__ = __add__

    def __neg__(self):
        return RandomExpression({k: -e for k, e in self.terms.items()})

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        return RandomExpression({k: float(other) * e for k, e in self.terms.items()})

    __rmul__ = __mul__

    def expectation(self, law):
        """The exact expectation under ``law`` (:class:`ParticipationLaw`), a PEPit
        expression; monomials of probability-zero are dropped."""
        total = zero()
        for key, expr in self.terms.items():
            moment = law.moment(key)
            if moment != 0.0:
                total = total + moment * expr
        return total


def expectation(value, law):
    """Expectation of a :class:`RandomExpression` or of a deterministic PEPit expression."""
    if isinstance(value, RandomExpression):
        return value.expectation(law)
    return value


class ParticipationLaw:
    r"""The exact law of one round's participating set and the moments of its coefficients.

    Parameters
    ----------
    masks : (K, N) bool array
        The possible sets (rows), each with positive probability.
    probs : (K,) array
        Their probabilities (sum 1).
    label : str
        How the law was given (reported in the result).
    counts : (K, N) int array, optional
        Draws with replacement (:mod:`.counts`): each row's counts, ``masks`` their support
        (``counts > 0``); the rules then weigh each client by its count, with the count means
        in place of the inclusion probabilities.
    """

    def __init__(self, masks, probs, label="", counts=None):
        probs = np.asarray(probs, dtype=float)
        keep = probs > 0
        if counts is not None:
            counts = np.asarray(counts, dtype=float)[keep]
            masks = counts > 0
        else:
            masks = np.asarray(masks, dtype=bool)[keep]
        self.masks, self.probs, self.label, self.counts = masks, probs[keep], label, counts
        self._cache = {}

    @cached_property
    def count_means(self) -> np.ndarray:
        r""":math:`E[c_i]` (the inclusion probabilities for a law of sets)."""
        return self.inclusion if self.counts is None else self.probs @ self.counts

    @property
    def n_clients(self) -> int:
        return self.masks.shape[1]

    @cached_property
    def inclusion(self) -> np.ndarray:
        r""":math:`\pi_i = P(i \in S)`."""
        return self.probs @ self.masks

    @cached_property
    def pair(self) -> np.ndarray:
        r""":math:`\pi_{ij} = P(i, j \in S)`."""
        m = self.masks.astype(float)
        return np.einsum("k,ki,kj->ij", self.probs, m, m)

    @cached_property
    def empty_probability(self) -> float:
        return float(self.probs[~self.masks.any(axis=1)].sum())

    def values(self, variable) -> np.ndarray:
        """The variable on every possible set, shape (K,)."""
        kind = variable[0]
        if kind == "in":
            return self.masks[:, variable[1]].astype(float)
        if kind == "empty":
            return (~self.masks.any(axis=1)).astype(float)
        if kind == "weight":
            rule, i = variable[1], variable[2]
            key = ("weights", rule)
            if key not in self._cache:
                drawn = self.masks if self.counts is None else self.counts
                self._cache[key] = np.asarray(rule.coefficients(drawn, self.count_means),
                                              dtype=float)
            return self._cache[key][:, i]
        raise ValueError(f"unknown random variable {variable!r}")

    def moment(self, monomial) -> float:
        """:math:`E[\\prod_v v]` over the monomial's variables (1 for the empty monomial)."""
        if not monomial:
            return 1.0
        if monomial not in self._cache:
            prod = np.ones(self.probs.size)
            for variable in monomial:
                prod = prod * self.values(variable)
            self._cache[monomial] = float(self.probs @ prod)
        return self._cache[monomial]


def law_of(participation, n_clients: int) -> ParticipationLaw:
    """The :class:`ParticipationLaw` of ``participation`` over ``n_clients`` clients.

    Parameters
    ----------
    participation : None, bool vector, a process of ``flbounds.participation``, or a sampler
        of ``flbounds.sampling`` with ``procedure`` ``"isp"`` (independent, its current
        ``probabilities()``), ``"subset"`` (uniform ``budget``-subsets) or
        ``"multinomial"`` (``budget`` draws with replacement, as
        ``flbounds.participation.WithReplacement``: counts, :mod:`.counts`)
        None: every client every round; a bool vector: that fixed set; a process: its exact
        subset law (``flbounds.participation.subset_distribution``).
    """
    from flbounds.participation import Bernoulli, UniformWithoutReplacement, subset_distribution

    n = int(n_clients)
    if isinstance(participation, ParticipationLaw):
        if participation.n_clients != n:
            raise ValueError(f"participation has {participation.n_clients} clients, "
                             f"the setting has {n}")
        return participation
    if participation is None:
        return ParticipationLaw(np.ones((1, n), dtype=bool), np.ones(1), "full")
    from .counts import count_vectors, draws_of

    if draws_of(participation) is not None:     # counts: sampling with replacement
        counts, probs, label = count_vectors(participation, n)
        return ParticipationLaw(None, probs, label, counts=counts)
    procedure = getattr(participation, "procedure", None)
    if procedure is not None:
        if procedure == "isp":
            participation = Bernoulli(np.asarray(participation.probabilities(), dtype=float))
        elif procedure == "subset":
            participation = UniformWithoutReplacement(participation.n_clients,
                                                      int(participation.budget))
        else:
            raise ValueError(f"participation: a sampler with procedure {procedure!r} has "
                             "no law here (only 'isp', 'subset' and 'multinomial')")
    if hasattr(participation, "n_clients"):
        if participation.n_clients != n:
            raise ValueError(f"participation has {participation.n_clients} clients, "
                             f"the setting has {n}")
        masks, probs = subset_distribution(participation)
        return ParticipationLaw(masks, probs, repr(participation))
    mask = np.asarray(participation)
    if mask.dtype != bool or mask.shape != (n,):
        raise ValueError(f"participation must be None, a process, a sampler or a bool vector "
                         f"of length n_clients={n}")
    return ParticipationLaw(mask[None, :], np.ones(1), f"fixed set {np.flatnonzero(mask)}")


def random_sum(coefficients, points):
    """:math:`\\sum_i c_i p_i` as a :class:`RandomPoint` (coefficients random or floats)."""
    total = RandomPoint({(): origin()})
    for c, p in zip(coefficients, points, strict=True):
        total = total + (c * _as_random(p) if isinstance(c, Coefficient) else float(c) * p)
    return total


__all__ = ["Coefficient", "ParticipationLaw", "RandomExpression", "RandomPoint", "empty",
           "expectation", "indicator", "law_of", "random_sum", "weight"]
