r"""Attack surface of the local-drift lemma of Theorem 4's proof ([000]): exact expectations
on shared-Hessian quadratics (so sigma_G^2 is finite and exact); a search point is rejected by
the lemma's own hypotheses (part ``drift`` of :mod:`verify.safari.thm4`)."""

from __future__ import annotations

import math

import numpy as np

from flbounds.falsify import SPD, Box, Integers, attack_surface

from ..assumptions import heterogeneity, optimisation_instance
from ..closed_forms import ClientQuadratics, drift_bound, exact_drift

CLOSED = "rounding: ratio of closed forms, relative error < 1e-13; 1e-12 as in the claim"


def _drift_problem(A, b, n):
    return ClientQuadratics(np.broadcast_to(A, (n, 2, 2)).copy(), b[:n])


def _drift_instance(*, A, b, n, K, sigma2, **_):
    """The local-drift lemma's hypotheses at a search point (eta_c = 1/(8LK))."""
    prob = _drift_problem(np.asarray(A, dtype=float), np.asarray(b, dtype=float), n)
    return optimisation_instance(prob, sigma_G2=heterogeneity(prob), noise_var=sigma2,
                                 noise_var_s=0.0, step_client=1 / (8 * prob.L * K),
                                 local_steps=K)


@attack_surface("safari.lemma_drift.bound",
                space={"A": SPD(2, 0.1, 4.0), "b": Box(-3, 3, shape=(6, 2)),
                       "n": Integers(2, 6), "x": Box(-10, 10, shape=2), "K": Integers(1, 10),
                       "k_frac": Box(0, 1), "client": Integers(0, 5),
                       "sigma2": Box(1e-4, 2, log=True)},
                validator=lambda **inst: inst["client"] < inst["n"] or "client >= n",
                instance=lambda **inst: _drift_instance(**inst),
                tolerance=1e-12, tolerance_why=CLOSED,
                fixed=[{"A": np.eye(2), "b": np.eye(6, 2), "n": 2, "x": [3, 3], "K": 5,
                        "k_frac": 1.0, "client": 0, "sigma2": 1.0}],
                note="shared Hessian (sigma_G^2 finite and exact), eta_c = 1/(8LK)")
def drift(*, A, b, n, x, K, k_frac, client, sigma2):
    """Exact E||x_r - x^i_{r,k}||^2 over the local-drift bound, k = ceil(k_frac K)."""
    prob = _drift_problem(A, b, n)
    eta_c, k = 1 / (8 * prob.L * K), max(1, math.ceil(k_frac * K))
    grads = prob.client_gradients(np.tile(x, (n, 1)))
    bound = drift_bound(step_client=eta_c, local_steps=K, sigma2=sigma2,
                        sigma_G2=prob.heterogeneity(),
                        grad_norm2=float(np.sum(prob.gradient(x) ** 2)))
    return exact_drift(prob.A[client], grads[client], step_client=eta_c, k=k,
                       sigma2=sigma2) / bound
