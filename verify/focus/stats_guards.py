r"""The statistics behind FOCUS's Assumption 1, Theorem 1 and Figure 9 claims: Holm's rule,
least-squares fits and Monte Carlo standard errors of :mod:`flbounds.stats`, each against its
definition (:mod:`verify.stats_checks`)."""

from __future__ import annotations

from flbounds.ledger import claim
from verify.stats_checks import (
    COVERAGE_CLAIM,
    FIT_CLAIM,
    HOLM_CLAIM,
    coverage_evidence,
    fit_evidence,
    holm_evidence,
)


@claim("focus.stats.holm_step_down", **HOLM_CLAIM,
       ref="Fig. 9; App. G.2 (decision rule of the comparisons)")
def holm_step_down(*, rng, n_families, m_max):
    """Holm against its definition (:func:`verify.stats_checks.holm_evidence`)."""
    return holm_evidence(rng, n_families, m_max)


@claim("focus.stats.exact_law_fits", **FIT_CLAIM,
       ref="Thm 1(a), eq. (23) (fitted linear rate)")
def exact_law_fits(*, rng, n_laws):
    """Fits of exact laws (:func:`verify.stats_checks.fit_evidence`)."""
    return fit_evidence(rng, n_laws)


@claim("focus.stats.mc_se_coverage", **COVERAGE_CLAIM,
       ref="Thm 1(a), eq. (23) (Monte Carlo standard errors)")
def mc_se_coverage(*, rng, n_batches, n):
    """Exact coverage law of mean +- 2 se (:func:`verify.stats_checks.coverage_evidence`)."""
    return coverage_evidence(rng, n_batches, n)
