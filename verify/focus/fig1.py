r"""Figure 1 of FOCUS: one round for N = 4 and S = {1, 3}, as a graph and its matrices.

The figure prints the pull matrix R(S), the FedAvg averaging matrix A(S), the push matrix
C(S) and a doubly stochastic W(S). Its matrices are images in the paper; their entries are
taken from the spec's reading (spec/002_focus.md section 1.4). All comparisons are exact
(0/1 entries and ratios of small integers; tolerance: a few ulp).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import average_matrix, pull_matrix, push_matrix
from flbounds.tolerances import EPS

from .matrices import EQ4


@hypothesis("S", "the round's participation set S is non-empty (W(S) divides by |S|)")
def nonempty(*, S):
    return bool(np.any(S))


FIG1 = result(
    "focus.fig1", ref="Figure 1", title="one round as a graph and its stochastic matrices",
    parts={"matrices": "for S = {1, 3}: the pull, FedAvg-average and push matrices are R(S), "
                       "A(S) and C(S) = R(S)^T",
           "doubly_stochastic": "the doubly stochastic W(S) drawn for S = {1, 3} is the "
                                "printed formula's (weights 1/|S|)"},
    hypotheses=(nonempty,))

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
       expected="holds", result=FIG1, parts=("matrices", EQ4.part("matrices")),
       statement="For N = 4 and S = {1, 3}, Figure 1's pull, FedAvg-average and push matrices "
                 "are R(S), A(S) and C(S) = R(S)^T.",
       quick=dict(), full=dict())
def pull_average_push(*, rng):
    """Entrywise comparison of flbounds.participation.matrices with the printed 5 x 5 matrices
    (A read with the correction that the averaging row is the server's, as the figure shows)."""
    diffs = [np.abs(pull_matrix(S13) - FIG1_R).max(), np.abs(average_matrix(S13) - FIG1_A).max(),
             np.abs(push_matrix(S13) - FIG1_C).max()]
    return Evidence(measured=[float(d) for d in diffs], theoretical=0.0, relation="==",
                    tolerance=ULP, instance=dict(S=S13))


@claim("focus.fig1.doubly_stochastic_formula", ref="Fig. 1 vs the W(S_r) formula (Sec. 3)",
       kind="example", expected="violated", result=FIG1, parts=("doubly_stochastic",),
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
                    instance=dict(S=S13),
                    details={"formula_W": W, "figure_W": FIG1_W,
                             "doubly_stochastic_defects": stochastic})


@claim("focus.fig1.doubly_stochastic_corrected", ref="Fig. 1 vs the W(S_r) formula, corrected",
       kind="example", expected="holds", corrects="focus.fig1.doubly_stochastic_formula",
       result=FIG1, parts=("doubly_stochastic",),
       statement="Figure 1's W(S) for S = {1, 3} is the printed formula with weights "
                 "1/(|S| + 1) in place of 1/|S|, and it is doubly stochastic.",
       quick=dict(), full=dict())
def doubly_stochastic_corrected(*, rng):
    """The formula with W[i,0] = W[0,i] = 1/(|S| + 1) for i in S (diagonal = 1 - the
    off-diagonal sum) reproduces the figure's matrix entrywise; row and column sums are 1."""
    s = np.asarray(S13, dtype=bool)
    W = np.zeros((s.size + 1, s.size + 1))
    W[1:, 0] = W[0, 1:] = s / (s.sum() + 1)
    W[np.arange(s.size + 1), np.arange(s.size + 1)] = 1.0 - W.sum(axis=0)
    defect = float(np.abs(W.sum(axis=0) - 1).max() + np.abs(W.sum(axis=1) - 1).max())
    return Evidence(measured=np.concatenate([W.ravel(), [defect]]),
                    theoretical=np.concatenate([FIG1_W.ravel(), [0.0]]), relation="==",
                    tolerance=ULP, instance=dict(S=S13))
