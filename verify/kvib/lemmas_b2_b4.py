r"""Lemmas B.2, B.3 and B.4 of K-Vib (norm inequalities): the three results and the claim that
checks them. B.2: :math:`\|\sum_{i\le n}a_i\|^2\le n\sum_i\|a_i\|^2`; B.3: its expectation
form; B.4: for independent zero-mean :math:`z_i`, :math:`E\|\sum z_i\|^2=\sum E\|z_i\|^2`.
The B.4 instance carries ``z_mean`` (the draws' means; independence is by construction)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result


@hypothesis("zero_mean", "z_1, ..., z_n independent with mean 0")
def zero_mean(*, z_mean):
    return bool(np.all(np.asarray(z_mean) == 0))


LEMMA_B2 = result("kvib.lemma_b2", ref="Lemma B.2", title="norm of a sum",
                  parts={"bound": "||sum_{i<=n} a_i||^2 <= n sum_i ||a_i||^2"})
LEMMA_B3 = result("kvib.lemma_b3", ref="Lemma B.3", title="norm of a sum, in expectation",
                  parts={"bound": ("E||z_1 + ... + z_n||^2 <= n E[||z_1||^2 + ... + ||z_n||^2]",
                                   "B.2 applied to every outcome; checked through B.2")})
LEMMA_B4 = result("kvib.lemma_b4", ref="Lemma B.4", title="independent zero-mean sums",
                  parts={"equality": "E||sum_i z_i||^2 = E sum_i ||z_i||^2"},
                  hypotheses=(zero_mean,))


@claim("kvib.lemma_b2_b4.norm_inequalities", ref="Lemmas B.2-B.4", kind="statement",
       expected="holds",
       parts=(LEMMA_B2.part("bound"), LEMMA_B4.part("equality")),
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
    return Evidence(instance=dict(z_mean=np.zeros((5, 3))),
                    measured=[worst, abs(sq.mean() - exact)], theoretical=[0.0, 0.0],
                    relation="<=",
                    tolerance=Tolerance(np.array([1e-12, 4 * se]), "rounding; 4 MC SE",
                                        "B.2 ratio to rounding; B.4 mean within 4 std/sqrt(M)"))
