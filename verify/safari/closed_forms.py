r"""Closed forms for SAFARI on quadratic clients: its biased limit, the bounds of
Theorems 4-5 and their q-conditions, and the local-drift lemma.

Clients are :math:`f_i(x) = x^\top A_i x/2 - b_i^\top x`, :math:`F = \frac1N\sum_i f_i`.
Under incomplete participation (clients sampled uniformly from an eligible set
:math:`\mathcal E`), SAFARI with fixed :math:`q` does not converge to :math:`x^*`: its mean
iterate converges to the fixed point of the expected update map (:func:`safari_mean_limit`).

References
----------
SAFARI: Server-assisted FL under incomplete client participation, Algorithm 1, Theorems 4-5
      and their proofs; spec ``000_safari.md`` sections 3, 4 (V5-V6) and 7.
"""

from __future__ import annotations

import numpy as np

from flbounds.problems import Quadratic


class ClientQuadratics(Quadratic):
    r"""The foundation's :class:`flbounds.problems.Quadratic` with two SAFARI helpers: the
    isotropic constructor of the spec's instances and the exact :math:`\sigma_G^2`."""

    @classmethod
    def isotropic(cls, centers):
        r""":math:`f_i(x) = \|x - c_i\|^2/2` + const: :math:`A_i = I`, :math:`b_i = c_i`."""
        centers = np.asarray(centers, dtype=float)
        n, d = centers.shape
        return cls(np.broadcast_to(np.eye(d), (n, d, d)).copy(), centers)

    def heterogeneity(self) -> float:
        r""":math:`\sigma_G^2 = \sup_x \max_i\|\nabla f_i - \nabla F\|^2`; finite only for a shared
        Hessian, where it is :math:`\max_i \|b_i - \bar b\|^2`."""
        if not np.allclose(self.A, self.A[0]):
            return float("inf")
        return float(np.max(np.sum((self.b - self.b.mean(axis=0)) ** 2, axis=1)))


def local_gd_map(A_i, b_i, step, local_steps):
    r"""Affine map of ``local_steps`` GD steps: :math:`x \mapsto M^K x + \eta\sum_{j<K} M^j b_i`."""
    d = A_i.shape[0]
    M = np.eye(d) - step * A_i
    Mk, acc = np.eye(d), np.zeros(d)
    for _ in range(local_steps):
        acc = acc + Mk @ b_i
        Mk = M @ Mk
    return Mk, step * acc


def safari_mean_limit(problem: ClientQuadratics, eligible, *, q, step_client, step_server,
                      local_steps):
    r"""Fixed point of the expected SAFARI map under uniform sampling from ``eligible``.

    A client round maps :math:`x \mapsto \bar M x + \bar c` with the eligible clients' mean
    local map; a server round :math:`x \mapsto x - \eta_s(\bar A x - \bar b)`. Noise has mean
    zero and the map is affine, so :math:`E x_r \to \bar x` solving
    :math:`[q(I - \bar M) + (1-q)\eta_s \bar A]\bar x = q\bar c + (1-q)\eta_s \bar b`.
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    if not (step_client > 0 and step_server > 0):
        raise ValueError("step_client and step_server must be positive")
    eligible = np.asarray(eligible, dtype=np.int64)
    maps = [local_gd_map(problem.A[i], problem.b[i], step_client, local_steps) for i in eligible]
    M_bar = np.mean([m[0] for m in maps], axis=0)
    c_bar = np.mean([m[1] for m in maps], axis=0)
    d = problem.dim
    lhs = q * (np.eye(d) - M_bar) + (1 - q) * step_server * problem.A.mean(axis=0)
    rhs = q * c_bar + (1 - q) * step_server * problem.b.mean(axis=0)
    return np.linalg.solve(lhs, rhs)


def first_order_floor(q: float, bias_gap2: float) -> float:
    r"""First-order floor :math:`(2q/(1+q))^2\|c_{\mathcal D} - \bar c\|^2` (identity
    Hessians, :math:`\eta_c K = 2\eta_s`)."""
    return (2 * q / (1 + q)) ** 2 * bias_gap2


def thm4_rhs(*, delta_f, n_rounds, step_server, q, L, sigma2, sigma_s2, sigma_G2, local_steps,
             n_sampled):
    r"""Theorem 4's bound :math:`2\Delta F/(R\eta_s) + \delta` (as printed)."""
    eta, K, m = step_server, local_steps, n_sampled
    delta = (L * eta * (1 - q) * sigma_s2 + 80 * q * L ** 2 * eta ** 2 / K * (sigma2
             + 6 * K * sigma_G2) + 8 * L * q * eta / (m * K) * sigma2)
    return 2 * delta_f / (n_rounds * eta) + delta


