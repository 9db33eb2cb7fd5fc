r"""K-Vib regret: Theorem 5.2 (partial feedback), its K, T and N exponents and explicit bound
(K-Vib, recipe V12; audit part B item 4).

Feedback follows Assumption 5.1, :math:`\pi_t(i)=\lambda_i(b_i+c_i/\sqrt t)`, :math:`\lambda=1/N`,
fixed per claim; seeds vary only the sampler's draws (the theorem bounds an expectation over
sampling). Regret is the static regret of :math:`\ell_t(\tilde p^t)` against the exact best
fixed :math:`p\in\mathcal P_K` in hindsight (App. D.3 uses :math:`\tilde p`).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling.online import Assumption51Feedback, kvib_online, static_regret
from flbounds.stats import loglog_slope

from ..fig3 import FIG3
from ..online_claims import _boot_slopes, interval_rule
from ..sec6 import SEC6
from . import THM5_2, explicit_bound_value, regret_instances

FOUR_THIRDS = -4.0 / 3.0


def _g_value(fb: Assumption51Feedback, rule: str) -> float:
    """Theory G = max feedback; Sec. 6 practical rule = mean first-round feedback."""
    return fb.G if rule == "max" else float(np.mean(fb.values(1)))


def boot_means(rng, values: np.ndarray, n_boot: int = 2000) -> np.ndarray:
    """Seed-bootstrap replicates of the column means of ``values`` (n_seeds, m) -> (n_boot, m)."""
    rows = rng.integers(0, values.shape[0], size=(n_boot, values.shape[0]))
    return values[rows].mean(axis=1)


def kvib_regret_grid(rng, fb, *, ks, rounds, n_seeds, g_rule="max", variant="paper"):
    """Static regrets, shape (n_seeds, len(ks) * len(rounds)) (K outer), plus min z_t per cell."""
    G = _g_value(fb, g_rule)
    cells = [(k, t) for k in ks for t in rounds]
    out = np.empty((n_seeds, len(cells)))
    zbar = np.full(len(cells), np.inf)
    for s, child in enumerate(rng.spawn(n_seeds)):
        for j, (k, t) in enumerate(cells):
            run = kvib_online(fb, t, k, child, G=G, variant=variant)
            out[s, j] = static_regret(run.costs, fb, k)
            zbar[j] = min(zbar[j], float(k - run.capped.max()))
    return out, zbar, G


#: family-wise level of the K-rate rule (two-sided seed-bootstrap intervals), fixed before runs
ALPHA = 0.05


def k_rate_evidence(rng, ks, regrets: dict, *, instance, margins, details) -> Evidence:
    r"""The K-rate rule of Theorem 5.2, its exponent the theorem's :math:`-4/3`: per curve a
    two-sided seed-bootstrap interval of the log-log K-slope at level :data:`ALPHA`
    (Bonferroni over the curves, :func:`..online_claims.interval_rule`). ``holds`` when every
    interval lies at or below -4/3. Otherwise ``inconclusive``, never ``violated``: eq. (13)
    is an :math:`\tilde O` upper bound, and its explicit form (52)-(54) holds on these
    instances with a margin of ``margins`` (about 85-130, ``kvib.thm5_2.explicit_bound``),
    so a regret falling like :math:`K^{-1}` from the measured value at the smallest K would
    meet the :math:`K^{-4/3}` bound only at :math:`K = K_{\min}\,\text{margin}^3`
    (reported): no budget a run with N >= 4K can reach tells :math:`K^{-4/3}` from
    :math:`K^{-1}`. The rate of the bound itself is decided exactly by
    ``kvib.thm5_2.bound_k_rate``."""
    boot = {name: _boot_slopes(rng, ks, reg) for name, reg in regrets.items()}
    rule = interval_rule(boot, FOUR_THIRDS, alpha=ALPHA, effect="<=")
    uppers = [hi for _, hi in rule["intervals"].values()]
    k_cross = float(ks[0] * np.min(margins) ** 3)
    undecided = "" if rule["shown"] else (
        "the slope interval is not wholly at or below -4/3 (" + ", ".join(
            f"{k}: [{lo:.3f}, {hi:.3f}]" for k, (lo, hi) in rule["intervals"].items())
        + f"; level {ALPHA:g}, Bonferroni). Eq. (13) is an O~ upper bound whose explicit form "
        f"holds here with margin >= {np.min(margins):.0f}: a K^-1 regret would reach the "
        f"K^-4/3 bound only at K ~ {k_cross:.2g}, so no finite-K slope decides the exponent; "
        "the exponent differences these runs resolve (half-widths): " + ", ".join(
            f"{k}: {h:.3g}" for k, h in rule["half_widths"].items()))
    point = {name: loglog_slope(ks, reg, n_boot=0, rng=None).slope
             for name, reg in regrets.items()}
    return Evidence(instance=instance, measured=uppers, theoretical=FOUR_THIRDS,
                    relation="<=", undecided=undecided,
                    tolerance=Tolerance(0.0, "seed bootstrap, Bonferroni",
                                        f"upper ends of two-sided {1 - ALPHA:g} family-wise "
                                        "percentile intervals of the K-slopes"),
                    details={**details, "slopes": point, "intervals": rule["intervals"],
                             "half_widths": rule["half_widths"], "theory": FOUR_THIRDS,
                             "alpha": ALPHA, "bound_margin": np.asarray(margins),
                             "k_where_k_minus_1_meets_bound": k_cross})


def bound_margins(fb, reg, zbar, *, ks, n_rounds, G) -> np.ndarray:
    """Explicit bound (52)-(54) over the mean regret, per budget (the measured zbar)."""
    root = float(np.sum(np.sqrt(fb.squared_sums(n_rounds))))
    bounds = [explicit_bound_value(N=fb.n_clients, T=n_rounds, K=k, G=G, zbar=z, root=root)
              for k, z in zip(ks, zbar, strict=True)]
    return np.asarray(bounds) / reg.mean(0)


@claim("kvib.thm5_2.k_exponent", ref="Thm 5.2; Fig. 3(b)", kind="statement",
       expected="holds",
       result=THM5_2, parts=("k_rate",),
       statement="E[Regret_S(T)] = O~(N^{1/3} T^{2/3} K^{-4/3}): at fixed N, T the log-log "
                 "slope of the regret in K is at most -4/3 (its whole interval).",
       quick=dict(n_clients=100, n_rounds=8000, ks=(2, 4, 8, 16), n_seeds=5),
       full=dict(n_clients=100, n_rounds=32000, ks=(2, 4, 8, 12, 16, 25), n_seeds=10))
def k_exponent(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""Headline check (spec V12(iv), audit item 4). Algorithm 2 as printed
    (:math:`\sqrt{\omega+\gamma}`, :math:`\theta=(N/(TK))^{1/3}`, :math:`\gamma=G^2N/(K\theta)`,
    :math:`G=\max\pi`), LogNormal feedback profile, :math:`TK/N\ge100`, :math:`K\le N/4`.
    Rule: :func:`k_rate_evidence` (the theorem's -4/3 against the slope's interval; a slope
    shallower than -4/3 is inconclusive, not a violation). Measured at quick: -1.367, interval
    wholly below -4/3, so **holds**. (An earlier gate of -1.1 was chosen after the
    measurements.) The fit is on the geometric mean over seeds."""
    fb = Assumption51Feedback.generate(rng, n_clients, profile="lognormal")
    reg, zbar, G = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds)
    margins = bound_margins(fb, reg, zbar, ks=ks, n_rounds=n_rounds, G=G)
    return k_rate_evidence(rng, ks, {"lognormal": reg},
                           instance=regret_instances(fb, ks=ks, rounds=(n_rounds,), G=G),
                           margins=margins,
                           details={"ks": ks, "mean_regret": reg.mean(0),
                                    "zbar_over_k": zbar / np.asarray(ks), "G": G,
                                    "n_seeds": n_seeds, "n_rounds": n_rounds})


