r"""Attack surfaces of Theorem 4.1's bound and of its iid reading (FedALS).

The generalization bounds are Monte Carlo quantities: each evaluation draws its datasets from
a generator with a fixed seed (common random numbers), so the ratio is a deterministic
function of the instance and a witness replays exactly, and it compares the *lower*
confidence limit of the gap, gap - 5 SE (``K_FAMILY``, the claims' family-wise multiple), with
the bound: a ratio above 1 is a violation significant at 5 standard errors, which keeps false
alarms rare over the thousands of evaluations of a search. A search point is judged by the
attacked claim's own result hypotheses (``instance=``).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import (
    MC_CHUNK_ELEMENTS,
    _control_variate,
    single_threaded_blas,
    summarize_bound,
)

from ..instances import DIM, K_FAMILY, NOISE_SD

#: seed of the common random numbers of the Monte Carlo ratios
MC_SEED = 20261125
#: the largest number of clients searched (the issue's corner N = 16)
K_MAX = 16
MC = ("none beyond the ratio itself: it uses the gap's lower 5-SE confidence limit, "
      "(gap - 5 SE)/bound")


def _thm41_model(base, u, zeta, n_clients, w, lam):
    return (RidgeModel(base + zeta * u[:n_clients], NOISE_SD, lam),
            w[:n_clients] / w[:n_clients].sum())


def _thm41_instance(*, base, u, zeta, n_clients, w, n_samples, lam):
    model, weights = _thm41_model(base, u, zeta, n_clients, w, lam)
    return dict(model=model, w=weights, local="erm")


@attack_surface("fedals.thm41.bound",
                space={"base": Box(-2, 2, shape=DIM), "u": Box(-2, 2, shape=(K_MAX, DIM)),
                       "zeta": Box(0, 3), "n_clients": Integers(1, K_MAX),
                       "w": Simplex(K_MAX, floor=1e-3), "n_samples": Integers(DIM + 2, 60),
                       "lam": Box(0.01, 10, log=True)},
                tolerance=0.0, tolerance_why=MC, budget={"quick": 100, "full": 1000},
                instance=_thm41_instance,
                fixed=[{"base": np.ones(DIM), "u": np.zeros((K_MAX, DIM)), "zeta": 0.0,
                        "n_clients": 4, "w": np.full(K_MAX, 1 / K_MAX), "n_samples": 20,
                        "lam": 1.0},
                       {"base": np.ones(DIM), "u": np.eye(K_MAX, DIM), "zeta": 3.0,
                        "n_clients": K_MAX, "w": np.full(K_MAX, 1 / K_MAX),
                        "n_samples": DIM + 2, "lam": 0.01}])
def thm41(*, base, u, zeta, n_clients, w, n_samples, lam):
    """Thm 4.1 on ridge: (gap - 5 SE) over the bound, 400 dataset draws per evaluation."""
    rng = np.random.default_rng(MC_SEED)
    model, weights = _thm41_model(base, u, zeta, n_clients, w, lam)
    draws = bound_draws(model, weights, n_samples, 400, rng)
    s = summarize_bound(draws, weights, model.mu, model.L, rng)
    return (s.gap - K_FAMILY * float(np.hypot(s.gap_se, s.bound_se))) / s.bound


def bound_draws(model, weights, n_samples, n_draws, rng):
    """What Thm 4.1's bound reads of :func:`~flbounds.theory.generalization.one_round_draws`
    with local ERMs on a ridge model (the gap, the local gaps, the non-iidness), the same
    numbers from the same stream: the copies S' these three never read are drawn (so the
    stream goes on as there) but not reduced to statistics, and nothing else is computed.
    """
    sizes = np.broadcast_to(np.asarray(n_samples), (model.n_clients,)).astype(int)
    per_draw = max(1, int(np.sum(sizes))) * model.dim * model.dim
    chunk = max(2, min(n_draws, MC_CHUNK_ELEMENTS // per_draw))
    copy_normals = int(np.sum(sizes)) * (model.dim + 1)  # covariates and label noise
    w = np.asarray(weights, dtype=float)
    parts, done = [], 0
    with single_threaded_blas():
        while done < n_draws:
            size = min(chunk, n_draws - done)
            data = model.sample(rng, size, n_samples, keep_samples=False)
            rng.standard_normal(size * copy_normals)  # the copies' draws, in stream order
            parts.append(gap_terms(model, w, data, model.erm(data)))
            done += size
    gap, local_gap, nonid = (np.concatenate(f, axis=0) for f in zip(*parts, strict=True))
    return SimpleNamespace(gap=gap, local_gap=local_gap, nonid=nonid)


def gap_terms(model, w, data, theta):
    """(gap, local gap, non-iidness) per draw for the local outputs ``theta``, as
    :func:`~flbounds.theory.generalization.one_round_batch` computes them."""
    avg = np.einsum("k,tki->ti", w, theta)
    avg_b = np.broadcast_to(avg[:, None, :], theta.shape)
    ref = model.reference_theta
    ref_avg = np.broadcast_to(w @ ref, ref.shape)
    risk_avg_s = model.empirical_risk(data, avg_b)
    risk_loc_s = model.empirical_risk(data, theta)
    gap = np.einsum("k,tk->t", w, model.population_risk(avg_b) - risk_avg_s
                    - _control_variate(model, data, ref_avg))
    local_gap = model.population_risk(theta) - risk_loc_s - _control_variate(model, data, ref)
    return gap, local_gap, risk_avg_s - risk_loc_s


def _sole_iid_instance(*, n_clients, n_samples, lam):
    return dict(model=RidgeModel(np.zeros((n_clients, DIM)), NOISE_SD, lam),
                w=np.full(n_clients, 1.0 / n_clients), local="erm")


@attack_surface("fedals.d1.sole_iid_term",
                space={"n_clients": Integers(2, 16), "n_samples": Integers(DIM + 2, 80),
                       "lam": Box(0.01, 10, log=True)},
                tolerance=0.0, tolerance_why=MC, budget={"quick": 40, "full": 200},
                shrink=True, instance=_sole_iid_instance,
                fixed=[{"n_clients": k, "n_samples": 40, "lam": 1.0} for k in (2, 4, 8, 16)])
def sole_iid(*, n_clients, n_samples, lam):
    """The iid gap's lower 5-SE limit over the 'sole iid term' kappa G/K^2 (one cell of the
    claim's sweep ``_iid_sweep``, 200 draws, through :func:`bound_draws`: the same numbers)."""
    rng = np.random.default_rng(MC_SEED)
    model = RidgeModel(np.tile(rng.standard_normal(DIM), (n_clients, 1)), 1.0, lam)
    w = np.full(n_clients, 1.0 / n_clients)
    s = summarize_bound(bound_draws(model, w, n_samples, 200, rng), w, model.mu, model.L, rng)
    se = float(np.hypot(s.gap_se, s.first_term_se))
    return (s.gap - K_FAMILY * se) / s.first_term
