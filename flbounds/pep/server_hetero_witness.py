r"""Replayed witnesses for SAFARI's heterogeneous one-round worst case (Theorem 5).

One-dimensional quadratic clients :math:`f_i(x) = \tfrac\lambda2 (x - c_i)^2` with a common
curvature :math:`\mu \le \lambda \le L` and :math:`\sum_i c_i = 0` (so :math:`x^\star = 0`)
are in the class; :math:`\|\nabla f_i - \nabla F\|^2 = \lambda^2 c_i^2` is constant in
:math:`x`, so Assumption 5 holds with :math:`\sigma_G^2 = \lambda^2 \max_i c_i^2`. The offsets
push the eligible clients one way (:math:`c_i = c`) and the others the other way (mean zero),
the extremal direction of a biased sampled set. From :math:`x_0 = 1` the project's SAFARI
(``flbounds.algorithms.safari``, noise-free plans) runs one server round and one client round
per drawable set; the exact expectation over the coin and the set is the replayed value. The
witness is the best one over a grid of :math:`(\lambda, c)` whose state meets the q-condition
for every drawable set: above the printed bound it is a counterexample meeting every
hypothesis; below, a lower bound on the class's worst case.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .server_hetero import sampled_sets
from .server_steps import q_condition_coefficients, thm5_steps


@dataclass(frozen=True)
class HeteroWitness:
    """``replayed``: exact E||x_1 - x*||^2 of the project's SAFARI on the instance
    (``curvature``, ``offsets``) from ``x_0 = 1``; ``sigma_g2`` its Assumption 5 constant."""

    replayed: float
    curvature: float
    offsets: tuple
    sigma_g2: float
    meets_q_condition: bool

    def as_dict(self) -> dict:
        return dict(replayed=self.replayed, curvature=self.curvature,
                    offsets=list(self.offsets), sigma_g2=self.sigma_g2,
                    meets_q_condition=self.meets_q_condition)


def replay_round(curvature, offsets, masks, probs, *, q, local_steps, step_client,
                 step_server, x0=1.0) -> float:
    r"""Exact :math:`E\|x_1 - x^\star\|^2` of ``flbounds.algorithms.safari`` on the 1-D
    clients :math:`\tfrac\lambda2 (x - c_i)^2` (every round type and drawable set)."""
    from flbounds.algorithms.safari import SafariPlan, safari
    from flbounds.problems import Quadratic

    c = np.asarray(offsets, float)
    n = c.size
    problem = Quadratic(np.full((n, 1, 1), float(curvature)), (curvature * c)[:, None])
    x_star = float(problem.x_star[0])

    def run(client_round, members):
        m = members.size
        plan = SafariPlan(np.array([client_round]), members[None, :].astype(np.int64),
                          np.zeros((1, m, local_steps, 1)), np.zeros((1, 1)))
        x = safari(problem, plan, step_client=step_client, step_server=step_server,
                   x0=np.array([x0])).x
        return float((x[-1, 0] - x_star) ** 2)

    value = (1 - q) * run(False, np.flatnonzero(masks[0])) if q < 1 else 0.0
    if q > 0:
        value += q * sum(p * run(True, np.flatnonzero(mask))
                         for mask, p in zip(masks, probs, strict=True) if p > 0)
    return value


def _offsets(n, eligible, c):
    out = np.full(n, c)
    others = np.setdiff1d(np.arange(n), eligible)
    if others.size:
        out[others] = -c * len(eligible) / others.size
    else:
        out[:] = 0.0 if n == 1 else np.where(np.arange(n) % 2 == 0, c, -c)
        out -= out.mean()
    return out


def _meets(curvature, offsets, masks, probs, a, b, d, x0=1.0):
    """q-condition a G3 - b G4(S) <= 0 (and d > 0) for every drawable S, at x0."""
    g3 = (curvature * (x0 - offsets.mean())) ** 2
    ok = d > 0
    for mask, p in zip(masks, probs, strict=True):
        cs = offsets[mask]
        g4 = float(np.mean(curvature / 2 * ((x0 - cs) ** 2 - cs**2)))
        ok = ok and (p <= 0 or a * g3 - b * g4 <= 0)
    return bool(ok)


def safari_hetero_witness(mu, L, q, local_steps, step_server, n_clients, *, n_sampled=None,
                          eligible=None, sigma_g2_ratio=0.0, q_condition="printed",
                          n_grid=21) -> HeteroWitness:
    """Best replayed 1-D quadratic witness on an ``n_grid`` x ``2 n_grid`` grid of curvatures
    in [mu, L] and offsets with sigma_G^2 <= sigma_g2_ratio (module docstring)."""
    masks, probs = sampled_sets(n_clients, n_sampled, eligible)
    elig = np.flatnonzero(masks.any(axis=0))
    eta_c, eta_bar = thm5_steps(mu, L, local_steps, step_server)
    a, b, d = q_condition_coefficients(mu, L, q, eta_bar, q_condition == "corrected")
    best = None
    for lam in np.linspace(mu, L, n_grid):
        top = np.sqrt(sigma_g2_ratio) / lam
        for c in np.linspace(-top, top, 2 * n_grid):
            off = _offsets(n_clients, elig, c)
            off *= min(1.0, top / max(np.max(np.abs(off)), 1e-300))  # sigma_G^2 <= s
            if q_condition is not None and not _meets(lam, off, masks, probs, a, b, d):
                continue
            value = replay_round(lam, off, masks, probs, q=q, local_steps=local_steps,
                                 step_client=eta_c, step_server=step_server)
            if best is None or value > best.replayed:
                best = HeteroWitness(value, float(lam), tuple(off.tolist()),
                                     float(lam**2 * np.max(off**2)), True)
    return best if best is not None else HeteroWitness(0.0, float("nan"), (), 0.0, False)


__all__ = ["HeteroWitness", "replay_round", "safari_hetero_witness"]
