r"""Replayed witnesses for SAFARI's one-round worst case (identical clients, strongly convex).

A one-dimensional quadratic :math:`F(x) = \lambda x^2/2` with :math:`\mu \le \lambda \le L` is in
the class; from :math:`x_0 = 1` (:math:`x^\star = 0`) one client round and one server round are
run through ``flbounds.algorithms.safari`` (noise-free plans, a single client), and the exact
expectation over the coin is :math:`q e_{client} + (1 - q) e_{server}`. The witness is the
curvature maximising it among those whose state meets the optional state constraint
:math:`a\|\nabla F(x_0)\|^2 - b\,(F(x_0) - F^\star) \le 0` (here :math:`a\lambda^2 - b\lambda/2
\le 0`), as :func:`flbounds.pep.server_steps.safari_rate` imposes it. A replay above a printed
rate is a counterexample on an instance of the class; below it, the witness is a lower bound on
the worst case (the tests check it meets the PEP value where the SDP's worst case is a 1-D
quadratic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .server_steps import check_state_constraint


@dataclass(frozen=True)
class SafariWitness:
    """``replayed``: the exact one-round ratio the project's SAFARI attains on
    :math:`F = \\lambda x^2/2` from :math:`x_0 = 1`; ``meets_state_constraint``: that state
    meets the constraint (False only for the empty witness, when no curvature does)."""

    replayed: float
    curvature: float
    meets_state_constraint: bool

    def as_dict(self) -> dict:
        return dict(replayed=self.replayed, curvature=self.curvature,
                    meets_state_constraint=self.meets_state_constraint)


def _one_round(curvature, client_round, K, eta_c, step):
    from flbounds.algorithms.safari import SafariPlan, safari
    from flbounds.problems import Quadratic

    problem = Quadratic(np.array([[[curvature]]]), np.zeros((1, 1)))
    plan = SafariPlan(np.array([client_round]), np.zeros((1, 1), dtype=np.int64),
                      np.zeros((1, 1, K, 1)), np.zeros((1, 1)))
    x = safari(problem, plan, step_client=eta_c, step_server=step, x0=np.ones(1)).x
    return float(x[-1, 0] ** 2)


def safari_witness(mu, L, q, local_steps, step_client, step_server, *, state_constraint=None,
                   n_grid=201) -> SafariWitness:
    """Best 1-D quadratic witness on ``n_grid`` curvatures in [mu, L] whose state meets
    ``state_constraint`` (``(a, b)`` or None, as ``safari_rate``'s; module docstring)."""
    constraint = check_state_constraint(state_constraint)
    best = None
    for lam in np.linspace(mu, L, n_grid):
        ok = True
        if constraint is not None:
            a, b = constraint
            ok = bool(a * lam**2 - b * lam / 2 <= 0)
        value = q * _one_round(lam, True, local_steps, step_client, step_server) if q > 0 else 0.0
        if q < 1:
            value += (1 - q) * _one_round(lam, False, local_steps, step_client, step_server)
        if ok and (best is None or value > best.replayed):
            best = SafariWitness(value, float(lam), True)
    return best if best is not None else SafariWitness(0.0, float("nan"), False)


__all__ = ["SafariWitness", "safari_witness"]
