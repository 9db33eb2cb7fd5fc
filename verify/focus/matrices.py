r"""The stochastic matrices of FOCUS: Sec. 3 eqs. (4)-(5) (one round's pull, averaging and push
matrices and their means under Assumption 1), App. C eqs. (33)-(36) (consensus limit, mass
preservation) and App. D eqs. (41)-(45) (FedAvg's virtual matrices).

Participation sets are enumerated exhaustively (all :math:`2^N` masks), so every check here is
exact up to floating-point rounding of sums of 0/1 entries.
"""

from __future__ import annotations

import itertools

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import (
    Bernoulli,
    average_matrix,
    pull_matrix,
    push_matrix,
    subset_distribution,
)
from flbounds.stats import mc_mean
from flbounds.tolerances import EPS, summation_bound

from .assumptions import a1

EQ4 = result(
    "focus.eq4", ref="Sec. 3, eq. (4)", kind="equation",
    title="pull, averaging and push matrices of one round",
    parts={"pull": "R(S) is nonnegative and row stochastic for every participation set S",
           "average": "A(S) is row stochastic, its server row the participants' mean (the "
                      "server row, as corrected)",
           "push": "C(S) = R(S)^T is column stochastic for every participation set S",
           "matrices": "R(S), A(S), C(S) as defined entrywise in Sec. 3"})


EQ5 = result(
    "focus.eq5", ref="Sec. 3, eq. (5)", kind="equation",
    title="expected pull and averaging matrices under Assumption 1",
    parts={"pull_mean": "E R(S_r) = [[1, 0], [q, I - diag(q)]]",
           "average_mean": "E A(S_r) = [[0, q'], [0, I]]"},
    hypotheses=(a1,))


def _perron_pair(R, p) -> bool:
    R, p = np.asarray(R, dtype=float), np.asarray(p, dtype=float)
    stochastic = bool(np.all(R >= 0) and np.allclose(R.sum(axis=1), 1, rtol=0, atol=1e-14))
    return stochastic and bool(np.allclose(p @ R, p, atol=1e-14) and abs(p.sum() - 1) < 1e-14)


@hypothesis("R", "R is primitive and row stochastic, p its left Perron vector (p'R = p', "
                 "sum p = 1)")
def perron(*, R, p):
    n = np.asarray(R).shape[0]
    primitive = bool(np.all(np.linalg.matrix_power(np.asarray(R, dtype=float),
                                                   (n - 1) ** 2 + 1) > 0))
    return primitive and _perron_pair(R, p)


@hypothesis("R_stochastic", "R is row stochastic with left eigenvector p for eigenvalue 1 "
                            "(sum p = 1), as example (34) states")
def stochastic_pair(*, R, p):
    return _perron_pair(R, p)


@hypothesis("C", "every C_k is column stochastic")
def column_stochastic(*, C_column_sums_defect):
    return C_column_sums_defect <= 1e-15


APP_C = result(
    "focus.app_c", ref="App. C, eqs. (33)-(36)", kind="section",
    title="push-pull matrix facts: consensus limit and mass preservation",
    parts={"eq33": "eq. (33): for a primitive row-stochastic R with left Perron vector p, "
                   "lim_k R^k x_0 = p 1' x_0",
           "example34": "example (34): R^k -> 1 p' with p = (0.5, 0, 0.5, 0)",
           "mass": "eqs. (35)-(36): for column-stochastic C_k, 1'(prod C_k) x_0 = 1' x_0"},
    hypotheses=(perron.only("eq33"), stochastic_pair.only("example34"),
                column_stochastic.only("mass")))

FIG6 = result("focus.fig6", ref="Figure 6", title="FL as a graph with pull and push rows",
              not_checked="a drawing; the matrices are checked by the eq. (4) and App. C claims")

FIG7 = result("focus.fig7", ref="Figure 7", title="equivalent FedAvg in terms of the server model",
              not_checked="a drawing; the equivalent form is checked by "
                          "focus.eq44.virtual_fedavg_matrices")

APP_D = result(
    "focus.app_d", ref="App. D, eqs. (41)-(45)", kind="section",
    title="FedAvg's virtual (rank-one) mixing matrices",
    parts={"eq44": "eq. (44): W_{1,3} has every row [0, 1/2, 0, 1/2, 0], W_{2,3,4} every row "
                   "[0, 0, 1/3, 1/3, 1/3]",
           "eq45": "eq. (45): E W(S_r) = 1 [0, q'] (rounds with a non-empty S)"},
    hypotheses=(a1.only("eq45"),))

S_13 = np.array([True, False, True, False])  # N = 4, S = {1, 3}


