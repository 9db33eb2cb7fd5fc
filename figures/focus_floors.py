r"""FOCUS vs FedAvg: stationary error floors against the step size (Sec. 1, Thm 1, Thm 3-4).

Heterogeneous quadratics (N = 8, d = 3, mu = 1, L = 4), Bernoulli participation
p = (.1, .2, .3, .5, .6, .8, .9, .95). Curves:

- FedAvg (tau = 1, 5), exact :math:`\limsup E\|x_r - x^\star\|^2` from the stationary moments
  (enumeration of the 2^8 participation sets, ``flbounds.closed_forms``): a floor that does not
  vanish as eta -> 0 (sampling bias, tends to ||argmin sum q_i f_i - x*||^2, dashed);
- FOCUS with exact gradients (tau = 5): squared error after n_rounds (reaches the float64 floor
  except at the smallest steps, where it is still decaying);
- SG-FOCUS (tau = 5, gradient noise sigma = 0.1), Monte Carlo stationary error with the fitted
  log-log slope and the reference slope 1 (floor proportional to eta).
"""

from __future__ import annotations

import sys

import matplotlib.ticker
import numpy as np

from figures._common import plt, run_figure
from flbounds.algorithms import focus, sg_focus
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import random_quadratics
from flbounds.stats import loglog_slope
from flbounds.theory.fedavg_limits import (
    fedavg_stationary_moments,
    stationary_error,
    weighted_minimizer,
)

#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("focus.fedavg", "focus.thm3", "focus.thm4", "focus.cor1_2")

PROFILES = {"quick": dict(n_steps=6, n_runs=4, n_rounds=3000),
            "full": dict(n_steps=10, n_runs=20, n_rounds=20000)}
P = np.array([.1, .2, .3, .5, .6, .8, .9, .95])
SIGMA = 0.1


def compute(profile="quick", seed=0):
    cfg = PROFILES[profile]
    rng = np.random.default_rng(seed)
    problem = random_quadratics(rng, 8, 3, mu=1.0, L=4.0)
    proc = Bernoulli(P)
    masks, probs = subset_distribution(proc)
    steps = np.geomspace(1e-3, 2.5e-2, cfg["n_steps"])
    data = {"steps": steps}
    for tau in (1, 5):
        data[f"fedavg_tau{tau}"] = np.array([stationary_error(
            *fedavg_stationary_moments(problem.A, problem.b, masks, probs, step=s,
                                       local_steps=tau), problem.x_star) for s in steps])
    x_q = weighted_minimizer(problem.A, problem.b, proc.aggregation_weights())
    data["bias_limit"] = float(np.sum((x_q - problem.x_star) ** 2))
    exact, noisy = [], []
    for s in steps:
        n_rounds = cfg["n_rounds"]
        plan = proc.plan(rng, n_rounds)
        xs = focus(problem, plan, step=s, local_steps=5).x
        exact.append(np.sum((xs[-1] - problem.x_star) ** 2))
        runs = []
        for child in rng.spawn(cfg["n_runs"]):
            noise = SIGMA / np.sqrt(3) * child.standard_normal((n_rounds, 8, 5, 3))
            xs = sg_focus(problem, proc.plan(child, n_rounds), noise, step=s, local_steps=5,
                          x0=problem.x_star, init="gradient").x
            runs.append(np.mean(np.sum((xs[n_rounds // 2:] - problem.x_star) ** 2, axis=1)))
        noisy.append(runs)
    data["focus_exact"] = np.maximum(np.array(exact), 1e-33)
    data["sg_focus"] = np.array(noisy).T
    fit = loglog_slope(steps, data["sg_focus"], n_boot=200, rng=rng)
    data["sg_slope"] = np.array([fit.slope, fit.ci_low, fit.ci_high, fit.intercept])
    return data


def plot(data):
    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(12.5, 4.8), layout="constrained",
                                   width_ratios=(1.35, 1))
    steps = data["steps"]
    bias = r"$\|\arg\min\ \Sigma_i q_i f_i - x^\star\|^2$ ($\eta \to 0$ limit)"
    for axis in (ax, zoom):
        axis.loglog(steps, data["fedavg_tau1"], "o-", color="C0",
                    label=r"FedAvg $\tau=1$ (exact limsup)")
        axis.loglog(steps, data["fedavg_tau5"], "s-", color="C1",
                    label=r"FedAvg $\tau=5$ (exact limsup)")
        axis.axhline(float(data["bias_limit"]), ls="--", color="gray", label=bias)
        axis.set_xlabel(r"step size $\eta$")
    sg = data["sg_focus"]
    ax.loglog(steps, sg.mean(axis=0), "^-", color="C2",
              label=rf"SG-FOCUS $\tau=5$, $\sigma={SIGMA}$ (Monte Carlo)")
    slope, lo, hi, icpt = data["sg_slope"]
    ax.loglog(steps, np.exp(icpt) * steps**slope, ":", color="k",
              label=f"fitted slope {slope:.2f} [{lo:.2f}, {hi:.2f}]; theory 1")
    ax.loglog(steps, data["focus_exact"], "v-", color="C3",
              label=r"FOCUS $\tau=5$ (exact gradients, last round)")
    ax.set_ylabel(r"stationary $E\|x_r - x^\star\|^2$")
    ax.set_title(r"Error floors vs step: $N = 8$, Bernoulli $p_i \in [0.1, 0.95]$")
    ax.legend(loc="center right")
    for axis in (ax, zoom):         # after the last loglog, which resets the ticks
        # within one decade numbers label the minor ticks: 2 and 5 per decade stay readable
        axis.xaxis.set_minor_locator(matplotlib.ticker.LogLocator(subs=(2.0, 5.0)))
        axis.xaxis.set_minor_formatter(matplotlib.ticker.LogFormatterSciNotation(
            labelOnlyBase=False, minor_thresholds=(2, 1)))
    zoom.set_title(r"FedAvg's floors, zoomed: no vanishing as $\eta \to 0$")
    zoom.yaxis.set_minor_formatter(matplotlib.ticker.LogFormatterSciNotation(
        labelOnlyBase=False, minor_thresholds=(2, 1)))
    zoom.legend(loc="upper left")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
