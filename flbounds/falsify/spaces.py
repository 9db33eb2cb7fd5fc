r"""Instance spaces: named primitives that decode a point of the unit cube into one instance.

Every primitive owns ``dim`` coordinates of a latent point :math:`u \in [0, 1]^D` and decodes
its slice into a value (:meth:`decode`), so one bounded search (CMA-ES with box bounds, or
differential evolution) explores every space the same way. A primitive also coerces a
JSON-loaded value back to the exact type the ratio received (:meth:`coerce`, used by replay),
and proposes simpler values of a witness (:meth:`simpler`, used by shrinking).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: smallest latent coordinate a logarithm sees (keeps -log u finite)
_TINY = 1e-300
#: significant digits tried when rounding a witness, coarsest first
ROUND_DIGITS = (1, 2, 3, 4, 6)


def _round_sig(x: np.ndarray, digits: int) -> np.ndarray:
    """Round to ``digits`` significant digits, elementwise (0 stays 0)."""
    x = np.asarray(x, dtype=float)
    mag = np.where(x == 0, 0, np.floor(np.log10(np.abs(np.where(x == 0, 1, x)))))
    scale = 10.0 ** (digits - 1 - mag)
    return np.round(x * scale) / scale


def _check_shape(shape) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    if any(int(s) < 1 for s in shape):
        raise ValueError(f"shape must have positive entries, got {shape}")
    return tuple(int(s) for s in shape)


@dataclass(frozen=True)
class Box:
    r"""Real numbers in ``[low, high]`` (a scalar, or an array of ``shape``).

    With ``log=True`` the value is interpolated geometrically (``0 < low``), so a range over
    several decades is searched evenly in scale.

    Parameters
    ----------
    low, high : float
        Finite bounds, ``low < high``.
    log : bool
        Search in log scale.
    shape : tuple of int
        ``()`` for a scalar, else the array's shape.
    """

    low: float
    high: float
    log: bool = False
    shape: tuple = ()

    def __post_init__(self):
        if not (np.isfinite(self.low) and np.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"Box: need finite low < high, got low={self.low}, "
                             f"high={self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"Box: log=True needs low > 0, got low={self.low}")
        object.__setattr__(self, "shape", _check_shape(self.shape) if self.shape else ())

    @property
    def dim(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    def decode(self, u: np.ndarray):
        if self.log:
            lo, hi = math.log(self.low), math.log(self.high)
            x = np.exp(lo + u * (hi - lo))
        else:
            x = self.low + u * (self.high - self.low)
        x = np.clip(x, self.low, self.high)
        return float(x[0]) if not self.shape else x.reshape(self.shape)

    def coerce(self, value):
        return float(value) if not self.shape else np.asarray(value, dtype=float)

    def encode(self, value) -> np.ndarray:
        x = np.clip(np.asarray(value, dtype=float).ravel(), self.low, self.high)
        if self.log:
            lo, hi = math.log(self.low), math.log(self.high)
            return (np.log(x) - lo) / (hi - lo)
        return (x - self.low) / (self.high - self.low)

    def simpler(self, value) -> Iterator:
        for digits in ROUND_DIGITS:
            r = np.clip(_round_sig(value, digits), self.low, self.high)
            yield float(r) if not self.shape else r


@dataclass(frozen=True)
class Integers:
    """Integers ``low <= k <= high`` (inclusive); a smaller value is a simpler one.

    Parameters
    ----------
    low, high : int
        The inclusive bounds, ``low <= high``.
    """

    low: int
    high: int

    def __post_init__(self):
        if int(self.low) != self.low or int(self.high) != self.high or self.low > self.high:
            raise ValueError(f"Integers: need integers low <= high, got {self.low}, {self.high}")

    dim = 1

    def decode(self, u: np.ndarray) -> int:
        k = self.low + int(math.floor(float(u[0]) * (self.high - self.low + 1)))
        return min(k, int(self.high))

    def coerce(self, value) -> int:
        return int(value)

    def encode(self, value) -> np.ndarray:
        return np.array([(int(value) - self.low + 0.5) / (self.high - self.low + 1)])

    def simpler(self, value) -> Iterator[int]:
        yield from range(int(self.low), int(value))


@dataclass(frozen=True)
class Simplex:
    r"""Probability vectors of length ``n`` (entries >= ``floor``, summing to 1).

    Decoding :math:`w_i = -\log u_i / \sum_j (-\log u_j)` maps a uniform latent point to a
    uniform (Dirichlet(1)) probability vector.

    Parameters
    ----------
    n : int
        The length, at least 1.
    floor : float
        The smallest entry, ``0 <= floor < 1/n``.
    """

    n: int
    floor: float = 0.0

    def __post_init__(self):
        if int(self.n) != self.n or self.n < 1:
            raise ValueError(f"Simplex: n must be a positive integer, got {self.n}")
        if not 0 <= self.floor * self.n < 1:
            raise ValueError(f"Simplex: need 0 <= floor < 1/n, got {self.floor}")

    @property
    def dim(self) -> int:
        return int(self.n)

    def decode(self, u: np.ndarray) -> np.ndarray:
        w = -np.log(np.clip(u, _TINY, 1.0)) + 1e-12
        return self.floor + (1 - self.n * self.floor) * w / w.sum()

    def coerce(self, value) -> np.ndarray:
        return np.asarray(value, dtype=float)

    def encode(self, value) -> np.ndarray:
        v = (np.asarray(value, dtype=float) - self.floor) / (1 - self.n * self.floor)
        return np.exp(-np.maximum(v, 0.0) / max(float(v.sum()), _TINY))

    def simpler(self, value) -> Iterator[np.ndarray]:
        for digits in ROUND_DIGITS:
            r = np.maximum(_round_sig(value, digits), self.floor)
            yield r / r.sum()


@dataclass(frozen=True)
class SPD:
    r"""Symmetric ``n x n`` matrices with spectrum in ``[mu, L]``: :math:`Q \Lambda Q^\top`.

    The first ``n`` coordinates are the eigenvalues; the next :math:`n(n-1)/2` are the angles
    (in :math:`[-\pi, \pi]`) of a skew-symmetric generator :math:`S`, and
    :math:`Q = \exp(S)` is the rotation. With ``extreme=True`` the smallest eigenvalue is
    pinned to ``mu`` and the largest to ``L`` (the constants are then exact, not bounds).

    Parameters
    ----------
    n : int
        The size, at least 1.
    mu, L : float
        The spectrum's bounds, ``0 <= mu <= L < inf``.
    extreme : bool
        Pin the extreme eigenvalues to ``mu`` and ``L``.
    """

    n: int
    mu: float
    L: float
    extreme: bool = False

    def __post_init__(self):
        if int(self.n) != self.n or self.n < 1:
            raise ValueError(f"SPD: n must be a positive integer, got {self.n}")
        if not 0 <= self.mu <= self.L or not np.isfinite(self.L):
            raise ValueError(f"SPD: need 0 <= mu <= L < inf, got mu={self.mu}, L={self.L}")

    @property
    def dim(self) -> int:
        return int(self.n + self.n * (self.n - 1) // 2)

    def decode(self, u: np.ndarray) -> np.ndarray:
        from scipy.linalg import expm

        n = int(self.n)
        lam = self.mu + u[:n] * (self.L - self.mu)
        if self.extreme and n >= 2:
            lam = np.sort(lam)
            lam[0], lam[-1] = self.mu, self.L
        elif self.extreme:
            lam = np.array([self.L])
        gen = np.zeros((n, n))
        gen[np.triu_indices(n, 1)] = (2 * u[n:] - 1) * np.pi
        q = expm(gen - gen.T)
        a = (q * lam) @ q.T
        return (a + a.T) / 2

    def coerce(self, value) -> np.ndarray:
        return np.asarray(value, dtype=float)

    def simpler(self, value) -> Iterator[np.ndarray]:
        return iter(())


@dataclass(frozen=True)
class Transform:
    """A custom primitive: ``func`` maps the decoded value of ``base`` to the instance value.

    Parameters
    ----------
    base : primitive
        The primitive searched (:class:`Box`, :class:`Simplex`, ...).
    func : callable
        Maps the decoded value of ``base`` to the instance value.
    coerce_func : callable, optional
        Rebuilds a JSON-loaded value for replay (default: a float array).
    """

    base: Any
    func: Callable[[Any], Any]
    coerce_func: Callable[[Any], Any] | None = None

    @property
    def dim(self) -> int:
        return self.base.dim

    def decode(self, u: np.ndarray):
        return self.func(self.base.decode(u))

    def coerce(self, value):
        if self.coerce_func is not None:
            return self.coerce_func(value)
        return np.asarray(value, dtype=float)

    def simpler(self, value) -> Iterator:
        return iter(())


@dataclass(frozen=True)
class Space:
    """An ordered mapping of names to primitives, decoded jointly from one latent point.

    Build one with :meth:`of` from a mapping ``{name: primitive}``.

    Parameters
    ----------
    items : tuple of (str, primitive)
        The named primitives, in order.
    """

    items: tuple = field(default_factory=tuple)

    @classmethod
    def of(cls, space: Mapping[str, Any] | Space) -> Space:
        if isinstance(space, Space):
            return space
        if not isinstance(space, Mapping) or not space:
            raise ValueError("space must be a non-empty mapping of names to primitives")
        for name, prim in space.items():
            if not all(hasattr(prim, a) for a in ("dim", "decode", "coerce", "simpler")):
                raise ValueError(f"space[{name!r}] is not a primitive: {prim!r}")
        return cls(tuple(space.items()))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.items)

    @property
    def dim(self) -> int:
        return sum(int(prim.dim) for _, prim in self.items)

    def decode(self, u) -> dict:
        u = np.asarray(u, dtype=float)
        if u.shape != (self.dim,):
            raise ValueError(f"latent point must have shape ({self.dim},), got {u.shape}")
        u = np.clip(u, 0.0, 1.0)
        out, start = {}, 0
        for name, prim in self.items:
            out[name] = prim.decode(u[start:start + prim.dim])
            start += prim.dim
        return out

    def coerce(self, witness: Mapping) -> dict:
        """Rebuild an instance from JSON values; a missing or extra name is a ``ValueError``."""
        if set(witness) != set(self.names):
            raise ValueError(f"witness keys {sorted(witness)} differ from the space's "
                             f"{sorted(self.names)}")
        return {name: prim.coerce(witness[name]) for name, prim in self.items}

    def primitive(self, name: str):
        return dict(self.items)[name]

    def encode(self, instance: Mapping) -> np.ndarray | None:
        """A latent point that decodes to (about) ``instance``; None when a primitive has no
        inverse (SPD rotations, custom transforms)."""
        parts = []
        for name, prim in self.items:
            if not hasattr(prim, "encode"):
                return None
            parts.append(np.asarray(prim.encode(instance[name]), dtype=float).ravel())
        return np.clip(np.concatenate(parts), 0.0, 1.0)
