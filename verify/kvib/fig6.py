r"""Figure 6 of K-Vib (regret of the baselines for different K) and Sec. 6.1's reading of it
against Fig. 3(b): the result, its parts, its hypotheses and its claims. The online problem
of Sec. 5 stands for the experiments' feedback, with the exact static regret of eq. (8)
(the paper's Fig. 6 plots the released code's sample-based metric; see the claims'
caveat). Instances carry ``feedback``, ``n_rounds``, ``budget`` (the grid) and
``n_clients``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling.online import (
    Assumption51Feedback,
)
from flbounds.stats import loglog_slope

from .conditions import online_budgets, online_feedback
from .fig3 import FIG3
from .online_claims import (
    _BASE_FULL,
    _BASE_QUICK,
    _CAVEAT,
    _baseline_regrets,
    _boot_slopes,
    interval_rule,
)

#: family-wise level of the figure comparisons' interval rule, fixed before the runs
ALPHA = 0.05

FIG6 = result(
    "kvib.fig6", ref="Figure 6", title="regret of the baselines for different K",
    parts={"baselines_k": "Sec. 6.1 / Fig. 6: the regret of the baselines (Vrb, Mabs) is not "
                          "reduced when K grows",
           "kvib_vs_baselines": "Fig. 3(b) against Fig. 6: K-Vib's regret falls faster in K "
                                "than the baselines' (K^{-4/3} against Vrb's O~(N^{1/3} "
                                "T^{2/3}))"},
    hypotheses=(online_feedback, online_budgets))


@claim("kvib.app_f.baselines_regret_in_k", ref="Sec. 6.1 and App. F, Fig. 6",
       kind="reproduction", expected="not-reproduced",
       result=FIG6, parts=("baselines_k",),
       statement="The regret of the baselines (Vrb, Mabs) is not reduced when the budget K "
                 "grows (it even increases): on the synthetic stand-in, each baseline's "
                 "K-slope is >= 0.",
       quick=_BASE_QUICK, full=_BASE_FULL)
def baselines_regret_in_k(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""A synthetic re-run of Fig. 6 (an empirical figure): kind ``reproduction``, never a
    paper error. Measured with the exact static regret of eq. (8)'s cost
    (:math:`\ell_t(Kq^t)`, the RSP cost of the addendum, against the same best fixed ISP
    :math:`p` as K-Vib), Vrb and Mabs as pinned down in the baselines addendum (App. F
    hyper-parameters, G = max feedback).

    Rule fixed before the runs (:func:`.online_claims.interval_rule`, level :data:`ALPHA`,
    Bonferroni over the two baselines, seed-bootstrap percentile intervals of each K-slope):
    reproduced when both intervals lie at or above 0, not reproduced when one lies wholly
    below 0, otherwise inconclusive with the half-widths. Both regrets fall steeply with K
    (slopes about -1.3 to -1.36, intervals far below 0): **not-reproduced**. Caveat (also in
    details): the paper's Fig. 6 plots the released code's sample-based relative metric, not
    eq. (8). Companion ``kvib.app_f.adaptive_regret_falls``."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    regs = _baseline_regrets(rng, fb, ks, n_rounds, n_seeds)
    boot = {k: _boot_slopes(rng, ks, regs[k]) for k in ("vrb", "mabs")}
    rule = interval_rule(boot, 0.0, alpha=ALPHA, effect=">=")
    point = {k: loglog_slope(ks, v, n_boot=0, rng=None).slope for k, v in regs.items()}
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                  n_clients=n_clients),
                    measured=rule["measured"], theoretical=0.0, relation=">=",
                    undecided=rule["undecided"],
                    tolerance=Tolerance(0.0, "seed bootstrap, Bonferroni",
                                        f"two-sided {1 - ALPHA:g} family-wise percentile "
                                        "intervals of the two slopes"),
                    details={"slopes": point, "intervals": rule["intervals"],
                             "half_widths": rule["half_widths"], "alpha": ALPHA,
                             "mean_regret": {k: v.mean(0) for k, v in regs.items()},
                             "caveat": _CAVEAT,
                             "instance": {"N": n_clients, "T": n_rounds, "ks": ks,
                                          "profile": "lognormal"}})


@claim("kvib.app_f.adaptive_regret_falls", ref="Sec. 6.1 / App. F (corrected)", kind="remark",
       expected="holds",
       parts=(FIG6.part("baselines_k"), FIG3.part("regret_k")),
       statement="Under the exact regret, K-Vib, Vrb and Mabs all have regret falling faster "
                 "than the cost's scale 1/K (every K-slope interval at or below -1, level "
                 "0.05 family-wise).",
       quick=_BASE_QUICK, full=_BASE_FULL)
def adaptive_regret_falls(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""Companion of ``kvib.app_f.baselines_regret_in_k`` on the same kind of instance. The
    reference slope -1 is not a paper's gate: it is the scale of the cost itself. Every
    :math:`p\in\mathcal P_K` sums to K, so :math:`\ell_t(p)=\sum_i\pi_t(i)^2/p_i` scales
    like 1/K (uncapped, :math:`\min_p\ell_t=(\sum_i\pi_t(i))^2/K`): a regret falling faster
    than 1/K is one whose share of the cost falls too. Rule fixed before the runs
    (:func:`.online_claims.interval_rule`, level :data:`ALPHA`, Bonferroni over the three
    samplers, seed-bootstrap percentile intervals of each K-slope): holds when every interval
    lies at or below -1, violated (this remark, not the paper) when one lies wholly above,
    otherwise inconclusive with the half-widths the runs resolve. (An earlier version
    compared each 97.5% bootstrap quantile with -1, without the family-wise level.)"""
    fb = Assumption51Feedback.generate(rng, n_clients)
    regs = _baseline_regrets(rng, fb, ks, n_rounds, n_seeds)
    boot = {k: _boot_slopes(rng, ks, v) for k, v in regs.items()}
    rule = interval_rule(boot, -1.0, alpha=ALPHA, effect="<=")
    point = {k: loglog_slope(ks, v, n_boot=0, rng=None).slope for k, v in regs.items()}
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                  n_clients=n_clients),
                    measured=rule["measured"], theoretical=-1.0, relation="<=",
                    undecided=rule["undecided"],
                    tolerance=Tolerance(0.0, "seed bootstrap, Bonferroni",
                                        f"two-sided {1 - ALPHA:g} family-wise percentile "
                                        "intervals of the three slopes"),
                    details={"samplers": list(regs), "slopes": point,
                             "intervals": rule["intervals"], "half_widths": rule["half_widths"],
                             "alpha": ALPHA})


