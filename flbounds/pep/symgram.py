r"""The Gram coordinates and expected inner products of the reduced (symmetric) round PEP.

The derivation is in :mod:`flbounds.pep.symmetric`. Here: :class:`Space` (the Gram
coordinates: shared ones, a mean and a deviation per client vector of a class, and the
orthogonality that makes the Gram matrix block diagonal), :func:`class_constants` (each
class's :math:`(\mu_c, L_c)`), :class:`Representative` (a class's
PEPit function whose gradients are a mean plus a deviation), :class:`SymPoint` (a random point
of the reduced round: shared terms, the generic client of a class, sums over a class) whose
products are exact expectations (:class:`Context`), and :func:`summed` (a symmetric measure
summed over the N clients from one entry per class).
"""

from __future__ import annotations

import numpy as np

from .anchor import zero
from .describe import Setting

#: the second difference of a measure over a class's multiplicity must vanish to this,
#: relative to its largest coefficient (the coefficients are sums of a few products of floats)
SEPARABLE_TOL = 1e-9


class Space:
    """The Gram coordinates: shared ones and, per class, deviation ones."""

    def __init__(self, sizes):
        self.sizes = sizes
        self.own = set()          # every coordinate made here
        self.dev_class = {}       # deviation coordinate -> its class

    def leaf(self):
        from PEPit import Point

        p = Point()
        self.own.add(id(p))
        return p

    def client(self, c, mean=None):
        """A client vector of class c: a mean coordinate (or ``mean``) plus a deviation."""
        mean = self.leaf() if mean is None else mean
        if self.sizes[c] == 1:
            return mean
        e = self.leaf()
        self.dev_class[id(e)] = c
        return mean + e

    def split(self, point):
        """(mean part, deviation part) of a point."""
        from PEPit import Point

        mean, dev = {}, {}
        for leaf, coef in point.decomposition_dict.items():
            (dev if id(leaf) in self.dev_class else mean)[leaf] = coef
        return Point(is_leaf=False, decomposition_dict=mean), \
            Point(is_leaf=False, decomposition_dict=dev)

    def dot(self, a, b, kind, n=1):
        """:math:`\\langle a, b\\rangle` for one client (``"same"``), two clients of one class
        of size n (``"other"``) or of two classes (``"cross"``)."""
        (ma, ea), (mb, eb) = self.split(a), self.split(b)
        value = ma * mb
        if kind == "same" and ea.decomposition_dict and eb.decomposition_dict:
            value = value + ea * eb
        elif kind == "other" and ea.decomposition_dict and eb.decomposition_dict:
            value = value - (1.0 / (n - 1)) * (ea * eb)
        return value

    def orthogonality(self, problem):
        """Deviations of class c orthogonal to every other coordinate: the Gram matrix block
        diagonal (module docstring). Returns the number of constraints."""
        from PEPit import Point

        leaves = list(Point.list_of_leaf_points)
        count = 0
        for e in leaves:
            c = self.dev_class.get(id(e))
            if c is None:
                continue
            for v in leaves:
                if self.dev_class.get(id(v)) != c:
                    problem.add_constraint(e * v == 0)
                    count += 1
        return count


class Representative:
    """Class c's function: ``gradient`` returns a mean plus a deviation coordinate."""

    def __init__(self, f, space, c):
        self.f, self.space, self.c = f, space, c

    def oracle(self, x):
        from PEPit import Expression

        found = self.f._is_already_evaluated_on_point(x)
        if found:
            return found
        g, fx = self.space.client(self.c), Expression()
        self.f.add_point((x, g, fx))
        return g, fx

    def gradient(self, x):
        return self.oracle(x)[0]

    subgradient = gradient

    def value(self, x):
        return self.oracle(x)[1]

    def proximal_step(self, x, gamma):
        r""":math:`z = \operatorname{prox}_{\gamma f}(x) = x - \gamma \nabla f(z)` for the
        generic client of the class: its gradient at z is a class client vector (a mean
        plus a deviation), so z is one too when x is shared or of the class."""
        from PEPit import Expression

        g, fx = self.space.client(self.c), Expression()
        z = x - gamma * g
        self.f.add_point((z, g, fx))
        return z

    def add_point(self, triplet):
        raise ValueError("round: the local update adds a point to its function directly "
                         "(not through f.gradient or f.proximal_step): its gradient has no "
                         "class deviation, so the round has no symmetric form here")


def _as_sym(value):
    if isinstance(value, SymPoint):
        return value
    if isinstance(value, int | float) and value == 0:
        return SymPoint({})
    return SymPoint({(None, ()): value})


