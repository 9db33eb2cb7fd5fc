r"""The statistics behind SAFARI's Table 5, Theorem 5 and Remark 6 claims: Holm's rule,
least-squares fits and Monte Carlo standard errors of :mod:`flbounds.stats`, each against its
definition (:mod:`verify.stats_checks`)."""

from __future__ import annotations

from flbounds.ledger import claim
from verify.stats_checks import clopper_pearson_evidence, declare_stats_guards

declare_stats_guards("safari", holm_ref="Table 5 (decision rule of the q sweep)",
                     fit_ref="Thm 5; Remark 6 (fitted rates and slopes)",
                     coverage_ref="Remark 6 (Monte Carlo standard errors)")


@claim("safari.stats.clopper_pearson_exact", ref="Thm 1 (Clopper-Pearson bounds of the "
       "failure frequencies)", kind="algorithm", expected="holds",
       statement="The Clopper-Pearson interval is exact: for every p each one-sided miss "
                 "probability P_p(high(K) < p), P_p(low(K) > p) is at most alpha/2.",
       quick=dict(sizes=(1, 7, 40, 200), levels=(0.9, 0.99)),
       full=dict(sizes=(1, 2, 7, 40, 200, 1000), levels=(0.9, 0.99, 0.9999)))
def clopper_pearson_exact(*, rng, sizes, levels):
    """Exact binomial sums, K ~ Bin(n, p), at p just beyond every interval end (where the
    tails are largest) and on a grid. Measured: the largest tail minus alpha/2. Tolerance:
    rounding."""
    del rng  # deterministic
    return clopper_pearson_evidence(sizes, levels)
