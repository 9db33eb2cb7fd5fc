r"""Shared pieces of the FOCUS claims and figures: the theorems' step-size conditions, Monte
Carlo runs of FOCUS, and one round of :func:`flbounds.algorithms.focus` from a given state with
the client models exposed (for the one-step lemma checks).

Conventions: ``q`` is the exact aggregation weight :math:`E[1\{i\in S\}/|S|]` (0 for the empty
set), as in FOCUS's Assumption 1; ``q_min`` its minimum. :math:`1/(\tau - 1) = \infty` when
:math:`\tau = 1`.
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms import FocusState, focus, sg_focus
from flbounds.ledger.engine.runs import reused_run
from verify.replay import generator_state, seed_of

from .thm1 import (
    thm1a_conditions,
    thm1a_proof_conditions,
    thm1b_conditions,
    thm1c_conditions,
)


def _inv(x):
    return np.inf if x == 0 else 1.0 / x


def thm1a_step_printed(mu, L, n, tau, q_min):
    """Theorem 1(a) as printed: min{3 mu/(27 N L^2), 1/(3L(tau-1)), q^{3/2}/(8 L sqrt N)}."""
    return min(thm1a_conditions(mu, L, n, tau, q_min).values())


def thm1a_step_proof(mu, L, n, tau, q_min):
    """The conservative proof-consistent condition of spec section 7.8 (with (110) as
    re-derived: q_min/(3N(8L^2/mu + mu/2)), and Lemmas 3-4's own conditions)."""
    return min(thm1a_proof_conditions(mu, L, n, tau, q_min).values())


def thm1b_step(beta, L, n, tau, q_min):
    """Theorem 1(b) printed condition plus the proof's 1/(4LN) and 1/(2(tau-1)LN)."""
    return min(thm1b_conditions(beta, L, n, tau, q_min).values())


def thm1c_step(L, n, tau, q_min):
    """Theorem 1(c): min{1/(2L(tau-1)), q^{3/2}/(8L sqrt N), q/(16 L sqrt(2N)), 1/(4LN)}."""
    return min(thm1c_conditions(L, n, tau, q_min).values())


def thm4_step(mu, L, n, tau, q_min):
    """Theorem 4 (SG-FOCUS, strongly convex)."""
    return min(2 * q_min / (3 * n * (16 * L**2 / mu + mu / 2)),
               q_min**1.5 / (4 * L * np.sqrt(6 * n)),
               _inv(8 * np.sqrt(2) * L * (tau - 1) / q_min**1.5),
               _inv(128 * (tau - 1) ** 2 * L**2 * n / mu))


def thm5_step(beta, L, n, tau, q_min):
    """Theorem 5 (SG-FOCUS, PL) plus the proof's 3q/(32N), 1/(4LN), 1/(2(tau-1)LN)."""
    return min(q_min / (3 * beta * n * (4 - q_min)), q_min / (16 * L**2),
               q_min**1.5 / (4 * L * np.sqrt(6 * n)),
               _inv(8 * np.sqrt(2) * L * (tau - 1) / q_min**1.5),
               3 * q_min / (32 * n), 1 / (4 * L * n), _inv(2 * (tau - 1) * L * n))


def lemma3_step(mu, L, tau):
    """Lemma 3 and the conditions its proof uses: 1/(3L(tau-1)), 1/(2L sqrt(tau-1)), 1/(3 mu)."""
    return min(_inv(3 * L * (tau - 1)), _inv(2 * L * np.sqrt(tau - 1)), 1 / (3 * mu))


def lemma4_step(L, n, tau, q_min):
    """Lemma 4: min{q^{3/2}/(8L sqrt N), q^{3/2}/(8L(tau-1))}."""
    return min(q_min**1.5 / (8 * L * np.sqrt(n)), _inv(8 * L * (tau - 1) / q_min**1.5))


def focus_squared_errors(problem, process, rng, *, n_runs, n_rounds, step, local_steps,
                         x0, init="gradient"):
    """Squared errors ||x_r - x*||^2, shape (n_runs, n_rounds + 1), of independent runs (one
    child of ``rng`` each; ``rng`` may also be the list of children)."""
    children = rng if isinstance(rng, list) else rng.spawn(n_runs)
    out = np.empty((n_runs, n_rounds + 1))
    for k, child in enumerate(children):
        plan = process.plan(child, n_rounds)
        xs = focus(problem, plan, step=step, local_steps=local_steps, x0=x0, init=init).x
        out[k] = np.sum((xs - problem.x_star) ** 2, axis=1)
    return out


def reused_squared_errors(rng, problem, process, steps, *, n_runs, n_rounds, local_steps, x0):
    """:func:`focus_squared_errors` at each step of ``steps`` (name -> step), the runs of each
    on ``n_runs`` children spawned from ``rng`` in that order (spawned whether or not the runs
    are computed), named by ``rng``'s seed (it has spawned no child yet; the problem may be
    drawn from it): a claim drawing from another claim's stream
    (:func:`verify.replay.shared_generator`) reads that claim's runs, computed once per ledger
    run (:func:`flbounds.ledger.engine.runs.reused_run`). Returns name -> errors."""
    seed, state = seed_of(rng), generator_state(rng)
    children = {name: rng.spawn(n_runs) for name in steps}
    description = dict(run="focus_squared_errors", seed=seed, state=state, n_runs=int(n_runs),
                       x_star=np.asarray(problem.x_star, dtype=float).tolist(),
                       inclusion=np.asarray(process.inclusion_probabilities()).tolist(),
                       n_rounds=int(n_rounds), local_steps=int(local_steps),
                       x0=np.asarray(x0, dtype=float).tolist(),
                       steps={name: float(step) for name, step in steps.items()})
    return reused_run(description, lambda: {
        name: focus_squared_errors(problem, process, children[name], n_runs=n_runs,
                                   n_rounds=n_rounds, step=step, local_steps=local_steps, x0=x0)
        for name, step in steps.items()}, code=__name__)


class RoundState:
    """FOCUS state between rounds with the client models kept: server model ``x`` (after its
    step, i.e. :math:`\\bar x_{r\\tau+1}`), server model before the step ``x_prev``
    (:math:`\\bar x_{r\\tau}`), tracker ``y``, stored gradients ``g`` and client models
    ``models`` (:math:`x_{r\\tau,i}`, where ``g`` was evaluated)."""

    def __init__(self, x, x_prev, y, g, models):
        self.x, self.x_prev, self.y, self.g, self.models = x, x_prev, y, g, models

    def consensus_error(self):
        r""":math:`\|\mathbb 1\bar x_{r\tau+1} - \mathbf x_{r\tau}\|_F^2` over all N + 1 rows."""
        return float(np.sum((self.x - self.x_prev) ** 2) + np.sum((self.x - self.models) ** 2))


def consistent_state(problem, models, x_prev, step):
    """A reachable state: stored gradients at the client models, y = sum g, x = x_prev - eta y."""
    g = problem.client_gradients(models)
    y = g.sum(axis=0)
    return RoundState(x_prev - step * y, x_prev, y, g, models)


def focus_round(problem, state, mask, step, local_steps, noise=None):
    """One FOCUS round from ``state`` with participation ``mask``: the library's
    :func:`~flbounds.algorithms.focus` (or :func:`~flbounds.algorithms.sg_focus` with
    ``noise`` of shape (N, local_steps, d)) resumed from the state; returns the next
    state."""
    start = FocusState(state.x, state.y, state.g, state.models)
    plan = np.asarray(mask, dtype=bool)[None]
    if noise is None:
        trace = focus(problem, plan, step=step, local_steps=local_steps, start=start)
    else:
        trace = sg_focus(problem, plan, np.asarray(noise)[None], step=step,
                         local_steps=local_steps, start=start)
    return RoundState(trace.x[1], state.x, trace.y[1], trace.g, trace.models)


class RoundOutcomes:
    """The next states of one FOCUS round from one state, one per participation mask, as
    arrays: server models ``x`` (M, d) after the server step, the server model before it
    ``x_prev`` (d,) (the state's ``x``), the client models ``models`` (M, N, d) where the
    stored gradients now sit, and the trackers ``y`` (M, d) when known. Row m is
    :func:`focus_round`'s state for ``masks[m]``."""

    def __init__(self, x, x_prev, models, y=None):
        self.x, self.x_prev, self.models, self.y = x, x_prev, models, y

    def consensus_error(self) -> np.ndarray:
        """:meth:`RoundState.consensus_error` of every next state, shape (M,)."""
        return (np.sum((self.x - self.x_prev) ** 2, axis=1)
                + np.sum((self.x[:, None, :] - self.models) ** 2, axis=(1, 2)))

    def spread(self) -> np.ndarray:
        r""":math:`\sum_i\|x - z_i\|^2` of every next state, shape (M,)."""
        return np.sum((self.x[:, None, :] - self.models) ** 2, axis=(1, 2))


def focus_round_outcomes(problem, state, masks, step, local_steps, noise=None) -> RoundOutcomes:
    """:func:`focus_round` for every mask of ``masks`` (M, N) from one library run.

    A client's local phase depends on the state and its own data only, not on who else
    joins: one round of :func:`~flbounds.algorithms.focus` (or ``sg_focus`` with ``noise``)
    in which every client participates gives each client's new model and push
    :math:`v_i = h_i - g_i`; the round with participants S then has
    :math:`y = y_{old} + \\sum_{i\\in S} v_i` (summed in client order, as the library does)
    and :math:`x = x_{old} - \\eta y`, and non-participants keep their models.
    """
    masks = np.asarray(masks, dtype=bool)
    full = focus_round(problem, state, np.ones(problem.n_clients, dtype=bool), step,
                       local_steps, noise)
    pushes = full.g - state.g
    y = np.empty((masks.shape[0], problem.dim))
    y[:] = state.y
    for i in range(problem.n_clients):
        y += np.where(masks[:, i, None], pushes[i], 0.0)
    x = state.x - step * y
    models = np.where(masks[:, :, None], full.models, state.models)
    return RoundOutcomes(x, state.x, models, y)


def point_key(inst) -> tuple:
    """A hashable key of a point's values (names, dtypes, shapes and bytes)."""
    key = []
    for name in sorted(inst):
        value = np.asarray(inst[name])
        key.append((name, value.dtype.str, value.shape, value.tobytes()))
    return tuple(key)


def memo_last(func):
    """Remember ``func(inst, rule)``'s last few results by the point's values and the rule: a
    point's predicates (``instance=``) and its ratio build the same round, once."""
    cache: dict = {}

    def wrapper(inst, rule):
        key = (point_key(inst), rule)
        if key not in cache:
            if len(cache) >= 4:
                cache.pop(next(iter(cache)))
            cache[key] = func(inst, rule)
        return cache[key]

    wrapper.__doc__, wrapper.__name__, wrapper.__wrapped__ = func.__doc__, func.__name__, func
    return wrapper
