r"""Expected mixing matrices and averaging weights under arbitrary participation ([002] Sec. 3,
Assumption 1 and its cases, eq. (5)).

Notation: :math:`p_i = P(i \in S)` (inclusion), :math:`q_i = E[1\{i\in S\}/|S|]` (averaging
weight, 0/0 := 0). Exact values come from :mod:`flbounds.participation`; Monte Carlo means use
independent rounds drawn from the claim's ``rng``, and tolerances are 4 MC standard errors.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import (
    Bernoulli,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
    average_matrix,
    pull_matrix,
)
from flbounds.stats import mc_mean

from .assumptions import a1

EQ5 = result(
    "focus.eq5", ref="Sec. 3, eq. (5)", kind="equation",
    title="expected pull and averaging matrices under Assumption 1",
    parts={"pull_mean": "E R(S_r) = [[1, 0], [q, I - diag(q)]]",
           "average_mean": "E A(S_r) = [[0, q'], [0, I]]"},
    hypotheses=(a1,))


@hypothesis("case2", "Case 2: independent Bernoulli(p_i) participation, p_i in (0, 1]")
def case2(*, p):
    p = np.asarray(p, dtype=float)
    return bool(p.size > 0 and np.all((p > 0) & (p <= 1)))


@hypothesis("case3", "Case 3: m of N clients drawn without replacement with categorical "
                     "weights w_i > 0, sum w = 1")
def case3(*, w, m):
    w = np.asarray(w, dtype=float)
    return bool(np.all(w > 0) and abs(w.sum() - 1) < 1e-12 and 1 <= m <= w.size)


@hypothesis("case3a", "Case 3a: m of N clients drawn uniformly without replacement, 1 <= m <= N")
def case3a(*, n_clients, m):
    return 1 <= m <= n_clients


ASSUMPTION1 = result(
    "focus.assumption1", ref="Assumption 1", title="arbitrary client participation and its cases",
    parts={"case2": "Case 2 (active): q_i ~ p_i / sum_j p_j for close p_i (exactly q_i = p_i "
                    "int_0^1 prod_{j != i}(1 - p_j + p_j t) dt, and q_i <= p_i)",
           "case3": "Case 3 (passive): the categorical sampling weights are the averaging "
                    "weights q_i",
           "case3a": "Case 3a (uniform): p_i = m/N and q_i = 1/m",
           "definition": "q_i = E[1_i / sum_j 1_j] for every case's participation process"},
    hypotheses=(case2.only("case2"), case3.only("case3"), case3a.only("case3a")))

P_EQ5 = np.array([0.3, 0.5, 0.7, 0.9])  # the spec's / audit's instance
# Figure 4's "arbitrary" sampling weights in the reference notebook (np.random.seed(5), N = 16)
NOTEBOOK_WEIGHTS = np.array([.0297, .1126, .0277, .1187, .0637, .0795, .0992, .0676, .0392,
                             .0253, .0116, .0957, .0577, .0215, .1138, .0363])


def _matrix_means(rng, n_draws):
    """MC means of R(S)[i, 0] and A(S)[0, i] (matrices built literally, one per draw)."""
    plan = Bernoulli(P_EQ5).plan(rng, n_draws)
    pull = np.array([pull_matrix(s)[1:, 0] for s in plan])
    avg = np.array([average_matrix(s)[0, 1:] if s.any() else np.zeros(s.size) for s in plan])
    return mc_mean(pull), mc_mean(avg)


@claim("focus.eq5.pull_mean_printed", ref="Sec. 3, eq. (5)", kind="statement",
       expected="violated", result=EQ5, parts=("pull_mean",),
       statement="E R(S_r) = [[1, 0], [q, I - diag(q)]]: the expected pull matrix has the "
                 "averaging weights q_i in its first column.",
       quick=dict(n_draws=20000), full=dict(n_draws=400000))
def pull_mean_printed(*, rng, n_draws):
    """R(S)[i, 0] = 1{i in S}, so E R(S)[i, 0] = p_i, not q_i (q_i <= p_i, and much smaller:
    for p = (.3, .5, .7, .9), q = (.104, .186, .284, .414)). The MC mean of the literally built
    R(S) is compared with the printed q; it is ~100 SE away even at 2e4 draws, so `violated` is
    certain. Counterexample: Bernoulli p = (0.3, 0.5, 0.7, 0.9)."""
    pull, _ = _matrix_means(rng, n_draws)
    q = Bernoulli(P_EQ5).aggregation_weights()
    return Evidence(measured=pull.mean, theoretical=q, relation="==", instance=dict(q=q),
                    tolerance=Tolerance.mc(pull.se), details={"p": P_EQ5, "q": q})


@claim("focus.eq5.pull_mean_corrected", ref="Sec. 3, eq. (5), corrected", kind="statement",
       expected="holds", result=EQ5, parts=("pull_mean",),
       statement="Corrected: E R(S_r) = [[1, 0], [p, I - diag(p)]] with p_i = P(i in S_r).",
       quick=dict(n_draws=20000), full=dict(n_draws=400000))
def pull_mean_corrected(*, rng, n_draws):
    """Same draws as the printed check, compared with p: holds within 4 MC SE (audit: MC
    0.3001/0.4997/0.6992/0.8999)."""
    pull, _ = _matrix_means(rng, n_draws)
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
    _, avg = _matrix_means(rng, n_draws)
    q = Bernoulli(P_EQ5).aggregation_weights()
    return Evidence(measured=avg.mean, theoretical=q, relation="==", instance=dict(q=q),
                    tolerance=Tolerance.mc(avg.se), details={"q": q})


def _mc_weights(plan):
    sizes = plan.sum(axis=1, keepdims=True)
    return mc_mean(np.divide(plan, sizes, out=np.zeros(plan.shape), where=sizes > 0))


@claim("focus.assumption1.case2_bernoulli_q", ref="Assumption 1, Case 2", kind="statement",
       expected="holds", result=ASSUMPTION1, parts=("case2",),
       statement="Under independent Bernoulli(p_i) participation, q_i = E[1_i / sum_j 1_j] = "
                 "p_i * int_0^1 prod_{j != i}(1 - p_j + p_j t) dt (two clients: "
                 "q_1 = p_1 (1 - p_2/2)), and q_i <= p_i.",
       quick=dict(n_draws=50000), full=dict(n_draws=1000000))
def case2_bernoulli_q(*, rng, n_draws):
    """The paper only says q_i ~ p_i / sum_j p_j for close p_i; the exact value is the
    integral (spec 1.5), computed by Gauss-Legendre in flbounds.participation. Checked against
    MC (4 SE) for p = (.1,.2,.3,.5,.6,.8,.9,1) and against the two-client closed form
    (rounding tolerance 1e-15). Also q_i <= p_i (appended as p - q >= 0)."""
    p = np.array([.1, .2, .3, .5, .6, .8, .9, 1.0])
    proc = Bernoulli(p)
    q = proc.aggregation_weights()
    mc = _mc_weights(proc.plan(rng, n_draws))
    two = Bernoulli([0.3, 0.8]).aggregation_weights()
    two_formula = np.array([0.3 * (1 - 0.8 / 2), 0.8 * (1 - 0.3 / 2)])
    measured = np.concatenate([np.abs(mc.mean - q), np.abs(two - two_formula), q - p])
    tol = np.concatenate([4 * mc.se, np.full(2, 1e-15), np.zeros(p.size)])
    return Evidence(measured=measured, theoretical=np.zeros(measured.size), relation="<=",
                    tolerance=Tolerance(tol, "4 MC SE / rounding 1e-15 / exact",
                                        "|MC - exact| <= 4 std/sqrt(n); two-client formula: the "
                                        "Gauss rule is exact for degree N-1 polynomials, rounding "
                                        "~1e-16; q - p <= 0: exact inequality"),
                    instance=[dict(p=p), dict(p=np.array([0.3, 0.8]))],
                    details={"p": p, "q_exact": q, "q_mc": mc.mean, "q_mc_se": mc.se})


@claim("focus.assumption1.case3a_printed", ref="Assumption 1, Case 3a", kind="remark",
       expected="violated", result=ASSUMPTION1, parts=("case3a",),
       statement="Uniform sampling of m of N clients without replacement gives p_i = m/N and "
                 "q_i = 1/m.",
       quick=dict(n_clients=8, m=2, n_draws=20000), full=dict(n_clients=16, m=4, n_draws=400000))
def case3a_printed(*, rng, n_clients, m, n_draws):
    """|S| = m always, so q_i = E[1_i]/m = (m/N)/m = 1/N, not 1/m (the q_i would then sum to
    N/m > 1). Measured: MC mean of 1_i/|S|, compared with the printed 1/m (4 SE): violated,
    e.g. 0.125 vs 0.5 for N = 8, m = 2."""
    mc = _mc_weights(UniformWithoutReplacement(n_clients, m).plan(rng, n_draws))
    return Evidence(measured=mc.mean, theoretical=np.full(n_clients, 1.0 / m), relation="==",
                    instance=dict(n_clients=n_clients, m=m),
                    tolerance=Tolerance.mc(mc.se), details={"n_clients": n_clients, "m": m})


@claim("focus.assumption1.case3a_corrected", ref="Assumption 1, Case 3a, corrected",
       kind="remark", expected="holds", result=ASSUMPTION1, parts=("case3a",),
       statement="Corrected: uniform m-of-N sampling gives q_i = 1/N (and p_i = m/N).",
       quick=dict(n_clients=8, m=2, n_draws=20000), full=dict(n_clients=16, m=4, n_draws=400000))
def case3a_corrected(*, rng, n_clients, m, n_draws):
    """Same draws; MC means of 1_i/|S| and 1_i against 1/N and m/N (4 SE)."""
    plan = UniformWithoutReplacement(n_clients, m).plan(rng, n_draws)
    mc, incl = _mc_weights(plan), mc_mean(plan.astype(float))
    return Evidence(measured=np.concatenate([mc.mean, incl.mean]),
                    theoretical=np.concatenate([np.full(n_clients, 1 / n_clients),
                                                np.full(n_clients, m / n_clients)]),
                    relation="==", tolerance=Tolerance.mc(np.concatenate([mc.se, incl.se])),
                    instance=dict(n_clients=n_clients, m=m))


@claim("focus.assumption1.case3_weights_are_q", ref="Assumption 1, Case 3; Fig. 4 (code)",
       kind="remark", expected="violated", result=ASSUMPTION1, parts=("case3",),
       statement="Passive participation: when the server samples m clients without replacement "
                 "with categorical weights w_i, the averaging weights q_i are those w_i.",
       quick=dict(), full=dict())
def case3_weights_are_q(*, rng):
    """Without replacement, q_i = pi_i / m with pi_i the exact inclusion probability of
    successive sampling, which differs from w_i. Instance: the reference notebook's weights
    (seed 5, N = 16, m = 4): |q_i - w_i| reaches ~8e-3 (q in [.0132, .1106] vs w in
    [.0116, .1187]). Exact (subset recursion), so the tolerance is rounding only (1e-12)."""
    w = NOTEBOOK_WEIGHTS / NOTEBOOK_WEIGHTS.sum()
    q = WeightedWithoutReplacement(w, 4).aggregation_weights()
    return Evidence(measured=q, theoretical=w, relation="==", instance=dict(w=w, m=4),
                    tolerance=Tolerance.rounding(1e-12, "subset DP over 2^16 sets, sums of "
                                                 "<= 2^16 positive terms: << 1e-12"),
                    details={"max_abs_diff": float(np.max(np.abs(q - w)))})