_SETTINGS = {"quantile": "quantile", "uniform": "uniform"}


@claim("kvib.thm5_2.k_exponent_settings", ref="Thm 5.2 (robustness; audit part B item 4)",
       kind="statement", expected="inconclusive",
       result=THM5_2, parts=("k_rate",),
       statement="With the theory's gamma (G = max feedback) and Algorithm 2 as printed, the "
                 "K-slope of the regret is at most -4/3 (its whole interval) for quantile and "
                 "near-homogeneous feedback.",
       quick=dict(n_clients=100, n_rounds=4000, ks=(2, 4, 8, 16), n_seeds=4),
       full=dict(n_clients=100, n_rounds=16000, ks=(2, 4, 8, 16), n_seeds=10))
def k_exponent_settings(*, rng, n_clients, n_rounds, ks, n_seeds):
    """Two feedback profiles of the audit table, both inside Thm 5.2's hypotheses (gamma =
    G^2 N/(K theta) with G = max feedback), Algorithm 2 as printed (the released code's map
    p ~ omega + gamma is not Algorithm 2; it is ``kvib.code.no_square_root``). Rule:
    :func:`k_rate_evidence`, Bonferroni over the two. Measured at quick: quantile -1.270 with
    its interval wholly above -4/3, uniform -1.483 below: **inconclusive** (the reason gives
    the K at which a K^-1 regret would meet the explicit bound, about 1e6, and the
    half-widths). The practical-G setting is outside the hypothesis and is the remark
    ``kvib.sec6.k_exponent_practical_g``."""
    regs, feedbacks, margins = {}, [], []
    for name, profile in _SETTINGS.items():
        fb = Assumption51Feedback.generate(rng, n_clients, profile=profile)
        feedbacks.append(fb)
        reg, zbar, G = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds)
        regs[name] = reg
        margins.append(bound_margins(fb, reg, zbar, ks=ks, n_rounds=n_rounds, G=G))
    instances = [c for f in feedbacks
                 for c in regret_instances(f, ks=ks, rounds=(n_rounds,), G=f.G)]
    return k_rate_evidence(rng, ks, regs, instance=instances, margins=np.concatenate(margins),
                           details={"mean_regret": {k: v.mean(0) for k, v in regs.items()},
                                    "ks": ks, "n_rounds": n_rounds, "n_seeds": n_seeds})


