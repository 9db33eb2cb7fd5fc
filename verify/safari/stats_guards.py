r"""The statistics behind SAFARI's Table 5, Theorem 5 and Remark 6 claims: Holm's rule,
least-squares fits and Monte Carlo standard errors of :mod:`flbounds.stats`, each against its
definition (:mod:`verify.stats_checks`)."""

from __future__ import annotations

from flbounds.ledger import claim
from verify.stats_checks import (
    COVERAGE_CLAIM,
    FIT_CLAIM,
    HOLM_CLAIM,
    clopper_pearson_evidence,
    coverage_evidence,
    fit_evidence,
    holm_evidence,
)


@claim("safari.stats.holm_step_down", **HOLM_CLAIM,
       ref="Table 5 (decision rule of the q sweep)")
def holm_step_down(*, rng, n_families, m_max):
    """Holm against its definition (:func:`verify.stats_checks.holm_evidence`)."""
    return holm_evidence(rng, n_families, m_max)


@claim("safari.stats.exact_law_fits", **FIT_CLAIM,
       ref="Thm 5; Remark 6 (fitted rates and slopes)")
def exact_law_fits(*, rng, n_laws):
    """Fits of exact laws (:func:`verify.stats_checks.fit_evidence`)."""
    return fit_evidence(rng, n_laws)


@claim("safari.stats.mc_se_coverage", **COVERAGE_CLAIM,
       ref="Remark 6 (Monte Carlo standard errors)")
def mc_se_coverage(*, rng, n_batches, n):
    """Exact coverage law of mean +- 2 se (:func:`verify.stats_checks.coverage_evidence`)."""
    return coverage_evidence(rng, n_batches, n)


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