def all_masks(n_clients: int) -> np.ndarray:
    """Every participation mask over ``n_clients`` clients, shape (2^N, N)."""
    return np.array(list(itertools.product([False, True], repeat=n_clients)), dtype=bool)


@claim("focus.matrices.pull_row_stochastic", ref="Sec. 3, eq. (4); App. C",
       kind="statement", expected="holds", result=EQ4, parts=("pull",),
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
       kind="statement", expected="holds", result=EQ4, parts=("push",),
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
       kind="statement", expected="holds", result=EQ4, parts=("average",),
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
       expected="holds", result=APP_C, parts=("mass",),
       statement="For any sequence of column-stochastic C_k, 1^T (prod C_k) x_0 = 1^T x_0.",
       quick=dict(n_clients=8, n_steps=200, dim=3), full=dict(n_clients=32, n_steps=5000, dim=5))
def mass_preservation(*, rng, n_clients, n_steps, dim):
    """Each push moves whole rows into the server row; the sum changes only by rounding.

    Tolerance: one addition per step into the server row, each off by at most
    eps * (running total of |x|), hence n_steps * eps * sum|x_0| per coordinate.
    """
    x = rng.standard_normal((n_clients + 1, dim))
    mass0 = x.sum(axis=0)
    defect = 0.0
    for _ in range(n_steps):
        C = push_matrix(rng.random(n_clients) < 0.5)
        defect = max(defect, float(np.max(np.abs(C.sum(axis=0) - 1))))
        x = C @ x
    scale = np.abs(mass0).sum() + np.abs(x).sum()
    return Evidence(measured=float(np.max(np.abs(x.sum(axis=0) - mass0))), theoretical=0.0,
                    relation="==", instance=dict(C_column_sums_defect=defect),
                    tolerance=Tolerance.rounding(summation_bound(n_steps, scale),
                                                 "n_steps * eps * sum|x| (one add per step)"))


# Example (34): R = (1/2)[[1,0,1,0],[1,1,0,0],[1,0,1,0],[1,0,0,1]], left Perron vector p.
EXAMPLE_34 = 0.5 * np.array([[1, 0, 1, 0], [1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]], float)
EXAMPLE_34_P = np.array([0.5, 0.0, 0.5, 0.0])
# Example (34) is not primitive (columns 2 and 4 of R^k stay 0 off the diagonal: those nodes
# are transient, p has zeros), so eq. (33)'s counterexample uses a primitive R: (34) mixed
# with the uniform matrix, every entry positive, not doubly stochastic.
PRIMITIVE_R = 0.5 * EXAMPLE_34 + 0.5 * np.full((4, 4), 0.25)
SMALL_R = np.array([[0.5, 0.5], [0.25, 0.75]])  # primitive, left Perron vector (1/3, 2/3)


def left_perron(R) -> np.ndarray:
    """The left Perron vector of a row-stochastic R (p'R = p', sum p = 1), by a linear solve."""
    n = R.shape[0]
    M = np.vstack([(R.T - np.eye(n))[:-1], np.ones(n)])
    return np.linalg.solve(M, np.eye(n)[-1])


@claim("focus.matrices.consensus_example34", ref="App. C, example (34)", kind="example",
       expected="holds", result=APP_C, parts=("example34",),
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
                    instance=dict(R=EXAMPLE_34, p=EXAMPLE_34_P),
                    details={"perron_vector": p})


@claim("focus.eq33.consensus_limit_printed", ref="App. C, eq. (33)", kind="remark",
       expected="violated", result=APP_C, parts=("eq33",),
       statement="For a primitive row-stochastic R with left Perron vector p, "
                 "lim_k R^k x_0 = p 1^T x_0.",
       quick=dict(), full=dict())
