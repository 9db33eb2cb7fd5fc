"""Shared instance and NumPy twin of FedAvg for the schedule and aggregation tests."""

import numpy as np

from flbounds.problems import random_quadratics, random_ridge

# Twins and kernels do the same operations in different orders (NumPy's pairwise sums):
# a few eps per operation over <= 60 rounds of contractive maps.
RTOL = 1e-11
N, D, R, TAU = 6, 3, 12, 3


def make_problems():
    rng = np.random.default_rng(11)
    p = rng.random(N) + 0.2
    return {"quadratic": random_quadratics(rng, N, D, mu=0.5, L=2.0).with_weights(p / p.sum()),
            "ridge": random_ridge(rng, N, 5, D, lam=0.1),
            "fused": random_quadratics(rng, N, 8, mu=0.5, L=2.0)}


def twin_fedavg(problem, counts, steps, coefficients, form, x0):
    """FedAvg from the update rule: local GD with steps[r, t] (or steps[r, 0] every step),
    then the rule's combination with multiplicities counts[r, i]."""
    x = np.array(x0, dtype=float)
    xs = [x.copy()]
    tau = steps.shape[1] if steps.shape[1] > 1 else TAU
    for r, row in enumerate(counts):
        idx = np.flatnonzero(row)
        if idx.size == 0:
            xs.append(x.copy())
            continue
        Z = np.tile(x, (idx.size, 1))
        for t in range(tau):
            Z = Z - steps[r, min(t, steps.shape[1] - 1)] * problem.client_gradients(Z, clients=idx)
        a = row[idx] * (np.ones(N) if coefficients is None else coefficients)[idx]
        if form == "normalized":
            x = a @ Z / a.sum()
        elif form == "absolute":
            x = a @ Z
        else:
            x = x + a @ (Z - x)
        xs.append(x.copy())
    return np.array(xs)


