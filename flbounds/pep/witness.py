r"""Explicit instances rebuilt from an optimal Gram matrix, replayed with ``flbounds.algorithms``.

After a PEP over the class of L-smooth mu-strongly convex *quadratics* is solved, PEPit factors
the Gram matrix into vectors: for each client the points :math:`x_k` where its gradient was
taken, the gradients :math:`g_k` and its minimizer :math:`c`. A quadratic
:math:`f(x) = \tfrac12 (x - c)^\top Q (x - c)` interpolates them iff some symmetric
:math:`\mu I \preceq Q \preceq L I` has :math:`Q (x_k - c) = g_k` (Bousselmi, Hendrickx,
Glineur 2023); :func:`fit_quadratic` finds it (a small SDP, least squares on the residual). The
instance is a :class:`flbounds.problems.Quadratic` (:math:`A_i = Q_i`, :math:`b_i = Q_i c_i`)
and the algorithm is run through the project's own public functions on every participation
pattern, so the ratio is computed exactly (no Monte Carlo) by the code the claims check.

For the general smooth strongly convex class the worst case may not be a quadratic; the
quadratic-class PEP then gives the best quadratic witness, and both values are reported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .sdp import gap_tolerance


@dataclass(frozen=True)
class Witness:
    """A replayed instance: ``replayed`` is the ratio the project's algorithm attains on it,
    ``pep`` the quadratic-class worst case it was built from (they agree up to
    ``fit_residual`` and the solver gap); ``A``, ``b``, ``x0`` define the instance.
    ``bracket``: when ``pep`` is a certified upper bound (no accurate solve), the width of its
    bracket down to the solver's primal value, whose Gram matrix the instance was fitted to;
    0 for an accurate solve."""

    replayed: float
    pep: float
    fit_residual: float
    A: np.ndarray
    b: np.ndarray
    x0: np.ndarray
    bracket: float = 0.0

    def as_dict(self) -> dict:
        out = dict(replayed=self.replayed, pep=self.pep, fit_residual=self.fit_residual,
                   A=self.A.tolist(), b=self.b.tolist(), x0=self.x0.tolist())
        return {**out, "bracket": self.bracket} if self.bracket else out


def fit_quadratic(D, G, mu, L):
    r"""Symmetric :math:`\mu I \preceq Q \preceq L I` minimising :math:`\|Q D - G\|_F`.

    ``D`` (d, k): points minus the minimizer, as columns; ``G`` (d, k): the gradients. Returns
    ``(Q, residual)`` with the residual relative to :math:`\|G\|_F`.
    """
    import cvxpy as cp

    D, G = np.asarray(D, float), np.asarray(G, float)
    d = D.shape[0]
    Q = cp.Variable((d, d), symmetric=True)
    eye = np.eye(d)
    problem = cp.Problem(cp.Minimize(cp.norm(Q @ D - G, "fro")),
                         [Q - mu * eye >> 0, L * eye - Q >> 0])
    problem.solve(solver="CLARABEL")
    Qv = 0.5 * (Q.value + Q.value.T)
    w, V = np.linalg.eigh(Qv)
    Qv = (V * np.clip(w, mu, L)) @ V.T  # remove solver round-off outside [mu, L]
    scale = max(np.linalg.norm(G), 1e-300)
    return Qv, float(np.linalg.norm(Qv @ D - G) / scale)


def quadratic_instance(funcs, mu, L):
    """(A, b, worst fit residual) of quadratics interpolating solved PEPit quadratic functions."""
    A, b, residual = [], [], 0.0
    for f in funcs:
        c = f.list_of_stationary_points[0][0].eval()
        pts = [(x.eval() - c, g.eval()) for x, g, _ in f.list_of_points]
        D = np.column_stack([p for p, _ in pts])
        G = np.column_stack([g for _, g in pts])
        Q, res = fit_quadratic(D, G, mu, L)
        A.append(Q)
        b.append(Q @ c)
        residual = max(residual, res)
    return np.array(A), np.array(b), residual


def replay_focus_rounds(problem, process, x0, *, step, local_steps, n_rounds) -> float:
    r"""Exact :math:`E\|x_R - x^\star\|^2/\|x_0 - x^\star\|^2` of ``flbounds.algorithms.focus``
    (``init="gradient"``) on ``problem``, enumerating the participation patterns of R rounds."""
    from flbounds.algorithms import focus
    from flbounds.participation import subset_distribution

    masks, probs = subset_distribution(process)
    keep = probs > 0
    masks, probs = masks[keep], probs[keep]
    x_star = problem.x_star
    total = 0.0
    for combo in itertools.product(range(len(probs)), repeat=n_rounds):
        plan = masks[list(combo)]
        xs = focus(problem, plan, step=step, local_steps=local_steps, x0=x0, init="gradient").x
        total += float(np.prod(probs[list(combo)])) * float(np.sum((xs[-1] - x_star) ** 2))
    return total / float(np.sum((x0 - x_star) ** 2))


def replay_fedavg(problem, process, x0, *, step, local_steps) -> float:
    r"""Exact one-round :math:`E\|x_1 - x^\star\|^2/\|x_0 - x^\star\|^2` of
    ``flbounds.algorithms.fedavg`` on ``problem`` (every participation set)."""
    from flbounds.algorithms import fedavg
    from flbounds.participation import subset_distribution

    masks, probs = subset_distribution(process)
    x_star = problem.x_star
    total = sum(pr * float(np.sum((fedavg(problem, m[None, :], step=step,
                                          local_steps=local_steps, x0=x0).x[-1] - x_star) ** 2))
                for m, pr in zip(masks, probs, strict=True) if pr > 0)
    return total / float(np.sum((x0 - x_star) ** 2))


def focus_rounds_witness(mu, L, p, local_steps, step, n_rounds) -> Witness:
    """Best quadratic witness of :func:`flbounds.pep.focus_rounds_rate`, replayed."""
    from flbounds.participation import Bernoulli
    from flbounds.problems import Quadratic

    from .tracking import focus_rounds_rate

    result, (x0_pt, _, funcs) = focus_rounds_rate(mu, L, p, local_steps, step, n_rounds,
                                                  function_class="quadratic",
                                                  return_problem=True)
    A, b, residual = quadratic_instance(funcs, mu, L)
    x0 = x0_pt.eval()
    ratio = replay_focus_rounds(Quadratic(A, b), Bernoulli(np.asarray(p, float)), x0,
                                step=step, local_steps=local_steps, n_rounds=n_rounds)
    bracket = result.gap if result.status.startswith("certified") else 0.0
    return Witness(replayed=ratio, pep=result.worst, fit_residual=residual, A=A, b=b, x0=x0,
                   bracket=bracket)


def fedavg_witness(mu, L, process, local_steps, step) -> Witness:
    r"""The common-minimizer FedAvg witness, replayed with ``fedavg``: identical 1-d clients
    :math:`f_i(x) = a x^2/2` with :math:`a \in \{\mu, L\}` maximising :math:`|1 - \eta a|`
    (the gradient-descent extremal quadratic; the PEP's value is attained by it). ``pep`` is
    :func:`flbounds.pep.fedavg_rate`'s worst case at the same constants."""
    from flbounds.problems import Quadratic

    from .fedavg import fedavg_rate

    n = process.n_clients
    a = mu if abs(1 - step * mu) >= abs(1 - step * L) else L
    A = np.full((n, 1, 1), float(a))
    b = np.zeros((n, 1))
    x0 = np.ones(1)
    ratio = replay_fedavg(Quadratic(A, b), process, x0, step=step, local_steps=local_steps)
    worst = fedavg_rate(mu, L, n, local_steps, step, process, common_minimizer=True).worst
    return Witness(replayed=ratio, pep=worst, fit_residual=0.0, A=A, b=b, x0=x0)


def witness_tolerance(witness: Witness) -> float:
    """How far a replay may sit from its PEP value: the solver gap tolerance plus the fit
    residual, which enters the ratio to first order (times the ratio and a factor 4 for the
    squared norms over R rounds of tau steps, a conservative constant), plus the bracket of
    a certified ``pep`` (the instance replays the primal point, at most that far below)."""
    return gap_tolerance(witness.pep) + 4 * witness.fit_residual * max(1.0, witness.pep) \
        + witness.bracket
