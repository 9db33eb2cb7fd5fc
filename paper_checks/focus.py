r"""Printed matrices and worked examples of [002] (FOCUS): Figure 1, eqs. (33), (44), (45).

All comparisons are exact (0/1 entries and ratios of small integers; tolerance: a few ulp).
Figure 1's matrices are images in the paper; their entries are taken from the spec's reading
(spec/002_focus.md section 1.4). Equations (33), (44) and (45) are in the paper's text.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import (
    Bernoulli,
    average_matrix,
    pull_matrix,
    push_matrix,
    subset_distribution,
)
from flbounds.tolerances import EPS
from verify.focus.matrices import EXAMPLE_34, EXAMPLE_34_P

S13 = np.array([True, False, True, False])  # N = 4, S = {1, 3}
FIG1_R = np.array([[1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [1, 0, 0, 0, 0],
                   [0, 0, 0, 0, 1]], float)
FIG1_A = np.array([[0, .5, 0, .5, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                   [0, 0, 0, 0, 1]], float)
FIG1_C = np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0],
                   [0, 0, 0, 0, 1]], float)
FIG1_W = np.array([[1, 1, 0, 1, 0], [1, 2, 0, 0, 0], [0, 0, 3, 0, 0], [1, 0, 0, 2, 0],
                   [0, 0, 0, 0, 3]], float) / 3.0
ULP = Tolerance.rounding(4 * EPS, "a few ulp (entries are small-integer ratios)")


def printed_doubly_stochastic(s) -> np.ndarray:
    """W(S) by the printed formula: W[i,0] = W[0,i] = 1/|S| for i in S, diagonal = 1 - the
    column's off-diagonal sum, 0 otherwise."""
    s = np.asarray(s, dtype=bool)
    n = s.size
    W = np.zeros((n + 1, n + 1))
    W[1:, 0] = s / s.sum()
    W[0, 1:] = s / s.sum()
    off = W.sum(axis=0)
    W[np.arange(n + 1), np.arange(n + 1)] = 1.0 - off
    return W


@claim("focus.fig1.pull_average_push", ref="Fig. 1; Sec. 3 eq. (4)", kind="example",
       expected="holds",
       statement="For N = 4 and S = {1, 3}, Figure 1's pull, FedAvg-average and push matrices "
                 "are R(S), A(S) and C(S) = R(S)^T.",
       quick=dict(), full=dict())
def pull_average_push(*, rng):
    """Entrywise comparison of flbounds.participation.matrices with the printed 5 x 5 matrices
    (A read with the correction that the averaging row is the server's, as the figure shows)."""
    diffs = [np.abs(pull_matrix(S13) - FIG1_R).max(), np.abs(average_matrix(S13) - FIG1_A).max(),
             np.abs(push_matrix(S13) - FIG1_C).max()]
    return Evidence(measured=[float(d) for d in diffs], theoretical=0.0, relation="==",
                    tolerance=ULP)


@claim("focus.fig1.doubly_stochastic_formula", ref="Fig. 1 vs the W(S_r) formula (Sec. 3)",
       kind="example", expected="violated",
       statement="Figure 1's doubly stochastic matrix for S = {1, 3} is W(S) of the printed "
                 "formula (weights 1/|S|).",
       quick=dict(), full=dict())
def doubly_stochastic_formula(*, rng):
    """The formula gives weights 1/|S| = 1/2 (server diagonal 0, client diagonal 1/2); the
    figure uses 1/(|S| + 1) = 1/3 (diagonals 1/3, 2/3). Both are doubly stochastic
    (checked in details), so this is an inconsistency of the example, not of any result
    (W is not used by FOCUS)."""
    W = printed_doubly_stochastic(S13)
    stochastic = [float(np.abs(M.sum(axis=0) - 1).max() + np.abs(M.sum(axis=1) - 1).max())
                  for M in (W, FIG1_W)]
    return Evidence(measured=W, theoretical=FIG1_W, relation="==", tolerance=ULP,
                    details={"formula_W": W, "figure_W": FIG1_W,
                             "doubly_stochastic_defects": stochastic})


@claim("focus.eq33.consensus_limit_printed", ref="App. C, eq. (33)", kind="remark",
       expected="violated",
       statement="For a primitive row-stochastic R with left Perron vector p, "
                 "lim_k R^k x_0 = p 1^T x_0.",
       quick=dict(), full=dict())
def consensus_limit_printed(*, rng):
    """R^k -> 1 p^T, so the limit is 1 (p^T x_0) (every entry the p-weighted average), not
    p (1^T x_0). Counterexample: example (34), x_0 = (1, 2, 3, 4): the limit is 2 * 1
    while p 1^T x_0 = (5, 0, 5, 0). The corrected statement is focus.matrices.
    consensus_example34."""
    x0 = np.array([1.0, 2.0, 3.0, 4.0])
    limit = np.linalg.matrix_power(EXAMPLE_34, 200) @ x0
    return Evidence(measured=limit, theoretical=EXAMPLE_34_P * x0.sum(), relation="==",
                    tolerance=Tolerance.rounding(1e-12, "200 products of 4x4 stochastic "
                                                 "matrices: ~200 eps"),
                    details={"corrected": np.ones(4) * (EXAMPLE_34_P @ x0)})


def virtual_fedavg_matrix(s) -> np.ndarray:
    """The rank-one W(S) = 1 w_S^T of (41)-(44), w_S = [0, s/|S|]."""
    s = np.asarray(s, dtype=bool)
    w = np.concatenate([[0.0], s / s.sum()])
    return np.outer(np.ones(s.size + 1), w)


@claim("focus.eq44.virtual_fedavg_matrices", ref="App. D, eqs. (44)-(45)", kind="example",
       expected="holds",
       statement="W_{1,3} has every row [0, 1/2, 0, 1/2, 0], W_{2,3,4} every row "
                 "[0, 0, 1/3, 1/3, 1/3], and E W(S_r) = 1 [0, q^T].",
       quick=dict(), full=dict())
def virtual_fedavg_matrices(*, rng):
    """(44) compared entrywise; (45) by exact enumeration of the participation sets of a
    Bernoulli process without empty rounds (p = (.3, .5, .7, 1)), against the exact q."""
    w13 = np.tile([0, .5, 0, .5, 0], (5, 1))
    w234 = np.tile([0, 0, 1 / 3, 1 / 3, 1 / 3], (5, 1))
    proc = Bernoulli([0.3, 0.5, 0.7, 1.0])
    masks, probs = subset_distribution(proc)
    mean = sum(p * virtual_fedavg_matrix(s) for s, p in zip(masks, probs, strict=True) if p > 0)
    expected = np.tile(np.concatenate([[0.0], proc.aggregation_weights()]), (5, 1))
    diffs = [np.abs(virtual_fedavg_matrix(S13) - w13).max(),
             np.abs(virtual_fedavg_matrix([False, True, True, True]) - w234).max(),
             np.abs(mean - expected).max()]
    return Evidence(measured=[float(d) for d in diffs], theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(1e-15, "sums of 16 products of probabilities"))
