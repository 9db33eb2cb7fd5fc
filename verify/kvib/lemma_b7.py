r"""Lemma B.7 of K-Vib (arbitrary sampling, generalising Horvath and Richtarik 2019, Lemma 1):
the result, its parts, its hypotheses and its claims.

Statement: for a proper sampling S with :math:`\mathbf P_{ij}=\Pr(\{i,j\}\subseteq S)` and
:math:`p_i=\mathbf P_{ii}`, if :math:`\mathbf P-pp^\top\preceq\mathrm{Diag}(p_1v_1,\dots,p_Nv_N)`
(eq. (18)) then :math:`E\|\sum_{i\in S}\lambda_ia_i/p_i-\bar a\|^2\le\sum_i\lambda_i^2v_i
\|a_i\|^2/p_i` (eq. (19)); RSP admits :math:`v_i=(N-K)/(N-1)`, ISP :math:`v_i=1-p_i`, and
:math:`\mathbf P-pp^\top\preceq N\,\mathrm{Diag}(\mathbf P-pp^\top)` always. Instances carry a
design: ``masks`` (the subsets) and ``probs`` (their probabilities).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling.exact import all_masks, design_moments, uniform_subset_design

from .procedures import _pair_matrix


@hypothesis("proper", "S is a proper sampling: a law on subsets with p_i = P(i in S) > 0")
def proper(*, masks, probs):
    probs = np.asarray(probs, dtype=float)
    p = probs @ np.asarray(masks, dtype=float)
    return bool(np.all(probs >= 0) and abs(probs.sum() - 1) <= 1e-12 and np.all(p > 0))


@hypothesis("RSP", "random sampling: every K-subset with probability 1/C(N, K), 1 <= K < N")
def uniform_subsets(*, masks, probs):
    sizes = np.asarray(masks).sum(axis=1)
    probs = np.asarray(probs, dtype=float)
    n = np.shape(masks)[1]
    return bool(np.all(sizes == sizes[0]) and 1 <= sizes[0] < n
                and np.allclose(probs, 1 / len(probs), rtol=1e-12, atol=0)
                and len(np.unique(np.asarray(masks), axis=0)) == len(probs))


LEMMA_B7 = result(
    "kvib.lemma_b7", ref="Lemma B.7", title="variance of arbitrary unbiased sampling",
    parts={"eq19": "eq. (18) P - pp^T <= Diag(p v) implies eq. (19)",
           "necessity": "whenever eq. (18) holds, v_i >= 1 - p_i",
           "rsp": "RSP admits v_i = (N - K)/(N - 1)",
           "isp": ("ISP admits v_i = 1 - p_i, with equality in eq. (19)",
                   "the same identity as kvib.lemma2_1:isp, checked there"),
           "n_diag": "any proper sampling has P - pp^T <= N Diag(P - pp^T)",
           "rsp_matrix": "App. B.2: for RSP, P - pp^T has off-diagonal entries K(K-1)/(N(N-1)) "
                         "and diagonal K/N (first entry K/N - K^2/N^2), as printed"},
    hypotheses=(proper, uniform_subsets.only("rsp", "rsp_matrix")))


def _smallest_rsp_matrix():
    """N = 2, K = 1, the smallest design with 1 <= K < N: the true off-diagonal is
    -1/4, the printed K(K-1)/(N(N-1)) = 0."""
    masks, probs = uniform_subset_design(2, 1)
    P = _pair_matrix(masks, probs)
    return {"N": 2, "K": 1, "true": P - np.outer(np.diag(P), np.diag(P)),
            "printed_off_diagonal": 0.0, "printed_diagonal": 0.5}


@claim("kvib.lemma_b7.rsp_matrix_printed", ref="App. B.2, random-sampling matrix",
       kind="proof-step", expected="violated", result=LEMMA_B7, parts=("rsp_matrix",),
       statement="For uniform K-subsets, P - p p^T has off-diagonal entries K(K-1)/(N(N-1)) and "
                 "diagonal K/N (first entry K/N - K^2/N^2).", quick=dict(), full=dict())
def rsp_matrix_printed(*, rng):
    r"""The printed matrix lists entries of :math:`\mathbf P`, not of
    :math:`\mathbf P-pp^\top`. Instance N = 4, K = 2 by enumeration: the true off-diagonal is
    :math:`\frac{K(K-1)}{N(N-1)}-\frac{K^2}{N^2}=-1/12`, printed 1/6; the true diagonal is
    1/4, printed 1/2 (except the first). Expected **violated** (a proof-line typo); the
    corrected matrix and eq. (18) are ``kvib.lemma_b7.rsp_constant``."""
    n, k = 4, 2
    masks, probs = uniform_subset_design(n, k)
    P = _pair_matrix(masks, probs)
    p = np.diag(P)
    cov = P - np.outer(p, p)
    printed = np.full((n, n), k * (k - 1) / (n * (n - 1)))
    np.fill_diagonal(printed, k / n)
    printed[0, 0] = k / n - k**2 / n**2
    return Evidence(measured=cov, theoretical=printed, relation="==",
                    instance=dict(masks=masks, probs=probs),
                    tolerance=Tolerance.rounding(1e-12, "enumeration sums"),
                    details={"instance": {"N": n, "K": k},
                             "smallest_instance": _smallest_rsp_matrix()})


@claim("kvib.lemma_b7.rsp_constant", ref="Lemma B.7, eqs. (18)-(19), RSP with v=(N-K)/(N-1)",
       corrects="kvib.lemma_b7.rsp_matrix_printed",
       kind="statement", expected="holds", result=LEMMA_B7, parts=("eq19", "rsp", "n_diag"),
       statement="For uniform K-subsets P - pp^T <= Diag(p v) with v = (N-K)/(N-1) (equality on "
                 "1-perp), eq. (19) holds, and any proper design has P - pp^T <= N Diag(P - pp^T).",
       quick=dict(max_clients=8, n_designs=20), full=dict(max_clients=11, n_designs=200))
def rsp_constant(*, rng, max_clients, n_designs):
    r"""Exact enumeration. Measured: (i) the largest eigenvalue of
    :math:`\mathbf P-pp^\top-\mathrm{Diag}(pv)` over (N, K) (must be <= 0, and = 0 on
    :math:`\mathbf 1^\perp`), (ii) max of the exact variance minus the eq. (19) bound over
    random vectors, (iii) the largest eigenvalue of :math:`\mathbf P-pp^\top-N\,\mathrm{Diag}`
    on random proper designs. Tolerance: eigenvalue rounding 1e-12."""
    worst_eig, worst_var, worst_n = -np.inf, -np.inf, -np.inf
    rsp_designs, any_designs = [], []
    for n in range(3, max_clients + 1):
        for k in range(1, n):
            masks, probs = uniform_subset_design(n, k)
            rsp_designs.append(dict(masks=masks, probs=probs))
            P = _pair_matrix(masks, probs)
            p = np.diag(P)
            v = (n - k) / (n - 1)
            diff = P - np.outer(p, p) - np.diag(p * v)
            worst_eig = max(worst_eig, float(np.linalg.eigvalsh(diff)[-1]))
            z = rng.standard_normal((n, 2))
            exact = design_moments(z, masks, probs).variance
            bound = float(np.sum(v / p * np.sum(z * z, axis=1)))
            worst_var = max(worst_var, exact - bound)
    for _ in range(n_designs):
        n = int(rng.integers(3, max_clients + 1))
        masks = all_masks(n)
        probs = rng.dirichlet(np.full(masks.shape[0], 0.3))
        P = _pair_matrix(masks, probs)
        if np.any(np.diag(P) <= 1e-9):
            continue
        any_designs.append(dict(masks=masks, probs=probs / probs.sum()))
        cov = P - np.outer(np.diag(P), np.diag(P))
        worst_n = max(worst_n, float(np.linalg.eigvalsh(cov - n * np.diag(np.diag(cov)))[-1]))
    # every instance meets the hypotheses of every part the claim checks: the random designs
    # of the third measurement are not RSP, so only the RSP designs are reported as instances
    # (the third measurement is over proper designs, which the RSP designs are as well)
    return Evidence(measured=[worst_eig, worst_var, worst_n], theoretical=[0.0, 0.0, 0.0],
                    instance=rsp_designs, details={"n_random_proper_designs": len(any_designs)},
                    relation="<=", tolerance=Tolerance.rounding(1e-12, "eigenvalue rounding"))


def tight_v(cov: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The smallest v = (1 - p)(1 + t (N - 1)), t in [0, 1], with cov <= Diag(p v) (eq. (18);
    t = 1 is N(1 - p), always admissible), by bisection on the largest eigenvalue."""
    n = p.size
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        v = (1 - p) * (1 + mid * (n - 1))
        lo, hi = (lo, mid) if np.linalg.eigvalsh(cov - np.diag(p * v))[-1] <= 0 else (mid, hi)
    return (1 - p) * (1 + hi * (n - 1))


