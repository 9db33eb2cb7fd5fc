r"""Attack surface of Theorem 4.3 / B.2 of FedALS: the per-round bound (56) with
(37)'s constants (``fedals.thm43.per_round_bound``) over its hypothesis domain.

A point is a ridge-on-the-sphere instance (the claims' data model: mu = lambda, L = 1 +
lambda, bounded gradient variance) with K up to 16 clients, heterogeneity zeta, tau = 1..10
local SGD steps of batch b on fresh one-pass data (|Z_kr| = tau b), R = 5 rounds, the local
step anywhere in (0, 1/L] (the stable range of the local SGD). The ratio compares the lower
5-SE confidence limit of the round-averaged gap with the round-averaged bound, on common
random numbers (a fixed seed), so it is a deterministic, replayable function of the point; a
ratio above 1 is a violation significant at 5 standard errors. Points are judged by the
claim's own result hypotheses.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import summarize_bound
from flbounds.theory.generalization_rounds import one_pass_plan, ridge_local_sgd

from .._local_sgd import _avg_se
from ..instances import DIM, K_FAMILY, NOISE_SD
from ..thm4_1.attacks import gap_terms, single_threaded_blas

MC_SEED = 20261128
K_MAX, N_ROUNDS, N_DRAWS = 16, 5, 100
MC = ("none beyond the ratio itself: it uses the gap's lower 5-SE confidence limit, "
      "(gap - 5 SE)/bound")


def _model(base, u, zeta, n_clients, lam):
    return RidgeModel(base + zeta * u[:n_clients], NOISE_SD, lam)


def _instance(*, base, u, zeta, n_clients, lam, tau, batch_size, step_frac):
    return dict(model=_model(base, u, zeta, n_clients, lam),
                w=np.full(n_clients, 1.0 / n_clients), local="sgd", local_steps=tau,
                data_reuse="fresh")


@attack_surface("fedals.thm43.per_round_bound",
                space={"base": Box(-2, 2, shape=DIM), "u": Box(-2, 2, shape=(K_MAX, DIM)),
                       "zeta": Box(0, 3), "n_clients": Integers(1, K_MAX),
                       "lam": Box(0.01, 10, log=True), "tau": Integers(1, 10),
                       "batch_size": Integers(1, 8), "step_frac": Box(0.01, 1.0, log=True)},
                tolerance=0.0, tolerance_why=MC, budget={"quick": 30, "full": 300},
                instance=_instance,
                fixed=[{"base": np.ones(DIM), "u": np.eye(K_MAX, DIM), "zeta": 1.0,
                        "n_clients": 4, "lam": 0.1, "tau": 5, "batch_size": 4,
                        "step_frac": 0.55},
                       {"base": np.ones(DIM), "u": np.eye(K_MAX, DIM), "zeta": 3.0,
                        "n_clients": K_MAX, "lam": 0.01, "tau": 10, "batch_size": 1,
                        "step_frac": 1.0}],
                note="ridge on the sphere, uniform weights, R = 5 rounds, 100 draws; step = "
                     "step_frac / L")
def per_round(*, base, u, zeta, n_clients, lam, tau, batch_size, step_frac):
    """(round-averaged gap - 5 SE) over the round-averaged Thm B.1 bound (56)-(37)."""
    rng = np.random.default_rng(MC_SEED)
    model = _model(base, u, zeta, n_clients, lam)
    w = np.full(n_clients, 1.0 / n_clients)
    corrected, draws = bound_rounds(model, w, rng, local_steps=tau, batch_size=batch_size,
                                    step=step_frac / model.L)
    sums = [summarize_bound(dr, w, model.mu, model.L, rng, kind="thmB1") for dr in draws]
    gap, gap_se = _avg_se(corrected)
    bound = float(np.mean([s.bound for s in sums]))
    bound_se = float(np.sqrt(np.mean([s.bound_se ** 2 for s in sums])))
    return (gap - K_FAMILY * float(np.hypot(gap_se, bound_se))) / bound


def bound_rounds(model, w, rng, *, local_steps, batch_size, step):
    """What the round-averaged bounds read of ``r_round_fedavg`` (N_DRAWS draws, N_ROUNDS
    rounds): the corrected per-round gaps (R, T) and, per round, the local gaps, the
    non-iidness and the optimization errors, the same numbers from the same stream. The
    copies S' these never read are drawn (the stream goes on as there) but not trained on."""
    K, d, n = model.n_clients, model.dim, local_steps * batch_size
    plan = one_pass_plan(N_DRAWS, K, local_steps, batch_size)
    server = np.zeros((N_DRAWS, d))
    corrected, draws = [], []
    with single_threaded_blas():
        for _ in range(N_ROUNDS):
            data = model.sample(rng, N_DRAWS, n)
            rng.standard_normal(N_DRAWS * K * n * (d + 1))  # the copy's covariates and noise
            start = np.broadcast_to(server[:, None, :], (N_DRAWS, K, d))
            theta = ridge_local_sgd(model, data, plan, step=step, start=start)
            gap, local_gap, nonid = gap_terms(model, w, data, theta)
            opt_error = (model.empirical_risk(data, theta)
                         - model.empirical_risk(data, model.erm(data)))
            corrected.append(gap)
            draws.append(SimpleNamespace(gap=gap, local_gap=local_gap, nonid=nonid,
                                         opt_error=opt_error))
            server = np.einsum("k,tki->ti", w, theta)
    return np.array(corrected), draws