class SymPoint:
    """A random point of the reduced round: ``{(owner, variables): representative point}``,
    owner None (shared), ``("client", c)`` (the generic client of class c) or ``("sum", c)``
    (the sum over class c, weighted by the variables)."""

    __slots__ = ("terms", "ctx")

    def __init__(self, terms, ctx=None):
        self.terms, self.ctx = dict(terms), ctx

    def _join(self, other, sign=1.0):
        other = _as_sym(other)
        out = dict(self.terms)
        for key, p in other.terms.items():
            q = p if sign == 1.0 else -p
            out[key] = out[key] + q if key in out else q
        return SymPoint(out, self.ctx or other.ctx)

    def __add__(self, other):
        return self._join(other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._join(other, -1.0)

    def __rsub__(self, other):
        return (-self)._join(other)

    def __neg__(self):
        return SymPoint({k: -p for k, p in self.terms.items()}, self.ctx)

    def __mul__(self, other):
        if isinstance(other, int | float | np.floating):
            return SymPoint({k: float(other) * p for k, p in self.terms.items()}, self.ctx)
        other = _as_sym(other)
        ctx = self.ctx or other.ctx
        total = zero()
        for ka, a in self.terms.items():
            for kb, b in other.terms.items():
                total = total + ctx.expected_dot(ka, a, kb, b)
        return total

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self * (1.0 / float(other))

    def __pow__(self, power):
        if power != 2:
            raise ValueError(f"power must be 2 (a squared norm), got {power}")
        return self * self


class Context:
    """Expected inner products of the reduced round (module docstring)."""

    def __init__(self, space, law):
        self.space, self.law, self.n = space, law, space.sizes

    def expected_dot(self, ka, a, kb, b):
        rank = {None: 0, "client": 1, "sum": 2}
        if rank[ka[0] and ka[0][0]] > rank[kb[0] and kb[0][0]]:
            ka, a, kb, b = kb, b, ka, a
        (oa, va), (ob, vb) = ka, kb
        law, space = self.law, self.space
        if oa is None:
            cls = None if ob is None else ob[1]
            m = law.moment((None, va), (cls, vb))
            scale = self.n[cls] if ob is not None and ob[0] == "sum" else 1
            return (scale * m) * space.dot(a, b, "same")
        c, d = oa[1], ob[1]
        if oa[0] == "client" and ob[0] == "client":
            if c == d:
                return law.moment((c, va), (d, vb), same=True) * space.dot(a, b, "same")
            return law.moment((c, va), (d, vb)) * space.dot(a, b, "cross")
        outer = 1 if oa[0] == "client" else self.n[c]    # clients i: one, or the n_c of a sum
        if c != d:
            return (outer * self.n[d] * law.moment((c, va), (d, vb))) * space.dot(a, b, "cross")
        value = (outer * law.moment((c, va), (d, vb), same=True)) * space.dot(a, b, "same")
        if self.n[c] > 1:
            pair = outer * (self.n[c] - 1) * law.moment((c, va), (d, vb))
            value = value + pair * space.dot(a, b, "other", self.n[c])
        return value


class SymState:
    def __init__(self, server, clients, reps=None):
        self.server, self.clients = server, clients
        self.reps = reps or [1] * len(clients)

    def __getitem__(self, name):
        return self.server[name]

    def client(self, name):
        return [c[name] for c, k in zip(self.clients, self.reps, strict=True) for _ in range(k)]

    def __sub__(self, other):
        return SymState({k: v - other.server[k] for k, v in self.server.items()},
                        [{k: v - o[k] for k, v in c.items()}
                         for c, o in zip(self.clients, other.clients, strict=True)], self.reps)

    def repeated(self, reps):
        return SymState(self.server, self.clients, reps)


class SymStar:
    def __init__(self, x, per_class, reps=None):
        self.x, self.per_class = x, per_class
        self.reps = reps or [1] * len(per_class)

    @property
    def gradients(self):
        return [g for g, k in zip(self.per_class, self.reps, strict=True) for _ in range(k)]


def class_constants(setting: Setting, groups) -> list:
    """``(mu_c, L_c)`` of every class of ``groups`` (a :class:`~.classlaw.Classes`).

    Parameters
    ----------
    setting : Setting
        One ``mu`` and ``L`` for all clients, or one per client (``mu`` ignored, reported
        as the class's first client's, in the ``"smooth"`` class).
    groups : Classes

    Returns
    -------
    list of (float, float)
        One pair per class.

    Raises
    ------
    ValueError
        Naming ``classes``, when two clients of one class have different constants.
    """
    out = []
    for group in groups.groups:
        pairs = {setting.constants(i) for i in group}
        if setting.function_class == "smooth":   # mu ignored: the class is L-smooth only
            pairs = {(setting.constants(group[0])[0], ell) for _, ell in pairs}
        if len(pairs) > 1:
            raise ValueError(f"classes: the class {list(group)[:5]}... mixes the function "
                             f"classes (mu, L) {sorted(pairs)[:3]}: clients of one class must "
                             "be interchangeable")
        out.append(pairs.pop())
    return out


def _canonical(expr):
    out = {}
    for key, coef in expr.decomposition_dict.items():
        if isinstance(key, tuple):
            key = tuple(sorted(key, key=id))
        out[key] = out.get(key, 0.0) + coef
    return out


def summed(value, state, star, sizes):
    """:math:`V` summed over the N clients from one entry per class (module docstring)."""
    ones = [1] * len(sizes)

    def at(reps):
        return value(state.repeated(reps), None if star is None else
                     SymStar(star.x, star.per_class, reps)) + zero()

    base = at(ones)
    total = base
    for c, n in enumerate(sizes):
        bumped = [k + (j == c) for j, k in enumerate(ones)]
        twice = at(bumped)
        thrice = at([k + 2 * (j == c) for j, k in enumerate(ones)])
        second = _canonical(thrice - 2 * twice + base)
        scale = max([1.0, *map(abs, _canonical(base).values())])
        if any(abs(v) > SEPARABLE_TOL * scale for v in second.values()):
            raise ValueError("measure: the symmetric form needs V = Q0(server) + sum_i "
                             "Q1(server, client i); this measure couples clients")
        if n > 1:
            total = total + (n - 1) * (twice - base)
    return total


__all__ = ["SEPARABLE_TOL", "Context", "Representative", "Space", "SymPoint", "SymStar",
           "SymState", "class_constants", "summed"]