@claim("kvib.sec6.k_exponent_practical_g", ref="Sec. 6 practical G (mean first-round "
       "feedback); Thm 5.2 rate", kind="remark", expected="holds",
       parts=(SEC6.part("practical_g"), FIG3.part("regret_k")),
       statement="With the Sec. 6 practical rule (G = mean first-round feedback in gamma) the "
                 "K-slope of K-Vib's regret is still at most -4/3 (its whole interval).",
       quick=dict(n_clients=100, n_rounds=4000, ks=(2, 4, 8, 16), n_seeds=4),
       full=dict(n_clients=100, n_rounds=16000, ks=(2, 4, 8, 16), n_seeds=10))
def k_exponent_practical_g(*, rng, n_clients, n_rounds, ks, n_seeds):
    """A *remark*, not Thm 5.2: the practical G is below max feedback, so gamma = G^2 N/(K
    theta) is smaller than the theorem's hypothesis requires and the theorem does not apply;
    this checks the paper's practical recipe against the theorem's exponent with
    :func:`k_rate_evidence` (an earlier gate of -1.1 was chosen after the data). Measured at
    quick: -1.55, interval wholly below -4/3: **holds**. The margins reported are those of
    the explicit bound evaluated at the practical G (informational: outside the theorem)."""
    fb = Assumption51Feedback.generate(rng, n_clients, profile="lognormal")
    reg, zbar, G = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds,
                                    g_rule="mean")
    margins = bound_margins(fb, reg, zbar, ks=ks, n_rounds=n_rounds, G=G)
    return k_rate_evidence(rng, ks, {"practical_g": reg},
                           instance=dict(feedback=fb, n_rounds=n_rounds,
                                         budget=np.asarray(ks, float), n_clients=n_clients),
                           margins=margins,
                           details={"G_practical": G, "G_max": fb.G,
                                    "mean_regret": reg.mean(0)})


@claim("kvib.thm5_2.sublinear", ref="Thm 5.2 (Regret_S/T -> 0)", kind="statement",
       expected="holds",
       result=THM5_2, parts=("t_rate",),
       statement="Regret_S(T)/T is strictly decreasing in T (theta, gamma at their T-dependent "
                 "theory values).",
       quick=dict(n_clients=100, k=8, rounds=(1000, 2000, 4000, 8000), n_seeds=4),
       full=dict(n_clients=100, k=8, rounds=(1000, 4000, 16000, 64000), n_seeds=10))
