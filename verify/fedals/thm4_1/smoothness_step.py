r"""The smoothness step (16) of the proof of Thm 4.1 (FedALS, App. A) on a quadratic.

For a quadratic risk :math:`R(\theta) = \tfrac12\theta^\top H\theta - b^\top\theta + c`,
Taylor's formula is exact: :math:`R(x) - R(y) = \nabla R(y)^\top(x - y) + \tfrac12 (x-y)^\top
H (x-y)`. The per-draw slack of (16), :math:`g^\top v + \tfrac L2\|v\|^2 - [R_{S'}(\hat\theta)
- R_{S'}(\hat\theta^{(k)})]`, is therefore exactly :math:`\tfrac12 v^\top(LI - H)v` for
ridge regression (H the copy's Gram matrix plus :math:`\lambda I`). The Thm 4.1 claims only
check that the slack is nonnegative, which a too-small constant in front of L would still
pass; this claim checks its value.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import one_round_batch

from ..instances import DIM, NOISE_SD, client_optima, client_weights
from . import THMA2

#: relative to the magnitude M of the terms the slack is built from (g'v, L||v||^2 and the two
#: risks of the copy): a few d x d products and sums in float64 err by ~1e2 eps M << 1e-12 M
ROUNDING = 1e-12


def _slack_errors(rng, n_clients, n_samples, lam, n_draws):
    """|library slack - (L||v||^2 - v'Hv)/2| per draw and client, scaled, for one cell."""
    model = RidgeModel(client_optima(rng, rng.standard_normal(DIM), n_clients, 1.0),
                       NOISE_SD, lam)
    w = client_weights(rng, n_clients, "uniform")
    data = model.sample(rng, n_draws, n_samples, keep_samples=False)     # statistics only
    copy = model.sample(rng, n_draws, n_samples, keep_samples=False)
    theta, theta_c = model.erm(data), model.erm(copy)
    dr = one_round_batch(model, w, data, copy, theta, theta_c, local_is_erm=True)
    v = w[None, :, None] * (theta - theta_c)  # theta_hat - theta_hat^(k), client k's part
    hess = copy.gram + lam * np.eye(DIM)
    exact = 0.5 * (model.L * dr.v_sq - np.einsum("tki,tkij,tkj->tk", v, hess, v))
    avg = np.broadcast_to(np.einsum("k,tki->ti", w, theta)[:, None, :], theta.shape)
    scale = (np.abs(dr.g_dot_v) + model.L * dr.v_sq + np.abs(model.empirical_risk(copy, avg))
             + np.abs(model.empirical_risk(copy, avg - v)))
    return (np.abs(dr.smooth_slack - exact) / scale,
            float(np.min(exact / (model.L * dr.v_sq))), dict(model=model, w=w, local="erm"))


@claim("fedals.thm41.smoothness_step_exact", ref="App. A, eq. (16) (proof of Thm 4.1)",
       kind="proof-step", expected="holds", result=THMA2, parts=("proof_16",),
       statement="The per-draw slack of the smoothness step (16) is (L||v||^2 - v'Hv)/2 on a "
                 "quadratic risk (Taylor's formula is exact), H the risk's Hessian.",
       quick=dict(n_cells=4, n_draws=200), full=dict(n_cells=20, n_draws=2000))
def smoothness_step_exact(*, rng, n_cells, n_draws):
    """Ridge on the unit sphere (the Thm 4.1 instances), random K in 2..8, n in 6..40,
    lambda in [0.01, 1], uniform weights. Measured: the largest |slack - (L||v||^2 - v'Hv)/2|
    relative to the size of the terms it is computed from, over draws and clients.
    Tolerance: rounding."""
    worst, smallest, instances = 0.0, np.inf, []
    for r in rng.spawn(n_cells):
        err, low, instance = _slack_errors(r, int(r.integers(2, 9)), int(r.integers(DIM + 1, 41)),
                                 float(r.uniform(0.01, 1.0)), n_draws)
        worst, smallest = max(worst, float(err.max())), min(smallest, low)
        instances.append(instance)
    return Evidence(measured=worst, theoretical=0.0, relation="<=", instance=instances,
                    tolerance=Tolerance.rounding(ROUNDING, "relative to |g'v| + L||v||^2 + "
                                                 "both risks: float64 sums, ~1e2 eps"),
                    details={"n_cells": n_cells, "n_draws": n_draws,
                             "min_slack_over_L_v_sq": smallest})
