r"""Lemmas 1 and 2 of FOCUS (FedAvg's descent and consensus lemmas, Appendix D.2).

Setting of Appendix D: the virtual form (41)-(43), where every client runs the local steps
from the last averaged model and :math:`\bar x_k = q^\top \mathbf x_k`; :math:`F` is the mean
of the :math:`f_i`, :math:`\delta_q^2 = \sup_x \|\sum_i q_i \nabla f_i(x) - \nabla F(x)\|^2`
(the reading of (37) that the proofs use) and :math:`\sigma_G^2 = \sup_x \max_i
\|\nabla f_i(x) - \nabla F(x)\|^2` (Assumption 5).

Assumption 5 bounds the gradient dissimilarity for every x, so for quadratics it forces one
shared Hessian: :math:`f_i(x) = \tfrac12 x^\top A x - b_i^\top x`. Both constants are then
exact, :math:`\delta_q^2 = \|\sum_i (q_i - 1/N) b_i\|^2` and :math:`\sigma_G^2 = \max_i
\|b_i - \bar b\|^2`. The weights q come from weighted sampling without replacement (Case 3
of Assumption 1), so :math:`\sum_i q_i = 1` exactly and q is not uniform.

The client models inside a round are produced by the project's FedAvg (one-client plans of
t local steps from the averaged model), so a wrong local step reaches these claims.
Both lemmas bound deterministic quantities of a state; the only tolerance is rounding.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import fedavg
from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import WeightedWithoutReplacement
from flbounds.problems import shared_hessian_quadratics

from ..predicates import at_most, inv
from .assumptions import a1, a2, a3, a5, eq37


@hypothesis("step", "eta <= 1/(3L)")
def lemma1_step(*, step, L):
    return at_most(step, 1 / (3 * L))


@hypothesis("step", "eta <= 1/(4(tau-1)L)")
def lemma2_step(*, step, L, tau):
    return at_most(step, inv(4 * (tau - 1) * L))


LEMMA1 = result(
    "focus.lemma1", ref="Lemma 1", title="FedAvg descent lemma",
    parts={"descent": "eqs. (49)/(53): ||x_bar - eta q'grad f(x) - x*||^2 <= (1 - eta mu/2)"
                      "||x_bar - x*||^2 + (5 eta L^2/mu) sum_i q_i ||x_bar - x_i||^2 + "
                      "(5 eta/mu) delta_q^2"},
    hypotheses=(a1, a2, a3, a5, eq37, lemma1_step))

LEMMA2 = result(
    "focus.lemma2", ref="Lemma 2", title="FedAvg consensus error",
    parts={"x": "eq. (54): sum_i q_i ||x_bar_k - x_{k,i}||^2 <= 8 eta^2 (tau-1)^2 "
                "(delta_q^2 + sigma_G^2)",
           "y": "eq. (55): sum_i q_i ||y_bar_k - y_{k,i}||^2 <= 8 eta^2 tau^2 "
                "(delta_q^2 + sigma_G^2)"},
    hypotheses=(a1, a2, a5, eq37, lemma2_step))


def lemma2_x_bound(*, step, tau, heterogeneity):
    """Right side of (54): 8 eta^2 (tau-1)^2 (delta_q^2 + sigma_G^2)."""
    return 8 * step**2 * (tau - 1) ** 2 * heterogeneity


def lemma2_y_bound(*, step, tau, heterogeneity):
    """Right side of (55): 8 eta^2 tau^2 (delta_q^2 + sigma_G^2)."""
    return 8 * step**2 * tau**2 * heterogeneity


def fedavg_instance(problem, q, delta_q2, sigma_g2, **more):
    """The values Lemmas 1-2 read: Case 3 weights q (sum 1, so q_hat = q), the problem and
    its constants, delta_q^2 and sigma_G^2."""
    return dict(q=q, q_hat=q, problem=problem, L=problem.L, mu=problem.mu, delta_q2=delta_q2,
                sigma_g2=sigma_g2, **more)

# relative rounding of sums of O(N d) products of O(1) numbers, with margin
ROUNDING = 1e-12
# (n_clients, dim, mu, L): a scalar case (mu = L), ill- and well-conditioned ones
SHAPES = ((3, 1, 1.0, 1.0), (4, 3, 0.1, 1.0), (5, 4, 1.0, 2.0), (6, 2, 0.01, 1.0))


def entrywise(lhs, rhs, rel=None, floor=0.0):
    """Rounding tolerance per entry: ``rel`` x max(|LHS|, |RHS|) + ``floor`` (states span
    many orders of magnitude, so one scale for all entries would hide a violation at a small
    state; ``floor`` covers quantities that are exactly 0, e.g. a consensus at tau = 1)."""
    scale = np.maximum(np.abs(lhs), np.abs(rhs))
    return Tolerance((ROUNDING if rel is None else rel) * scale + floor, "rounding",
                     "relative to max(|LHS|, |RHS|) per entry (+ an absolute floor where an "
                     "exact zero is compared); float64 sums of <= 10^4 terms err by < 1e-12 "
                     "relative even with 10^3-fold cancellation")


def _instance(rng, n_clients, dim, mu, L):
    """Shared-Hessian quadratics, weighted participation (sum q = 1), exact delta_q^2,
    sigma_G^2."""
    problem = shared_hessian_quadratics(rng, n_clients, dim, mu=mu, L=L, heterogeneity=1.0)
    weights = rng.uniform(0.2, 1.0, size=n_clients)
    q = WeightedWithoutReplacement(weights, max(1, n_clients // 2)).aggregation_weights()
    b = np.asarray(problem.b)
    delta_q2 = float(np.sum((q @ b - b.mean(axis=0)) ** 2))
    sigma_g2 = float(np.max(np.sum((b - b.mean(axis=0)) ** 2, axis=1)))
    return problem, q, delta_q2, sigma_g2


def local_models(problem, x_start, *, step, local_steps):
    r"""Client models of the virtual form after t = 0..local_steps local GD steps from the
    averaged model ``x_start``: shape (local_steps + 1, N, d), computed by
    :func:`flbounds.algorithms.fedavg` on one-client plans of ``local_steps`` rounds of one
    local step: the server average of one client is its model, so round t's iterate is the
    model after t local steps (the bits of one round of t local steps)."""
    n = problem.n_clients
    out = np.empty((local_steps + 1, n, problem.dim))
    for i in range(n):
        plan = np.zeros((local_steps, n), dtype=bool)
        plan[:, i] = True
        out[:, i] = fedavg(problem, plan, step=step, local_steps=1, x0=x_start).x
    return out


def local_models_together(problem, x_start, *, step, local_steps):
    """:func:`local_models` with every client's local GD step in one library call per step
    (:meth:`client_gradients` of all clients at their models): the same local steps
    :math:`z \\leftarrow z - \\eta\\nabla f_i(z)`, shape (local_steps + 1, N, d)."""
    n = problem.n_clients
    out = np.empty((local_steps + 1, n, problem.dim))
    out[0] = x_start
    for t in range(local_steps):
        out[t + 1] = out[t] - step * problem.client_gradients(out[t])
    return out


def _weighted_consensus(q, models):
    """sum_i q_i ||q'X - x_i||^2 for each phase: models (T, N, d) -> (T,)."""
    mean = np.einsum("i,tid->td", q, models)
    return np.einsum("i,ti->t", q, np.sum((models - mean[:, None, :]) ** 2, axis=2))


