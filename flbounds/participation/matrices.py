r"""Participation as stochastic matrices on the server-plus-clients graph (FOCUS, ``002``).

Node 0 is the server, nodes 1..N the clients; a participation set is a boolean mask ``s`` of
length N. All matrices are :math:`(N+1) \times (N+1)`:

- pull :math:`R(S) = [[1, 0^T], [s, I - D_S]]` (row stochastic, eq. (4));
- push :math:`C(S) = R(S)^T` (column stochastic);
- average :math:`A(S) = [[0, s^T/|S|], [0, I]]` (row stochastic, read with the correction of
  spec section 1.4: the averaging row is the server's).

References
----------
FOCUS: Exact and linear convergence for FL under arbitrary client participation, Section 3,
      Appendix C (``shared/papers/002_d5aeef3645e253f4.txt``).
"""

from __future__ import annotations

import numpy as np


def _mask(s) -> np.ndarray:
    s = np.asarray(s)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"s must be a non-empty 1-D participation mask, got shape {s.shape}")
    if s.dtype != bool:
        if not np.all((s == 0) | (s == 1)):
            raise ValueError("s must contain only 0/1 or booleans")
        s = s.astype(bool)
    return s


def pull_matrix(s) -> np.ndarray:
    r"""The pull matrix :math:`R(S) = [[1, 0^T], [s, I - D_S]]`: participants copy the server
    model, the others keep theirs (row stochastic).

    Parameters
    ----------
    s : array_like of bool or {0, 1}, shape (N,)
        The participation mask.

    Returns
    -------
    numpy.ndarray, shape (N + 1, N + 1)
        Node 0 is the server, nodes 1..N the clients.

    References
    ----------
    .. [1] B. Ying, Z. Li, H. Yang. Exact and Linear Convergence for Federated Learning under
       Arbitrary Client Participation is Attainable. NeurIPS 2025. arXiv:2503.20117,
       Section 3, eq. (4).
    """
    s = _mask(s)
    n = s.size
    R = np.zeros((n + 1, n + 1))
    R[0, 0] = 1.0
    R[1:, 0] = s
    R[1:, 1:] = np.diag(~s).astype(float)
    return R


def push_matrix(s) -> np.ndarray:
    r"""The push matrix :math:`C(S) = R(S)^T`: participants hand their whole mass to the
    server (column stochastic).

    Parameters
    ----------
    s : array_like of bool or {0, 1}, shape (N,)
        The participation mask.

    Returns
    -------
    numpy.ndarray, shape (N + 1, N + 1)
        Node 0 is the server, nodes 1..N the clients.
    """
    return pull_matrix(s).T.copy()


def average_matrix(s) -> np.ndarray:
    r"""The averaging matrix :math:`A(S) = [[0, s^T/|S|], [0, I]]`: the server takes the mean
    of the participants; clients keep theirs (row stochastic).

    An empty set leaves the server unchanged (the no-op convention for empty rounds).

    Parameters
    ----------
    s : array_like of bool or {0, 1}, shape (N,)
        The participation mask.

    Returns
    -------
    numpy.ndarray, shape (N + 1, N + 1)
        Node 0 is the server, nodes 1..N the clients.
    """
    s = _mask(s)
    n = s.size
    A = np.eye(n + 1)
    if s.any():
        A[0, 0] = 0.0
        A[0, 1:] = s / s.sum()
    return A
