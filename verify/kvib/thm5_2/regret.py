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
from flbounds.sampling.online import Assumption51Feedback, kvib_online, static_regret
from flbounds.stats import loglog_slope

from ..fig3 import FIG3
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


@claim("kvib.thm5_2.k_exponent", ref="Thm 5.2; Fig. 3(b)", kind="statement", expected="holds",
       result=THM5_2, parts=("k_rate",),
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
    return Evidence(instance=regret_instances(fb, ks=ks, rounds=(n_rounds,), G=G),
                    measured=[fit.slope, fit.ci_high], theoretical=(-2.0, -1.1), relation="in",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "gate on the 97.5% bootstrap quantile of the slope "
                                        "(seeds resampled with replacement)"),
                    details={"slope": fit.slope, "ci95": [fit.ci_low, fit.ci_high],
                             "theory": FOUR_THIRDS, "ks": ks, "mean_regret": reg.mean(0),
                             "zbar_over_k": zbar / np.asarray(ks), "G": G,
                             "n_seeds": n_seeds, "n_rounds": n_rounds})


_SETTINGS = {"quantile": ("quantile", "max", "paper"), "uniform": ("uniform", "max", "paper"),
             "code_variant": ("lognormal", "max", "code")}


@claim("kvib.thm5_2.k_exponent_settings", ref="Thm 5.2 (robustness; audit part B item 4)",
       kind="statement", expected="holds",
       result=THM5_2, parts=("k_rate",),
       statement="With the theory's gamma (G = max feedback) the K-slope stays <= -1.1 for "
                 "quantile and near-homogeneous feedback and for the code variant "
                 "p ~ omega + gamma.",
       quick=dict(n_clients=100, n_rounds=4000, ks=(2, 4, 8, 16), n_seeds=4),
       full=dict(n_clients=100, n_rounds=16000, ks=(2, 4, 8, 16), n_seeds=10))
def k_exponent_settings(*, rng, n_clients, n_rounds, ks, n_seeds):
    """Three settings of the audit table, all inside Thm 5.2's hypotheses (gamma = G^2 N/(K
    theta) with G = max feedback; the code variant changes only the probability map). Gate as
    in ``kvib.thm5_2.k_exponent``: the upper end of each setting's 95% seed-bootstrap CI of the
    slope must be <= -1.1. Measured: those CI upper ends. Details: point slopes and the
    code-variant vs paper regret ratio (spec V12(vii), informational). The practical-G setting
    is outside the hypothesis and is the remark ``kvib.sec6.k_exponent_practical_g``."""
    fits, means, feedbacks = {}, {}, []
    fb_log = Assumption51Feedback.generate(rng, n_clients, profile="lognormal")
    for name, (profile, g_rule, variant) in _SETTINGS.items():
        fb = fb_log if profile == "lognormal" else Assumption51Feedback.generate(
            rng, n_clients, profile=profile)
        feedbacks.append(fb)
        reg, _, _ = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds,
                                     g_rule=g_rule, variant=variant)
        fits[name] = loglog_slope(ks, reg, rng=rng)
        means[name] = reg.mean(0)
    paper, _, _ = kvib_regret_grid(rng, fb_log, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds)
    instances = [c for f in feedbacks
                 for c in regret_instances(f, ks=ks, rounds=(n_rounds,), G=f.G)]
    return Evidence(instance=instances,
                    measured=[f.ci_high for f in fits.values()], theoretical=-1.1,
                    relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "gate on the 97.5% bootstrap quantile of each slope"),
                    details={"slopes": {k: f.slope for k, f in fits.items()},
                             "ci95": {k: [f.ci_low, f.ci_high] for k, f in fits.items()},
                             "mean_regret": means,
                             "code_over_paper_regret": means["code_variant"] / paper.mean(0)})


@claim("kvib.sec6.k_exponent_practical_g", ref="Sec. 6 practical G (mean first-round "
       "feedback); Thm 5.2 rate", kind="remark", expected="holds",
       parts=(SEC6.part("practical_g"), FIG3.part("regret_k")),
       statement="With the Sec. 6 practical rule (G = mean first-round feedback in gamma) the "
                 "K-slope of K-Vib's regret is still <= -1.1.",
       quick=dict(n_clients=100, n_rounds=4000, ks=(2, 4, 8, 16), n_seeds=4),
       full=dict(n_clients=100, n_rounds=16000, ks=(2, 4, 8, 16), n_seeds=10))
def k_exponent_practical_g(*, rng, n_clients, n_rounds, ks, n_seeds):
    """A *remark*, not Thm 5.2: the practical G is below max feedback, so gamma = G^2 N/(K
    theta) is smaller than the theorem's hypothesis requires and the theorem does not apply;
    this checks the paper's practical recipe empirically. Gate: upper end of the 95%
    seed-bootstrap CI of the slope <= -1.1 (audit measured about -1.56). Expected **holds**."""
    fb = Assumption51Feedback.generate(rng, n_clients, profile="lognormal")
    reg, _, G = kvib_regret_grid(rng, fb, ks=ks, rounds=(n_rounds,), n_seeds=n_seeds,
                                 g_rule="mean")
    fit = loglog_slope(ks, reg, rng=rng)
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                      n_clients=n_clients),
                    measured=fit.ci_high, theoretical=-1.1, relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap",
                                        "gate on the 97.5% bootstrap quantile of the slope"),
                    details={"slope": fit.slope, "ci95": [fit.ci_low, fit.ci_high],
                             "G_practical": G, "G_max": fb.G, "mean_regret": reg.mean(0)})


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
                 "at most 2/3 + 0.1.",
       quick=dict(n_clients=100, k=8, rounds=(8000, 16000, 32000), n_seeds=4),
       full=dict(n_clients=100, k=8, rounds=(16000, 64000, 128000), n_seeds=10))
def t_exponent(*, rng, n_clients, k, rounds, n_seeds):
    """V12(iii). Small T is pre-asymptotic (gamma dominates omega); the spec's margin 0.1 covers
    the residual curvature (pilot local slopes 0.75 -> 0.69 -> 0.63). Measured: the 97.5%
    seed-bootstrap quantile of the local slope of the mean regret between the two largest
    horizons (<= 2/3 + 0.1). Details: point value and the global fit with its CI."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    reg, _, _ = kvib_regret_grid(rng, fb, ks=(k,), rounds=rounds, n_seeds=n_seeds)
    means = reg.mean(0)
    span = np.log(rounds[-1] / rounds[-2])
    local = float(np.log(means[-1] / means[-2]) / span)
    boot = boot_means(rng, reg)
    upper = float(np.quantile(np.log(boot[:, -1] / boot[:, -2]) / span, 0.975))
    fit = loglog_slope(rounds, reg, rng=rng)
    return Evidence(instance=regret_instances(fb, ks=(k,), rounds=rounds, G=fb.G),
                    measured=upper, theoretical=2 / 3 + 0.1, relation="<=",
                    tolerance=Tolerance(0.0, "seed bootstrap; spec margin",
                                        "97.5% bootstrap quantile; 0.1 above 2/3 for "
                                        "pre-asymptotics"),
                    details={"local_slope": local, "global_slope": fit.slope,
                             "global_ci95": [fit.ci_low, fit.ci_high], "rounds": rounds,
                             "mean_regret": means})


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
