r"""Attack surface of Theorem 4.1's final bound on FL runs, with the expectations over sampling
computed exactly (K-Vib, App. C.2, last display; the claim ``kvib.thm4_1.final_bound_fl_run``
estimates them from seeds).

One point is an FL instance meeting the statement's hypotheses: N shared-Hessian quadratics
:math:`f_i=\frac L2\|x\|^2-b_i^\top x` in d = 2 (Assumption 4.3 holds for all x with the
exact spread of the :math:`b_i`), full-batch local GD (:math:`\sigma_l = 0`), R local steps,
:math:`\eta_g = 1`, a start :math:`x^0`, and an unbiased ISP sampler: K-Vib (Algorithm 2, any
G) or a fixed ISP water-filled from w with a 0.01 floor. Every participation history of T
rounds is enumerated, a round's nodes at once (:mod:`.attacks_exact`), so
:math:`\mathbb E\|\nabla f(x^t)\|^2`, :math:`\beta_1=\frac1T\sum_t\mathbb EQ(S^t)` and
:math:`\beta_2=\frac1T\sum_t\mathbb E\gamma^t` are exact. The step is the claim's: Lemma B.5's
tuning with :math:`\sigma^2=6\sigma_g^2` and :math:`\beta_1` in gradient units, found by the
claim's fixed point (three runs from :math:`\eta=1/(8L)`); the bound is the claim's smallest
reading (the statement's :math:`\sigma^2=\sigma_g^2`, :math:`\beta_1` of Def. 4.1's
:math:`d^t`, the printed last term 2LM/T) with the last run's own constants, and
:math:`\rho=\min(1-10\gamma^t\eta^2)/16` over every reachable round (the lenient reading).
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.sampler_rounds import replicate_local_updates
from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.sampling import KVib, optimal_isp_probabilities

from .attacks import _budget
from .attacks_exact import EXACT_TREE, KVibLevels, level_branches, walk_sum, waterfill_rows
from .thm4_1 import admissible_instance, thm41_rhs
from .thm4_1.descent import FixedISP
from .thm4_1.final_bound import tuned_step

N_FL, T_FL, D_FL = 4, 3, 2
#: runs of the claim's step fixed point (the pilot at 1/(8L), then "tune, run" twice)
FIXED_POINT_RUNS = 3


def fl_moments(problem, sampler, *, n_rounds, local_steps, eta, x0):
    r"""Exact moments of one FedAvg run with ``sampler`` (a fresh K-Vib or fixed ISP) at
    :math:`\eta = R\eta_l` (:math:`\eta_g = 1`, :math:`\lambda = 1/N`), by levels of the tree:
    round t's models are the rows of one array, their local updates one batched call.

    Returns
    -------
    dict
        ``grad_sq`` (T + 1,) :math:`\mathbb E\|\nabla f(x^t)\|^2`; ``q`` (T,)
        :math:`\mathbb EQ(S^t)` (Def. 4.1, :math:`d^t` units); ``gamma`` (T,)
        :math:`\mathbb E\gamma^t`; ``rho`` the smallest :math:`(1-10\gamma^t\eta^2)/16` over
        the reachable rounds; ``nodes``.
    """
    n, k = problem.n_clients, float(sampler.budget)
    if not problem.uniform_weights:
        raise ValueError("problem must weigh its clients uniformly (lambda = 1/N)")
    lam = 1.0 / n
    kvib = KVibLevels(sampler) if isinstance(sampler, KVib) else None
    fixed = None if kvib is not None else np.asarray(sampler.probabilities(), dtype=float)
    out = dict(grad_sq=np.zeros(n_rounds + 1), q=np.zeros(n_rounds), gamma=np.zeros(n_rounds),
               rho=np.inf, nodes=0)
    X = np.asarray(x0, dtype=float)[None]
    prob = np.ones(1)
    omega = None if kvib is None else kvib.start
    clients = np.arange(n)
    for t in range(1, n_rounds + 2):
        m = prob.size
        out["nodes"] += m
        grads = problem.client_gradients(np.repeat(X, n, axis=0), clients=np.tile(clients, m))
        grad = grads.reshape(m, n, -1).mean(axis=1)
        out["grad_sq"][t - 1] = walk_sum(prob * np.matmul(grad[:, None, :], grad[:, :, None])
                                         [:, 0, 0])
        if t > n_rounds:                 # x^T: only its gradient is needed
            break
        z = lam * replicate_local_updates(problem, X, local_steps, eta / local_steps)
        a = np.sqrt(np.sum(z * z, axis=2))
        v_star = _optimal_variances(a, k)
        sq = np.sum(a * a, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.where((sq > 0) & (k < n), v_star / ((n - k) / k * sq), 0.0)
        gamma = (alpha * (n - k) / k + n) * lam
        P = kvib.mixed(kvib.base(omega)) if kvib is not None else np.broadcast_to(fixed, a.shape)
        out["q"][t - 1] = walk_sum(prob * (np.sum((1.0 - P) / P * a * a, axis=1) - v_star))
        out["gamma"][t - 1] = walk_sum(prob * gamma)
        out["rho"] = min(out["rho"], float(np.min((1 - 10 * gamma * eta**2) / 16)))
        parent, masks, pr = level_branches(P)
        X = X[parent] - _drawn_sums(1.0 / P[parent], z[parent], masks)
        if kvib is not None and t < n_rounds:
            omega = kvib.update(omega, P, a, parent, masks)
        prob = prob[parent] * pr
    return out


def _drawn_sums(weights, z, masks):
    r""":math:`\sum_{i\in S}w_iz_i` per row (the draw's ``weights @ z[clients]``), one
    stacked product per set, so each has the draw's length (and the walk's bits)."""
    codes = masks @ (1 << np.arange(masks.shape[1]))
    out = np.zeros((masks.shape[0], z.shape[2]))
    for code in np.unique(codes):
        rows = np.flatnonzero(codes == code)
        drawn = np.flatnonzero(masks[rows[0]])
        out[rows] = np.matmul(weights[rows][:, None, drawn], z[rows][:, drawn, :])[:, 0, :]
    return out


def _optimal_variances(a, k):
    r""":func:`~flbounds.sampling.optimal_isp_variance` of every row of ``a`` (positive):
    :math:`(\sum_{unc}a)^2/(K-N+l)-\sum_{unc}a^2` over the l uncapped clients."""
    if not np.all(a > 0):
        raise ValueError("a must be positive")
    n = a.shape[1]
    uncapped = waterfill_rows(a, k) < 1.0
    ell = np.sum(uncapped, axis=1)
    s1 = np.sum(np.where(uncapped, a, 0.0), axis=1)
    s2 = np.sum(np.where(uncapped, a * a, 0.0), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ell == 0, 0.0, s1**2 / (k - n + ell) - s2)


def _fl_point(*, c, x0, n, k_frac, w, kind, G, R, T, L):
    """The problem, budget and a maker of a fresh sampler at one point."""
    k = _budget(n, k_frac)
    b = np.asarray(c, dtype=float)[:D_FL * n].reshape(n, D_FL)
    problem = admissible_instance(L=L, R=R, step=1 / (8 * R * L), centers=b, budget=k)["problem"]
    if kind == 0:
        theta = min(1.0, (n / (T * k)) ** (1 / 3))     # Thm 5.2's, capped where TK < N
        return problem, k, b, lambda: KVib(n, k, T, G=G, theta=theta)
    p = optimal_isp_probabilities(np.asarray(w)[:n] + 0.01, k)
    return problem, k, b, lambda: FixedISP(p)


_CACHE: dict = {}


def final_bound_sides(**point):
    """The claim's fixed point, exactly: (rho min_t E||grad f||^2, the smallest reading of the
    bound, the run's step, the constants); cached per point (the predicates and the ratio read
    the same run)."""
    key = tuple((name, np.asarray(v).tobytes()) for name, v in sorted(point.items()))
    if key in _CACHE:
        return _CACHE[key]
    problem, k, b, make = _fl_point(**point)
    L, R, T = point["L"], point["R"], point["T"]
    x0 = np.asarray(point["x0"], dtype=float)
    sigma_g2 = float(np.mean(np.sum((b - b.mean(axis=0)) ** 2, axis=1)))
    M = float(problem.loss(x0) - problem.F_star)
    eta = 1 / (8 * L)
    for _ in range(FIXED_POINT_RUNS):
        run = fl_moments(problem, make(), n_rounds=T, local_steps=R, eta=eta, x0=x0)
        eta_run = eta
        beta1, beta2 = float(run["q"].mean()), float(run["gamma"].mean())
        eta = tuned_step(M=M, L=L, T=T, sigma2=6 * sigma_g2, beta1=beta1 / eta_run**2,
                         beta2=beta2)
    bound = thm41_rhs(M=M, L=L, T=T, sigma2=sigma_g2, beta1=beta1, gamma=beta2, last=2.0)
    lhs = run["rho"] * float(run["grad_sq"].min())
    _CACHE.clear()
    _CACHE[key] = (lhs, bound, eta_run, dict(k=k, b=b, beta1=beta1, beta2=beta2, M=M))
    return _CACHE[key]


def _fl_instance(**point) -> dict:
    """The values Theorem 4.1's predicates read: the FL instance at the run's step."""
    _, _, eta_run, c = final_bound_sides(**point)
    return admissible_instance(L=point["L"], R=point["R"], step=eta_run / point["R"],
                               centers=c["b"], budget=c["k"])


@attack_surface("kvib.thm4_1.final_bound_fl_run",
          space={"c": Box(-3, 3, shape=D_FL * N_FL), "x0": Box(-10, 10, shape=D_FL),
                 "n": Integers(2, N_FL), "k_frac": Box(0, 1), "w": Simplex(N_FL),
                 "kind": Integers(0, 1), "G": Box(1e-3, 1e3, log=True), "R": Integers(1, 10),
                 "T": Integers(1, T_FL), "L": Box(1e-2, 1e2, log=True)},
          instance=lambda **point: _fl_instance(**point),
          tolerance=1e-12, tolerance_why=EXACT_TREE,
          budget={"quick": 60, "full": 1000},
          fixed=[{"c": np.linspace(-1, 1, D_FL * N_FL), "x0": [1.0, -1.0], "n": 3,
                  "k_frac": 0.5, "w": np.full(N_FL, 1 / N_FL), "kind": 0, "G": 1.0, "R": 5,
                  "T": 3, "L": 1.0}],
          note="exact expectations over every participation history: N <= 4, T <= 3, K in "
               "[1, N), K-Vib (any G) or a fixed ISP with p_i down to ~0.01, R up to 10, "
               "L over 1e-2..1e2; the claim's step fixed point and smallest reading of the "
               "bound")
def final_bound_exact(**point):
    """rho min_t E||grad f(x^t)||^2 over the smallest reading of the final bound."""
    lhs, bound, _, _ = final_bound_sides(**point)
    if not bound > 0:
        return np.inf if lhs > 0 else 0.0
    return lhs / bound
