"""Input validation shared by the public functions of flbounds.

Every helper raises ``ValueError`` whose message starts with the argument's name and states
the violated constraint. Nothing is clipped, cast across kinds (complex to real) or reshaped.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_float_array",
    "as_index_array",
    "as_index_set",
    "as_inclusion_probabilities",
    "as_row_vectors",
    "as_vector",
    "check_budget",
    "check_finite",
    "check_int",
    "check_nonnegative",
    "check_positive",
    "check_probability_vector",
    "check_rng",
    "check_symmetric",
]

from flbounds.tolerances import PROBABILITY_SUM_ATOL, probability_sum_tolerance

__all__ += ["PROBABILITY_SUM_ATOL"]


def _shape_text(shape):
    return "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"


def _shape_matches(pattern, shape):
    for p, s in zip(pattern, shape, strict=True):
        if p is not None and p != s:
            return False
    return True


def as_float_array(x, name, *, ndim=None, shape=None, copy=False, nonnegative=False):
    """Return `x` as a C-contiguous, finite float64 array.

    Parameters
    ----------
    x : array_like
        Real numbers (bool, integer or floating dtype).
    name : str
        Argument name used in error messages.
    ndim : int, optional
        Required number of dimensions.
    shape : tuple of (int or None), optional
        Required shape; ``None`` entries match any length. Implies ``ndim``.
    copy : bool, default False
        Always return a fresh array (so later changes to `x` cannot leak in).
    nonnegative : bool, default False
        Also require every entry to be ``>= 0``.

    Returns
    -------
    numpy.ndarray
        float64, C-contiguous.

    Raises
    ------
    ValueError
        If `x` is not real, has the wrong shape, holds NaN or inf, or (with `nonnegative`)
        a negative entry.
    """
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if shape is not None:
        ndim = len(shape)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if shape is not None and not _shape_matches(shape, arr.shape):
        raise ValueError(f"{name} must have shape {_shape_text(shape)}, got {arr.shape}")
    if copy:
        out = np.array(arr, dtype=np.float64, order="C", copy=True)
    else:
        out = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(out).all():   # the method: np.all() costs a microsecond more
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if nonnegative and np.any(out < 0.0):
        raise ValueError(f"{name} must be nonnegative, got min {out.min()}")
    return out


def as_vector(x, name, *, n=None, nonnegative=False):
    """Return `x` as a non-empty, finite float64 vector (of length `n` if given).

    Raises
    ------
    ValueError
        If `x` is not 1-d, is empty, has the wrong length, holds NaN or inf, or (with
        `nonnegative`) a negative entry.
    """
    arr = as_float_array(x, name, ndim=1, nonnegative=nonnegative)
    if arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise ValueError(f"{name} must have length {n}, got {arr.size}")
    return arr


def as_inclusion_probabilities(p, name="p", *, n=None):
    """Return `p` as a float64 vector with every entry in ``(0, 1]`` (an unbiased design)."""
    arr = as_vector(p, name, n=n)
    if np.any(arr <= 0) or np.any(arr > 1):
        raise ValueError(f"{name} must lie in (0, 1]")
    return arr


def as_row_vectors(z, name, n):
    """Return `z`, one row per client (shape ``(n, d)``, or ``(n,)`` read as ``d = 1``),
    as a finite float64 array of shape ``(n, d)``."""
    arr = as_float_array(z, name)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n}, d) or ({n},), got {np.shape(z)}")
    return arr


def check_budget(k, n, name="k"):
    """Return the expected sample size `k` as a float after checking ``0 < k <= n``."""
    k = check_finite(k, name)
    if k <= 0 or k > n:
        raise ValueError(f"{name} must satisfy 0 < {name} <= N = {n}, got {k}")
    return k


def as_index_array(idx, name, n):
    """Return `idx` as a 1-d int64 array of indices in ``[0, n)`` (repeats allowed).

    Raises
    ------
    ValueError
        If `idx` is not 1-d, not integer-valued, or out of range.
    """
    arr = np.asarray(idx)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d index array, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"{name} must hold indices in [0, {n}), got range "
                         f"[{arr.min()}, {arr.max()}]")
    return np.ascontiguousarray(arr, dtype=np.int64)


def as_index_set(S, name, n):
    """Return the iterable `S` as an int64 array of DISTINCT indices in ``[0, n)``.

    Raises
    ------
    ValueError
        If an entry is not an integer, lies outside ``[0, n)`` or repeats.
    """
    arr = np.asarray(S if isinstance(S, np.ndarray) else list(S)).ravel()
    idx = as_index_array(arr, name, n)
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{name} must not repeat an index, got {idx.tolist()}")
    return idx


def check_finite(value, name):
    """Return `value` as a finite Python float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_positive(value, name):
    """Return `value` as a float after checking ``0 < value < inf``."""
    value = check_finite(value, name)
    if value <= 0.0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def check_nonnegative(value, name):
    """Return `value` as a float after checking ``0 <= value < inf``."""
    value = check_finite(value, name)
    if value < 0.0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def check_int(value, name, *, minimum=None, maximum=None):
    """Return `value` as an int after checking ``minimum <= value <= maximum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_probability_vector(p, name, *, n=None):
    """Return `p` as a float64 vector of nonnegative entries summing to one.

    The sum may differ from 1 by :func:`flbounds.tolerances.probability_sum_tolerance`.
    """
    p = as_float_array(p, name, shape=(n,))
    if p.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if np.any(p < 0.0):
        raise ValueError(f"{name} must be nonnegative, got min {p.min()}")
    total = p.sum()
    if abs(total - 1.0) > probability_sum_tolerance(p.size):
        raise ValueError(f"{name} must sum to 1, got {total!r}")
    return p


def check_symmetric(a, name, *, rtol=1e-12):
    """Check that every trailing ``(d, d)`` matrix of `a` is symmetric.

    Matrix ``M`` passes if ``max|M - M'| <= rtol * max|M|`` (entrywise, per matrix).
    """
    a = np.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} must hold square matrices, got shape {a.shape}")
    asym = np.abs(a - np.swapaxes(a, -1, -2)).max(axis=(-2, -1), initial=0.0)
    size = np.abs(a).max(axis=(-2, -1), initial=0.0)
    bad = asym > rtol * size
    if np.any(bad):
        first = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        raise ValueError(f"{name} must be symmetric (max|M - M'| <= {rtol:g} max|M|); "
                         f"matrix {first} is not")


def check_rng(rng, name="rng"):
    """Check that `rng` is a ``numpy.random.Generator`` (randomness is passed explicitly)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng
