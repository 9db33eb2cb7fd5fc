r"""SG-FOCUS's linear speedup (FOCUS, the remark after Theorem 2, Sec. 5): with eta = c/N the
stationary error falls as O(1/N); the instance and noise are those of
:mod:`verify.focus.sg_focus`."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics
from flbounds.stats import loglog_slope

from .sg_focus import THM2, _floors, sg_instance

SPEEDUP_STEP = 0.05     # eta = SPEEDUP_STEP / N: eta N L = 0.1 at L = 2
SPEEDUP_SIGMA = 0.1
P_JOIN = 0.5


@claim("focus.thm2.linear_speedup", ref="Thm 2, linear-speedup remark (Sec. 5)", kind="remark",
       expected="holds", result=THM2, parts=("linear_speedup",),
       statement="With eta = c/N the stationary error of SG-FOCUS decreases as O(1/N).",
       quick=dict(n_clients=(4, 8, 16, 32), n_runs=10, burn=12, window=20),
       full=dict(n_clients=(4, 8, 16, 32, 64, 128), n_runs=60, burn=12, window=40))
def linear_speedup(*, rng, n_clients, n_runs, burn, window):
    """Quadratics with mu = 1, L = 2, d = 3, heterogeneity 1, Bernoulli(0.5) participation,
    sigma = 0.1, eta = 0.05/N. Measured: log-log slope of the floor against N (runs resampled
    by the bootstrap); O(1/N) means slope <= -1. Hypotheses: A1, A2, A6 hold (evaluated);
    Thm 4's step condition (q^{3/2} factor, q ~ 1/N) is not met for the larger N and is not
    a hypothesis of the remark, which is about the eta = O(1/N) scaling.
    Tolerance: 4 bootstrap SE of the slope."""
    floors, steps, instances = [], [], []
    for n, child in zip(n_clients, rng.spawn(len(n_clients)), strict=True):
        problem = random_quadratics(child, n, 3, mu=1.0, L=2.0)
        step = SPEEDUP_STEP / n
        avg, _ = _floors(problem, Bernoulli(np.full(n, P_JOIN)), child, step=step,
                         sigma=SPEEDUP_SIGMA, n_runs=n_runs, burn=burn, window=window)
        floors.append(avg)
        steps.append(step)
        instances.append(sg_instance(problem, Bernoulli(np.full(n, P_JOIN)), step, SPEEDUP_SIGMA))
    samples = np.array(floors).T
    fit = loglog_slope(np.asarray(n_clients, dtype=float), samples, n_boot=1000,
                       rng=rng.spawn(1)[0])
    se = (fit.ci_high - fit.ci_low) / (2 * 1.96)
    return Evidence(measured=fit.slope, theoretical=-1.0, relation="<=",
                    tolerance=Tolerance(4 * se, "4 bootstrap SE",
                                        "SE = (95% percentile CI width)/(2*1.96), runs "
                                        "resampled (1000 resamples)"),
                    details={"n_clients": list(n_clients), "steps": steps,
                             "floor_geometric_mean": np.exp(np.log(samples).mean(axis=0)),
                             "slope_ci": [fit.ci_low, fit.ci_high], "r2": fit.r2},
                    instance=instances)
