r"""Shared set-up of the ridge-on-the-sphere Monte Carlo cells of the FedALS checks (the
paper's instances; the MLP task of spec V9 is :mod:`verify.fedals.mlp_task`).

A cell fixes (d, n, lambda, K, zeta, client weights, equal or unequal n_k); the client optima
are :math:`\theta^\star_k = \theta^\star_0 + \zeta u_k` with :math:`u_k \sim N(0, I)` drawn once
per cell (spec V2). Expectations are over the datasets only.
"""

from __future__ import annotations

import numpy as np

from flbounds.theory.data_models import RidgeModel
from flbounds.theory.generalization import one_round_draws, summarize_bound
from flbounds.tolerances import SE_RULE_FAMILY

DIM = 5
NOISE_SD = 1.0
#: SE multiple for families of expectation checks (see flbounds.tolerances.SE_RULE_FAMILY)
K_FAMILY = SE_RULE_FAMILY


def client_optima(rng, base, n_clients: int, zeta: float) -> np.ndarray:
    return base[None, :] + zeta * rng.standard_normal((n_clients, base.size))


def client_weights(rng, n_clients: int, kind: str) -> np.ndarray:
    if kind == "uniform":
        return np.full(n_clients, 1.0 / n_clients)
    if kind == "dirichlet":
        return rng.dirichlet(np.ones(n_clients))
    raise ValueError("kind must be 'uniform' or 'dirichlet'")


def client_sizes(n_samples: int, n_clients: int, unequal: bool):
    """Equal n, or n_k spread linearly over [n/2, 3n/2] (rounded, at least d + 2)."""
    if not unequal or n_clients == 1:
        return n_samples
    sizes = np.round(np.linspace(0.5, 1.5, n_clients) * n_samples).astype(int)
    return np.maximum(sizes, DIM + 2)


def ridge_cell(rng, base, *, n_samples, lam, n_clients, zeta, weights="uniform",
               unequal=False, n_draws=1000, local=None):
    """Simulate one cell; return (model, weights, draws, Thm 4.1 summary)."""
    model = RidgeModel(client_optima(rng, base, n_clients, zeta), NOISE_SD, lam)
    w = client_weights(rng, n_clients, weights)
    sizes = client_sizes(n_samples, n_clients, unequal)
    draws = one_round_draws(model, w, sizes, n_draws, rng, local=local)
    summary = summarize_bound(draws, w, model.mu, model.L, rng)
    return model, w, draws, summary


def grid(**axes):
    """Cartesian product of named axes as a list of dicts (first axis varies slowest)."""
    cells = [{}]
    for name, values in axes.items():
        cells = [dict(c, **{name: v}) for c in cells for v in values]
    return cells