def _stacks(rng, problem, step, tau, n_states):
    """Reachable stacks (phases 0..tau-1 of a round) and free stacks (client spread on a
    log grid 1e-3..10 around a server offset on the same grid). The reachable ones from
    :func:`local_models_together` (all clients' local steps in one call; the one-client
    FedAvg runs of :func:`local_models` to rounding, at a tenth of the cost)."""
    n, d = problem.n_clients, problem.dim
    for _ in range(n_states):
        a, s = 10 ** rng.uniform(-3, 1, size=2)
        start = problem.x_star + a * rng.standard_normal(d)
        yield from local_models_together(problem, start, step=step, local_steps=tau)[:tau]
        yield start + s * rng.standard_normal((n, d))


def lemma1_sides(problem, q, delta_q2, X, step):
    """(LHS, RHS) of (49) at the stacked state X (N, d)."""
    mu, L = problem.mu, problem.L
    x_bar = q @ X
    lhs = float(np.sum((x_bar - step * (q @ problem.client_gradients(X)) - problem.x_star) ** 2))
    spread = float(q @ np.sum((X - x_bar) ** 2, axis=1))
    rhs = ((1 - step * mu / 2) * float(np.sum((x_bar - problem.x_star) ** 2))
           + 5 * step * L**2 / mu * spread + 5 * step / mu * delta_q2)
    return lhs, rhs


