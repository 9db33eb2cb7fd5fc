r"""Theorem 1's analytic ingredients for [004]: self-bounding, eqs. (31)/(32), Lemma 3.

Monte Carlo rule (spec s.4): an inequality LHS <= RHS with an MC-estimated LHS holds when
LHS_MC - 4 SE <= RHS (``Tolerance.mc(se, k=4)``).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from .toy_problems import random_cosine, random_least_squares


@claim("subtrunc.thm1.self_bounding", ref="Thm 1, proof (before eq. (21))", kind="proof-step",
       expected="holds",
       statement="sum_i ||grad f_i(w)||^2 <= 2L sum_i (f_i(w) - f_i*) <= 2 n L f(w) for "
                 "nonnegative L-smooth f_i.",
       quick=dict(n_instances=20, n_points=50), full=dict(n_instances=200, n_points=500))
def self_bounding(*, rng, n_instances, n_points):
    """Heterogeneous least squares + ridge (f_i* in closed form) and nonconvex cosine sums
    (f_i* = 0), random w. Both links are measured (ratio to the next term <= 1). Expected
    ``holds``; tolerance: rounding (1e-9 relative)."""
    worst = np.zeros(2)
    for j, r in enumerate(rng.spawn(n_instances)):
        n, d = int(r.integers(2, 30)), int(r.integers(1, 12))
        prob = random_least_squares(r, n, d) if j % 2 == 0 else random_cosine(r, n, d)
        W = np.broadcast_to(r.normal(size=(n_points, 1, d)) * 3, (n_points, n, d))
        grad_sq = (prob.gradients(W) ** 2).sum(axis=(-1, -2))
        vals = prob.values(W)
        mid = 2 * prob.L * (vals - prob.minima()).sum(axis=-1)
        top = 2 * n * prob.L * vals.mean(axis=-1)
        worst = np.maximum(worst, [np.max(grad_sq / mid), np.max(mid / top)])
    return Evidence(measured=worst, theoretical=[1.0, 1.0], relation="<=",
                    tolerance=Tolerance.rounding(1e-9, "ratios of float64 sums"),
                    details={"max_ratio_first_link": worst[0], "max_ratio_second_link": worst[1]})


def eq31_closed_form(step: float, n_clients: int = 1) -> tuple[float, float, float]:
    r"""Exact LHS and RHS of (31) on f = 1 + cos w, w_k = 0, tau = 2, sigma = 1 (spec V10).

    With :math:`a = \eta`: LHS = :math:`(2 + 2a e^{-a^2/2} + (1 - e^{-2a^2})/2)/n`,
    RHS = :math:`(2 + 1 - e^{-2a^2})/n`, and the Cauchy-Schwarz repair
    :math:`\tau\sum E\|u_t\|^2 + \tau^2\sigma^2/n` = :math:`(4 + 1 - e^{-2a^2})/n`.
    """
    a = step
    lhs = 2 + 2 * a * np.exp(-a * a / 2) + (1 - np.exp(-2 * a * a)) / 2
    rhs = 2 + (1 - np.exp(-2 * a * a))
    fixed = 4 + (1 - np.exp(-2 * a * a))
    return lhs / n_clients, rhs / n_clients, fixed / n_clients


def eq31_monte_carlo(rng, step, n_clients, n_paths):
    """MC of E||u_hat_0 + u_hat_1||^2: every client runs local SGD from 0 with its own noise."""
    xi0 = rng.normal(size=(n_paths, n_clients))
    xi1 = rng.normal(size=(n_paths, n_clients))
    u0 = xi0.mean(axis=1)  # -sin(0) = 0
    u1 = (np.sin(step * xi0) + xi1).mean(axis=1)  # w_1 = -step xi0, grad = -sin(w_1)
    sample = (u0 + u1) ** 2
    return sample.mean(), sample.std(ddof=1) / np.sqrt(n_paths)


@claim("subtrunc.eq31.noise_bound", ref="Lemma 1 proof, eqs. (31)/(32)", kind="proof-step",
       expected="violated",
       statement="E||sum_{t<tau} u_hat_t||^2 <= tau sum_{t<tau} E||u_t||^2 + tau sigma^2 / n "
                 "(and (32) per client) under Assumptions 1-2 with eta L E <= 1/3.",
       quick=dict(n_paths=200000, clients=(1, 2, 10)),
       full=dict(n_paths=4000000, clients=(1, 2, 10)))
def eq31_noise_bound(*, rng, n_paths, clients):
    """Instance (audit part B #9): f_i(w) = 1 + cos w for n identical clients (1-smooth,
    nonnegative, f* = 0), stochastic gradient -sin w + xi with xi ~ N(0, 1) (sigma^2 = 1),
    w_k = 0, E = tau = 2, eta = 1/6 so eta L E = 1/3. The proof drops the cross terms
    E<u_1, xi_0> = eta e^{-eta^2/2} > 0 created by negative curvature. Exact: LHS = 2.3558,
    RHS = 2.0540 for n = 1 (both scale as 1/n). Measured: the MC LHS (tolerance 4 SE);
    ``violated`` expected; (32) is the n = 1 case. The closed form is in ``details``."""
    step = 1.0 / 6.0
    lhs_mc, ses, rhs, exact = [], [], [], []
    for n_clients, r in zip(clients, rng.spawn(len(clients)), strict=True):
        mean, se = eq31_monte_carlo(r, step, n_clients, n_paths)
        lhs, right, _ = eq31_closed_form(step, n_clients)
        lhs_mc.append(mean)
        ses.append(se)
        rhs.append(right)
        exact.append(lhs)
    return Evidence(measured=lhs_mc, theoretical=rhs, relation="<=",
                    tolerance=Tolerance.mc(ses, k=4, what="E||u0 + u1||^2 over paths"),
                    details={"clients": list(clients), "lhs_exact": exact, "rhs": rhs,
                             "eta": step, "E": 2, "sigma2": 1.0,
                             "gap_small_eta_0.01": float(np.subtract(
                                 *eq31_closed_form(0.01)[:2]))})


@claim("subtrunc.eq31.corrected", ref="Lemma 1 proof, eq. (31) (Cauchy-Schwarz repair)",
       kind="proof-step", expected="holds",
       statement="E||sum_{t<tau} u_hat_t||^2 <= tau sum E||u_t||^2 + tau^2 sigma^2 / n.",
       quick=dict(n_paths=200000, steps=(0.01, 0.05, 1 / 6)),
       full=dict(n_paths=2000000, steps=(0.01, 0.02, 0.05, 0.1, 1 / 6)))
def eq31_corrected(*, rng, n_paths, steps):
    """The valid replacement on the same instance (eta in (0, 1/6], n = 1): MC LHS within
    4 SE of the closed form and below (4 + 1 - e^{-2 eta^2}). Expected ``holds``."""
    lhs_mc, ses, bound = [], [], []
    for step, r in zip(steps, rng.spawn(len(steps)), strict=True):
        mean, se = eq31_monte_carlo(r, step, 1, n_paths)
        lhs_mc.append(mean)
        ses.append(se)
        bound.append(eq31_closed_form(step)[2])
    return Evidence(measured=lhs_mc, theoretical=bound, relation="<=",
                    tolerance=Tolerance.mc(ses, k=4, what="E||u0 + u1||^2 over paths"),
                    details={"steps": list(steps)})


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
    """(name, grad, L, w0) for 1 + cos w and an indefinite quadratic with ||A|| = 1."""
    cases = [(f"1+cos, w0={w0:.3f}", lambda w: -np.sin(w), 1.0, np.array([w0]))
             for w0 in (0.0, 0.5, np.pi / 2, 3.0)]
    q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    A = q @ np.diag([1.0, 0.5, 0.0, -0.5, -1.0]) @ q.T
    for w0 in (np.zeros(5), rng.normal(size=5)):
        cases.append(("indefinite quadratic", lambda w, A=A: w @ A, 1.0, w0))
    return cases


@claim("subtrunc.lemma3.local_growth", ref="Lemma 3, eq. (61)", kind="statement",
       expected="holds",
       statement="With eta L E <= 1/3: sum_{t<tau} E||grad f_i(w_t)||^2 <= (tau/8)(18 "
                 "||grad f_i(w_k)||^2 + sigma^2) for tau <= E.",
       quick=dict(n_paths=4000, local_steps=(1, 2, 5, 10), sigma=1.0),
       full=dict(n_paths=100000, local_steps=(1, 2, 5, 10, 20), sigma=1.0))
def lemma3(*, rng, n_paths, local_steps, sigma):
    """Local SGD MC at eta = 1/(3 L E) (the boundary) with Gaussian noise of variance sigma^2,
    on 1 + cos w at several w_k (including the saddle-like w_k = 0, where the gradient is 0
    and the bound is noise-only) and on an indefinite quadratic. Expected ``holds``
    (the proof's steps (62)-(70) check); tolerance 4 MC SE."""
    lhs, ses, rhs, names = [], [], [], []
    cases = _lemma3_cases(rng.spawn(1)[0])
    for (name, grad, L, w0), r in zip(cases, rng.spawn(len(cases)), strict=True):
        g0 = float((grad(w0[None])[0] ** 2).sum())
        for E in local_steps:
            noise = r.normal(size=(n_paths, E, w0.size))
            sq = _local_paths(grad, w0, 1.0 / (3 * L * E), E, sigma, noise)
            cum = np.cumsum(sq, axis=1)  # cum[:, tau-1] = sum_{t < tau}
            lhs += cum.mean(axis=0).tolist()
            ses += (cum.std(axis=0, ddof=1) / np.sqrt(n_paths)).tolist()
            rhs += [(tau / 8) * (18 * g0 + sigma ** 2) for tau in range(1, E + 1)]
            names += [f"{name}, E={E}"] * E
    lhs, rhs = np.array(lhs), np.array(rhs)
    return Evidence(measured=lhs, theoretical=rhs, relation="<=",
                    tolerance=Tolerance.mc(ses, k=4, what="cumulative squared gradients"),
                    details={"max_ratio_lhs_over_rhs": float(np.max(lhs / rhs)),
                             "cases": sorted(set(names))})
