r"""The statistics behind K-Vib's Figure 2, 3 and 7 claims: Holm's rule, least-squares fits and
Monte Carlo standard errors of :mod:`flbounds.stats`, each against its definition
(:mod:`verify.stats_checks`)."""

from __future__ import annotations

from verify.stats_checks import declare_stats_guards

declare_stats_guards("kvib", holm_ref="Fig. 2; Sec. 6.1 (decision rule of the comparisons)",
                     fit_ref="Thm 5.2; Fig. 3(b) (fitted exponent in K)",
                     coverage_ref="Fig. 7 (Monte Carlo standard errors)")
