r"""K-Vib's one-round descent inequality (eq. (36), proof of Theorem 4.1) over the whole
L-smooth class (``flbounds.pep.descent``, with eq. (36)'s weights from
``verify.kvib.pep_conditions``).

Certified part: the deterministic descent step (identical clients, full-batch local steps, full
participation: Q = sigma = 0, gamma = 1). The sampling terms of eq. (36) are constants of the
sampler and the data and stay with the Monte Carlo claims (``kvib.thm4_1.descent_chain``).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.pep import gap_tolerance

from ..pep_conditions import eq36_descent_rate
from . import THM4_1

L_SMOOTH = 1.0


def _cell(R, multiple, gamma=1.0):
    step = multiple / (8 * L_SMOOTH)
    res = eq36_descent_rate(L_SMOOTH, R, step, gamma=gamma)
    rho = (1 - 10 * gamma * step**2) / 16
    return dict(constants=dict(R=R, step=step, multiple=multiple, gamma=gamma),
                within_hypotheses=bool(multiple <= 1 and rho > 0), rho=rho, worst=res.worst,
                printed=res.printed, ratio=res.worst / res.printed, gap=res.gap,
                solver=res.solver, status=res.status)


@claim("kvib.thm4_1.descent_tightness", ref="Thm 4.1 proof, App. C.2 eq. (36)",
       kind="tightness", expected="holds", result=THM4_1, parts=("descent",),
       statement="Over every L-smooth f (identical clients, full-batch local steps, full "
                 "participation), one FedAvg round with eta = R eta_l eta_g <= 1/(8L) meets "
                 "(1 - 10 gamma eta^2)/16 ||grad f(x)||^2 <= 2 (f(x) - f(x+))/eta (PEP).",
       quick=dict(local_steps=(1, 3), multiples=(1.0, 2.0, 5.0)),
       full=dict(local_steps=(1, 2, 3, 4, 5), multiples=(0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0)))
def descent_tightness(*, rng, local_steps, multiples):
    """L = 1, eta_g = 1, eta a multiple of 1/(8L); multiples > 1 are outside (details only;
    beyond 1/sqrt(10 gamma) the left side is negative and the step inequality is vacuous).
    Measured: the worst left/right ratio of the deterministic part, about 1/35 at the printed
    step (R = 1 matches (1 - 10 eta^2)/(32 (1 - L eta/2)), the descent lemma's value). The
    sampling terms Q and sigma are not certified here. No replayed witness exists for this SDP,
    so an excess would be not-applicable, never violated. Tolerance: the SDP acceptance bound."""
    cells = [_cell(R, m) for R in local_steps for m in multiples]
    inside = [c for c in cells if c["within_hypotheses"]]
    worst = np.array([c["worst"] for c in inside])
    tol = np.array([gap_tolerance(w) for w in worst])
    excess = bool(np.any(worst > 1 + tol))
    top = max(inside, key=lambda c: c["ratio"])
    # the instance: the PEP cells inside the step condition (the class of L-smooth f is the
    # SDP's, so Assumptions 4.1-4.3 are not evaluated on a single problem here)
    instance = [dict(L=L_SMOOTH, R=c["constants"]["R"], eta_g=1.0,
                     step=c["constants"]["step"] / c["constants"]["R"]) for c in inside]
    return Evidence(measured=worst, theoretical=np.ones_like(worst), relation="<=",
                    instance=instance,
                    tolerance=Tolerance(tol, "SDP acceptance bound",
                                        "primal-dual gap and residuals <= 1e-6 relative"),
                    applicable=not excess,
                    reason="worst case above the bound, no replayed witness" if excess else "",
                    details={"cells": cells},
                    worst_case=dict(worst=top["worst"], printed=1.0, ratio=top["ratio"],
                                    gap=top["gap"], solver=top["solver"], cell=top["constants"],
                                    certified="deterministic descent part (Q = sigma = 0)"))
