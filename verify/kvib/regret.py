r"""K-Vib regret: Theorem 5.2 (partial feedback), its K, T and N exponents and explicit bound
([003], recipe V12; audit part B item 4).

Feedback follows Assumption 5.1, :math:`\pi_t(i)=\lambda_i(b_i+c_i/\sqrt t)`, :math:`\lambda=1/N`,
fixed per claim; seeds vary only the sampler's draws (the theorem bounds an expectation over
sampling). Regret is the static regret of :math:`\ell_t(\tilde p^t)` against the exact best
fixed :math:`p\in\mathcal P_K` in hindsight (App. D.3 uses :math:`\tilde p`).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.online import Assumption51Feedback, kvib_online, static_regret
from flbounds.stats import loglog_slope

FOUR_THIRDS = -4.0 / 3.0


def _g_value(fb: Assumption51Feedback, rule: str) -> float:
    """Theory G = max feedback; Sec. 6 practical rule = mean first-round feedback."""
    return fb.G if rule == "max" else float(np.mean(fb.values(1)))


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


@claim("kvib.thm5_2.k_exponent", ref="Thm 5.2; Fig. 3(b)", kind="statement", expected="holds",
       statement="E[Regret_S(T)] = O~(N^{1/3} T^{2/3} K^{-4/3}): at fixed N, T the log-log "
                 "slope of the regret in K is at most -1.1 (theory -4/3).",
       quick=dict(n_clients=100, n_rounds=8000, ks=(2, 4, 8, 16), n_seeds=5),
       full=dict(n_clients=100, n_rounds=32000, ks=(2, 4, 8, 12, 16, 25), n_seeds=10))
def k_exponent(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""Headline check (spec V12(iv), audit item 4). Algorithm 2 as printed
    (:math:`\sqrt{\omega+\gamma}`, :math:`\theta=(N/(TK))^{1/3}`, :math:`\gamma=G^2N/(K\theta)`,
    :math:`G=\max\pi`), LogNormal feedback profile, :math:`TK/N\ge100`, :math:`K\le N/4`.

    Gate: the slope of log mean regret vs log K *and* the upper end of its 95% seed-bootstrap CI
    lie in [-2.0, -1.1] ("better than the trivial 1/K scaling of the loss itself"); reported
    next to -4/3. The audit measured -1.28 to -1.56 depending on profile, gamma and T, so -4/3
    itself is not a target. Expected **holds**. The bootstrap is the tolerance's derivation:
    the gate is applied to the CI end, not to the point estimate alone. The fit
    (:func:`flbounds.stats.loglog_slope`) is on the geometric mean over seeds.
    """
    fb = Assumption51Feedback.generate(rng, n_clients, profile="lognormal")
    reg, zbar, G = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds)
    fit = loglog_slope(ks, reg, rng=rng)
    return Evidence(measured=[fit.slope, fit.ci_high], theoretical=(-2.0, -1.1), relation="in",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "gate on the 97.5% bootstrap quantile of the slope "
                                        "(seeds resampled with replacement)"),
                    details={"slope": fit.slope, "ci95": [fit.ci_low, fit.ci_high],
                             "theory": FOUR_THIRDS, "ks": ks, "mean_regret": reg.mean(0),
                             "zbar_over_k": zbar / np.asarray(ks), "G": G,
                             "n_seeds": n_seeds, "n_rounds": n_rounds})


@claim("kvib.thm5_2.k_exponent_settings", ref="Thm 5.2 (robustness; audit part B item 4)",
       kind="statement", expected="holds",
       statement="The K-slope stays <= -1.1 for quantile and near-homogeneous feedback, with "
                 "the practical G (mean first-round feedback) and for the code variant p ~ "
                 "omega + gamma.",
       quick=dict(n_clients=100, n_rounds=4000, ks=(2, 4, 8, 16), n_seeds=2),
       full=dict(n_clients=100, n_rounds=16000, ks=(2, 4, 8, 16), n_seeds=10))
