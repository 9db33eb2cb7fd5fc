"""TODO."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling.exact import all_masks, design_moments, uniform_subset_design

from .procedures import _pair_matrix


@claim("kvib.lemma_b7.rsp_matrix_printed", ref="App. B.2, random-sampling matrix",
       kind="proof-step", expected="violated",
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
                    tolerance=Tolerance.rounding(1e-12, "enumeration sums"),
                    details={"instance": {"N": n, "K": k}})


@claim("kvib.lemma_b7.rsp_constant", ref="Lemma B.7, eqs. (18)-(19), RSP with v=(N-K)/(N-1)",
       kind="statement", expected="holds",
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
    for n in range(3, max_clients + 1):
        for k in range(1, n):
            masks, probs = uniform_subset_design(n, k)
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
        cov = P - np.outer(np.diag(P), np.diag(P))
        worst_n = max(worst_n, float(np.linalg.eigvalsh(cov - n * np.diag(np.diag(cov)))[-1]))
    return Evidence(measured=[worst_eig, worst_var, worst_n], theoretical=[0.0, 0.0, 0.0],
                    relation="<=", tolerance=Tolerance.rounding(1e-12, "eigenvalue rounding"))
