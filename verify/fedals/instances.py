r"""Shared set-up of the ridge-on-the-sphere Monte Carlo cells of the FedALS checks (the
paper's instances; the MLP task of spec V9 is :mod:`verify.fedals.mlp_task`).

A cell fixes (d, n, lambda, K, zeta, client weights, equal or unequal n_k); the client optima
are :math:`\theta^\star_k = \theta^\star_0 + \zeta u_k` with :math:`u_k \sim N(0, I)` drawn once
per cell (spec V2; :func:`ridge_family` draws one u for the cells that share their datasets,
so that their zetas lie on one ray). Expectations are over the datasets only.
"""

from __future__ import annotations

import numpy as np

from flbounds.kernels.ridge_round import ridge_erm_maps, ridge_one_round
from flbounds.theory.data_models import RidgeData, RidgeModel, sphere_points
from flbounds.theory.generalization import (
    OneRoundDraws,
    one_round_draws,
    summarize_bound,
)
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


def _with_optima(noise, theta_star):
    """The statistics of y = x'theta*_k + noise from those of the noise alone (theta* = 0):
    X'y/n = (X'X/n) theta* + X'noise/n and y'y/n = theta*'(X'X/n)theta* + 2 theta*'X'noise/n
    + noise'noise/n, exact identities of the same samples."""
    g_theta = np.einsum("tkij,kj->tki", noise.gram, theta_star)
    return RidgeData(noise.gram, g_theta + noise.xy,
                     np.einsum("tki,ki->tk", g_theta, theta_star)
                     + 2.0 * np.einsum("tki,ki->tk", noise.xy, theta_star) + noise.yy,
                     None, None)


def ridge_family(rng, base, *, n_samples, n_clients, unequal, n_draws, settings):
    r"""Cells that differ only in (lambda, zeta, weights), on common datasets.

    The covariates and the noise of a dataset do not depend on lambda, on the client optima
    or on the weights, so the cells sharing (n, K, equal or unequal n_k) draw them once: one
    direction :math:`u_k \sim N(0, I)` per client (:math:`\theta^\star_k = \theta^\star_0 +
    \zeta u_k`, the same u for every zeta), one Dirichlet(1) weight vector, n_draws pairs
    (S, S') of covariates and noise; each setting then builds its labels from them
    (:func:`_with_optima`) and its local ERMs from one factorization per lambda
    (:func:`_erm_map`), and runs the round in one compiled pass (:func:`_ridge_round`). Every
    setting keeps its own n_draws draws (their statistics drawn by :func:`_noise_moments`) and
    its own standard errors (bootstrap from ``rng``,
    its counts from uniform indices); the estimates of different settings are dependent
    (common random numbers). Yields (setting, model, weights, draws, Thm 4.1 summary) per
    entry of ``settings`` (dicts with lam, zeta and weights), by increasing lambda (in their
    order for equal lambdas).
    """
    u = rng.standard_normal((n_clients, base.size))
    dirichlet = client_weights(rng, n_clients, "dirichlet")
    sizes = client_sizes(n_samples, n_clients, unequal)
    data0 = _noise_moments(rng, n_draws, sizes, n_clients, base.size)
    copy0 = _noise_moments(rng, n_draws, sizes, n_clients, base.size)
    solved = {}
    for setting in sorted(settings, key=lambda s: s["lam"]):
        model = RidgeModel(base[None, :] + setting["zeta"] * u, NOISE_SD, setting["lam"])
        w = (dirichlet if setting["weights"] == "dirichlet"
             else client_weights(rng, n_clients, setting["weights"]))
        if model.lam not in solved:   # one factorization per lambda, for every zeta
            solved = {model.lam: (_erm_map(data0, model.lam), _erm_map(copy0, model.lam))}
        draws = _ridge_round(model, w, data0, copy0, *solved[model.lam])
        yield setting, model, w, draws, summarize_bound(draws, w, model.mu, model.L, rng,
                                                        bootstrap="indices")