def lemma1_sides_batched(problem, q, delta_q2, X, step):
    """:func:`lemma1_sides` at every state of ``X`` (B, N, d) at once, (B,) each: the same
    formulas over a batch (one gradient call), equal to rounding."""
    mu, L = problem.mu, problem.L
    b, n, d = X.shape
    x_bar = np.einsum("i,bid->bd", q, X)
    grads = problem.client_gradients(X.reshape(b * n, d), clients=np.tile(np.arange(n), b))
    drift = x_bar - step * np.einsum("i,bid->bd", q, grads.reshape(b, n, d)) - problem.x_star
    spread = np.einsum("i,bi->b", q, np.sum((X - x_bar[:, None, :]) ** 2, axis=2))
    rhs = ((1 - step * mu / 2) * np.sum((x_bar - problem.x_star) ** 2, axis=1)
           + 5 * step * L**2 / mu * spread + 5 * step / mu * delta_q2)
    return np.sum(drift**2, axis=1), rhs


@claim("focus.lemma1.fedavg_descent", ref="Lemma 1, eqs. (49)/(53)", kind="statement",
       expected="holds", result=LEMMA1, parts=("descent",),
       statement="eta <= 1/(3L): ||x_bar - eta q'grad f(x) - x*||^2 <= (1 - eta mu/2)"
                 "||x_bar - x*||^2 + (5 eta L^2/mu) sum_i q_i ||x_bar - x_i||^2 "
                 "+ (5 eta/mu) delta_q^2.",
       quick=dict(n_states=8, taus=(1, 3), n_steps=4),
       full=dict(n_states=200, taus=(1, 2, 5, 10), n_steps=8))
def fedavg_descent(*, rng, n_states, taus, n_steps):
    """Every shape of SHAPES, steps on a log grid from 1/(100L) to the lemma's 1/(3L), stacks
    reachable by FedAvg inside a round and free stacks. Assumptions 1-3 hold (Case 3
    weights, f_i L-smooth, F mu-strongly convex; A5 is what makes delta_q finite). Reported:
    the largest LHS/RHS. Tolerance: rounding, 1e-12 relative per entry. The sides are
    computed over each (shape, step, tau)'s states at once (lemma1_sides_batched)."""
    lhs, rhs, per_shape, instances = [], [], [], []
    for shape in SHAPES:
        problem, q, delta_q2, sigma_g2 = _instance(rng, *shape)
        for step in np.geomspace(1 / (100 * problem.L), 1 / (3 * problem.L), n_steps):
            instances.append(fedavg_instance(problem, q, delta_q2, sigma_g2, step=float(step)))
            for tau in taus:
                stacks = np.array(list(_stacks(rng, problem, step, tau, n_states)))
                left, right = lemma1_sides_batched(problem, q, delta_q2, stacks, step)
                lhs.append(left)
                rhs.append(right)
        per_shape.append(dict(n_clients=shape[0], dim=shape[1], mu=problem.mu, L=problem.L,
                              delta_q2=delta_q2, q=q))
    lhs, rhs = np.concatenate(lhs), np.concatenate(rhs)
    return Evidence(measured=lhs, theoretical=rhs, relation="<=",
                    tolerance=entrywise(lhs, rhs),
                    details={"max_ratio": float(np.max(lhs / rhs)), "n_states": int(lhs.size),
                             "instances": per_shape},
                    instance=instances)


