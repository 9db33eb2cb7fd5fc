r"""Figure 6 of [003] (regret of the baselines for different K) and Sec. 6.1's reading of it
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
from .online_claims import _BASE_FULL, _BASE_QUICK, _CAVEAT, _baseline_regrets, _boot_slopes

FIG6 = result(
    "kvib.fig6", ref="Figure 6", title="regret of the baselines for different K",
    parts={"baselines_k": "Sec. 6.1 / Fig. 6: the regret of the baselines (Vrb, Mabs) is not "
                          "reduced when K grows",
           "kvib_vs_baselines": "Fig. 3(b) against Fig. 6: K-Vib's regret falls faster in K "
                                "than the baselines' (K^{-4/3} against Vrb's O~(N^{1/3} "
                                "T^{2/3}))"},
    hypotheses=(online_feedback, online_budgets))


@claim("kvib.app_f.baselines_regret_in_k", ref="Sec. 6.1 and App. F, Fig. 6", kind="remark",
       expected="violated",
       result=FIG6, parts=("baselines_k",),
       statement="The regret of the baselines (Vrb, Mabs) is not reduced when the budget K "
                 "grows (it even increases).",
       quick=_BASE_QUICK, full=_BASE_FULL)
def baselines_regret_in_k(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""Measured with the exact static regret of eq. (8)'s cost (:math:`\ell_t(Kq^t)`, the RSP
    cost of the addendum, against the same best fixed ISP :math:`p` as K-Vib), Vrb and Mabs as
    pinned down in the baselines addendum (App. F hyper-parameters, G = max feedback). Gate
    on the seed bootstrap, read in the paper's favour: measured is the *upper* end of each
    slope's 95% CI, which must be >= 0 for "not reduced". Both regrets fall steeply with K
    (slopes about -1.35, CI upper ends far below 0), so the remark is violated. Caveat (also in
    details): the paper's Fig. 6 plots the released code's sample-based relative metric, not
    eq. (8). Expected **violated**; companion ``kvib.app_f.adaptive_regret_falls``."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    regs = _baseline_regrets(rng, fb, ks, n_rounds, n_seeds)
    fits = {k: loglog_slope(ks, v, rng=rng) for k, v in regs.items()}
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                      n_clients=n_clients),
                    measured=[fits["vrb"].ci_high, fits["mabs"].ci_high], theoretical=0.0,
                    relation=">=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "97.5% bootstrap quantile of each slope (paper's side)"),
                    details={"slopes": {k: f.slope for k, f in fits.items()},
                             "ci95": {k: [f.ci_low, f.ci_high] for k, f in fits.items()},
                             "mean_regret": {k: v.mean(0) for k, v in regs.items()},
                             "caveat": _CAVEAT,
                             "instance": {"N": n_clients, "T": n_rounds, "ks": ks,
                                          "profile": "lognormal"}})


@claim("kvib.app_f.adaptive_regret_falls", ref="Sec. 6.1 / App. F (corrected)", kind="remark",
       expected="holds",
       parts=(FIG6.part("baselines_k"), FIG3.part("regret_k")),
       statement="Under the exact regret, K-Vib, Vrb and Mabs all have regret falling faster "
                 "than 1/K (K-slope <= -1).",
       quick=_BASE_QUICK, full=_BASE_FULL)
def adaptive_regret_falls(*, rng, n_clients, n_rounds, ks, n_seeds):
    """Companion of ``kvib.app_f.baselines_regret_in_k`` on the same kind of instance: for
    every adaptive sampler the upper end of the 95% seed-bootstrap CI of the K-slope is <= -1
    (the loss scale itself falls like 1/K). Expected **holds**."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    regs = _baseline_regrets(rng, fb, ks, n_rounds, n_seeds)
    fits = {k: loglog_slope(ks, v, rng=rng) for k, v in regs.items()}
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                      n_clients=n_clients),
                    measured=[f.ci_high for f in fits.values()], theoretical=-1.0,
                    relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "97.5% bootstrap quantile of each slope"),
                    details={"samplers": list(fits),
                             "slopes": {k: f.slope for k, f in fits.items()}})


@claim("kvib.app_f.kvib_steeper_than_baselines", ref="Thm 5.2 vs Vrb/Mabs regret rates; "
       "Fig. 3(b) vs Fig. 6 (spec V12(vi))", kind="remark", expected="violated",
       result=FIG6, parts=("kvib_vs_baselines",),
       statement="K-Vib's regret falls faster in K than the baselines': its K-slope is lower "
                 "than Vrb's and Mabs's by at least 0.2.",
       quick=_BASE_QUICK, full=_BASE_FULL)
def kvib_steeper_than_baselines(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""Spec V12(vi): the paper contrasts K-Vib's :math:`K^{-4/3}` with Vrb's
    :math:`\tilde O(N^{1/3}T^{2/3})` ("no improvement in K") and Fig. 6 shows flat baseline
    curves. With the exact eq. (8) regret (same instance and settings as
    ``kvib.app_f.baselines_regret_in_k``), measured is, per baseline, the *lower* end (the
    paper's side) of the 95% seed-bootstrap interval of slope(K-Vib) - slope(baseline)
    (independent bootstraps of the two slopes); it must be <= -0.2. Expected **violated**
    from the computation: K-Vib about -1.26 vs Vrb -1.32 and Mabs -1.36 (pilots; consistent
    over seeds), i.e. K-Vib is, if anything, *shallower*. Caveat: the paper's Fig. 6 plots
    the released code's sample-based relative metric, not eq. (8), so its flat baseline curves
    need not agree with the exact regret; and the Vrb/Mabs regret bounds are upper bounds too,
    so a steep measured baseline slope does not contradict them either."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    regs = _baseline_regrets(rng, fb, ks, n_rounds, n_seeds)
    boot = {k: _boot_slopes(rng, ks, v) for k, v in regs.items()}
    point = {k: loglog_slope(ks, v, n_boot=0, rng=None).slope for k, v in regs.items()}
    lows, ci = [], {}
    for b in ("vrb", "mabs"):
        diff = boot["kvib"] - boot[b]
        ci[b] = [float(np.quantile(diff, 0.025)), float(np.quantile(diff, 0.975))]
        lows.append(ci[b][0])
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                      n_clients=n_clients),
                    measured=lows, theoretical=-0.2, relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "2.5% bootstrap quantile of the slope difference"),
                    details={"slopes": point, "diff_ci95": ci,
                             "kvib_minus_baseline": {b: point["kvib"] - point[b]
                                                     for b in ("vrb", "mabs")},
                             "caveat": _CAVEAT,
                             "instance": {"N": n_clients, "T": n_rounds, "ks": ks,
                                          "profile": "lognormal", "G": "max feedback"}})
