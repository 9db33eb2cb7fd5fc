r"""
A rate atlas, previewed: worst-case contraction against participation
=====================================================================

How fast can one round of FedAvg or FOCUS contract in the worst case, as clients participate
less often? Performance estimation answers for every client in the class at once (every
L-smooth, mu-strongly convex function), with the exact expectation over Bernoulli(p)
participation. Here N = 2 clients share one probability p, L/mu = 2 and tau = 2 local steps.

The step of each p is the one FOCUS's Theorem 1(a) prescribes (from the printed-bound
registry, as ``flbounds bound focus.thm1a`` shows it), and the theorem's printed rate is drawn
beside the worst cases. FOCUS's quantity is the proof's Lyapunov function
:math:`\Psi = \|x - x^\star\|^2 + c \cdot \text{consensus}` with its weight
:math:`c = 1 - 8\eta L^2 N/\mu`; FedAvg's is :math:`\|x - x^\star\|^2` with clients that share
their minimizer (with distinct minimizers FedAvg has no contraction to :math:`x^\star`).
"""

import matplotlib.pyplot as plt
import numpy as np

from flbounds.ledger import bounds
from flbounds.participation import Bernoulli
from flbounds.pep import fedavg_rate, focus_rate

mu, L, tau, n_clients = 1.0, 2.0, 2, 2
probabilities = [0.2, 0.4, 0.6, 0.8, 1.0]

printed, focus_worst, fedavg_worst = [], [], []
for p in probabilities:
    p_clients = np.full(n_clients, p)
    thm = bounds.get("focus.thm1a").evaluate(mu=mu, L=L, p=p_clients, tau=tau)
    weight = 1 - 8 * thm.step * L**2 * n_clients / mu
    focus = focus_rate(mu, L, p_clients, tau, thm.step, consensus_weight=weight)
    fedavg = fedavg_rate(mu, L, n_clients, tau, thm.step, Bernoulli(p_clients),
                         common_minimizer=True)
    printed.append(thm.value)
    focus_worst.append(focus.worst)
    fedavg_worst.append(fedavg.worst)
    print(f"p = {p:.1f}: step {thm.step:.4f}, printed {thm.value:.5f}, worst FOCUS "
          f"{focus.worst:.5f}, worst FedAvg {fedavg.worst:.5f}")

# %%
# A rate close to 1 is a slow contraction, so the plot shows the worst per-round decrease
# :math:`1 - \rho` on a log scale. The printed rate's decrease lies below FOCUS's worst-case
# decrease at every p (the printed rate holds here, with room to spare), and both methods
# contract faster as p grows.
fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogy(probabilities, 1 - np.asarray(printed), "k--", label="FOCUS, printed (Thm 1(a))")
ax.semilogy(probabilities, 1 - np.asarray(focus_worst), "o-", label="FOCUS, worst case")
ax.semilogy(probabilities, 1 - np.asarray(fedavg_worst), "s-", label="FedAvg, worst case")
ax.set_xlabel("participation probability $p$ (each client)")
ax.set_ylabel(r"worst per-round decrease $1 - \rho$")
ax.set_title(rf"$N = {n_clients}$, $L/\mu = {L / mu:g}$, $\tau = {tau}$, step of Thm 1(a)")
ax.legend()
fig.tight_layout()
