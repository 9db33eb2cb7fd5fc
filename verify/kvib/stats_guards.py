r"""The statistics behind K-Vib's Figure 2, 3 and 7 claims: Holm's rule, least-squares fits and
Monte Carlo standard errors of :mod:`flbounds.stats`, each against its definition
(:mod:`verify.stats_checks`). Each guard is attached to the part whose verdicts rest on it
(the guards' instances carry no experiment, so those parts' setting predicates are reported
as not evaluated; a guard can only hold or fail, never accuse the paper)."""

from __future__ import annotations

from flbounds.ledger import claim
from verify.stats_checks import (
    COVERAGE_CLAIM,
    FIT_CLAIM,
    HOLM_CLAIM,
    exact_law_fits,
    holm_step_down,
    mc_se_coverage,
)

from .fig2 import FIG2
from .fig7 import FIG7
from .thm5_2 import THM5_2

claim("kvib.stats.holm_step_down", ref="Fig. 2; Sec. 6.1 (decision rule of the comparisons)",
      parts=(FIG2.part("variance"),), **HOLM_CLAIM)(holm_step_down)
claim("kvib.stats.exact_law_fits", ref="Thm 5.2; Fig. 3(b) (fitted exponent in K)",
      parts=(THM5_2.part("k_rate"),), **FIT_CLAIM)(exact_law_fits)
claim("kvib.stats.mc_se_coverage", ref="Fig. 7 (Monte Carlo standard errors)",
      parts=(FIG7.part("variance_k"),), **COVERAGE_CLAIM)(mc_se_coverage)