def _consensus_rows(rng, n_states, taus, n_steps):
    """Per (shape, tau, step): the max over states of the x-consensus (phases 0..tau-1) and
    the y-consensus (phases 1..tau), with the bounds (54) and (55); the local models from
    :func:`local_models_together` (the one-client runs to rounding)."""
    rows, instances = [], []
    for shape in SHAPES:
        problem, q, delta_q2, sigma_g2 = _instance(rng, *shape)
        L = problem.L
        for tau in taus:
            top = np.inf if tau == 1 else 1 / (4 * (tau - 1) * L)
            for step in np.geomspace(1 / (100 * L), min(top, 1 / (3 * L)), n_steps):
                instances.append(fedavg_instance(problem, q, delta_q2, sigma_g2, tau=tau,
                                                 step=float(step)))
                x_cons, y_cons = 0.0, 0.0
                for _ in range(n_states):
                    start = problem.x_star + 10 ** rng.uniform(-3, 1) * rng.standard_normal(
                        problem.dim)
                    cons = _weighted_consensus(q, local_models_together(
                        problem, start, step=step, local_steps=tau))
                    x_cons = max(x_cons, float(cons[:tau].max()))
                    y_cons = max(y_cons, float(cons[1:].max()))
                heterogeneity = delta_q2 + sigma_g2
                rows.append(dict(n_clients=shape[0], dim=shape[1], tau=tau, step=float(step),
                                 x_consensus=x_cons, y_consensus=y_cons,
                                 bound_54=lemma2_x_bound(step=step, tau=tau,
                                                         heterogeneity=heterogeneity),
                                 bound_55=lemma2_y_bound(step=step, tau=tau,
                                                         heterogeneity=heterogeneity)))
    return rows, instances


def _consensus_evidence(rows_and_instances, measured_key, bound_key):
    rows, instances = rows_and_instances
    measured = np.array([r[measured_key] for r in rows])
    bound = np.array([r[bound_key] for r in rows])
    ratio = np.divide(measured, bound, out=np.zeros_like(bound), where=bound > 0)
    return Evidence(measured=measured, theoretical=bound, relation="<=",
                    tolerance=entrywise(measured, bound, floor=1e-20),
                    details={"max_ratio": float(ratio.max()), "rows": rows},
                    instance=instances)


@claim("focus.lemma2.fedavg_consensus_x", ref="Lemma 2, eq. (54)", kind="statement",
       expected="holds", result=LEMMA2, parts=("x",),
       statement="eta <= 1/(4(tau-1)L): sum_i q_i ||x_bar_k - x_{k,i}||^2 <= "
                 "8 eta^2 (tau-1)^2 (delta_q^2 + sigma_G^2) for every k.",
       quick=dict(n_states=4, taus=(1, 2, 4), n_steps=3),
       full=dict(n_states=50, taus=(1, 2, 3, 5, 10), n_steps=8))
def fedavg_consensus_x(*, rng, n_states, taus, n_steps):
    """Every k inside a round (phases 0..tau-1 from the averaged model; at the averaging step
    the consensus is 0), steps on a log grid from 1/(100L) to min{1/(4(tau-1)L), 1/(3L)}
    (Theorem 3's range). With one shared Hessian the consensus is at most eta^2 (tau-1)^2
    sum_i q_i ||b_i - b_q||^2, so the printed factor 8 leaves a ratio <= 1/8: only a bug that
    inflates the client spread ~3x shows. Tolerance: rounding."""
    return _consensus_evidence(_consensus_rows(rng, n_states, taus, n_steps),
                               "x_consensus", "bound_54")


@claim("focus.lemma2.fedavg_consensus_y", ref="Lemma 2, eq. (55)", kind="statement",
       expected="holds", result=LEMMA2, parts=("y",),
       statement="eta <= 1/(4(tau-1)L): sum_i q_i ||y_bar_k - y_{k,i}||^2 <= "
                 "8 eta^2 tau^2 (delta_q^2 + sigma_G^2) for every k.",
       quick=dict(n_states=4, taus=(1, 2, 4), n_steps=3),
       full=dict(n_states=50, taus=(1, 2, 3, 5, 10), n_steps=8))
def fedavg_consensus_y(*, rng, n_states, taus, n_steps):
    """y_{k+1} = x_k - eta grad f(x_k) is the stack one local step later, so its phases are
    1..tau (phase tau is the models pushed before averaging). Same instances and grid as
    focus.lemma2.fedavg_consensus_x. Tolerance: rounding."""
    return _consensus_evidence(_consensus_rows(rng, n_states, taus, n_steps),
                               "y_consensus", "bound_55")
