r"""Theorem 1 of SubTrunc, the self-bounding step before eq. (21) (part ``self_bounding`` of
:data:`THM1`): :math:`\sum_i\|\nabla f_i(w)\|^2 \le 2L\sum_i(f_i(w) - f_i^*) \le 2nLf(w)`
for nonnegative L-smooth f_i (spec V8)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim

from ..toy_problems import random_cosine, random_least_squares
from . import THM1


@claim("subtrunc.thm1.self_bounding", ref="Thm 1, proof (before eq. (21))", kind="proof-step",
       expected="holds", result=THM1, parts=("self_bounding",),
       statement="sum_i ||grad f_i(w)||^2 <= 2L sum_i (f_i(w) - f_i*) <= 2 n L f(w) for "
                 "nonnegative L-smooth f_i.",
       quick=dict(n_instances=20, n_points=50), full=dict(n_instances=200, n_points=500))
def self_bounding(*, rng, n_instances, n_points):
    """Heterogeneous least squares + ridge (f_i* in closed form) and nonconvex cosine sums
    (f_i* = 0), random w. Both links are measured (ratio to the next term <= 1). Expected
    ``holds``; tolerance: rounding (1e-9 relative)."""
    worst, instances = np.zeros(2), []
    for j, r in enumerate(rng.spawn(n_instances)):
        n, d = int(r.integers(2, 30)), int(r.integers(1, 12))
        prob = random_least_squares(r, n, d) if j % 2 == 0 else random_cosine(r, n, d)
        instances.append(dict(problem=prob, L=prob.L))
        W = np.broadcast_to(r.normal(size=(n_points, 1, d)) * 3, (n_points, n, d))
        grad_sq = (prob.gradients(W) ** 2).sum(axis=(-1, -2))
        vals = prob.values(W)
        mid = 2 * prob.L * (vals - prob.minima()).sum(axis=-1)
        top = 2 * n * prob.L * vals.mean(axis=-1)
        worst = np.maximum(worst, [np.max(grad_sq / mid), np.max(mid / top)])
    return Evidence(measured=worst, theoretical=[1.0, 1.0], relation="<=", instance=instances,
                    tolerance=Tolerance.rounding(1e-9, "ratios of float64 sums"),
                    details={"max_ratio_first_link": worst[0], "max_ratio_second_link": worst[1]})