def sublinear(*, rng, n_clients, k, rounds, n_seeds):
    """V12(ii). Measured: for each pair of successive horizons, the 97.5% seed-bootstrap
    quantile of the difference of mean Regret/T (must be <= 0, i.e. the decrease is resolved
    by the seeds, not a point estimate). Expected **holds** (the gaps are ~20% of the values)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    reg, _, _ = kvib_regret_grid(rng, fb, ks=(k,), rounds=rounds, n_seeds=n_seeds)
    per_round = reg / np.asarray(rounds, dtype=float)
    diffs = np.diff(boot_means(rng, per_round), axis=1)
    return Evidence(instance=regret_instances(fb, ks=(k,), rounds=rounds, G=fb.G),
                    measured=np.quantile(diffs, 0.975, axis=0), theoretical=0.0, relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "gate on the 97.5% bootstrap quantile of each difference"),
                    details={"rounds": rounds, "regret_over_T": per_round.mean(0),
                             "diff_point": np.diff(per_round.mean(0))})


@claim("kvib.thm5_2.t_exponent", ref="Thm 5.2 (T^{2/3})", kind="statement", expected="holds",
       result=THM5_2, parts=("t_rate",),
       statement="The local log-log slope of Regret_S in T between the two largest horizons is "
                 "at most 2/3 (the upper end of its interval).",
       quick=dict(n_clients=100, k=8, rounds=(8000, 16000, 32000), n_seeds=4),
       full=dict(n_clients=100, k=8, rounds=(16000, 64000, 128000), n_seeds=10))
def t_exponent(*, rng, n_clients, k, rounds, n_seeds):
    """V12(iii). Gate: the theorem's exponent 2/3 against the 97.5% seed-bootstrap quantile of
    the local slope of the mean regret between the two largest horizons (an earlier margin
    of 0.1 above 2/3 was the spec's, not the theorem's). Above 2/3 the claim is
    ``inconclusive``, not violated: eq. (13) is an O~ upper bound whose explicit form holds
    with a large margin (``kvib.thm5_2.explicit_bound``), and small T is pre-asymptotic
    (gamma dominates omega; pilot local slopes 0.75 -> 0.69 -> 0.63). Measured at quick:
    0.651, upper end 0.661: **holds**. Details: point value and the global fit with its CI."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    reg, _, _ = kvib_regret_grid(rng, fb, ks=(k,), rounds=rounds, n_seeds=n_seeds)
    means = reg.mean(0)
    span = np.log(rounds[-1] / rounds[-2])
    local = float(np.log(means[-1] / means[-2]) / span)
    boot = boot_means(rng, reg)
    local_boot = np.log(boot[:, -1] / boot[:, -2]) / span
    upper = float(np.quantile(local_boot, 0.975))
    half = float(np.quantile(local_boot, 0.975) - np.quantile(local_boot, 0.025)) / 2
    fit = loglog_slope(rounds, reg, rng=rng)
    undecided = "" if upper <= 2 / 3 else (
        f"the local T-slope's upper end {upper:.3f} exceeds 2/3: an O~ upper bound met with a "
        f"large margin (kvib.thm5_2.explicit_bound) is not contradicted by a finite-T slope; "
        f"the runs resolve slope differences of {half:.3g}")
    return Evidence(instance=regret_instances(fb, ks=(k,), rounds=rounds, G=fb.G),
                    measured=upper, theoretical=2 / 3, relation="<=", undecided=undecided,
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "97.5% bootstrap quantile of the local slope"),
                    details={"local_slope": local, "global_slope": fit.slope,
                             "global_ci95": [fit.ci_low, fit.ci_high], "rounds": rounds,
                             "mean_regret": means, "half_width": half})


@claim("kvib.thm5_2.explicit_bound", ref="Thm 5.2 proof, App. D.3 eqs. (52)-(54)",
       kind="proof-step", expected="holds",
       result=THM5_2, parts=("explicit",),
       statement="E[Regret_S] <= theta G^2 N^2 T/K + (22 N^{3/2} G/(zbar sqrt(theta K)) + "
                 "2 sqrt6 N^{3/2} G/sqrt(theta K^3)) sum_i sqrt(pi^2_{1:T}(i)) + "
                 "22 G^2 N^2/(zbar theta K).",
       quick=dict(n_clients=100, n_rounds=4000, ks=(2, 8, 16), n_seeds=3),
       full=dict(n_clients=100, n_rounds=16000, ks=(2, 4, 8, 16, 25), n_seeds=10))
