r"""One FOCUS round from a frozen state, with the exact expectation over the participation
sets: the shared machinery of the Lemma 3 and Lemma 4 claims and their attacks (FOCUS).

A round-r state is frozen: client models :math:`x_{r\tau,i}` (where their stored gradients were
evaluated), the server model before and after its step, :math:`\bar x_{r\tau}`,
:math:`\bar x_{r\tau+1} = \bar x_{r\tau} - \eta \sum_i g_i`. The conditional expectation over
:math:`S_r` is computed EXACTLY by enumerating the :math:`2^N` participation sets with their
probabilities (instead of Monte Carlo), so the only tolerance is rounding (1e-12 relative).
States are random with the server offset and the client spread on log grids (1e-3..10),
covering consensus-dominated and optimality-dominated regimes.
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import SPD, Box, Integers
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import Quadratic, random_quadratics

from .instances import (
    RoundState,
    consistent_state,
    focus_round,
    focus_round_outcomes,
    memo_last,
)

P_LEMMA = np.array([0.3, 0.5, 0.7, 0.9])
ROUNDING = 1e-12


def _states(rng, problem, n_states, step):
    n, d = problem.n_clients, problem.dim
    for _ in range(n_states):
        a, b = 10 ** rng.uniform(-3, 1, size=2)
        x_prev = problem.x_star + a * rng.standard_normal(d)
        models = x_prev + b * rng.standard_normal((n, d))
        yield consistent_state(problem, models, x_prev, step)


def _expect(problem, state, masks, probs, step, tau, fn):
    return sum(pr * fn(focus_round(problem, state, s, step, tau))
               for s, pr in zip(masks, probs, strict=True) if pr > 0)


def _expect_all(problem, state, masks, probs, step, tau, fns):
    """``tuple(_expect(..., fn) for fn in fns)`` bit for bit, from one library round for all
    sets (:func:`~.instances.focus_round_outcomes`, whose row m is :func:`focus_round`'s
    state for set m): each ``fn`` sees set m's next state (server models, tracker and client
    models; its stored gradients are not kept, ``g`` is None) and the weighted values are
    summed in the sets' order."""
    live = np.asarray(probs) > 0
    outcomes = focus_round_outcomes(problem, state, np.asarray(masks)[live], step, tau)
    totals = [0] * len(fns)
    for m, pr in enumerate(np.asarray(probs)[live]):
        after = RoundState(outcomes.x[m], state.x, outcomes.y[m], None, outcomes.models[m])
        totals = [t + pr * fn(after) for t, fn in zip(totals, fns, strict=True)]
    return tuple(totals)


def expect_in_order(problem, state, masks, probs, step, tau, fn):
    """:func:`_expect` bit for bit, from one library round for all sets: ``fn`` maps the
    :class:`~.instances.RoundOutcomes` of the live sets to their values, shape (M,), each
    the value ``_expect``'s observable takes on that set's :func:`focus_round` (the outcomes'
    rows are those rounds' states, bit for bit), and the weighted values are summed one by
    one in the sets' order, as ``_expect`` sums them."""
    live = np.asarray(probs) > 0
    outcomes = focus_round_outcomes(problem, state, np.asarray(masks)[live], step, tau)
    return sum(pr * float(v) for pr, v in
               zip(np.asarray(probs)[live], fn(outcomes), strict=True))


def _instance(rng, tau):
    problem = random_quadratics(rng, 4, 3, mu=1.0, L=2.0)
    proc = Bernoulli(P_LEMMA)
    masks, probs = subset_distribution(proc)
    return problem, proc, masks, probs


# ---- the attack space of one round (Lemmas 3-4 and Theorem 1(a)'s one-round attack) ----

N, D = 4, 3
EXACT = f"rounding: exact enumeration of 2^N sets, {ROUNDING:g} relative (as the claims)"
ROUND_SPACE = {**{f"A{i}": SPD(D, 1.0, 2.0, extreme=True) for i in range(N)},
               "b": Box(-3, 3, shape=(N, D)), "p": Box(0.05, 1.0, shape=N),
               "tau": Integers(2, 3), "step_frac": Box(1e-3, 1.0, log=True),
               "offset": Box(-1, 1, shape=D), "offset_scale": Box(1e-3, 10, log=True),
               "spread": Box(-1, 1, shape=(N, D)), "spread_scale": Box(1e-3, 10, log=True)}


def fixed_round():
    return [{**{f"A{i}": np.diag([1.0, 1.5, 2.0]) for i in range(N)},
             "b": np.arange(N * D, dtype=float).reshape(N, D) / 6 - 1, "p": P_LEMMA,
             "tau": 2, "step_frac": 1.0, "offset": np.ones(D) / 2, "offset_scale": 1.0,
             "spread": np.eye(N, D), "spread_scale": 1.0}]


@memo_last
def attack_round(inst, step_rule):
    """Problem, process, sets, step and a consistent round state of one instance (remembered
    for the last points, :func:`~.instances.memo_last`: the callers never modify it)."""
    problem = Quadratic(np.stack([inst[f"A{i}"] for i in range(N)]), inst["b"])
    proc = Bernoulli(inst["p"])
    masks, probs = subset_distribution(proc)
    q_min = float(proc.aggregation_weights().min())
    mu, L = float(problem.client_mu.min()), problem.L
    step = inst["step_frac"] * step_rule(mu, L, inst["tau"], q_min)
    x_prev = problem.x_star + inst["offset_scale"] * inst["offset"]
    models = x_prev + inst["spread_scale"] * inst["spread"]
    state = consistent_state(problem, models, x_prev, step)
    return problem, masks, probs, q_min, step, state


def round_instance(inst, step_rule) -> dict:
    """The values Lemmas 3-4's hypotheses read on one point of :data:`ROUND_SPACE`."""
    problem, _, _, _, step, _ = attack_round(inst, step_rule)
    return dict(q=Bernoulli(inst["p"]).aggregation_weights(), problem=problem,
                mu=float(problem.client_mu.min()), L=problem.L, tau=inst["tau"], step=step)