def thm4_q_max(G1, G2, *, sigma_G2, local_steps, L, step_server, printed=True):
    r"""Right side of Theorem 4's q-condition,
    :math:`1/(X/((1-L\eta_s)G_1) + 1)` with :math:`X = 4\sigma_G^2 - 4G_2(1/(2K^2) -
    2L\eta_s^{p}/K^2)`, :math:`p = 2` as printed, :math:`p = 1` as the proof gives.

    Also returns whether the closed form is the proof's linear condition
    :math:`qX \le (1-q)(1-L\eta_s)G_1` (true when :math:`X + (1-L\eta_s)G_1 > 0`).
    """
    K, eta = local_steps, step_server
    power = 2 if printed else 1
    X = 4 * sigma_G2 - 4 * np.asarray(G2) * (1 / (2 * K ** 2) - 2 * L * eta ** power / K ** 2)
    D = (1 - L * eta) * np.asarray(G1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / (X / D + 1.0), X + D > 0


def thm5_delta_bar(*, q, step_client, step_server, local_steps, n_sampled, L, mu, sigma2,
                   sigma_s2, sigma_G2):
    r""":math:`\bar\delta` of Theorem 5 (as printed)."""
    ec, K, m = step_client, local_steps, n_sampled
    return (8 * q * ec * K * sigma_G2 / mu + 2 * q * ec * sigma2 / (mu * m)
            + 4 * q * L * (1 + K * ec * L) / mu * (5 * K * ec ** 2 * (sigma2 + 6 * K * sigma_G2))
            + (1 - q) * (L + mu) / (2 * L * mu) * step_server * sigma_s2)


def thm5_q_condition(G3, G4, *, q, eta_bar, L, mu, corrected=False):
    r"""Per-round q-condition of Theorem 5, :math:`q \le 1/(1 + N/D)` with
    :math:`N = c\,\bar\eta/\mu^2 (1 + 30L\bar\eta/\mu(1 + 2L\bar\eta/\mu))G_3 - 4G_4/\mu` and
    :math:`D = (1/e - (L+\mu)^2\bar\eta/(4L^2\mu^2))G_3`; printed :math:`c = 4, e = L+\mu`,
    corrected :math:`c = 16, e = L\mu` (spec 7.A.15). Returns (printed closed form holds,
    proof's linear form :math:`qN \le (1-q)D` holds), elementwise over rounds.
    """
    G3, G4 = np.asarray(G3, dtype=float), np.asarray(G4, dtype=float)
    c, e = (16.0, L * mu) if corrected else (4.0, L + mu)
    N = (c * eta_bar / mu ** 2 * (1 + 30 * L * eta_bar / mu * (1 + 2 * L * eta_bar / mu)) * G3
         - 4 * G4 / mu)
    D = (1 / e - (L + mu) ** 2 * eta_bar / (4 * L ** 2 * mu ** 2)) * G3
    with np.errstate(divide="ignore", invalid="ignore"):   # D = 0 at eta_s = 2/(L + mu)
        closed = (q <= 1.0 / (1.0 + N / D)) & (1.0 + N / D > 0)
    linear = (q * N <= (1 - q) * D) & (D > 0)
    return closed, linear


def drift_bound(*, step_client, local_steps, sigma2, sigma_G2, grad_norm2):
    r"""Local-drift lemma bound

    .. math:: 5K\eta_c^2(\sigma^2 + 6K\sigma_G^2) + 30K^2\eta_c^2\|\nabla F(x_r)\|^2.
    """
    ec, K = step_client, local_steps
    return 5 * K * ec ** 2 * (sigma2 + 6 * K * sigma_G2) + 30 * K ** 2 * ec ** 2 * grad_norm2


def drift_terms(A_i, *, step_client, local_steps):
    r"""The powers :math:`M^j = (I - \eta_c A_i)^j`, :math:`j < K`, and the running sums
    :math:`\sum_{j<k}\|M^j\|_F^2` for :math:`k = 1, \dots, K`: the parts of
    :func:`exact_drift` that do not depend on the point (one pass serves every point and every
    :math:`k \le K`)."""
    d = A_i.shape[0]
    M = np.eye(d) - step_client * A_i
    Mj, var, powers, variances = np.eye(d), 0.0, [], []
    for _ in range(local_steps):
        powers.append(Mj)
        var += np.sum(Mj ** 2)
        variances.append(var)
        Mj = M @ Mj
    return powers, variances


def exact_drifts(terms, grad_i, *, step_client, sigma2) -> list[float]:
    r""":func:`exact_drift` at :math:`k = 1, \dots, K` in one pass, from
    :func:`drift_terms` ``(A_i, step_client=..., local_steps=K)``: the same operations in the
    same order, so entry k - 1 equals ``exact_drift(..., k=k)`` bit for bit."""
    powers, variances = terms
    d = grad_i.shape[0]
    mean, values = np.zeros(d), []
    for Mj, var in zip(powers, variances, strict=True):
        mean = mean + Mj @ grad_i
        values.append(float(step_client ** 2 * (mean @ mean + sigma2 / d * var)))
    return values


def exact_drift(A_i, grad_i, *, step_client, k, sigma2):
    r"""Exact :math:`E\|x^i_{r,k} - x_r\|^2` of ``k`` local SGD steps on a quadratic client,
    isotropic noise with :math:`E\|\xi\|^2 = \sigma^2`:
    :math:`\|\eta\sum_{j<k} M^j \nabla f_i(x_r)\|^2 + \eta^2\sigma^2/d\,\sum_{j<k}\|M^j\|_F^2`."""
    values = exact_drifts(drift_terms(A_i, step_client=step_client, local_steps=k), grad_i,
                          step_client=step_client, sigma2=sigma2)
    return values[-1] if values else 0.0


def homogeneous_stationary_error(*, q, step_client, step_server, local_steps, n_sampled, mu,
                                 sigma2, sigma_s2):
    r"""Exact :math:`\lim_r E\|x_r - x^*\|^2` of SAFARI with identical isotropic clients
    :math:`f_i = \mu\|x - c\|^2/2` and isotropic noise (:math:`E\|\xi\|^2 = \sigma^2`).

    The error :math:`e_r = x_r - x^*` obeys :math:`e_{r+1} = (1-\eta_c\mu)^K e_r - \eta_c
    \frac1m\sum_i\sum_{j<K}(1-\eta_c\mu)^{K-1-j}\xi^i_j` on client rounds and
    :math:`e_{r+1} = (1-\eta_s\mu)e_r - \eta_s\zeta_r` on server rounds, so
    :math:`V = [q a_c^{2} + (1-q)a_s^2]V + q\eta_c^2\sigma^2 S/m + (1-q)\eta_s^2\sigma_s^2`
    with :math:`a_c = (1-\eta_c\mu)^K`, :math:`a_s = 1-\eta_s\mu`,
    :math:`S = \sum_{j<K}(1-\eta_c\mu)^{2j}`.
    """
    a_c = (1 - step_client * mu) ** local_steps
    a_s = 1 - step_server * mu
    S = sum((1 - step_client * mu) ** (2 * j) for j in range(local_steps))
    contraction = q * a_c ** 2 + (1 - q) * a_s ** 2
    if not contraction < 1:
        raise ValueError("the step sizes do not contract: no stationary error")
    inject = q * step_client ** 2 * sigma2 * S / n_sampled + (1 - q) * step_server ** 2 * sigma_s2
    return inject / (1 - contraction)
