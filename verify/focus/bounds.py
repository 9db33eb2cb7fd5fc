r"""[002]'s printed rates and bounds as functions of their constants (``flbounds bound``).

The step-size conditions are dicts ``{printed term: largest step}``; ``instances``'
``thm1a_step_printed`` & co. are their minima, so the claims, the worst-case SDPs
(``flbounds.pep``) and the calculator share one formula. ``p`` are Bernoulli participation
probabilities; ``q_min`` is the exact minimum aggregation weight
:math:`\min_i E[1\{i \in S\}/|S|]` (Assumption 1).
"""

from __future__ import annotations

import numpy as np

from .thm1 import (  # noqa: F401  (the Theorem 1 bounds live with their results)
    q_min_of,
    thm1a,
    thm1a_conditions,
    thm1a_proof_conditions,
    thm1b,
    thm1b_conditions,
    thm1c,
    thm1c_conditions,
)


def _inv(x):
    return np.inf if x == 0 else 1.0 / x


def eq110_step(mu, L, n, q_min):
    """The step the proof's (110) asks for, as printed: 2 q_min/(3N(8L^2/mu + mu/2))."""
    return 2 * q_min / (3 * n * (8 * L**2 / mu + mu / 2))


def lemma3_rhs(*, mu, L, n, step, dist, gap, consensus):
    """Right side of Lemma 3, eq. (87): (1 - eta mu N/2) dist - 2 eta N (1 - 2 eta N L) gap
    + (8 eta L^2 N/mu) consensus."""
    return ((1 - step * mu * n / 2) * dist - 2 * step * n * (1 - 2 * step * n * L) * gap
            + 8 * step * L**2 * n / mu * consensus)


def lemma4_rhs(*, q_min, n, step, consensus, grad, constant):
    """Right side of Lemma 4, eq. (97), with gradient constant ``constant`` (16/(3 q_min) as
    printed): (1 - q_min/3) consensus + constant eta^2 N^2 grad."""
    return (1 - q_min / 3) * consensus + constant * step**2 * n**2 * grad


def thm3_conditions(L, tau):
    """Theorem 3 (FedAvg): min{1/(3L), 1/(4(tau-1)L)}."""
    return {"1/(3L)": 1 / (3 * L), "1/(4(tau-1)L)": _inv(4 * (tau - 1) * L)}


def _mu_le_L(*, mu, L, **_):
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")
