r"""Exact laws of the class counts :math:`K_c = |S \cap C_c|` of one round's participating set,
process by process, for :func:`.classlaw.class_law`.

Each function returns ``(counts, probs)``: the support of :math:`K` as rows and their
probabilities. None of them enumerates sets, so their cost does not grow with N:

- independent participation with one probability per class: a product of binomials
  (points of mass below :data:`TAIL` dropped, the rest renormalised);
- m of N uniformly without replacement: the multivariate hypergeometric law;
- successive sampling with one weight per class:
  :func:`flbounds.participation.fixed_size.successive_class_counts`;
- round robin (:class:`~flbounds.participation.Cyclic`): the period's rounds, each with
  probability 1/period. Its law is exchangeable within the classes only when every count
  vector :math:`k` in the support is reached by all :math:`\prod_c \binom{n_c}{k_c}` sets
  with those counts, each equally often; :func:`cyclic_counts` checks exactly this.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

#: a binomial point whose mass is below this is dropped (at most (n + 1) 1e-20 of mass lost)
TAIL = 1e-20


def product_of_binomials(sizes, probs):
    """Independent classes, ``sizes[c]`` clients each participating with ``probs[c]``."""
    supports, masses = [], []
    for n, p in zip(sizes, probs, strict=True):
        k = np.arange(n + 1)
        pmf = binom.pmf(k, n, p)
        keep = pmf >= TAIL
        supports.append(k[keep])
        masses.append(pmf[keep])
    grid = np.stack([g.ravel() for g in np.meshgrid(*supports, indexing="ij")], axis=1)
    mass = masses[0]
    for m in masses[1:]:
        mass = np.multiply.outer(mass, m)
    mass = mass.ravel()
    return grid.astype(float), mass / mass.sum()


def hypergeometric(sizes, m):
    """m of the clients uniformly without replacement."""
    total = sum(sizes)
    rows = [k for k in itertools.product(*(range(min(n, m) + 1) for n in sizes[:-1]))
            if 0 <= m - sum(k) <= sizes[-1]]
    counts = np.array([(*k, m - sum(k)) for k in rows], dtype=float)
    log = lambda n, k: gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)  # noqa: E731
    logp = sum(log(n, counts[:, c]) for c, n in enumerate(sizes)) - log(total, m)
    return counts, np.exp(logp)


def cyclic_counts(process, labels, n_classes):
    """The class counts of a :class:`~flbounds.participation.Cyclic` process, or
    ``ValueError`` naming ``classes`` when its law tells apart two clients of one class."""
    n, per = process.n_clients, process.per_round
    starts = process._starts(process.period)
    onehot = np.zeros((2 * n + 1, n_classes))
    onehot[np.arange(1, 2 * n + 1), np.concatenate([labels, labels])] = 1.0
    cum = np.cumsum(onehot, axis=0)
    counts = (cum[starts + per] - cum[starts]).round().astype(np.int64)
    sets = {}                                  # distinct sets (by first client) per count vector
    for row, start in zip(map(tuple, counts), starts % n if per < n else 0 * starts,
                          strict=True):
        sets.setdefault(row, {}).setdefault(int(start), 0)
        sets[row][int(start)] += 1
    sizes = np.bincount(labels, minlength=n_classes)
    for row, seen in sets.items():
        needed = math.prod(math.comb(int(s), int(k)) for s, k in zip(sizes, row, strict=True))
        if len(seen) != needed or len(set(seen.values())) != 1:
            raise ValueError(f"classes: {process!r} reaches {len(seen)} of the {needed} sets "
                             f"with the class counts {row} (or not equally often): the "
                             "clients of a class are not interchangeable under it")
    keys = list(sets)
    return (np.array(keys, dtype=float),
            np.array([sum(sets[k].values()) for k in keys], dtype=float) / starts.size)


__all__ = ["TAIL", "cyclic_counts", "hypergeometric", "product_of_binomials"]