def k_exponent_settings(*, rng, n_clients, n_rounds, ks, n_seeds):
    """Four settings of the audit table; measured: each setting's slope (all must be <= -1.1).
    Details: code-variant vs paper regret ratio (spec V12(vii), informational; the audit/spec
    pilots found the code variant lower)."""
    settings = {"quantile": ("quantile", "max", "paper"), "uniform": ("uniform", "max", "paper"),
                "practical_G": ("lognormal", "mean", "paper"),
                "code_variant": ("lognormal", "max", "code")}
    slopes, means = {}, {}
    fb_log = Assumption51Feedback.generate(rng, n_clients, profile="lognormal")
    for name, (profile, g_rule, variant) in settings.items():
        fb = fb_log if profile == "lognormal" else Assumption51Feedback.generate(
            rng, n_clients, profile=profile)
        reg, _, _ = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds,
                                     g_rule=g_rule, variant=variant)
        slopes[name] = loglog_slope(ks, reg, rng=rng).slope
        means[name] = reg.mean(0)
    paper, _, _ = kvib_regret_grid(rng, fb_log, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds)
    return Evidence(measured=list(slopes.values()), theoretical=-1.1, relation="<=",
                    tolerance=Tolerance.exact("gate on fitted slopes (see k_exponent for CIs)"),
                    details={"slopes": slopes, "mean_regret": means,
                             "code_over_paper_regret": means["code_variant"] / paper.mean(0)})


@claim("kvib.thm5_2.sublinear", ref="Thm 5.2 (Regret_S/T -> 0)", kind="statement",
       expected="holds",
       statement="Regret_S(T)/T is strictly decreasing in T (theta, gamma at their T-dependent "
                 "theory values).",
       quick=dict(n_clients=100, k=8, rounds=(1000, 2000, 4000, 8000), n_seeds=4),
       full=dict(n_clients=100, k=8, rounds=(1000, 4000, 16000, 64000), n_seeds=10))
def sublinear(*, rng, n_clients, k, rounds, n_seeds):
    """V12(ii). Measured: the successive differences of mean Regret/T (must be < 0; relation
    <= 0 with zero tolerance; the gaps are ~20% of the values, far above seed noise)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    reg, _, _ = kvib_regret_grid(rng, fb, ks=(k,), rounds=rounds, n_seeds=n_seeds)
    per_round = reg.mean(0) / np.asarray(rounds)
    return Evidence(measured=np.diff(per_round), theoretical=0.0, relation="<=",
                    tolerance=Tolerance.exact("differences of seed means"),
                    details={"rounds": rounds, "regret_over_T": per_round})


@claim("kvib.thm5_2.t_exponent", ref="Thm 5.2 (T^{2/3})", kind="statement", expected="holds",
       statement="The local log-log slope of Regret_S in T between the two largest horizons is "
                 "at most 2/3 + 0.1.",
       quick=dict(n_clients=100, k=8, rounds=(8000, 16000, 32000), n_seeds=3),
       full=dict(n_clients=100, k=8, rounds=(16000, 64000, 128000), n_seeds=10))
def t_exponent(*, rng, n_clients, k, rounds, n_seeds):
    """V12(iii). Small T is pre-asymptotic (gamma dominates omega); the spec's margin 0.1 covers
    the residual curvature (pilot local slopes 0.75 -> 0.69 -> 0.63). Details: bootstrap CI."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    reg, _, _ = kvib_regret_grid(rng, fb, ks=(k,), rounds=rounds, n_seeds=n_seeds)
    means = reg.mean(0)
    local = float(np.log(means[-1] / means[-2]) / np.log(rounds[-1] / rounds[-2]))
    fit = loglog_slope(rounds, reg, rng=rng)
    return Evidence(measured=local, theoretical=2 / 3 + 0.1, relation="<=",
                    tolerance=Tolerance(0.0, "spec margin", "0.1 above 2/3 for pre-asymptotics"),
                    details={"global_slope": fit.slope, "global_ci95": [fit.ci_low, fit.ci_high],
                             "rounds": rounds, "mean_regret": means})