def _noise_moments(rng, n_draws, sizes, n_clients, dim):
    r"""The statistics (X'X/n, X'e/n, e'e/n) of n_draws datasets per client, X n points uniform
    on the sphere and e ~ N(0, sigma^2 I_n) (``RidgeModel(0, NOISE_SD, .).sample``'s law), with
    the noise drawn through its sufficient statistics: for X = QR (R upper with a positive
    diagonal, R'R = X'X, so R' is the Cholesky factor C of X'X), a = Q'e ~ N(0, sigma^2 I_d)
    and the rest ||(I - QQ')e||^2 ~ sigma^2 chi^2_{n-d} are independent and independent of
    X, and X'e = C a, e'e = ||a||^2 + rest. So d normals and one chi-square per dataset
    replace its n noise draws: the same joint law of the three statistics, other numbers.
    Needs n_k > d (X'X then has full rank almost surely)."""
    sizes = np.broadcast_to(np.asarray(sizes), (n_clients,))
    if np.any(sizes <= dim):
        raise ValueError(f"n_samples must exceed the dimension {dim}, got {sizes.tolist()}")
    gram, xy = np.empty((n_draws, n_clients, dim, dim)), np.empty((n_draws, n_clients, dim))
    yy = np.empty((n_draws, n_clients))
    for k, n in enumerate(sizes.tolist()):
        X = sphere_points(rng, (n_draws, n), dim)
        xtx = np.matmul(X.swapaxes(1, 2), X)
        a = NOISE_SD * rng.standard_normal((n_draws, dim))
        rest = NOISE_SD ** 2 * rng.chisquare(n - dim, n_draws)
        gram[:, k] = xtx / n
        xy[:, k] = np.matmul(np.linalg.cholesky(xtx), a[:, :, None])[:, :, 0] / n
        yy[:, k] = (np.einsum("ti,ti->t", a, a) + rest) / n
    return RidgeData(gram, xy, yy, None, None)


def _ridge_round(model, w, data0, copy0, maps, maps_c):
    """``one_round_batch`` of the local ERMs on the datasets whose noise moments are
    ``data0``, ``copy0`` (their targets built from the model's optima, :func:`_with_optima`;
    their ERMs from the maps ``(A, c)`` of :func:`_erm_map`), in one compiled pass
    (``ridge_one_round``): the same quantities up to rounding."""
    T, K = data0.yy.shape
    gap, out = np.empty(T), np.empty((10, T, K))
    ridge_one_round(data0.gram, data0.xy, data0.yy, *maps, copy0.gram, copy0.xy, copy0.yy,
                    *maps_c, np.ascontiguousarray(model.theta_star, dtype=float),
                    np.asarray(w, dtype=float), np.ascontiguousarray(model.reference_theta),
                    float(model.lam), float(model.second_moment), float(model.noise_sd) ** 2,
                    float(model.L), float(model.mu), gap, out)
    local_gap, nonid, loo, v_sq, g_sq, g_dot_v, excess, smooth, sc, pl = out
    return OneRoundDraws(gap, local_gap, nonid, np.zeros((T, K)), loo, v_sq, g_sq, g_dot_v,
                         excess, smooth, sc, pl)


def _erm_map(noise, lam):
    """The local ERM as an affine map of the client optima: with H = X'X/n + lambda I, the
    ERM H^{-1}(X'X/n theta* + X'noise/n) = A theta* + c, A = H^{-1} X'X/n, c = H^{-1}
    X'noise/n: one Cholesky factorization of H per dataset with d + 1 right-hand sides
    (``ridge_erm_maps``; lambda > 0 makes H positive definite), the solutions of
    ``np.linalg.solve`` up to rounding at a small fraction of its per-matrix cost."""
    if not lam > 0:
        raise ValueError("lam must be > 0 (the ridge ERM map factors X'X/n + lambda I)")
    gram = np.ascontiguousarray(noise.gram)
    *lead, d, _ = gram.shape
    a, c = np.empty(gram.shape), np.empty(gram.shape[:-1])
    ridge_erm_maps(gram.reshape(-1, d, d), np.ascontiguousarray(noise.xy).reshape(-1, d),
                   float(lam), a.reshape(-1, d, d), c.reshape(-1, d))
    return a, c


def grid(**axes):
    """Cartesian product of named axes as a list of dicts (first axis varies slowest)."""
    cells = [{}]
    for name, values in axes.items():
        cells = [dict(c, **{name: v}) for c in cells for v in values]
    return cells
