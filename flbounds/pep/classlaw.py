r"""Symmetry classes of clients and the law of one round's participating set by class.

A :class:`Classes` partitions the N clients into classes of interchangeable clients (same
inclusion probability, same aggregation weight, same function class). When the law of the
participating set :math:`S` is invariant under permutations of the clients within each class,
it is determined by the law of the class counts :math:`K_c = |S \cap C_c|`: given
:math:`K`, :math:`S` is uniform over the sets with those counts. So, for clients
:math:`i \ne j`,

.. math:: P(i \in S \mid K) = \frac{K_c}{n_c}, \qquad
          P(i, j \in S \mid K) = \frac{K_c (K_c - 1)}{n_c (n_c - 1)} \ (i, j \in C_c), \qquad
          \frac{K_c K_d}{n_c n_d} \ (i \in C_c, j \in C_d),

and every aggregation rule of :mod:`flbounds.pep.aggregation` gives a participant
:math:`i \in C_c` a weight :math:`\omega_c(K)` that depends on :math:`K` only (:math:`1/|S|`,
:math:`p_c / \pi_c`, :math:`p_c \cdot` scale, :math:`p_c / \sum_d p_d K_d`, 1). A moment of a
product of per-client variables is then a sum over the support of :math:`K` (:class:`ClassLaw`),
whose size does not grow with N faster than the product of the class sizes' binomial supports:
Bernoulli classes (independent binomials, truncated where the mass is below 1e-20 per point),
uniform fixed-size sampling (a multivariate hypergeometric law), successive weighted sampling
with one weight per class (a recursion over the draws), a round robin whose law is exchangeable
within the classes, clients excluded class by class, full participation or a fixed union of
classes (:mod:`.countlaws`); none enumerates sets, so any N. Another process of
:mod:`flbounds.participation` is accepted for N <= 16 through its exact subset law, after
checking that it is exchangeable within classes. A one-round law is all a round's moments
need: a Markov on/off process enters through its stationary (Bernoulli) marginal.
Sampling with replacement (counts, not sets) has its own law, :mod:`.classcounts`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .countlaws import cyclic_counts, hypergeometric, product_of_binomials

#: the generic fallback (a process's exact subset law) enumerates 2^N sets
MAX_SUBSET_CLIENTS = 16


@dataclass(frozen=True)
class Classes:
    """A partition of the clients ``0 .. N-1`` into symmetry classes.

    Attributes
    ----------
    groups : tuple of tuple of int
        The clients of each class, each non-empty, together every client exactly once.
    """

    groups: tuple

    @property
    def sizes(self) -> tuple:
        return tuple(len(g) for g in self.groups)

    @property
    def n_clients(self) -> int:
        return sum(self.sizes)

    def labels(self) -> np.ndarray:
        """The class of every client, shape (N,)."""
        out = np.empty(self.n_clients, dtype=int)
        for c, group in enumerate(self.groups):
            out[list(group)] = c
        return out


def classes_of(classes, n_clients: int) -> Classes:
    """``classes`` as a :class:`Classes` over ``n_clients`` clients.

    Parameters
    ----------
    classes : Classes, sequence of sequences of int, or sequence of int
        A partition of ``range(n_clients)`` (one sequence of client indices per class), or
        one class label per client.
    n_clients : int

    Returns
    -------
    Classes

    Raises
    ------
    ValueError
        Naming ``classes``, when it is not a partition of ``range(n_clients)``.
    """
    n = int(n_clients)
    if isinstance(classes, Classes):
        groups = classes.groups
    else:
        try:
            items = list(classes)
        except TypeError:
            raise ValueError("classes must be a partition of the clients (a sequence of "
                             "sequences of client indices) or one label per client") from None
        if items and all(isinstance(v, int | np.integer) for v in items):
            if len(items) != n:
                raise ValueError(f"classes: {len(items)} labels for n_clients={n} clients")
            labels = np.asarray(items)
            groups = tuple(tuple(int(i) for i in np.flatnonzero(labels == v))
                           for v in dict.fromkeys(items))
        else:
            try:
                groups = tuple(tuple(int(i) for i in g) for g in items)
            except (TypeError, ValueError):
                raise ValueError("classes must be a partition of the clients (a sequence of "
                                 "sequences of client indices) or one label per client") from None
    if not groups or any(len(g) == 0 for g in groups):
        raise ValueError("classes: every class must hold at least one client")
    members = [i for g in groups for i in g]
    if len(members) != n or sorted(members) != list(range(n)):
        raise ValueError(f"classes must be a partition of the n_clients={n} clients "
                         f"0..{n - 1} (each exactly once), got {len(members)} entries")
    return Classes(tuple(groups))


class ClassLaw:
    r"""The law of the class counts :math:`K` of one round's participating set.

    Parameters
    ----------
    classes : Classes
    counts : (M, C) int array
        The support of :math:`K`.
    probs : (M,) array
        Its probabilities.
    label : str
    """

    def __init__(self, classes: Classes, counts, probs, label=""):
        counts = np.asarray(counts, dtype=float).reshape(-1, len(classes.groups))
        probs = np.asarray(probs, dtype=float)
        keep = probs > 0
        self.classes, self.counts, self.probs, self.label = classes, counts[keep], \
            probs[keep], label
        self.sizes = np.asarray(classes.sizes, dtype=float)
        self._cache = {}

    @property
    def inclusion(self) -> np.ndarray:
        r""":math:`\pi_c = P(i \in S)` for a client of class c."""
        return self.probs @ self.counts / self.sizes

    @property
    def empty_probability(self) -> float:
        return float(self.probs[self.counts.sum(axis=1) == 0].sum())

    def check_rule(self, rule):
        """``ValueError`` naming ``classes`` when ``rule``'s weights differ within a class."""
        weights = getattr(rule, "weights", None)
        if weights is None:
            return
        w = np.asarray(weights, dtype=float)
        if w.size != self.classes.n_clients:
            raise ValueError(f"{rule!r}: {w.size} weights for {self.classes.n_clients} clients")
        for group in self.classes.groups:
            if np.ptp(w[list(group)]) > 1e-12 * max(1.0, np.abs(w).max()):
                raise ValueError(f"classes: the weights of {type(rule).__name__} differ "
                                 f"within the class {list(group)[:5]}...")

    def omega(self, rule, c) -> np.ndarray:
        r""":math:`\omega_c(K)` on the support: the weight of a participant of class c."""
        from .aggregation import FixedWeights, Normalized, Sum, Unbiased, Uniform

        key = ("omega", rule, c)
        if key in self._cache:
            return self._cache[key]
        first = self.classes.groups[c][0]
        total = self.counts.sum(axis=1)
        if isinstance(rule, Sum):
            out = np.ones(total.size)
        elif isinstance(rule, Uniform):
            out = np.divide(1.0, total, out=np.zeros(total.size), where=total > 0)
        elif isinstance(rule, Unbiased):
            p = 1.0 / self.classes.n_clients if rule.weights is None else rule.weights[first]
            pi = self.inclusion[c]
            out = np.full(total.size, p / pi if pi > 0 else 0.0)
        elif isinstance(rule, FixedWeights):
            out = np.full(total.size, rule.scale * rule.weights[first])
        elif isinstance(rule, Normalized):
            per = np.array([rule.weights[g[0]] for g in self.classes.groups])
            mass = self.counts @ per
            out = np.divide(per[c], mass, out=np.zeros(total.size), where=mass > 0)
        else:   # a user's rule: evaluated on one set per support point
            out = self._generic_omega(rule, c)
        self._cache[key] = out
        return out

    def _generic_omega(self, rule, c):
        n = self.classes.n_clients
        masks = np.zeros((self.counts.shape[0], n), dtype=bool)
        for d, group in enumerate(self.classes.groups):
            for row, k in enumerate(self.counts[:, d].astype(int)):
                masks[row, list(group[:k])] = True
        inclusion = self.inclusion[self.classes.labels()]
        weights = np.asarray(rule.coefficients(masks, inclusion), dtype=float)
        return weights[:, self.classes.groups[c][0]]

    def moment(self, a, b=None, same=False) -> float:
        r""":math:`E[\prod_{v \in a} v(i) \prod_{v \in b} v(j)]` for a client :math:`i` of class
        ``a[0]`` and :math:`j` of class ``b[0]`` (``same``: :math:`j = i`, else :math:`j \ne
        i`); ``a``, ``b`` are ``(class or None, variables)``, a variable ``("in",)``,
        ``("weight", rule)`` or ``("empty",)``."""
        key = (a, b, same)
        if key in self._cache:
            return self._cache[key]
        value = self.probs.copy()
        used = []
        for slot in (a, b):
            if slot is None:
                continue
            cls, variables = slot
            touches = False
            for var in variables:
                if var[0] == "empty":
                    value = value * (self.counts.sum(axis=1) == 0)
                elif var[0] == "in":
                    touches = True
                elif var[0] == "weight":
                    touches = True
                    value = value * self.omega(var[1], cls)
                else:
                    raise ValueError(f"unknown random variable {var!r}")
            if touches:
                if cls is None:
                    raise ValueError(f"variable of no client in {variables!r}")
                used.append(cls)
        if same:
            used = used[:1]
        value = value * self._joint_inclusion(used)
        self._cache[key] = out = float(value.sum())
        return out

    def _joint_inclusion(self, used):
        if not used:
            return 1.0
        k, n = self.counts, self.sizes
        if len(used) == 1:
            return k[:, used[0]] / n[used[0]]
        c, d = used
        if c != d:
            return k[:, c] * k[:, d] / (n[c] * n[d])
        if n[c] < 2:
            return 0.0
        return k[:, c] * (k[:, c] - 1) / (n[c] * (n[c] - 1))