def consensus_limit_printed(*, rng):
    """R^k -> 1 p^T, so the limit is 1 (p^T x_0) (every entry the p-weighted average), not
    p (1^T x_0). Counterexample: the primitive R = (R_34 + 1 1'/4)/2 (every entry positive;
    p = (3/8, 1/6, 7/24, 1/6)), x_0 = (1, 2, 3, 4): the limit is 2.25 * 1 while
    p 1^T x_0 = (3.75, 1.67, 2.92, 1.67); smallest: N = 2, R = [[1/2, 1/2], [1/4, 3/4]],
    x_0 = (1, 2): limit (5/3, 5/3) vs (1, 2). Example (34) itself is not primitive (its nodes 2
    and 4 are transient), so it is outside (33)'s hypothesis; the ledger's predicate found it
    (issue 36) and the counterexample moved to a primitive R. The corrected statement on
    (34) is focus.matrices.consensus_example34."""
    x0 = np.array([1.0, 2.0, 3.0, 4.0])
    p = left_perron(PRIMITIVE_R)
    limit = np.linalg.matrix_power(PRIMITIVE_R, 200) @ x0
    # the smallest instance: N = 2, R = [[1/2, 1/2], [1/4, 3/4]] (p = (1/3, 2/3)), x_0 = (1, 2):
    # the limit is (5/3, 5/3), the printed p 1'x_0 = (1, 2)
    p2 = left_perron(SMALL_R)
    limit2 = np.linalg.matrix_power(SMALL_R, 200) @ np.array([1.0, 2.0])
    return Evidence(measured=np.concatenate([limit, limit2]),
                    theoretical=np.concatenate([p * x0.sum(), p2 * 3.0]), relation="==",
                    instance=[dict(R=PRIMITIVE_R, p=p), dict(R=SMALL_R, p=p2)],
                    tolerance=Tolerance.rounding(1e-12, "200 products of 4x4 stochastic "
                                                 "matrices: ~200 eps"),
                    details={"corrected": np.ones(4) * (p @ x0), "perron_vector": p,
                             "smallest_instance": {"R": SMALL_R, "x0": [1.0, 2.0],
                                                   "limit": limit2, "printed": p2 * 3.0}})


@claim("focus.eq33.consensus_limit_corrected", ref="App. C, eq. (33), corrected", kind="remark",
       expected="holds", corrects="focus.eq33.consensus_limit_printed", result=APP_C,
       parts=("eq33",),
       statement="Corrected: for a primitive row-stochastic R with left Perron vector p, "
                 "lim_k R^k x_0 = 1 p^T x_0 (every entry the p-weighted average of x_0).",
       quick=dict(n_random=3), full=dict(n_random=20))
def consensus_limit_corrected(*, rng, n_random):
    """The printed counterexample's R and x_0, plus random primitive R (positive 4 x 4
    row-stochastic, so primitive) with random x_0: R^200 x_0 against 1 (p' x_0), p from a
    linear solve. The second eigenvalue of these R is at most 1/2 in modulus in practice, so
    200 powers leave no truncation error; tolerance as for the printed claim (200 products
    of 4 x 4 stochastic matrices)."""
    mats = [PRIMITIVE_R] + [M / M.sum(axis=1, keepdims=True)
                            for M in rng.uniform(0.05, 1.0, size=(n_random, 4, 4))]
    x0s = [np.array([1.0, 2.0, 3.0, 4.0])] + list(rng.standard_normal((n_random, 4)))
    measured, theoretical, instances = [], [], []
    for R, x0 in zip(mats, x0s, strict=True):
        p = left_perron(R)
        measured.append(np.linalg.matrix_power(R, 200) @ x0)
        theoretical.append(np.ones(4) * (p @ x0))
        instances.append(dict(R=R, p=p))
    return Evidence(measured=np.concatenate(measured), theoretical=np.concatenate(theoretical),
                    relation="==", instance=instances,
                    tolerance=Tolerance.rounding(1e-12 * max(1.0, float(np.abs(x0s).max())),
                                                 "200 products of 4x4 stochastic matrices: "
                                                 "~200 eps x max|x_0|"))


def virtual_fedavg_matrix(s) -> np.ndarray:
    """The rank-one W(S) = 1 w_S^T of (41)-(44), w_S = [0, s/|S|]."""
    s = np.asarray(s, dtype=bool)
    w = np.concatenate([[0.0], s / s.sum()])
    return np.outer(np.ones(s.size + 1), w)


