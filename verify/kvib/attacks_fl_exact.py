r"""Attack surface of Theorem 4.1's final bound on FL runs, with the expectations over sampling
computed exactly (K-Vib, App. C.2, last display; the claim ``kvib.thm4_1.final_bound_fl_run``
estimates them from seeds).

One point is an FL instance meeting the statement's hypotheses: N shared-Hessian quadratics
:math:`f_i=\frac L2\|x\|^2-b_i^\top x` in d = 2 (Assumption 4.3 holds for all x with the
exact spread of the :math:`b_i`), full-batch local GD (:math:`\sigma_l = 0`), R local steps,
:math:`\eta_g = 1`, a start :math:`x^0`, and an unbiased ISP sampler: K-Vib (Algorithm 2, any
G) or a fixed ISP water-filled from w with a 0.01 floor. Every participation history of T
rounds is enumerated (:func:`.attacks_exact.expectation_tree`), so
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

from flbounds.algorithms.fedavg_sampler import local_updates
from flbounds.falsify import Box, Integers, Simplex, attack_surface
from flbounds.sampling import KVib, isp_variance, optimal_isp_probabilities, optimal_isp_variance

from .attacks import _budget
from .attacks_exact import EXACT_TREE, expectation_tree
from .thm4_1 import admissible_instance, thm41_rhs
from .thm4_1.descent import FixedISP
from .thm4_1.final_bound import tuned_step

N_FL, T_FL, D_FL = 4, 3, 2
#: runs of the claim's step fixed point (the pilot at 1/(8L), then "tune, run" twice)
FIXED_POINT_RUNS = 3


def fl_moments(problem, sampler, *, n_rounds, local_steps, eta, x0):
    r"""Exact moments of one FedAvg run with ``sampler`` (a fresh ISP sampler) at
    :math:`\eta = R\eta_l` (:math:`\eta_g = 1`, :math:`\lambda = 1/N`).

    Returns
    -------
    dict
        ``grad_sq`` (T + 1,) :math:`\mathbb E\|\nabla f(x^t)\|^2`; ``q`` (T,)
        :math:`\mathbb EQ(S^t)` (Def. 4.1, :math:`d^t` units); ``gamma`` (T,)
        :math:`\mathbb E\gamma^t`; ``rho`` the smallest :math:`(1-10\gamma^t\eta^2)/16` over
        the reachable rounds; ``nodes``.
    """
    n, k = problem.n_clients, float(sampler.budget)
    lam = 1.0 / n
    out = dict(grad_sq=np.zeros(n_rounds + 1), q=np.zeros(n_rounds), gamma=np.zeros(n_rounds),
               rho=np.inf)

    def visit(t, node, x, prob):
        grad = problem.gradient(x)
        out["grad_sq"][t - 1] += prob * float(grad @ grad)
        if t > n_rounds:                 # x^T: only its gradient is needed
            return None, None
        z = lam * local_updates(problem, x, local_steps=local_steps, step=eta / local_steps)
        a = np.sqrt(np.sum(z * z, axis=1))
        v_star = optimal_isp_variance(a, k)
        sq = float(np.sum(a * a))
        alpha = v_star / ((n - k) / k * sq) if sq > 0 and k < n else 0.0
        gamma = (alpha * (n - k) / k + n) * lam
        out["q"][t - 1] += prob * (isp_variance(node.probabilities(), a) - v_star)
        out["gamma"][t - 1] += prob * gamma
        out["rho"] = min(out["rho"], (1 - 10 * gamma * eta**2) / 16)
        return a, lambda mask, draw: x - draw.weights @ z[draw.clients]

    out["nodes"] = expectation_tree(sampler, n_rounds + 1, visit, np.asarray(x0, dtype=float),
                                    update_last=False)
    return out


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