def _constant(values, classes, name):
    values = np.asarray(values, dtype=float)
    per = []
    for group in classes.groups:
        v = values[list(group)]
        if np.ptp(v) > 1e-12:
            raise ValueError(f"classes: {name} differs within the class {list(group)[:5]}...: "
                             "clients of one class must be interchangeable")
        per.append(float(v[0]))
    return per


def class_law(participation, classes: Classes) -> ClassLaw:
    """The :class:`ClassLaw` of ``participation`` over ``classes``.

    Parameters
    ----------
    participation : None, bool vector, process or sampler
        None (everyone), a fixed set that is a union of classes, ``Bernoulli`` or
        ``MarkovOnOff`` with one probability per class, ``UniformWithoutReplacement``,
        ``WeightedWithoutReplacement`` with one weight per class, ``Cyclic`` where its law
        is exchangeable within classes, ``Excluding`` of any of these (each class wholly
        excluded or wholly kept), an ``"isp"`` / ``"subset"`` sampler of
        ``flbounds.sampling``, all at any N; or another process with N <= 16 whose subset
        law is exchangeable within classes (sampling with replacement:
        :func:`.classcounts.count_class_law`).
    classes : Classes

    Returns
    -------
    ClassLaw
        The law of the class counts, labelled by the process.

    Raises
    ------
    ValueError
        Naming ``participation`` (unsupported or N mismatch) or ``classes`` (a law that
        tells apart two clients of one class).
    """
    from flbounds.participation import (
        Bernoulli,
        Cyclic,
        Excluding,
        MarkovOnOff,
        UniformWithoutReplacement,
        WeightedWithoutReplacement,
        subset_distribution,
    )
    from flbounds.participation.fixed_size import successive_class_counts

    from .counts import draws_of

    sizes, n = classes.sizes, classes.n_clients
    if participation is None:
        return ClassLaw(classes, [sizes], [1.0], "full")
    if draws_of(participation) is not None:
        raise ValueError("participation: sampling with replacement draws counts, not sets; "
                         "its class law is flbounds.pep.classcounts.count_class_law")
    procedure = getattr(participation, "procedure", None)
    if procedure == "isp":
        participation = Bernoulli(np.asarray(participation.probabilities(), dtype=float))
    elif procedure == "subset":
        participation = UniformWithoutReplacement(participation.n_clients,
                                                  int(participation.budget))
    elif procedure is not None:
        raise ValueError(f"participation: a sampler with procedure {procedure!r} has no "
                         "subset law here (only 'isp' and 'subset')")
    if not hasattr(participation, "n_clients"):
        mask = np.asarray(participation)
        if mask.dtype != bool or mask.shape != (n,):
            raise ValueError(f"participation must be None, a process, a sampler or a bool "
                             f"vector of length n_clients={n}")
        inside = _constant(mask, classes, "the fixed participating set")
        counts = [s if flag else 0 for s, flag in zip(sizes, inside, strict=True)]
        return ClassLaw(classes, [counts], [1.0], f"fixed set of {sum(counts)} clients")
    if participation.n_clients != n:
        raise ValueError(f"participation has {participation.n_clients} clients, "
                         f"the setting has {n}")
    label = repr(participation) if n <= 64 else f"{type(participation).__name__}(N={n})"
    if isinstance(participation, MarkovOnOff):   # one round: Bernoulli(rates) exactly
        participation = participation._marginal
    if isinstance(participation, Bernoulli):
        per = _constant(participation.p, classes, "the participation probability")
        return ClassLaw(classes, *product_of_binomials(sizes, per), label)
    if isinstance(participation, UniformWithoutReplacement):
        return ClassLaw(classes, *hypergeometric(sizes, participation.m), label)
    if isinstance(participation, WeightedWithoutReplacement):
        per = _constant(participation.weights, classes, "the sampling weight")
        return ClassLaw(classes, *successive_class_counts(sizes, per, participation.m), label)
    if isinstance(participation, Excluding):
        return _excluding_law(participation, classes, label)
    if isinstance(participation, Cyclic):
        return ClassLaw(classes, *cyclic_counts(participation, classes.labels(),
                                                len(sizes)), label)
    if n > MAX_SUBSET_CLIENTS:
        raise ValueError(f"participation: {type(participation).__name__} with N = {n} has no "
                         "class law here (Bernoulli, MarkovOnOff, UniformWithoutReplacement, "
                         "WeightedWithoutReplacement, Cyclic, Excluding of these, or N <= 16)")
    masks, probs = subset_distribution(participation)
    labels = classes.labels()
    counts = np.stack([masks[:, labels == c].sum(axis=1) for c in range(len(sizes))], axis=1)
    table = {}
    for row, p in zip(map(tuple, counts), probs, strict=True):
        table.setdefault(row, []).append(p)
    for row, ps in table.items():
        if np.ptp(ps) > 1e-12 * max(ps):
            raise ValueError(f"classes: {label} gives two sets with the class counts {row} "
                             "different probabilities: the clients of a class are not "
                             "interchangeable under it")
    keys = list(table)
    return ClassLaw(classes, keys, [sum(table[k]) for k in keys], label)


def _excluding_law(process, classes, label):
    """Clients that never participate: each class wholly excluded (count 0) or wholly kept,
    the kept classes following the base process's class law over the kept clients."""
    never = set(process.never.tolist())
    position = {int(client): j for j, client in enumerate(process.keep)}
    kept = []
    for c, group in enumerate(classes.groups):
        out = sum(i in never for i in group)
        if 0 < out < len(group):
            raise ValueError(f"classes: the class {list(group)[:5]}... mixes clients that "
                             f"never participate under {label} with clients that may: they "
                             "are not interchangeable")
        if not out:
            kept.append(c)
    counts = np.zeros((1, len(classes.groups)))
    if not kept:
        return ClassLaw(classes, counts, [1.0], label)
    base = class_law(process.base,
                     Classes(tuple(tuple(position[i] for i in classes.groups[c]) for c in kept)))
    counts = np.zeros((base.counts.shape[0], len(classes.groups)))
    counts[:, kept] = base.counts
    return ClassLaw(classes, counts, base.probs, label)


__all__ = ["Classes", "ClassLaw", "class_law", "classes_of"]
