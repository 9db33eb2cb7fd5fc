"""
FedAvg's biased limit and FOCUS's exact one
===========================================

Under arbitrary participation FedAvg converges to the minimiser of a reweighted objective
(the weights are the aggregation weights ``q_i`` of the participation process), while FOCUS
converges to the minimiser of the plain mean. Both runs use the same participation plan on
heterogeneous quadratic clients.
"""

import matplotlib.pyplot as plt
import numpy as np

from flbounds.algorithms import fedavg, focus
from flbounds.participation import Bernoulli
from flbounds.problems import random_quadratics

rng = np.random.default_rng(2)
problem = random_quadratics(rng, 8, 4, mu=1.0, L=2.0, heterogeneity=2.0)
process = Bernoulli(np.linspace(0.1, 0.9, 8))
plan = process.plan(rng, 600)
step = 0.02

runs = {"FedAvg": fedavg(problem, plan, step=step, local_steps=3),
        "FOCUS": focus(problem, plan, step=step, local_steps=3)}

fig, ax = plt.subplots(figsize=(6, 4))
for name, trace in runs.items():
    errors = np.sum((trace.x - problem.x_star) ** 2, axis=1)
    ax.semilogy(errors, label=name)
ax.set_xlabel("round $r$")
ax.set_ylabel(r"$\|x_r - x^\star\|^2$")
ax.legend()
fig.tight_layout()
