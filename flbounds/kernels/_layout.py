"""The layout of the problems' data for the compiled gradients: Hessians transposed, every
array on a cache-line boundary.

:math:`A_c z` summed in a fixed order vectorizes only across output rows, which must then be
the contiguous axis: the kernels read :math:`A_c^\\top`. The problems' :math:`A_i` are exactly
symmetric, so that is ``A`` itself and nothing is copied; any other ``A`` gets a read-only
transposed copy. (Ridge and logistic features are transposed per client visit instead: see
:mod:`flbounds.kernels.gradients`.)

The kernels read a client's block in vectors of eight doubles: one cache line each when the
block starts on a 64-byte boundary, two lines otherwise. NumPy aligns large arrays to 16 bytes
only, so :func:`line_aligned` copies the data onto a line where needed; a client's block then
starts on a line whenever its size is a multiple of 8 doubles (n d = 1000 for the benchmarks'
ridge and logistic problems; d^2 for quadratics with d a multiple of 4, as the register
kernels' d = 8 and 16). Measured at N = 10^4 on one
thread (FedAvg, tau = 5, us per participant, the same bits): ridge at p = 0.1 1.10-1.12
against 1.20-1.21 misaligned, logistic at p = 0.1 1.43-1.48 against 1.50-1.55, quadratic at
p = 1 0.169-0.170 against 0.181-0.186. FOCUS keeps its stored gradients (N, d) on a line too
(quadratic FOCUS at p = 1: 0.171 against 0.184).
"""

import numpy as np

CACHE_LINE = 64     # bytes


def _on_a_line(shape, alloc=np.empty):
    """A writable C-contiguous float64 array of ``shape`` whose data start on a cache line,
    carved out of a byte buffer from ``alloc`` (``np.empty`` or ``np.zeros``)."""
    nbytes = 8 * int(np.prod(shape))
    buf = alloc(nbytes + CACHE_LINE, dtype=np.uint8)
    start = -buf.ctypes.data % CACHE_LINE
    return buf[start:start + nbytes].view(np.float64).reshape(shape)


def line_aligned(a, *, writeable=False, copy=False):
    """``a`` as a C-contiguous float64 array whose data start on a cache line, read-only unless
    ``writeable``: a copy if ``copy`` or if ``a`` is not one already, else ``a`` itself (then
    frozen: callers pass arrays they own). At most one copy is made."""
    a = np.asarray(a, dtype=np.float64)
    if copy or not a.flags.c_contiguous or a.ctypes.data % CACHE_LINE:
        out = _on_a_line(a.shape)
        out[...] = a
        a = out
    a.flags.writeable = writeable
    return a


def line_zeros(shape):
    """A writable C-contiguous float64 array of zeros whose data start on a cache line."""
    return _on_a_line(shape, np.zeros)


def _transposed(A):
    """Read-only C-contiguous copy of ``A`` (N, r, s) as (N, s, r), on a cache line."""
    return line_aligned(np.swapaxes(A, 1, 2))


def rows_last(A):
    """``A`` (N, d, d) with ``out[i, q, p] = A[i, p, q]``: ``A`` itself (no copy) if it is
    exactly symmetric, as the problems' Hessians are, else a read-only transposed copy."""
    if np.array_equal(A, np.swapaxes(A, 1, 2)):
        return A
    return _transposed(A)
