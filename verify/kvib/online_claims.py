r"""K-Vib online-learning claims besides Thm 5.2: Thm 5.1 (T_BFP), Thm D.1 (full-information
FTRL), eq. (12) mixing and importance weighting, and the baseline remarks of Sec. 6 / App. F
([003], recipes V10, V11, V12(vi), V13)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import optimal_isp_probabilities
from flbounds.sampling.online import (
    Assumption51Feedback,
    best_fixed_cost,
    ftrl_full_information,
    kvib_online,
    regrets,
    static_regret,
)
from flbounds.sampling.online_batched import baseline_costs
from flbounds.stats import loglog_slope


@claim("kvib.thm5_1.tbfp_bound", ref="Thm 5.1 (App. D.1)", kind="statement", expected="holds",
       statement="T_BFP <= (T/K)(sum_i sqrt(V_T(i)/T))(2 Pi_* + sum_i sqrt(V_T(i)/T)) under "
                 "Assumption 5.1.",
       quick=dict(n_instances=30, max_rounds=4000), full=dict(n_instances=300, max_rounds=100000))
def tbfp_bound(*, rng, n_instances, max_rounds):
    r"""V10. :math:`T_{\rm BFP}` is exact (water-filling on :math:`\sqrt{\pi^2_{1:T}}` minus the
    per-round optima). The proof (eqs. 39-41) needs no capping (:math:`K\max\pi_t\le\sum\pi_t`
    for all t) and feedback approaching its limit from above; instances are drawn inside that
    regime (K is lowered until nothing is capped). Measured: max T_BFP / bound (<= 1); the
    spec's pilot found <= 0.017."""
    worst = 0.0
    for _ in range(n_instances):
        n = int(rng.integers(5, 200))
        t = int(rng.integers(10, max_rounds + 1))
        fb = Assumption51Feedback.generate(rng, n)
        pi1, pis = fb.values(1), fb.lam * fb.base
        k_max = min(pi1.sum() / pi1.max(), pis.sum() / pis.max())
        k = float(rng.uniform(1.0, max(k_max, 1.0)))
        best = best_fixed_cost(fb.squared_sums(t), k)
        t_bfp = best - fb.sum_optimal_costs(t, k)
        root = np.sum(np.sqrt(fb.variation(t) / t))
        bound = t / k * root * (2 * pis.sum() + root)
        worst = max(worst, t_bfp / bound)
    return Evidence(measured=worst, theoretical=1.0, relation="<=",
                    tolerance=Tolerance.rounding(1e-9, "difference of two sums of T terms"))


@claim("kvib.assumption5_1.variation_log", ref="Assumption 5.1 (V_T = O(log T))",
       kind="statement", expected="holds",
       statement="For pi_t = pi_* + c/sqrt(t), V_T(i)/log T stays within a factor 2 over "
                 "T in [1e2, 1e5].", quick=dict(n_clients=50), full=dict(n_clients=500))
