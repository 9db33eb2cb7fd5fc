r"""The statistics behind SAFARI's Table 5, Theorem 1, Corollary 2 and Remark 6 claims: Holm's
rule, least-squares fits, Monte Carlo standard errors and Clopper-Pearson bounds of
:mod:`flbounds.stats`, each against its definition (:mod:`verify.stats_checks`). Each guard is
attached to the parts whose verdicts rest on it (it reports no instance: those parts'
hypotheses are listed as not evaluated, which a guard that holds does not need)."""

from __future__ import annotations

from flbounds.ledger import claim
from verify.stats_checks import (
    COVERAGE_CLAIM,
    FIT_CLAIM,
    HOLM_CLAIM,
    clopper_pearson_evidence,
    exact_law_fits,
    holm_step_down,
    mc_se_coverage,
)

from .cor2 import COR2
from .remark6 import REMARK6
from .tables import TABLE5
from .thm1 import THM1

# the shared guards of verify.stats_checks, attached to the parts whose verdicts use them
claim("safari.stats.holm_step_down", ref="Table 5 (decision rule of the q sweep)",
      result=TABLE5, parts=("every_q",), **HOLM_CLAIM)(holm_step_down)
claim("safari.stats.exact_law_fits", ref="Thm 5; Remark 6 (fitted rates and slopes)",
      parts=(COR2.part("rate"), REMARK6.part("safari_rates")), **FIT_CLAIM)(exact_law_fits)
claim("safari.stats.mc_se_coverage", ref="Remark 6 (Monte Carlo standard errors)",
      result=REMARK6, parts=("fedavg_ball", "safari_rates"), **COVERAGE_CLAIM)(mc_se_coverage)


@claim("safari.stats.clopper_pearson_exact", ref="Thm 1 (Clopper-Pearson bounds of the "
       "failure frequencies)", kind="algorithm", expected="holds", result=THM1,
       parts=("bound",),
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
