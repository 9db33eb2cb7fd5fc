r"""Attack surfaces of Theorem 1(a) of [002]: the statement's step bound against the proof's
(110), and one FOCUS round against the printed contraction (PEP worst case beside it).

The one-round points are judged by Theorem 1(a)'s own predicates (``instance=``).
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, Integers, attack_surface
from flbounds.participation import Bernoulli, subset_distribution
from flbounds.problems import Quadratic

from ..instances import consistent_state, thm1a_step_printed
from ..one_round import EXACT, ROUND_SPACE, ROUNDING, N, _expect, fixed_round
from . import eq110_step, thm1a


@attack_surface("focus.thm1a.step_condition_gap",
                space={"mu": Box(0.01, 1.0), "L_over_mu": Box(1.0, 100, log=True),
                       "n": Integers(1, 20), "tau": Integers(1, 10), "q_min": Box(1e-3, 1.0)},
                # not a hypothesis of the result: q_min <= 1/N is what sum_i q_i <= 1 leaves
                # possible (the search space is the constants, not a participation law)
                validator=lambda **i: i["q_min"] <= 1 / i["n"] or "q_min > 1/N",
                tolerance=1e-15, tolerance_why="a few ulp of the two step bounds",
                shrink=True,
                fixed=[{"mu": 1.0, "L_over_mu": 2.0, "n": 4, "tau": 3, "q_min": 0.1044}])
def step_gap(*, mu, L_over_mu, n, tau, q_min):
    """Theorem 1(a)'s printed step bound over the proof's requirement (110)."""
    L = mu * L_over_mu
    return thm1a_step_printed(mu, L, n, tau, q_min) / eq110_step(mu, L, n, q_min)


# ---- Theorem 1(a): one FOCUS round against the printed rate, PEP worst case beside it ----

THM1_P = np.array([0.3, 0.5, 0.7, 0.9])
THM1_TAU, THM1_MU, THM1_L = 3, 1.0, 2.0
THM1_SPACE = {k: v for k, v in ROUND_SPACE.items() if k not in ("p", "tau", "step_frac")}


def _thm1_step() -> float:
    q_min = float(Bernoulli(THM1_P).aggregation_weights().min())
    return thm1a_step_printed(THM1_MU, THM1_L, N, THM1_TAU, q_min)


def _one_round_instance(inst) -> dict:
    """The values Theorem 1(a)'s hypotheses read on one point of the attack space."""
    problem = Quadratic(np.stack([inst[f"A{i}"] for i in range(N)]), inst["b"])
    return dict(q=Bernoulli(THM1_P).aggregation_weights(), problem=problem, L=THM1_L,
                mu=THM1_MU, tau=THM1_TAU, step=_thm1_step())


def _psi(problem, state, weight) -> float:
    r"""The proof's Lyapunov function :math:`\|x - x^*\|^2 + c\sum_i\|x - z_i\|^2`."""
    return float(np.sum((state.x - problem.x_star) ** 2)
                 + weight * np.sum((state.x - state.models) ** 2))


def _thm1_pep_ratio() -> float | None:
    """PEP's worst one-round E[Psi+]/Psi over quadratic clients (same class, N, p, tau, step)
    over the printed rate; None where flbounds.pep is not installed."""
    try:
        from flbounds.pep import focus_rate
    except ImportError:
        return None
    step = _thm1_step()
    from verify.focus.pep_conditions import thm1a_lyapunov_weight

    weight = thm1a_lyapunov_weight(THM1_MU, THM1_L, len(THM1_P), step)
    worst = focus_rate(THM1_MU, THM1_L, THM1_P, THM1_TAU, step, consensus_weight=weight,
                       function_class="quadratic").worst
    return worst / thm1a(mu=THM1_MU, L=THM1_L, p=THM1_P, tau=THM1_TAU, step=step)


@attack_surface("focus.thm1a.mc_below_bound", space=THM1_SPACE,
                fixed=lambda: [{k: v for k, v in f.items() if k in THM1_SPACE}
                               for f in fixed_round()],
                instance=lambda **inst: _one_round_instance(inst),
                tolerance=ROUNDING, tolerance_why=EXACT, budget={"quick": 200},
                pep=_thm1_pep_ratio,
                note="one round from a reachable state, p = (.3, .5, .7, .9), tau = 3, "
                     "printed step; Psi with the proof's weight c = 1 - 8 eta L^2 N/mu")
def thm1a_one_round(**inst):
    """E[Psi_{r+1} | state] over (1 - eta mu N/2) Psi_r: the contraction Thm 1(a) rests on."""
    step = _thm1_step()
    problem = Quadratic(np.stack([inst[f"A{i}"] for i in range(N)]), inst["b"])
    masks, probs = subset_distribution(Bernoulli(THM1_P))
    x_prev = problem.x_star + inst["offset_scale"] * inst["offset"]
    models = x_prev + inst["spread_scale"] * inst["spread"]
    state = consistent_state(problem, models, x_prev, step)
    weight = 1 - 8 * step * THM1_L**2 * N / THM1_MU
    after = _expect(problem, state, masks, probs, step, THM1_TAU,
                    lambda s: _psi(problem, s, weight))
    rate = thm1a(mu=THM1_MU, L=THM1_L, p=THM1_P, tau=THM1_TAU, step=step)
    return after / (rate * _psi(problem, state, weight))


