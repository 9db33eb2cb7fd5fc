r"""Figures 3(c) and 7 of [003], re-run on the online problem of Sec. 5 (Assumption 5.1
feedback, partial information, :func:`flbounds.sampling.online.kvib_online`).

Fig. 3(c), "sensitivity to the regularization gamma": the regret "slightly changes with
different gamma ... the K-Vib sampler is not sensitive to gamma" (theta = 0.3). The paper
gives neither the gamma values nor a scale for "slightly", so the rule is fixed in advance
from what the figure is for: gamma is "not sensitive" when moving it changes K-Vib's regret
by less than what K-Vib gains over the non-adaptive sampler, i.e. the spread (max - min) of
the mean static regret over the gamma grid is at most the gain (uniform ISP's regret minus
K-Vib's) at the theory value :math:`\gamma_0 = G^2N/(K\theta)`. Grid: factors 0.1, 1, 10 of
:math:`\gamma_0`, a narrower range than the paper's own uncertainty about gamma (App. F's
G = 0.01 gives :math:`G^2 = 10^{-4}`, the released code's README sets ``-reg 0.1``). Horizon
T = 500, the paper's synthetic runs (App. F). The weaker reading, "K-Vib still beats
uniform ISP at every gamma of the grid", is its own claim.

Fig. 7, "gradient variance with different K": the estimator's variance falls as the budget
K grows. Observable: the per-round ISP variance of the played probabilities,
:math:`\sum_i (1 - \tilde p_i)\pi_t^2(i)/\tilde p_i = \ell_t(\tilde p^t) - \sum_i
\pi_t^2(i)`, averaged over rounds. Rule: for consecutive budgets, the paired (same seed)
decrease has a positive 4-SE lower confidence bound.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import UniformISP
from flbounds.sampling.online import (
    Assumption51Feedback,
    kvib_online,
    run_online,
    static_regret,
)
from flbounds.stats import mc_mean

THETA_FIG3C = 0.3
GAMMA_FACTORS = (0.1, 1.0, 10.0)


def _gamma_regrets(rng, n_clients, budget, n_rounds, n_seeds):
    """Mean static regret of K-Vib per gamma factor (and SEs), uniform ISP's regret, gamma_0."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    gamma0 = fb.G**2 * n_clients / (budget * THETA_FIG3C)
    regrets = np.empty((n_seeds, len(GAMMA_FACTORS)))
    for s, child in enumerate(rng.spawn(n_seeds)):
        for j, factor in enumerate(GAMMA_FACTORS):
            run = kvib_online(fb, n_rounds, budget, np.random.default_rng(child.integers(2**63)),
                              gamma=factor * gamma0, theta=THETA_FIG3C)
            regrets[s, j] = static_regret(run.costs, fb, budget)
    # uniform ISP's inclusion weights are fixed, so its cost sequence (and regret) is exact
    uniform = run_online(UniformISP(n_clients, budget), fb, n_rounds, rng.spawn(1)[0])
    return mc_mean(regrets), static_regret(uniform.costs, fb, budget), gamma0


@claim("kvib.fig3c.gamma_sensitivity", ref="Fig. 3(c); App. F (theta = 0.3, gamma varied)",
       kind="remark", expected="violated",
       statement="K-Vib's regret changes only slightly with the regularization gamma: over "
                 "gamma in [0.1, 10] x gamma_0 its spread is at most K-Vib's gain over uniform "
                 "ISP at gamma_0 (rule of the module docstring).",
       quick=dict(n_clients=100, budget=10, n_rounds=500, n_seeds=8),
       full=dict(n_clients=100, budget=10, n_rounds=500, n_seeds=40))
