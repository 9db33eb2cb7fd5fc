r"""Figure 4 of FOCUS: FL algorithms compared on ridge regression under full, uniform and
arbitrary participation (Sec. 5, "Numerical Validation").

The caption's claim that FOCUS converges exactly (linear convergence to the optimum with a
fixed step, where FedAvg and FedAU keep a bias) is checked on federated ridge regression by
``focus.exactness.ridge`` (home: :mod:`verify.focus.thm1.exactness`, where the exactness
grid lives); the curves themselves are redrawn by ``figures/focus_fig4.py`` (no verdict).
"""

from __future__ import annotations

from flbounds.ledger import result

from .assumptions import a1

FIG4 = result(
    "focus.fig4", ref="Figure 4", title="FL algorithms compared under arbitrary participation",
    parts={"exact": "FOCUS converges linearly to the exact optimum of ridge regression under "
                    "full, uniform and arbitrary participation with a fixed step",
           "ranking": ("FedAvg and FedAU keep a bias, ProxSkip diverges under partial "
                       "participation, SCAFFOLD converges more slowly than FOCUS",
                       "an empirical ranking of the curves: redrawn by figures/focus_fig4.py, "
                       "not gated by a claim")},
    hypotheses=(a1.only("exact"),))