@claim("focus.eq44.virtual_fedavg_matrices", ref="App. D, eqs. (44)-(45)", kind="example",
       expected="holds", result=APP_D, parts=("eq44", "eq45"),
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
    diffs = [np.abs(virtual_fedavg_matrix(S_13) - w13).max(),
             np.abs(virtual_fedavg_matrix([False, True, True, True]) - w234).max(),
             np.abs(mean - expected).max()]
    return Evidence(measured=[float(d) for d in diffs], theoretical=0.0, relation="==",
                    tolerance=Tolerance.rounding(1e-15, "sums of 16 products of probabilities"),
                    instance=dict(q=proc.aggregation_weights(),
                                  empty_probability=proc.empty_probability()))


P_EQ5 = np.array([0.3, 0.5, 0.7, 0.9])  # the spec's / audit's instance


def _pull_mean(rng, n_draws):
    """MC mean of R(S)[i, 0] (the matrix built literally, one per draw)."""
    plan = Bernoulli(P_EQ5).plan(rng, n_draws)
    return mc_mean(np.array([pull_matrix(s)[1:, 0] for s in plan]))


def _average_mean(rng, n_draws):
    """MC mean of A(S)[0, i] (the matrix built literally, one per draw) over the same plan
    as :func:`_pull_mean` draws from ``rng``."""
    plan = Bernoulli(P_EQ5).plan(rng, n_draws)
    return mc_mean(np.array([average_matrix(s)[0, 1:] if s.any() else np.zeros(s.size)
                             for s in plan]))


def exact_pull_column(p) -> np.ndarray:
    """E R(S)[i, 0] over Bernoulli(p) participation, by enumerating the 2^N sets (exact)."""
    proc = Bernoulli(p)
    masks, probs = subset_distribution(proc)
    return sum(w * pull_matrix(s)[1:, 0] for s, w in zip(masks, probs, strict=True))


@claim("focus.eq5.pull_mean_printed", ref="Sec. 3, eq. (5)", kind="statement",
       expected="violated", result=EQ5, parts=("pull_mean",),
       statement="E R(S_r) = [[1, 0], [q, I - diag(q)]]: the expected pull matrix has the "
                 "averaging weights q_i in its first column (q as defined in Assumption 1, "
                 "and q conditioned on a non-empty round: both readings tested).",
       quick=dict(), full=dict())
def pull_mean_printed(*, rng):
    """R(S)[i, 0] = 1{i in S}, so E R(S)[i, 0] = p_i, not q_i (q_i <= p_i, and much smaller:
    for p = (.3, .5, .7, .9), q = (.104, .186, .284, .414)). The mean of the literally built
    R(S) is computed exactly over the 2^N participation sets and compared with both readings
    of the printed q: q_i = E[1_i/|S|] (Assumption 1) and q_hat = q / sum_j q_j (conditioned
    on a non-empty round); both fail on the spec's instance p = (0.3, 0.5, 0.7, 0.9) (ratios
    p/q and p/q_hat in details). Smallest instance where both readings fail: N = 2,
    p = (1/2, 1) (q = q_hat = (1/4, 3/4) vs p); at N = 1 the unconditional reading holds
    (q = p) and at N = 2, p = (1/2, 1/2) the conditional one does (q_hat = 1/2 = p).
    Tolerance: rounding of sums of 2^N products."""
    rows = []
    for p in (P_EQ5, np.array([0.5, 1.0])):
        q = Bernoulli(p).aggregation_weights()
        rows.append(dict(p=p, pull=exact_pull_column(p), q=q, q_hat=q / q.sum()))
    measured = np.concatenate([np.tile(r["pull"], 2) for r in rows])
    theoretical = np.concatenate([np.concatenate([r["q"], r["q_hat"]]) for r in rows])
    return Evidence(measured=measured, theoretical=theoretical, relation="==",
                    instance=[dict(q=r["q"]) for r in rows],
                    tolerance=Tolerance.rounding(1e-15, "sums of 2^N <= 16 products of "
                                                 "probabilities"),
                    details={"rows": rows,
                             "ratio_p_over_q": [r["pull"] / r["q"] for r in rows],
                             "ratio_p_over_q_hat": [r["pull"] / r["q_hat"] for r in rows]})


@claim("focus.eq5.pull_mean_corrected", ref="Sec. 3, eq. (5), corrected", kind="statement",
       expected="holds",
       corrects="focus.eq5.pull_mean_printed", result=EQ5, parts=("pull_mean",),
       statement="Corrected: E R(S_r) = [[1, 0], [p, I - diag(p)]] with p_i = P(i in S_r).",
       quick=dict(n_draws=20000), full=dict(n_draws=400000))
def pull_mean_corrected(*, rng, n_draws):
    """Same draws as the printed check, compared with p: holds within 4 MC SE (audit: MC
    0.3001/0.4997/0.6992/0.8999)."""
    pull = _pull_mean(rng, n_draws)
    return Evidence(measured=pull.mean, theoretical=P_EQ5, relation="==",
                    instance=dict(q=Bernoulli(P_EQ5).aggregation_weights()),
                    tolerance=Tolerance.mc(pull.se), details={"p": P_EQ5})


@claim("focus.eq5.average_mean", ref="Sec. 3, eq. (5)", kind="statement", expected="holds",
       result=EQ5, parts=("average_mean",),
       statement="E A(S_r) = [[0, q^T], [0, I]]: the expected averaging row is q.",
       quick=dict(n_draws=20000), full=dict(n_draws=400000))
def average_mean(*, rng, n_draws):
    """A(S)[0, i] = 1{i in S}/|S| (0 for an empty S, the skipped round), whose mean is q_i by
    definition; the paper's A-bar is right. 4 MC SE."""
    avg = _average_mean(rng, n_draws)
    q = Bernoulli(P_EQ5).aggregation_weights()
    return Evidence(measured=avg.mean, theoretical=q, relation="==", instance=dict(q=q),
                    tolerance=Tolerance.mc(avg.se), details={"q": q})
