r"""The statistics behind K-Vib's Figure 2, 3 and 7 claims: Holm's rule, least-squares fits and
Monte Carlo standard errors of :mod:`flbounds.stats`, each against its definition
(:mod:`verify.stats_checks`)."""

from __future__ import annotations

from flbounds.ledger import claim
from verify.stats_checks import coverage_evidence, fit_evidence, holm_evidence


@claim("kvib.stats.holm_step_down", ref="Fig. 2; Sec. 6.1 (decision rule of the comparisons)",
       kind="algorithm", expected="holds",
       statement="The family-wise decision rule of the multi-cell Monte Carlo claims is Holm's "
                 "step-down: reject H_(1..k) for the largest k with p_(j) <= alpha/(m-j+1) "
                 "for every j <= k; adjusted p-values max_(i<=j) min(1, (m-i+1) p_(i)).",
       quick=dict(n_families=400, m_max=12), full=dict(n_families=4000, m_max=60))
def holm_step_down(*, rng, n_families, m_max):
    """Random families of m in 1..m_max p-values (some tiny, some tied), alpha in {1e-3, 0.01,
    0.05}. Measured: decisions that differ from the definition's loop plus the largest
    adjusted p-value error. Tolerance: rounding."""
    return holm_evidence(rng, n_families, m_max)


@claim("kvib.stats.exact_law_fits", ref="Thm 5.2; Fig. 3(b) (fitted exponent in K)",
       kind="algorithm", expected="holds",
       statement="The rate and exponent fits return the exponent of an exact power law "
                 "c x^a (log-log slope, with and without replicates) and the log-rate of an "
                 "exact geometric sequence e_0 rho^k.",
       quick=dict(n_laws=60), full=dict(n_laws=600))
def exact_law_fits(*, rng, n_laws):
    """Random a in [-3, 2], rho in [0.05, 0.999], 3..40 points. Measured: the largest relative
    error of the fitted exponent or log-rate. Tolerance: rounding."""
    return fit_evidence(rng, n_laws)


@claim("kvib.stats.mc_se_coverage", ref="Fig. 7 (Monte Carlo standard errors)",
       kind="algorithm", expected="holds",
       statement="The Monte Carlo standard error is std/sqrt(n): for normal samples the "
                 "interval mean +- 2 se covers the true mean with probability "
                 "P(|T_(n-1)| <= 2) exactly.",
       quick=dict(n_batches=4000, n=50), full=dict(n_batches=40000, n=50))
def mc_se_coverage(*, rng, n_batches, n):
    """Normal batches with random mean and scale. Measured: the two-sided exact binomial
    p-value of the number of covering batches; it must stay above 1e-6 (the chance of a false
    alarm)."""
    return coverage_evidence(rng, n_batches, n)
