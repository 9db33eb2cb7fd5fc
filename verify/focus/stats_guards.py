r"""The statistics behind FOCUS's Assumption 1, Theorem 1 and Figure 9 claims: Holm's rule,
least-squares fits and Monte Carlo standard errors of :mod:`flbounds.stats`, each against its
definition (:mod:`verify.stats_checks`)."""

from __future__ import annotations

from verify.stats_checks import declare_stats_guards

declare_stats_guards("focus", holm_ref="Fig. 9; App. G.2 (decision rule of the comparisons)",
                     fit_ref="Thm 1(a), eq. (23) (fitted linear rate)",
                     coverage_ref="Thm 1(a), eq. (23) (Monte Carlo standard errors)")