def variation_log(*, rng, n_clients):
    """V10 second part: V_T = c^2 H_T and H_T/log T decreases from 1.13 to 1.05. Measured: the
    max/min ratio of V_T/log T over the grid (<= 2)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    ts = np.array([100, 1000, 10000, 100000])
    vals = np.array([fb.variation(int(t)).sum() / np.log(t) for t in ts])
    return Evidence(measured=vals.max() / vals.min(), theoretical=2.0, relation="<=",
                    tolerance=Tolerance.exact("closed-form sums"), details={"ratios": vals})


@claim("kvib.thm_d1.full_information", ref="Thm D.1, eq. (51) (last term corrected to "
       "22 N^2 G^2/zbar); Remark after Lemma 5.1", kind="statement", expected="holds",
       statement="Full-information FTRL (eq. 10, gamma = G^2) has Regret_S(T) = O(sqrt T) "
                 "(log-log slope <= 0.6) and Regret_S <= (22NG/zbar + 2 sqrt6 NG/K) sum_i "
                 "sqrt(pi^2_{1:T}(i)) + 22 N^2 G^2/zbar.",
       quick=dict(n_clients=50, k=5, rounds=(1000, 2000, 4000)),
       full=dict(n_clients=100, k=8, rounds=(1000, 4000, 16000, 64000)))
def full_information(*, rng, n_clients, k, rounds):
    r"""V11. Deterministic (no sampling). Measured: [slope, max regret/bound]; gates 0.5 + 0.1
    (spec) and 1. The printed last term :math:`22NG^2/\bar z` is smaller than what the
    derivation gives; we use the corrected one (spec section 6 item 13). (By contrast
    ``kvib.thm5_2.explicit_bound`` keeps App. D.3's printed term, built on the printed
    :math:`22NG^2/\bar z`.)"""
    fb = Assumption51Feedback.generate(rng, n_clients)
    G = fb.G
    regs, ratios = [], []
    for t in rounds:
        tr = ftrl_full_information(fb, t, k, G * G)
        reg = regrets(tr.costs, fb, k).static
        zbar = float(tr.z.min())
        root = float(np.sum(np.sqrt(fb.squared_sums(t))))
        bound = (22 * n_clients * G / zbar + 2 * np.sqrt(6) * n_clients * G / k) * root \
            + 22 * n_clients**2 * G**2 / zbar
        regs.append(reg)
        ratios.append(reg / bound)
    slope = float(np.polyfit(np.log(rounds), np.log(np.maximum(regs, 1e-300)), 1)[0])
    return Evidence(measured=[slope, max(ratios)], theoretical=[0.6, 1.0], relation="<=",
                    tolerance=Tolerance.exact("deterministic run"),
                    details={"regret": regs, "regret_over_bound": ratios})


@claim("kvib.eq12.mixing_and_estimates", ref="eq. (12); Thm 5.2 sketch (App. D.3)",
       kind="statement", expected="holds",
       statement="p~ = (1-theta) p + theta K/N has sum K and theta K/N <= p~ <= 1; "
                 "E[pi~^2] = pi^2, E[l~(p)] = l(p); pi~^2 <= G^2 N/(theta K); "
                 "1/p~ - 1/p <= theta N/K.",
       quick=dict(n_clients=30, k=4, n_draws=40000), full=dict(n_clients=100, k=10,
                                                               n_draws=1000000))
def mixing_and_estimates(*, rng, n_clients, k, n_draws):
    """V13: deterministic parts to rounding, the two means within 4 MC standard errors
    (the importance-weighted estimates are bounded, so the CLT applies)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    pi = fb.values(1)
    G = fb.G
    theta = 0.3
    p = optimal_isp_probabilities(np.sqrt(rng.lognormal(0, 2, n_clients)), k)
    pt = (1 - theta) * p + theta * k / n_clients
    det = [abs(pt.sum() - k), max(theta * k / n_clients - pt.min(), 0.0), max(pt.max() - 1, 0)]
    bound_gap = float(np.max(1 / pt - 1 / p - theta * n_clients / k))
    masks = rng.random((n_draws, n_clients)) < pt
    est = masks * (pi**2 / pt)                          # pi~^2, one row per draw
    over = float(est.max() - G**2 * n_clients / (theta * k))
    q = rng.uniform(0.1, 1.0, n_clients)                # a fixed p for l~
    ell = est @ (1 / q)
    mean_err = np.abs(est.mean(0) - pi**2)
    se = est.std(0, ddof=1) / np.sqrt(n_draws)
    ell_err = abs(ell.mean() - np.sum(pi**2 / q))
    ell_se = ell.std(ddof=1) / np.sqrt(n_draws)
    measured = np.r_[det, bound_gap, over, mean_err / (4 * se), ell_err / (4 * ell_se)]
    return Evidence(measured=measured, theoretical=np.r_[np.zeros(5), np.ones(n_clients + 1)],
                    relation="<=",
                    tolerance=Tolerance(1e-12, "rounding; MC entries pre-scaled",
                                        "entries 6+ are |mean - exact| / (4 SE), gate 1"))


def _baseline_regrets(rng, fb, ks, n_rounds, n_seeds):
    """Static regrets (n_seeds, len(ks)) of K-Vib, Vrb and Mabs (App. F settings, G = max)."""
    G = fb.G
    out = {}
    for name in ("vrb", "mabs", "kvib"):
        reg = np.empty((n_seeds, len(ks)))
        children = rng.spawn(n_seeds)
        if name != "kvib":
            # Vrb / Mabs: all seeds and budgets in one batch, bit for bit the run_online runs
            costs = baseline_costs(name, fb, ks, n_rounds, children, G=G)
        for s, child in enumerate(children):
            for j, k in enumerate(ks):
                run = kvib_online(fb, n_rounds, k, child, G=G).costs if name == "kvib" \
                    else costs[s, j]
                reg[s, j] = static_regret(run, fb, k)
        out[name] = reg
    return out