@claim("kvib.thm5_2.explicit_bound", ref="Thm 5.2 proof, App. D.3 eqs. (52)-(54)",
       kind="proof-step", expected="holds",
       statement="E[Regret_S] <= theta G^2 N^2 T/K + (22 N^{3/2} G/(zbar sqrt(theta K)) + "
                 "2 sqrt6 N^{3/2} G/sqrt(theta K^3)) sum_i sqrt(pi^2_{1:T}(i)) + "
                 "22 G^2 N^2/(zbar theta K).",
       quick=dict(n_clients=100, n_rounds=4000, ks=(2, 8, 16), n_seeds=3),
       full=dict(n_clients=100, n_rounds=16000, ks=(2, 4, 8, 16, 25), n_seeds=10))
def explicit_bound(*, rng, n_clients, n_rounds, ks, n_seeds):
    r"""V12(i) with the measured :math:`\bar z=\min_tz_t` (needed for the :math:`K^{-4/3}` rate;
    the paper does not state :math:`\bar z=\Theta(K)`). Measured: mean regret + 4 SE over seeds
    divided by the bound (must be <= 1). The audit found margins of 87-130x."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    reg, zbar, G = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds)
    n, t = n_clients, n_rounds
    root = float(np.sum(np.sqrt(fb.squared_sums(t))))
    bounds = []
    for k, z in zip(ks, zbar, strict=True):
        theta = (n / (t * k)) ** (1 / 3)
        bounds.append(theta * G**2 * n**2 * t / k
                      + (22 * n**1.5 * G / (z * np.sqrt(theta * k))
                         + 2 * np.sqrt(6) * n**1.5 * G / np.sqrt(theta * k**3)) * root
                      + 22 * G**2 * n**2 / (z * theta * k))
    upper = reg.mean(0) + 4 * reg.std(0, ddof=1) / np.sqrt(n_seeds)
    ratio = upper / np.asarray(bounds)
    return Evidence(measured=ratio, theoretical=1.0, relation="<=",
                    tolerance=Tolerance.exact("mean + 4 SE already in the measured ratio"),
                    details={"mean_regret": reg.mean(0), "bound": bounds, "zbar": zbar,
                             "margin": 1 / ratio})


@claim("kvib.thm5_2.n_exponent", ref="Thm 5.2 (N^{1/3}); App. D.3 normalisation",
       kind="statement", expected="holds",
       statement="Regret_S/(N^2 G^2) grows in N with log-log slope at most 2/3 (theory 1/3, "
                 "asymptotically).",
       quick=dict(ns=(50, 100, 200, 400), n_rounds=4000, k=8, n_seeds=2),
       full=dict(ns=(50, 100, 200, 400, 800), n_rounds=16000, k=8, n_seeds=6))
def n_exponent(*, rng, ns, n_rounds, k, n_seeds):
    """V12(v), soft: pre-asymptotic warm-up inflates the slope (pilot 0.49); the gate is 2/3 and
    the value is reported next to 1/3. Quantile profile (deterministic b), G = max feedback."""
    vals = np.empty((n_seeds, len(ns)))
    for j, n in enumerate(ns):
        fb = Assumption51Feedback.generate(rng, n, profile="quantile")
        reg, _, G = kvib_regret_grid(rng, fb, ks=(k,), rounds=(n_rounds,), n_seeds=n_seeds)
        vals[:, j] = reg[:, 0] / (n**2 * G**2)
    fit = loglog_slope(ns, vals, rng=rng)
    return Evidence(measured=fit.slope, theoretical=2 / 3, relation="<=",
                    tolerance=Tolerance.exact("soft gate of spec V12(v)"),
                    details={"ci95": [fit.ci_low, fit.ci_high], "theory": 1 / 3,
                             "normalized_regret": vals.mean(0)})
