r"""Theorem 4.1 of FedALS on a logistic-loss instance: two logits, x uniform on the sphere,
each client's distribution uniform on a fixed finite pool (exact population risk)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.theory.data_models import logistic_pool
from flbounds.theory.generalization import one_round_draws, summarize_bound

from ..instances import DIM, client_weights, grid
from . import THM41


def _logistic_pool(pool_seed, base, K, zeta, pool_size, lam):
    """Client k's pool: optimum base + zeta u_k (u_k standard normal), drawn from
    ``pool_seed`` (so that the combine step rebuilds the instance the cell ran on)."""
    pool_rng = np.random.default_rng(pool_seed)
    return logistic_pool(pool_rng, np.asarray(base) + zeta * pool_rng.standard_normal((K, DIM)),
                         pool_size, lam)


def _logistic_grid(*, rng, n_draws, n_samples, lam, n_clients, zeta, pool_size):
    """The cells run as separate tasks: (K, zeta), with the shared base optimum and each
    cell's pool seed drawn from the claim's generator."""
    base = (2.0 * rng.standard_normal(DIM)).tolist()
    return [dict(cell, n_draws=n_draws, n_samples=n_samples, lam=lam, pool_size=pool_size,
                 base=base, pool_seed=int(rng.integers(2**63)))
            for cell in grid(n_clients=n_clients, zeta=zeta)]


def _logistic_cell(*, rng, n_draws, n_samples, lam, pool_size, base, pool_seed, n_clients,
                   zeta):
    """One cell (draws and bootstrap from its own generator, keyed by the cell)."""
    pool = _logistic_pool(pool_seed, base, n_clients, zeta, pool_size, lam)
    w = client_weights(rng, n_clients, "uniform")
    dr = one_round_draws(pool, w, n_samples, n_draws, rng)
    s = summarize_bound(dr, w, pool.mu, pool.L, rng)
    return dict(w=w, se=np.hypot(s.gap_se, s.bound_se), base=base, pool_seed=pool_seed,
                row=dict(n_clients=n_clients, zeta=zeta, gap=s.gap, gap_se=s.gap_se,
                         bound=s.bound, L=pool.L))


@claim("fedals.thm41.logistic_bound", ref="Thm 4.1 (= Thm A.2), logistic-loss instance",
       kind="statement", expected="holds", result=THM41, parts=("bound",),
       statement="Thm 4.1 for L2-regularized logistic regression (Newton ERM to 1e-12).",
       quick=dict(n_draws=150, n_samples=40, lam=0.1, n_clients=[1, 4], zeta=[0.0, 2.0],
                  pool_size=500),
       full=dict(n_draws=2000, n_samples=40, lam=0.1, n_clients=[1, 2, 4, 8, 16],
                 zeta=[0.0, 1.0, 2.0], pool_size=2000),
       cells=dict(grid=_logistic_grid, run=_logistic_cell))
def logistic_bound(*, rng, cells, n_draws, n_samples, lam, n_clients, zeta, pool_size):
    r"""Logistic loss with two logits on x uniform on the sphere, labels from
    :math:`\sigma(x^\top\theta^\star_k)`. Each :math:`\mathcal D_k` is uniform on a fixed finite
    pool, so the population risk is exact and samples are iid (with replacement). Per sample
    the Hessian is at most :math:`\tfrac12\|x\|^2 + \lambda`, so L = 1/2 + lambda, mu = lambda:
    hypotheses met, expected ``holds``; tolerance 4 SE of (gap - bound). Each (K, zeta) cell
    is a task of its own (``_logistic_cell``); this combines them, rebuilding each cell's
    pools from its pool seed for the hypotheses.
    """
    rows = [c["row"] for c in cells]
    instances = [dict(model=_logistic_pool(c["pool_seed"], c["base"], c["row"]["n_clients"],
                                           c["row"]["zeta"], pool_size, lam),
                      w=np.asarray(c["w"]), local="erm") for c in cells]
    return Evidence(measured=[r["gap"] for r in rows], theoretical=[r["bound"] for r in rows],
                    relation="<=", instance=instances,
                    tolerance=Tolerance.mc([c["se"] for c in cells], k=4, what="gap - bound"),
                    details={"cells": rows})