def gamma_sensitivity(*, rng, n_clients, budget, n_rounds, n_seeds):
    """Module docstring: the rule. Measured: spread of the mean regret over the grid;
    theoretical: the gain at gamma_0. Expected violated at the paper's horizon: the regret
    grows with gamma (about 88, 172, 230 at factors 0.1, 1, 10; uniform 245), a spread of
    about twice the gain (72). At longer horizons the gain grows faster than the spread
    (T = 20000: spread 3.7e3 < gain 7.1e3), so the insensitivity is a long-horizon property
    the paper's runs do not reach. Tolerance: 4 MC SE of spread - gain (the uniform regret
    is exact; the extremes and gamma_0 are independent seeds' means)."""
    stats, uniform, gamma0 = _gamma_regrets(rng, n_clients, budget, n_rounds, n_seeds)
    hi, lo = int(np.argmax(stats.mean)), int(np.argmin(stats.mean))
    at0 = GAMMA_FACTORS.index(1.0)
    spread = stats.mean[hi] - stats.mean[lo]
    gain = uniform - stats.mean[at0]
    se = float(np.sqrt(np.sum(stats.se[sorted({hi, lo, at0})] ** 2)))
    return Evidence(measured=spread, theoretical=gain, relation="<=",
                    tolerance=Tolerance(4 * se, "4 MC SE", "of spread - gain: the seed means "
                                        "at the extremes and at gamma_0, in quadrature"),
                    details={"gamma_factors": GAMMA_FACTORS, "gamma_theory": gamma0,
                             "mean_regret": stats.mean, "se": stats.se, "theta": THETA_FIG3C,
                             "uniform_isp_regret": uniform, "spread": spread, "gain": gain})


@claim("kvib.fig3c.beats_uniform_every_gamma", ref="Fig. 3(c); App. F (theta = 0.3, gamma varied)",
       kind="remark", expected="holds",
       statement="The weaker reading of Fig. 3(c): at every gamma in [0.1, 10] x gamma_0 "
                 "K-Vib's static regret stays below uniform ISP's (the choice of gamma does "
                 "not undo K-Vib's advantage).",
       quick=dict(n_clients=100, budget=10, n_rounds=500, n_seeds=8),
       full=dict(n_clients=100, budget=10, n_rounds=500, n_seeds=40))
def beats_uniform_every_gamma(*, rng, n_clients, budget, n_rounds, n_seeds):
    """Same runs as kvib.fig3c.gamma_sensitivity. Measured: K-Vib's mean regret per gamma
    factor; theoretical: uniform ISP's exact regret (<=). Expected to hold (largest, at 10
    gamma_0: about 230 against 245). Tolerance: 4 MC SE per factor."""
    stats, uniform, gamma0 = _gamma_regrets(rng, n_clients, budget, n_rounds, n_seeds)
    return Evidence(measured=stats.mean, theoretical=uniform, relation="<=",
                    tolerance=Tolerance.mc(stats.se),
                    details={"gamma_factors": GAMMA_FACTORS, "gamma_theory": gamma0,
                             "uniform_isp_regret": uniform, "theta": THETA_FIG3C})


@claim("kvib.fig7.variance_decreases_in_k", ref="Fig. 7 (gradient variance with different K)",
       kind="remark", expected="holds",
       statement="The variance of K-Vib's global estimate decreases as the budget K grows.",
       quick=dict(n_clients=100, ks=(1, 2, 5, 10, 20), n_rounds=1000, n_seeds=4),
       full=dict(n_clients=100, ks=(1, 2, 5, 10, 20, 50), n_rounds=10000, n_seeds=20))
def variance_decreases_in_k(*, rng, n_clients, ks, n_rounds, n_seeds):
    """Module docstring: observable and rule. Measured: per consecutive pair of budgets, the
    mean paired decrease minus 4 SE; theoretical 0 (>=). Tolerance: none beyond the 4 SE
    already subtracted. The slope of log variance on log K is reported."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    total = np.array([np.sum(fb.values(t) ** 2) for t in range(1, n_rounds + 1)])
    var = np.empty((n_seeds, len(ks)))
    for s, child in enumerate(rng.spawn(n_seeds)):
        seed = int(child.integers(2**63))
        for j, k in enumerate(ks):
            run = kvib_online(fb, n_rounds, float(k), np.random.default_rng(seed), G=fb.G)
            var[s, j] = float(np.mean(run.costs - total))
    drops = mc_mean(var[:, :-1] - var[:, 1:])
    slope = np.polyfit(np.log(ks), np.log(var.mean(axis=0)), 1)[0]
    return Evidence(measured=drops.mean - 4 * drops.se, theoretical=0.0, relation=">=",
                    tolerance=Tolerance.exact("4 SE subtracted in the measured value"),
                    details={"ks": list(ks), "mean_variance": var.mean(axis=0),
                             "loglog_slope": float(slope)})
