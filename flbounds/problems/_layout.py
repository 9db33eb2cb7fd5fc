"""The transposed layout of the quadratic Hessians for the compiled gradients.

:math:`A_c z` summed in a fixed order vectorizes only across output rows, which must then be
the contiguous axis: the kernels read :math:`A_c^\\top`. The problems' :math:`A_i` are exactly
symmetric, so that is ``A`` itself and nothing is copied; any other ``A`` gets a read-only
transposed copy. (Ridge and logistic features are transposed per client visit instead: see
:mod:`flbounds.kernels.gradients`.)
"""

import numpy as np


def _frozen(a):
    a.flags.writeable = False
    return a


def _transposed(A):
    """Read-only C-contiguous copy of ``A`` (N, r, s) as (N, s, r)."""
    return _frozen(np.ascontiguousarray(np.swapaxes(A, 1, 2)))


def rows_last(A):
    """``A`` (N, d, d) with ``out[i, q, p] = A[i, p, q]``: ``A`` itself (no copy) if it is
    exactly symmetric, as the problems' Hessians are, else a read-only transposed copy."""
    if np.array_equal(A, np.swapaxes(A, 1, 2)):
        return A
    return _transposed(A)
