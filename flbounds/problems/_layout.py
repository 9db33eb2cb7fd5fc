"""Second memory layouts of a problem's data for the compiled gradients, built once.

The gradient kernels (:mod:`flbounds.kernels.gradients`) keep every output element's summation
order fixed (no fastmath), so a loop vectorizes only if it runs over *independent* output
elements whose operands sit next to each other in memory. A product :math:`X_i z` summed over
the coordinates of each sample vectorizes over the samples only if the samples are the
contiguous axis, i.e. on :math:`X_i^\\top` stored as (d, n); :math:`X_i^\\top r` vectorizes over
the coordinates on :math:`X_i` as given (n, d). So the kernels read both layouts, and the second
one is made here once per problem (read-only, cached by the problem), not once per client visit.
"""

import numpy as np


def _frozen(a):
    a.flags.writeable = False
    return a


def samples_last(features):
    """Read-only C-contiguous copy of ``features`` (N, n, d) as (N, d, n)."""
    return _frozen(np.ascontiguousarray(np.swapaxes(features, 1, 2)))


def rows_last(A):
    """``A`` (N, d, d) with ``out[i, q, p] = A[i, p, q]``: ``A`` itself (no copy) if it is
    exactly symmetric, as the problems' Hessians are, else a read-only transposed copy."""
    if np.array_equal(A, np.swapaxes(A, 1, 2)):
        return A
    return samples_last(A)
