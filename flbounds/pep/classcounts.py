r"""The law of the class totals of a round drawn with replacement, for the symmetric form.

The derivation (the law of the class totals :math:`M`, the closed-form moments of
:math:`c_i, c_i^2, 1\{c_i > 0\}` and their pairs given :math:`M`) is in :mod:`.counts`.
"""

from __future__ import annotations

import numpy as np

from .classlaw import ClassLaw, _constant
from .counts import (
    MAX_COUNT_VECTORS,
    compositions,
    draws_of,
    multinomial_probabilities,
    n_compositions,
)


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
    q, k = draws_of(participation)
    n = classes.n_clients
    if q.size != n:
        raise ValueError(f"participation has {q.size} clients, the setting has {n}")
    per = np.array(_constant(q, classes, "the draw probability"))
    sizes = np.asarray(classes.sizes, dtype=float)
    if n_compositions(len(sizes), k) > MAX_COUNT_VECTORS:
        raise ValueError(f"participation: {k} draws over {len(sizes)} classes have more than "
                         f"{MAX_COUNT_VECTORS} values of the class totals")
    totals = compositions(len(sizes), k)
    label = f"WithReplacement(n_clients={n}, n_draws={k})"
    probs = multinomial_probabilities(totals, per * sizes, k)
    return CountClassLaw(classes, totals, probs, k, label)


__all__ = ["CountClassLaw", "count_class_law"]
