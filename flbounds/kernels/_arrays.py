"""Copies and sorting for the kernels, written so that they compile quickly.

An array-to-array slice assignment (``out[i, :] = x``) makes numba compile, once in every
process, the formatted message of its shape-mismatch error: string and integer formatting,
about 3 s of a first run's compile time (``a.transpose(axes)`` does too, and builds a set).
``np.sort`` and ``np.argsort`` compile numba's quicksort anew inside every kernel that calls
them, about 1 s each. The kernels therefore copy rows with :func:`copy_into` (inlined in
numba's IR, nothing to compile on its own) and sort with :func:`argsort_into` (compiled once,
cached, shared by every caller). ``tests/flbounds/kernels/test_arrays.py`` keeps these
constructs out.
"""

from numba import njit


@njit(cache=True, fastmath=False, inline="always")
def copy_into(dst, src):
    """``dst[p] = src[p]`` for every p of the 1-D ``src`` (shapes are the caller's care)."""
    for p in range(src.shape[0]):
        dst[p] = src[p]


@njit(cache=True, fastmath=False)
def argsort_into(a, order, scratch):
    """Write into ``order`` the indices that sort the 1-D ``a`` in increasing order, equal
    values in index order (a stable bottom-up merge sort: ``np.argsort(a, kind="stable")``);
    ``scratch`` is an int64 array of the same length."""
    n = a.shape[0]
    for i in range(n):
        order[i] = i
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if j >= hi or (i < mid and not a[order[j]] < a[order[i]]):
                    scratch[k] = order[i]
                    i += 1
                else:
                    scratch[k] = order[j]
                    j += 1
            lo = hi
        for k in range(n):     # copied back each pass: alternating the two buffers instead
            order[k] = scratch[k]  # made numba compile this ten times longer
        width *= 2
