r"""Stochastic-matrix facts of FOCUS, Section 3 and Appendix C ([002]).

Participation sets are enumerated exhaustively (all :math:`2^N` masks), so every check here is
exact up to floating-point rounding of sums of 0/1 entries.
"""

from __future__ import annotations

import itertools

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import average_matrix, pull_matrix, push_matrix
from flbounds.tolerances import EPS, summation_bound


def all_masks(n_clients: int) -> np.ndarray:
    """Every participation mask over ``n_clients`` clients, shape (2^N, N)."""
    return np.array(list(itertools.product([False, True], repeat=n_clients)), dtype=bool)


@claim("focus.matrices.pull_row_stochastic", ref="Sec. 3, eq. (4); App. C",
       kind="statement", expected="holds",
       statement="R(S) is nonnegative and row stochastic (R 1 = 1) for every participation set S.",
       quick=dict(n_clients=6), full=dict(n_clients=12))
def pull_row_stochastic(*, rng, n_clients):
    """R(S) rows are indicator rows, so R 1 = 1 exactly; any deviation would be a bug or error."""
    worst_row, worst_neg = 0.0, 0.0
    for s in all_masks(n_clients):
        R = pull_matrix(s)
        worst_row = max(worst_row, float(np.max(np.abs(R.sum(axis=1) - 1.0))))
        worst_neg = max(worst_neg, float(-R.min()))
    return Evidence(measured=[worst_row, worst_neg], theoretical=[0.0, 0.0], relation="==",
                    tolerance=Tolerance.exact("sums of a single 1 and zeros are exact"),
                    details={"n_sets": 2 ** n_clients})


@claim("focus.matrices.push_column_stochastic", ref="Sec. 4.2.1; App. C, eqs. (35)-(36)",
       kind="statement", expected="holds",
       statement="C(S) = R(S)^T is column stochastic (1^T C = 1^T) for every participation set.",
       quick=dict(n_clients=6), full=dict(n_clients=12))
def push_column_stochastic(*, rng, n_clients):
    """Columns of C(S) each contain a single 1, so 1^T C = 1^T exactly, and C equals R^T."""
    worst_col, worst_transpose = 0.0, 0.0
    for s in all_masks(n_clients):
        C = push_matrix(s)
        worst_col = max(worst_col, float(np.max(np.abs(C.sum(axis=0) - 1.0))))
        worst_transpose = max(worst_transpose, float(np.max(np.abs(C - pull_matrix(s).T))))
    return Evidence(measured=[worst_col, worst_transpose], theoretical=[0.0, 0.0],
                    relation="==", tolerance=Tolerance.exact(), details={"n_sets": 2 ** n_clients})


@claim("focus.matrices.average_row_stochastic", ref="Sec. 3, eq. (4) (as corrected)",
       kind="statement", expected="holds",
       statement="A(S) is row stochastic and its server row is the participants' mean.",
       quick=dict(n_clients=6), full=dict(n_clients=12))
def average_row_stochastic(*, rng, n_clients):
    """Row sums of A(S) are |S| * (1/|S|); rounding of that sum is at most |S| ulp."""
    worst = 0.0
    for s in all_masks(n_clients):
        worst = max(worst, float(np.max(np.abs(average_matrix(s).sum(axis=1) - 1.0))))
    return Evidence(measured=worst, theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(n_clients * EPS,
                                                 "N ulp: a sum of |S| <= N copies of 1/|S|"))


@claim("focus.matrices.mass_preservation", ref="App. C, eqs. (35)-(36)", kind="statement",
       expected="holds",
       statement="For any sequence of column-stochastic C_k, 1^T (prod C_k) x_0 = 1^T x_0.",
       quick=dict(n_clients=8, n_steps=200, dim=3), full=dict(n_clients=32, n_steps=5000, dim=5))
def mass_preservation(*, rng, n_clients, n_steps, dim):
    """Each push moves whole rows into the server row; the sum changes only by rounding.

    Tolerance: one addition per step into the server row, each off by at most
    eps * (running total of |x|), hence n_steps * eps * sum|x_0| per coordinate.
    """
    x = rng.standard_normal((n_clients + 1, dim))
    mass0 = x.sum(axis=0)
    for _ in range(n_steps):
        x = push_matrix(rng.random(n_clients) < 0.5) @ x
    scale = np.abs(mass0).sum() + np.abs(x).sum()
    return Evidence(measured=float(np.max(np.abs(x.sum(axis=0) - mass0))), theoretical=0.0,
                    relation="==",
                    tolerance=Tolerance.rounding(summation_bound(n_steps, scale),
                                                 "n_steps * eps * sum|x| (one add per step)"))


# Example (34): R = (1/2)[[1,0,1,0],[1,1,0,0],[1,0,1,0],[1,0,0,1]], left Perron vector p.
EXAMPLE_34 = 0.5 * np.array([[1, 0, 1, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]], float)
EXAMPLE_34_P = np.array([0.5, 0.0, 0.5, 0.0])


@claim("focus.matrices.consensus_example34", ref="App. C, example (34)", kind="example",
       expected="holds",
       statement="For the primitive example (34), R^k -> 1 p^T with p = (0.5, 0, 0.5, 0).",
       quick=dict(power=80), full=dict(power=200))
def consensus_example34(*, rng, power):
    """R's second eigenvalue is 1/2, so ||R^k - 1 p^T|| <= 2^-k C; at k >= 80 that is below
    rounding, and the remaining error is k matrix products of entries in [0, 1] (k eps)."""
    Rk = np.linalg.matrix_power(EXAMPLE_34, power)
    limit = np.outer(np.ones(4), EXAMPLE_34_P)
    perron = np.linalg.eig(EXAMPLE_34.T)
    k = int(np.argmin(np.abs(perron.eigenvalues - 1.0)))
    p = np.real(perron.eigenvectors[:, k])
    p = p / p.sum()
    return Evidence(measured=[float(np.max(np.abs(Rk - limit))),
                              float(np.max(np.abs(p - EXAMPLE_34_P)))],
                    theoretical=[0.0, 0.0], relation="==",
                    tolerance=Tolerance.rounding(4 * power * EPS, "4 k eps: k products of "
                                                 "4x4 stochastic matrices"),
                    details={"perron_vector": p})
