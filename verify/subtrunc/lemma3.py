r"""Lemma 3 of SubTrunc (local-gradient growth): the result, its hypotheses and its claim.

With :math:`\eta_k LE \le 1/3`, eq. (61):
:math:`\sum_{t<\tau} E\|\nabla f_i(w^{(i)}_{k,t})\|^2 \le (\tau/8)(18E\|\nabla
f_i(w_k)\|^2 + \sigma^2)`. Monte Carlo rule (spec s.4): LHS_MC - 4 SE <= RHS.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result

from .assumptions import a1, gaussian_noise, noise, step_third
from .toy_problems import CosineSum

LEMMA3 = result(
    "subtrunc.lemma3", ref="Lemma 3", title="local growth, eq. (61)",
    parts={"eq61": "eq. (61): sum_{t<tau} E||grad f_i(w_t)||^2 <= (tau/8)(18 "
                   "E||grad f_i(w_k)||^2 + sigma^2), tau <= E"},
    hypotheses=(a1, noise, step_third))


def eq61_rhs(tau, grad_sq, sigma2):
    """Eq. (61)'s printed right side (tau/8)(18 ||grad f_i(w_k)||^2 + sigma^2)."""
    return (tau / 8) * (18 * grad_sq + sigma2)


def _local_paths(grad, w0, step, local_steps, sigma, noise):
    """Local SGD paths; ``noise`` (paths, E, d) standard normals scaled to E||xi||^2 = sigma^2."""
    d = w0.size
    w = np.broadcast_to(w0, (noise.shape[0], d)).copy()
    grad_sq = []
    for t in range(local_steps):
        g = grad(w)
        grad_sq.append((g ** 2).sum(axis=-1))
        w -= step * (g + sigma / np.sqrt(d) * noise[:, t])
    return np.stack(grad_sq, axis=1)  # (paths, E): ||grad f(w_t)||^2


def _lemma3_cases(rng):
    """(name, grad, problem, w0) for 1 + cos w and an indefinite quadratic with ||A|| = 1;
    ``problem`` carries the exact smoothness constant L (1 for both)."""
    cosine = CosineSum(np.ones(1), np.zeros((1, 1)))
    cases = [(f"1+cos, w0={w0:.3f}", lambda w: -np.sin(w), cosine, np.array([w0]))
             for w0 in (0.0, 0.5, np.pi / 2, 3.0)]
    q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    A = q @ np.diag([1.0, 0.5, 0.0, -0.5, -1.0]) @ q.T
    quadratic = SimpleNamespace(L=1.0)  # ||A|| = 1 by construction (eigenvalues +-1, +-0.5, 0)
    for w0 in (np.zeros(5), rng.normal(size=5)):
        cases.append(("indefinite quadratic", lambda w, A=A: w @ A, quadratic, w0))
    return cases


@claim("subtrunc.lemma3.local_growth", ref="Lemma 3, eq. (61)", kind="statement",
       expected="holds", result=LEMMA3,
       statement="With eta L E <= 1/3: sum_{t<tau} E||grad f_i(w_t)||^2 <= (tau/8)(18 "
                 "||grad f_i(w_k)||^2 + sigma^2) for tau <= E.",
       quick=dict(n_paths=4000, local_steps=(1, 2, 5, 10), sigma=1.0),
       full=dict(n_paths=100000, local_steps=(1, 2, 5, 10, 20), sigma=1.0))
def lemma3(*, rng, n_paths, local_steps, sigma):
    """Local SGD MC at eta = 1/(3 L E) (the boundary) with Gaussian noise of variance sigma^2,
    on 1 + cos w at several w_k (including the saddle-like w_k = 0, where the gradient is 0
    and the bound is noise-only) and on an indefinite quadratic. Expected ``holds``
    (the proof's steps (62)-(70) check); tolerance 4 MC SE."""
    lhs, ses, rhs, names, instances = [], [], [], [], []
    cases = _lemma3_cases(rng.spawn(1)[0])
    for (name, grad, problem, w0), r in zip(cases, rng.spawn(len(cases)), strict=True):
        L = problem.L
        g0 = float((grad(w0[None])[0] ** 2).sum())
        for E in local_steps:
            noise = r.normal(size=(n_paths, E, w0.size))
            sq = _local_paths(grad, w0, 1.0 / (3 * L * E), E, sigma, noise)
            cum = np.cumsum(sq, axis=1)  # cum[:, tau-1] = sum_{t < tau}
            lhs += cum.mean(axis=0).tolist()
            ses += (cum.std(axis=0, ddof=1) / np.sqrt(n_paths)).tolist()
            rhs += [eq61_rhs(tau, g0, sigma ** 2) for tau in range(1, E + 1)]
            names += [f"{name}, E={E}"] * E
            instances.append(dict(problem=problem, L=L, step=1.0 / (3 * L * E), local_steps=E,
                                  **gaussian_noise(sigma ** 2)))
    lhs, rhs = np.array(lhs), np.array(rhs)
    return Evidence(measured=lhs, theoretical=rhs, relation="<=", instance=instances,
                    tolerance=Tolerance.mc(ses, k=4, what="cumulative squared gradients"),
                    details={"max_ratio_lhs_over_rhs": float(np.max(lhs / rhs)),
                             "cases": sorted(set(names))})
