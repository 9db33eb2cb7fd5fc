r"""K-Vib App. B.2 (arbitrary sampling, Lemma B.7) and Algorithm 2's printed probability line
([003]; spec section 6 items 2 and 6)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import KVib, optimal_isp_probabilities
from flbounds.sampling.exact import all_masks, design_moments, uniform_subset_design


def _pair_matrix(masks, probs):
    """P_ij = Pr({i, j} in S) of a design given by masks and probabilities."""
    m = masks.astype(float)
    return (m * probs[:, None]).T @ m


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


@claim("kvib.alg2.printed_proportional", ref="Algorithm 2 ('p_i^t proportional to "
       "sqrt(omega(i)+gamma)  by Lemma 5.1')", kind="remark", expected="violated",
       statement="Read without its Lemma 5.1 pointer, normalising p proportional to "
                 "sqrt(omega + gamma) to sum K gives valid inclusion probabilities (<= 1).",
       quick=dict(), full=dict())
def alg2_printed_proportional(*, rng):
    r"""Read literally, the line gives :math:`p=K\sqrt{w}/\sum\sqrt{w}`, which exceeds 1 when
    one client dominates: w = (1, 1, 100), K = 2 gives p_3 = 20/12 = 1.67. The capped Lemma 5.1
    solution (what :class:`flbounds.sampling.KVib` uses) gives (0.5, 0.5, 1). Expected
    **violated** for the literal reading only. Algorithm 2's line carries the pointer
    "by Lemma 5.1", whose solution is the capped FTRL probability, so the line is shorthand
    for the capped rule and Algorithm 2 itself is not wrong; hence kind ``remark`` (a notation
    hazard for implementers), not ``algorithm``. The capped form is checked by
    ``kvib.eq12.mixing_and_estimates`` and ``kvib.lemma5_1.corrected``."""
    w = np.array([1.0, 1.0, 100.0])
    plain = 2 * np.sqrt(w) / np.sqrt(w).sum()
    # the library's Algorithm 2 line at omega + gamma = w (no mixing): the capped rule
    sampler = KVib(3, 2, 10, gamma=1.0, theta=0.0)
    sampler.omega[:] = w - sampler.gamma
    return Evidence(measured=float(plain.max()), theoretical=1.0, relation="<=",
                    tolerance=Tolerance.exact(),
                    details={"plain": plain, "capped": optimal_isp_probabilities(np.sqrt(w), 2),
                             "library_kvib_line": sampler.probabilities()})


@claim("kvib.thm4_1.proof_drops_2_over_r", ref="Proof of Thm 4.1, App. C.2 before eq. (31) "
       "('10 R L^2 eta_l^2 dominates ... with R >= 2')", kind="proof-step", expected="violated",
       statement="Under the step condition eta_l <= 1/(8RL) used next, 10 R L^2 eta_l^2 >= 2/R, "
                 "so the 2 sigma_l^2/R term may be dropped.",
       quick=dict(max_local_steps=50), full=dict(max_local_steps=1000))
def proof_drops_2_over_r(*, rng, max_local_steps):
    r"""With :math:`\eta_l\le1/(8RL)`,
    :math:`10RL^2\eta_l^2\le\frac{10}{64R}<\frac2R` for every R, so the kept coefficient never
    dominates the dropped one; the ratio is at most 10/128. Measured: the largest ratio
    :math:`10RL^2\eta_l^2/(2/R)` over R = 2..max and the admissible extreme
    :math:`\eta_l=1/(8RL)` (L = 1; the ratio is scale-free). The claimed relation is ratio >= 1.
    Expected **violated**; the corrected :math:`\sigma^2` keeps :math:`+2\sigma_l^2/R`
    (spec section 6 item 8). Our FL checks use :math:`\sigma_l=0`, where the slip is harmless."""
    ratios = [10 * r * (1 / (8 * r)) ** 2 / (2 / r) for r in range(2, max_local_steps + 1)]
    return Evidence(measured=max(ratios), theoretical=1.0, relation=">=",
                    tolerance=Tolerance.exact("closed form"),
                    details={"ratio_bound": 10 / 128})
