r"""Replayed witnesses for SAFARI's heterogeneous one-round worst case (strongly convex).

One-dimensional quadratic clients :math:`f_i(x) = \tfrac\lambda2 (x - c_i)^2` with a common
curvature :math:`\mu \le \lambda \le L` and :math:`\sum_i c_i = 0` (so :math:`x^\star = 0`)
are in the class; :math:`\|\nabla f_i - \nabla F\|^2 = \lambda^2 c_i^2` is constant in
:math:`x`, so the heterogeneity bound holds with
:math:`\sigma_G^2 = \lambda^2 \max_i c_i^2`. The offsets push the eligible clients one way
(:math:`c_i = c`) and the others the other way (mean zero), the extremal direction of a
biased sampled set. From :math:`x_0 = 1` the project's SAFARI (``flbounds.algorithms.safari``,
noise-free plans) runs one server round and one client round
per drawable set; the exact expectation over the coin and the set is the replayed value. The
witness is the best one over a grid of :math:`(\lambda, c)` whose state meets the optional
state constraint (``state_constraint=(a, b)``, as
:func:`flbounds.pep.server_hetero.safari_hetero_rate` imposes it) for every drawable set: above
a printed bound it is a counterexample on an instance of the class; below, a lower bound on
the class's worst case.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .server_hetero import sampled_sets
from .server_steps import check_state_constraint


@dataclass(frozen=True)
class HeteroWitness:
    """``replayed``: exact E||x_1 - x*||^2 of the project's SAFARI on the instance
    (``curvature``, ``offsets``) from ``x_0 = 1``; ``sigma_g2`` its heterogeneity constant;
    ``meets_state_constraint`` False only for the empty witness (no grid point meets it)."""

    replayed: float
    curvature: float
    offsets: tuple
    sigma_g2: float
    meets_state_constraint: bool

    def as_dict(self) -> dict:
        return dict(replayed=self.replayed, curvature=self.curvature,
                    offsets=list(self.offsets), sigma_g2=self.sigma_g2,
                    meets_state_constraint=self.meets_state_constraint)


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


def _meets(curvature, offsets, masks, probs, a, b, x0=1.0):
    """The state constraint a ||grad F||^2 - b G(S) <= 0 for every drawable S, at x0."""
    g3 = (curvature * (x0 - offsets.mean())) ** 2
    ok = True
    for mask, p in zip(masks, probs, strict=True):
        cs = offsets[mask]
        g4 = float(np.mean(curvature / 2 * ((x0 - cs) ** 2 - cs**2)))
        ok = ok and (p <= 0 or a * g3 - b * g4 <= 0)
    return bool(ok)


def safari_hetero_witness(mu, L, q, local_steps, step_client, step_server, n_clients, *,
                          n_sampled=None, eligible=None, sigma_g2_ratio=0.0,
                          state_constraint=None, n_grid=21) -> HeteroWitness:
    """Best replayed 1-D quadratic witness on an ``n_grid`` x ``2 n_grid`` grid of curvatures
    in [mu, L] and offsets with sigma_G^2 <= sigma_g2_ratio whose state meets
    ``state_constraint`` (``(a, b)`` or None; module docstring)."""
    constraint = check_state_constraint(state_constraint)
    masks, probs = sampled_sets(n_clients, n_sampled, eligible)
    elig = np.flatnonzero(masks.any(axis=0))
    best = None
    for lam in np.linspace(mu, L, n_grid):
        top = np.sqrt(sigma_g2_ratio) / lam
        for c in np.linspace(-top, top, 2 * n_grid):
            off = _offsets(n_clients, elig, c)
            off *= min(1.0, top / max(np.max(np.abs(off)), 1e-300))  # sigma_G^2 <= s
            if constraint is not None and not _meets(lam, off, masks, probs, *constraint):
                continue
            value = replay_round(lam, off, masks, probs, q=q, local_steps=local_steps,
                                 step_client=step_client, step_server=step_server)
            if best is None or value > best.replayed:
                best = HeteroWitness(value, float(lam), tuple(off.tolist()),
                                     float(lam**2 * np.max(off**2)), True)
    return best if best is not None else HeteroWitness(0.0, float("nan"), (), 0.0, False)


__all__ = ["HeteroWitness", "replay_round", "safari_hetero_witness"]
