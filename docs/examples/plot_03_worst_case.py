"""
A worst case over a function class
==================================

Performance estimation computes the largest contraction of one gradient step over every
L-smooth, mu-strongly convex function, as a small semidefinite program. For gradient descent
the answer is known in closed form, ``max(|1 - step mu|, |1 - step L|)^2``; the solver
recovers it at every step size.
"""

import matplotlib.pyplot as plt
import numpy as np

from flbounds.pep import gd_rate

mu, L = 1.0, 4.0
steps = np.linspace(0.05, 0.45, 9)
worst = [gd_rate(mu, L, step).worst for step in steps]
exact = [max(abs(1 - s * mu), abs(1 - s * L)) ** 2 for s in steps]

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(steps, exact, "-", label="closed form")
ax.plot(steps, worst, "o", label="performance estimation (SDP)")
ax.set_xlabel(r"step $\eta$")
ax.set_ylabel(r"worst $\|x_1 - x^\star\|^2 / \|x_0 - x^\star\|^2$")
ax.legend()
fig.tight_layout()

print("largest difference:", max(abs(w - e) for w, e in zip(worst, exact, strict=True)))
