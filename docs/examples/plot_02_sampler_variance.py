"""
The variance of a client sampler
================================

Independent sampling (ISP) includes client ``i`` with probability ``p_i`` and reweights its
update by ``1/p_i``. For update norms ``a_i`` the variance of the unbiased estimate of the sum
is ``sum_i (1 - p_i) a_i^2 / p_i``; the optimal probabilities for an expected budget ``K``
solve a water-filling problem (K-Vib, Lemma 2.2). The plot compares uniform and optimal
sampling as the budget grows.
"""

import matplotlib.pyplot as plt
import numpy as np

from flbounds.sampling import isp_variance, optimal_isp_probabilities

rng = np.random.default_rng(0)
n = 100
a = rng.lognormal(mean=0.0, sigma=1.5, size=n)  # heterogeneous update norms

budgets = np.arange(2, 60, 2)
uniform = [isp_variance(np.full(n, k / n), a) for k in budgets]
optimal = [isp_variance(optimal_isp_probabilities(a, k), a) for k in budgets]

fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogy(budgets, uniform, "o-", label="uniform, $p_i = K/N$")
ax.semilogy(budgets, optimal, "s-", label="optimal ISP probabilities")
ax.set_xlabel("expected budget $K$")
ax.set_ylabel(r"variance $\sum_i (1 - p_i) a_i^2 / p_i$")
ax.legend()
fig.tight_layout()

print(f"K = 10: uniform {uniform[4]:.4g}, optimal {optimal[4]:.4g}, "
      f"ratio {uniform[4] / optimal[4]:.2f}")