def _boot_slopes(rng, ks, reg, n_boot=2000):
    """Seed-bootstrap replicates of the K-slope of the geometric-mean regret (as
    :func:`flbounds.stats.loglog_slope` resamples)."""
    lx = np.log(np.asarray(ks, dtype=float))
    rows = rng.integers(0, reg.shape[0], size=(n_boot, reg.shape[0]))
    curves = np.log(reg)[rows].mean(axis=1)
    xc = lx - lx.mean()
    return (curves - curves.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


_BASE_QUICK = dict(n_clients=100, n_rounds=2000, ks=(2, 4, 8, 16), n_seeds=3)
_BASE_FULL = dict(n_clients=100, n_rounds=8000, ks=(2, 4, 8, 16), n_seeds=8)
_CAVEAT = ("the paper's Fig. 6 plots the released code's sample-based relative metric "
           "sum_t |sum_{S} pi/p - l*_t| / l*_t, not eq. (8), so its curves need not agree")


@claim("kvib.app_f.baselines_regret_in_k", ref="Sec. 6.1 and App. F, Fig. 6", kind="remark",
       expected="violated",
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
    regs = _baseline_regrets(rng, Assumption51Feedback.generate(rng, n_clients), ks, n_rounds,
                             n_seeds)
    fits = {k: loglog_slope(ks, v, rng=rng) for k, v in regs.items()}
    return Evidence(measured=[fits["vrb"].ci_high, fits["mabs"].ci_high], theoretical=0.0,
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
       statement="Under the exact regret, K-Vib, Vrb and Mabs all have regret falling faster "
                 "than 1/K (K-slope <= -1).",
       quick=_BASE_QUICK, full=_BASE_FULL)
def adaptive_regret_falls(*, rng, n_clients, n_rounds, ks, n_seeds):
    """Companion of ``kvib.app_f.baselines_regret_in_k`` on the same kind of instance: for
    every adaptive sampler the upper end of the 95% seed-bootstrap CI of the K-slope is <= -1
    (the loss scale itself falls like 1/K). Expected **holds**."""
    regs = _baseline_regrets(rng, Assumption51Feedback.generate(rng, n_clients), ks, n_rounds,
                             n_seeds)
    fits = {k: loglog_slope(ks, v, rng=rng) for k, v in regs.items()}
    return Evidence(measured=[f.ci_high for f in fits.values()], theoretical=-1.0,
                    relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "97.5% bootstrap quantile of each slope"),
                    details={"samplers": list(fits),
                             "slopes": {k: f.slope for k, f in fits.items()}})


@claim("kvib.app_f.kvib_steeper_than_baselines", ref="Thm 5.2 vs Vrb/Mabs regret rates; "
       "Fig. 3(b) vs Fig. 6 (spec V12(vi))", kind="remark", expected="violated",
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
    regs = _baseline_regrets(rng, Assumption51Feedback.generate(rng, n_clients), ks, n_rounds,
                             n_seeds)
    boot = {k: _boot_slopes(rng, ks, v) for k, v in regs.items()}
    point = {k: loglog_slope(ks, v, n_boot=0, rng=None).slope for k, v in regs.items()}
    lows, ci = [], {}
    for b in ("vrb", "mabs"):
        diff = boot["kvib"] - boot[b]
        ci[b] = [float(np.quantile(diff, 0.025)), float(np.quantile(diff, 0.975))]
        lows.append(ci[b][0])
    return Evidence(measured=lows, theoretical=-0.2, relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "2.5% bootstrap quantile of the slope difference"),
                    details={"slopes": point, "diff_ci95": ci,
                             "kvib_minus_baseline": {b: point["kvib"] - point[b]
                                                     for b in ("vrb", "mabs")},
                             "caveat": _CAVEAT,
                             "instance": {"N": n_clients, "T": n_rounds, "ks": ks,
                                          "profile": "lognormal", "G": "max feedback"}})
