r"""
A thousand clients in two classes
=================================

The theorems are about N clients; a worst case computed at N = 4 says little about
N = 1000. When clients fall into a few classes of interchangeable clients (same participation
probability, aggregation weight and function class), the worst case over the whole function
class is the solution of an SDP with one representative per class, whose size does not grow
with N (``classes=`` of :func:`flbounds.pep.worst_case`; the reduction is derived in
:mod:`flbounds.pep.symmetric`).

Here half the clients participate with probability 0.3 and half with 0.7 (independently), and
one FedAvg round (tau = 3 local steps) is measured by :math:`E\|x^+ - x^\star\|^2 /
\|x - x^\star\|^2` over clients that share their minimizer.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from flbounds import pep
from flbounds.participation import Bernoulli

mu, L, tau, step = 1.0, 2.0, 3, 0.1


def two_classes(n):
    """Bernoulli participation, probability 0.3 for the first half, 0.7 for the second."""
    half = n // 2
    probabilities = np.r_[np.full(half, 0.3), np.full(n - half, 0.7)]
    return Bernoulli(probabilities), [range(half), range(half, n)]


setting = pep.Setting(1000, mu, L, common_minimizer=True)
law, classes = two_classes(1000)
clock = time.perf_counter()
res = pep.worst_case(pep.fedavg_round(tau, step), setting, pep.distance(), law,
                     classes=classes)
print(f"N = 1000: worst case {res.worst:.6f}, Gram matrix {res.gram_size} x {res.gram_size}, "
      f"{time.perf_counter() - clock:.1f} s, status {res.status}")

# %%
# The symmetric SDP is the direct one, solved smaller: at N = 8 both forms give the same
# worst case within the solver's tolerance, the direct form with a Gram matrix of 1 + 3N
# (and the 2^N participating sets enumerated for its moments).
setting8 = pep.Setting(8, mu, L, common_minimizer=True)
law8, classes8 = two_classes(8)
direct = pep.worst_case(pep.fedavg_round(tau, step), setting8, pep.distance(), law8)
reduced = pep.worst_case(pep.fedavg_round(tau, step), setting8, pep.distance(), law8,
                         classes=classes8)
print(f"N = 8: direct {direct.worst:.6f} (Gram {direct.gram_size}), symmetric "
      f"{reduced.worst:.6f} (Gram {reduced.gram_size})")

# %%
# The worst case against N, from 2 to 10 000 clients, each solve the same size.
sizes = [2, 4, 10, 100, 1000, 10_000]
worst = []
for n in sizes:
    law_n, classes_n = two_classes(n)
    worst.append(pep.worst_case(pep.fedavg_round(tau, step),
                                pep.Setting(n, mu, L, common_minimizer=True), pep.distance(),
                                law_n, classes=classes_n).worst)
    print(f"N = {n:>6}: {worst[-1]:.6f}")

# %%
# A check by hand. With a shared minimizer and this step (:math:`\eta L < 1`) the worst
# clients are the flattest quadratics, on which tau local steps contract by
# :math:`(1 - \eta\mu)^{2\tau}`; a round in which nobody participates keeps the model. So
# the worst case is :math:`P(S = \emptyset) + (1 - P(S = \emptyset))(1 - \eta\mu)^{2\tau}`,
# which the SDP's values match at every N: the empty round's probability
# :math:`0.7^{N/2}\,0.3^{N/2}` vanishes as N grows.
for n, value in zip(sizes, worst, strict=True):
    empty = 0.7 ** (n // 2) * 0.3 ** (n - n // 2)
    print(f"N = {n:>6}: by hand {empty + (1 - empty) * (1 - step * mu) ** (2 * tau):.6f}, "
          f"SDP {value:.6f}")

fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogx(sizes, worst, "o-")
ax.set_xlabel("number of clients $N$ (two classes, $p = 0.3$ and $0.7$)")
ax.set_ylabel(r"worst $E\|x^+ - x^\star\|^2 / \|x - x^\star\|^2$")
ax.set_title(rf"one FedAvg round, $\tau = {tau}$, $\eta = {step}$, $L/\mu = {L / mu:g}$")
fig.tight_layout()
