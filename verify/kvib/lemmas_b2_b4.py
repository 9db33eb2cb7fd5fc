"""TODO."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim


@claim("kvib.lemma_b2_b4.norm_inequalities", ref="Lemmas B.2-B.4", kind="statement",
       expected="holds",
       statement="||sum_i a_i||^2 <= n sum ||a_i||^2; for independent zero-mean z_i, "
                 "E||sum z_i||^2 = sum E||z_i||^2.",
       quick=dict(n_instances=500, n_draws=20000), full=dict(n_instances=20000, n_draws=400000))
def lemma_b2_b4(*, rng, n_instances, n_draws):
    """B.2 (and its expectation form B.3) on random vectors: max of lhs/rhs - 1 <= 0. B.4 by
    Monte Carlo with 5 independent zero-mean vectors of unequal scales: |mean - exact| within
    4 MC standard errors."""
    worst = -np.inf
    for _ in range(n_instances):
        n = int(rng.integers(1, 20))
        a = rng.standard_normal((n, 4)) + rng.standard_normal(4)
        worst = max(worst, np.sum(a.sum(0) ** 2) / (n * np.sum(a * a)) - 1)
    scales = np.array([0.5, 1.0, 2.0, 3.0, 0.1])
    z = rng.standard_normal((n_draws, 5, 3)) * scales[None, :, None]
    sq = np.sum(z.sum(axis=1) ** 2, axis=1)
    exact = 3 * np.sum(scales**2)
    se = sq.std(ddof=1) / np.sqrt(n_draws)
    return Evidence(measured=[worst, abs(sq.mean() - exact)], theoretical=[0.0, 0.0],
                    relation="<=",
                    tolerance=Tolerance(np.array([1e-12, 4 * se]), "rounding; 4 MC SE",
                                        "B.2 ratio to rounding; B.4 mean within 4 std/sqrt(M)"))