@claim("kvib.lemma_b7.general_design", ref="Lemma B.7, eqs. (18)-(19), any proper sampling",
       kind="statement", expected="holds", result=LEMMA_B7, parts=("eq19", "necessity"),
       statement="For any proper sampling and any v with P - pp^T <= Diag(p v), eq. (19) "
                 "holds; and no v with some v_i < 1 - p_i satisfies eq. (18).",
       quick=dict(max_clients=7, n_designs=40), full=dict(max_clients=10, n_designs=400))
def general_design(*, rng, max_clients, n_designs):
    r"""Random proper designs (Dirichlet(0.3) laws over all subsets of N = 3..``max_clients``
    clients), exact enumeration. For each: v = the admissible N(1 - p) scaled down towards
    1 - p as far as eq. (18) still holds (bisection on the eigenvalue, so eq. (19) is tested
    near the tightest diagonal the design admits), random vectors and weights. Measured:
    (i) the largest (exact variance - eq. (19) bound)/bound, <= 0; (ii) minus the smallest,
    over designs and clients, largest eigenvalue of P - pp^T - Diag(p v) with the admissible
    v but v_i = (1 - 1e-3)(1 - p_i) for one client i: > 0 means eq. (18) fails, as the
    necessity says (measured <= 0)."""
    worst_var, worst_nec, designs = -np.inf, -np.inf, []
    for _ in range(n_designs):
        n = int(rng.integers(3, max_clients + 1))
        masks = all_masks(n)
        probs = rng.dirichlet(np.full(masks.shape[0], 0.3))
        P = _pair_matrix(masks, probs)
        p = np.diag(P).copy()
        if np.any(p <= 1e-6) or np.any(p >= 1 - 1e-6):
            continue
        designs.append(dict(masks=masks, probs=probs))
        cov = P - np.outer(p, p)
        v = tight_v(cov, p)
        z = rng.standard_normal((n, 2)) * rng.lognormal(0, 1, (n, 1))
        exact = design_moments(z, masks, probs).variance
        bound = float(np.sum(v / p * np.sum(z * z, axis=1)))
        worst_var = max(worst_var, (exact - bound) / bound)
        for i in range(n):
            v_low = v.copy()
            v_low[i] = (1 - 1e-3) * (1 - p[i])
            worst_nec = max(worst_nec, -float(np.linalg.eigvalsh(cov - np.diag(p * v_low))[-1]))
    return Evidence(measured=[worst_var, worst_nec], theoretical=[0.0, 0.0], relation="<=",
                    instance=designs, details={"n_designs": len(designs)},
                    tolerance=Tolerance.rounding(1e-12, "eigenvalue and 2^N-term sums"))
