"""
Participation processes and their exact moments
===============================================

Every participation process of :mod:`flbounds.participation` draws plans (a boolean mask of
who participates in each round) and also reports its moments exactly: the inclusion
probability ``P(i in S)`` and the aggregation weight ``E[1{i in S}/|S|; S nonempty]`` that
decides where FedAvg converges. The bars compare the exact numbers with the frequencies of
20,000 drawn rounds.
"""

import matplotlib.pyplot as plt
import numpy as np

from flbounds.participation import Bernoulli, WeightedWithoutReplacement

rng = np.random.default_rng(1)
processes = {"Bernoulli(p)": Bernoulli(np.array([0.1, 0.3, 0.5, 0.7, 0.9])),
             "weighted 2 of 5": WeightedWithoutReplacement(np.array([1, 2, 3, 4, 5.0]), 2)}

fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), sharey=True)
for ax, (name, proc) in zip(axes, processes.items(), strict=True):
    plan = proc.plan(rng, 20_000)
    clients = np.arange(plan.shape[1])
    ax.bar(clients - 0.2, proc.inclusion_probabilities(), width=0.4, label="exact")
    ax.bar(clients + 0.2, plan.mean(axis=0), width=0.4, label="drawn")
    ax.set_title(name)
    ax.set_xlabel("client $i$")
axes[0].set_ylabel(r"$P(i \in S)$")
axes[0].legend()
fig.tight_layout()
