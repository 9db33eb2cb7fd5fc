r"""Figure 7 of K-Vib (gradient variance with different K): the result, its part, its
hypotheses and its claim (observable and rule: :mod:`verify.kvib.figures37`). Instances carry
``feedback``, ``n_rounds``, ``budget`` (the grid) and ``n_clients``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling.online import (
    Assumption51Feedback,
    kvib_online,
)
from flbounds.stats import mc_mean

from .conditions import online_budgets, online_feedback

FIG7 = result(
    "kvib.fig7", ref="Figure 7", title="gradient variance for different K",
    parts={"variance_k": "the variance of K-Vib's global estimate falls as the budget K grows"},
    hypotheses=(online_feedback, online_budgets))


@claim("kvib.fig7.variance_decreases_in_k", ref="Fig. 7 (gradient variance with different K)",
       kind="remark", expected="holds",
       result=FIG7,
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
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                      n_clients=n_clients),
                    measured=drops.mean - 4 * drops.se, theoretical=0.0, relation=">=",
                    tolerance=Tolerance.exact("4 SE subtracted in the measured value"),
                    details={"ks": list(ks), "mean_variance": var.mean(axis=0),
                             "loglog_slope": float(slope)})
