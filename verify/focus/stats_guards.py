r"""The statistics behind FOCUS's Assumption 1, Theorem 1 and Figure 9 claims: Holm's rule,
least-squares fits and Monte Carlo standard errors of :mod:`flbounds.stats`, each against its
definition (:mod:`verify.stats_checks`).

Each guard is attached to the parts whose verdicts rest on the rule it checks (Holm: Figure
9's comparisons and Assumption 1's moment test; the fits and standard errors: Theorem 1(a)'s
Monte Carlo rate). A guard has no instance of the paper's hypotheses: they are reported as not
evaluated, which a guard expected to hold never needs.
"""

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

from .assumption1 import ASSUMPTION1
from .fig9 import FIG9
from .thm1 import THM1A

claim("focus.stats.holm_step_down", ref="Fig. 9; App. G.2 (decision rule of the comparisons)",
      result=FIG9, parts=("speed", "accuracy", ASSUMPTION1.part("definition")),
      **HOLM_CLAIM)(holm_step_down)
claim("focus.stats.exact_law_fits", ref="Thm 1(a), eq. (23) (fitted linear rate)",
      result=THM1A, parts=("rate",), **FIT_CLAIM)(exact_law_fits)
claim("focus.stats.mc_se_coverage", ref="Thm 1(a), eq. (23) (Monte Carlo standard errors)",
      result=THM1A, parts=("rate",), **COVERAGE_CLAIM)(mc_se_coverage)