@claim("kvib.app_f.kvib_steeper_than_baselines", ref="Thm 5.2 vs Vrb/Mabs regret rates; "
       "Fig. 3(b) vs Fig. 6", kind="reproduction", expected="not-reproduced",
       result=FIG6, parts=("kvib_vs_baselines",),
       statement="K-Vib's regret falls faster in K than the baselines' (Fig. 3(b) against "
                 "Fig. 6): on the synthetic stand-in, slope(K-Vib) - slope(baseline) < 0 for "
                 "Vrb and Mabs.",
       quick=_BASE_QUICK, full=_BASE_FULL)
def kvib_steeper_than_baselines(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""Spec V12(vi): the paper contrasts K-Vib's :math:`K^{-4/3}` with Vrb's
    :math:`\tilde O(N^{1/3}T^{2/3})` ("no improvement in K") and Fig. 6 shows flat baseline
    curves: a comparison of two empirical figures, re-run on the synthetic stand-in (kind
    ``reproduction``). With the exact eq. (8) regret (same instance and settings as
    ``kvib.app_f.baselines_regret_in_k``), the statistic per baseline is slope(K-Vib) -
    slope(baseline) (independent seed bootstraps of the two slopes). Rule fixed before the
    runs (:func:`.online_claims.interval_rule`, level :data:`ALPHA`, Bonferroni over the two
    baselines): reproduced when both differences' intervals lie below 0, not reproduced when
    one lies wholly above 0 (K-Vib significantly *shallower*), otherwise inconclusive with
    the half-widths. (An earlier version asked for a margin of 0.2 that no statement of the
    paper gives.) Measured at quick: K-Vib about -1.26 against Vrb -1.30 and Mabs -1.36.
    Caveat: Fig. 6 plots the released code's sample-based relative metric, not eq. (8), and
    the Vrb/Mabs regret bounds are upper bounds, so a steep baseline slope does not
    contradict them."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    regs = _baseline_regrets(rng, fb, ks, n_rounds, n_seeds)
    boot = {k: _boot_slopes(rng, ks, v) for k, v in regs.items()}
    point = {k: loglog_slope(ks, v, n_boot=0, rng=None).slope for k, v in regs.items()}
    rule = interval_rule({b: boot["kvib"] - boot[b] for b in ("vrb", "mabs")}, 0.0,
                         alpha=ALPHA, effect="<=")
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                  n_clients=n_clients),
                    measured=rule["measured"], theoretical=0.0, relation="<=",
                    undecided=rule["undecided"],
                    tolerance=Tolerance(0.0, "seed bootstrap, Bonferroni",
                                        f"two-sided {1 - ALPHA:g} family-wise percentile "
                                        "intervals of the slope differences"),
                    details={"slopes": point, "diff_intervals": rule["intervals"],
                             "half_widths": rule["half_widths"], "alpha": ALPHA,
                             "kvib_minus_baseline": {b: point["kvib"] - point[b]
                                                     for b in ("vrb", "mabs")},
                             "caveat": _CAVEAT,
                             "instance": {"N": n_clients, "T": n_rounds, "ks": ks,
                                          "profile": "lognormal", "G": "max feedback"}})
