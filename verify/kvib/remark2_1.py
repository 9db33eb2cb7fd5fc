r"""Remark 2.1 of K-Vib: the sampling probabilities always satisfy :math:`p_i^t > 0` and
:math:`\sum_i p_i^t = K` (the expected number of sampled clients, :math:`1 \le K \le N`).

Checked on the probabilities K-Vib (Algorithm 2, both the paper's and the released code's
variant) plays in every round of an online run, including clients whose feedback is always
0 (the case where an unregularized solver would give :math:`p_i = 0`; K-Vib's
:math:`\gamma > 0` and the uniform mixing prevent it).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling import Feedback, KVib
from flbounds.sampling.online import Assumption51Feedback

from .conditions import budget_of_sampler

REMARK2_1 = result(
    "kvib.remark2_1", ref="Remark 2.1", title="constraints on the sampling probability",
    parts={"constraints": "p_i^t > 0 and sum_i p_i^t = K for every t, with K = E|S^t| in "
                          "[1, N]"},
    hypotheses=(budget_of_sampler,))


def _run(rng, n_clients, budget, n_rounds, variant, silent):
    """Per round: (min p, |sum p - K|) of K-Vib's played probabilities."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    sampler = KVib(n_clients, budget, n_rounds, G=fb.G, variant=variant)
    mins, errors = [], []
    for t in range(1, n_rounds + 1):
        p = sampler.probabilities()
        mins.append(float(p.min()))
        errors.append(abs(float(p.sum()) - budget))
        draw = sampler.sample(rng)
        values = fb.values(t)
        values[:silent] = 0.0                    # these clients never report feedback
        sampler.update(Feedback(draw, values[draw.clients]))
    return np.array(mins), np.array(errors)


@claim("kvib.remark2_1.constraints", ref="Remark 2.1", kind="remark", expected="holds",
       result=REMARK2_1,
       statement="Every round, p_i^t > 0 for all i and sum_i p_i^t = K, with 1 <= K <= N.",
       quick=dict(n_clients=30, budgets=(1, 3, 30), n_rounds=200, silent=5),
       full=dict(n_clients=200, budgets=(1, 10, 50, 200), n_rounds=3000, silent=20))
def constraints(*, rng, n_clients, budgets, n_rounds, silent):
    """K from 1 to N, both variants, ``silent`` clients with zero feedback throughout.
    Measured: the smallest probability (relation >= a positive floor: 0 is the violation,
    reported against the theory's mixing floor theta K/N) and the largest |sum p - K|
    (<= rounding). Tolerance: rounding, 8 N eps K for the sum."""
    low, floor, err, cells, instances = [], [], [], [], []
    for budget in budgets:
        instances.append(dict(budget=float(budget), n_clients=n_clients))
        for variant in ("paper", "code"):
            mins, errors = _run(rng, n_clients, float(budget), n_rounds, variant, silent)
            theta = KVib(n_clients, float(budget), n_rounds, G=1.0).theta
            low.append(mins.min())
            floor.append(theta * budget / n_clients)
            err.append(errors.max())
            cells.append(dict(K=budget, variant=variant, min_p=mins.min(),
                              mixing_floor=theta * budget / n_clients, max_sum_error=errors.max()))
    eps = np.finfo(float).eps
    measured = np.concatenate([low, -np.array(err)])
    bound = np.concatenate([floor, -8 * n_clients * eps * np.array(budgets, float).repeat(2)])
    return Evidence(measured=measured, theoretical=bound, relation=">=", instance=instances,
                    tolerance=Tolerance.rounding(1e-15, "min p vs the mixing floor theta K/N, "
                                                        "|sum - K| vs 8 N eps K"),
                    details={"cells": cells})