def explicit_bound(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""V12(i) with the measured :math:`\bar z=\min_tz_t` (needed for the :math:`K^{-4/3}` rate;
    the paper does not state :math:`\bar z=\Theta(K)`). Measured: mean regret + 4 SE over seeds
    divided by the bound (must be <= 1). The audit found margins of 87-130x.

    Last term: this is the *printed* App. D.3 term :math:`22G^2N^2/(\bar z\theta K)`, i.e.
    Theorem D.1's printed last term :math:`22NG^2/\bar z` with :math:`G^2\to G^2N/(\theta K)`.
    The derivation of Thm D.1 gives :math:`22N^2G^2/\bar z` (used, corrected, in
    ``kvib.thm_d1.full_information``), which would make this term N times larger; the check
    keeps the smaller printed term, so holding here implies holding with the corrected one."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    reg, zbar, G = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds)
    n, t = n_clients, n_rounds
    root = float(np.sum(np.sqrt(fb.squared_sums(t))))
    bounds = [explicit_bound_value(N=n, T=t, K=k, G=G, zbar=z, root=root)
              for k, z in zip(ks, zbar, strict=True)]
    upper = reg.mean(0) + 4 * reg.std(0, ddof=1) / np.sqrt(n_seeds)
    ratio = upper / np.asarray(bounds)
    return Evidence(instance=regret_instances(fb, ks=ks, rounds=(n_rounds,), G=G),
                    measured=ratio, theoretical=1.0, relation="<=",
                    tolerance=Tolerance.exact("mean + 4 SE already in the measured ratio"),
                    details={"mean_regret": reg.mean(0), "bound": bounds, "zbar": zbar,
                             "margin": 1 / ratio})


def deterministic_feedback(n_clients: int) -> Assumption51Feedback:
    r"""Fully deterministic Assumption 5.1 feedback: :math:`b_i` the LogNormal(0,1) quantiles
    at (i + 1/2)/N and :math:`c_i=b_i/2`, so :math:`G=\max\pi=1.5\max_i\lambda_ib_i` is a
    function of N only (no random decay factor enters G, hence none enters squared into the
    normalisation or into gamma)."""
    from scipy.stats import norm

    base = np.exp(norm.ppf((np.arange(n_clients) + 0.5) / n_clients))
    return Assumption51Feedback(np.full(n_clients, 1.0 / n_clients), base, 0.5 * base)


@claim("kvib.thm5_2.n_exponent", ref="Thm 5.2 (N^{1/3}); App. D.3 normalisation",
       kind="statement", expected="holds",
       result=THM5_2, parts=("n_rate",),
       statement="Regret_S/(N^2 G^2) grows in N no faster than N^{1/3} (the upper end of the "
                 "95% seed-bootstrap CI of the log-log N-slope is <= 1/3).",
       quick=dict(ns=(50, 100, 200, 400), n_rounds=4000, k=8, n_seeds=4),
       full=dict(ns=(50, 100, 200, 400, 800), n_rounds=16000, k=8, n_seeds=10))
def n_exponent(*, rng, ns, n_rounds, k, n_seeds):
    r"""V12(v). The earlier version drew the decay factors :math:`u_i` at random for each N, so
    :math:`G=\max_i\lambda_ib_i(1+u_i)` (which enters squared) was decided by the draw: over
    root seeds 0-8 its slope ranged from -0.52 to +0.20 and the one-sided gate 2/3 was far
    from any outcome. Now the feedback is deterministic (:func:`deterministic_feedback`), only
    the sampler's draws are random, and the gate is the theory's exponent 1/3 applied to the
    upper end of the 95% seed-bootstrap CI. Measured (quick, root seed 0): slope -0.21, CI
    [-0.212, -0.205]; -0.15 at T = 8000. The slope is *negative*: the normalisation
    :math:`N^2G^2=2.25\max b^2` grows with N (the top quantile of b grows), faster than the
    regret. So the Õ upper bound holds on these instances, and nothing here confirms growth
    like :math:`N^{1/3}`; the unnormalised slope is in details. Expected **holds**."""
    vals = np.empty((n_seeds, len(ns)))
    raw = np.empty((n_seeds, len(ns)))
    instances = []
    for j, n in enumerate(ns):
        fb = deterministic_feedback(n)
        reg, _, G = kvib_regret_grid(rng, fb, ks=(k,), rounds=(n_rounds,), n_seeds=n_seeds)
        instances += regret_instances(fb, ks=(k,), rounds=(n_rounds,), G=G)
        vals[:, j] = reg[:, 0] / (n**2 * G**2)
        raw[:, j] = reg[:, 0]
    fit = loglog_slope(ns, vals, rng=rng)
    return Evidence(instance=instances,
                    measured=fit.ci_high, theoretical=1 / 3, relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "gate on the 97.5% bootstrap quantile of the slope"),
                    details={"slope": fit.slope, "ci95": [fit.ci_low, fit.ci_high],
                             "theory": 1 / 3, "normalized_regret": vals.mean(0),
                             "unnormalized_slope": loglog_slope(ns, raw, n_boot=0,
                                                                rng=None).slope,
                             "n_seeds": n_seeds, "n_rounds": n_rounds})
