r"""Attack surfaces of FOCUS's one-round lemmas, step conditions and FedAvg's limit bounds
([002]).

The one-round lemmas are attacked on the claims' computation: a frozen round state, FOCUS's
round (:func:`~verify.focus.instances.focus_round`) and the exact conditional expectation over
the :math:`2^N` participation sets (:func:`~verify.focus.lemmas._expect`). Client Hessians are
searched as SPD matrices with spectrum pinned to [mu, L] = [1, 2] (as the claims' instances),
participation as Bernoulli probabilities. FedAvg's limits use the claims' exact stationary
moments (:func:`~verify.focus.fedavg_limit._shared_limsup`).
"""

from __future__ import annotations

import numpy as np

from flbounds.falsify import SPD, Box, Integers, Simplex, attack_surface
from flbounds.participation import (
    Bernoulli,
    UniformWithoutReplacement,
    WeightedWithoutReplacement,
    subset_distribution,
)
from flbounds.problems import Quadratic

from .bounds import eq110_step, lemma3_rhs, lemma4_rhs
from .fedavg_limit import THM3_B, THM3_P, THM3_STEP, _shared_limsup, thm3_corrected, thm3_printed
from .instances import consistent_state, lemma3_step, lemma4_step, thm1a_step_printed
from .lemma4_corrected import corrected_constant, near_worst_instance, printed_constant
from .lemma4_counterexample import lemma4_instance, lemma4_sides
from .lemmas import P_LEMMA, ROUNDING, _expect

N, D = 4, 3
EXACT = f"rounding: exact enumeration of 2^N sets, {ROUNDING:g} relative (as the claims)"
ROUND_SPACE = {**{f"A{i}": SPD(D, 1.0, 2.0, extreme=True) for i in range(N)},
               "b": Box(-3, 3, shape=(N, D)), "p": Box(0.05, 1.0, shape=N),
               "tau": Integers(2, 3), "step_frac": Box(1e-3, 1.0, log=True),
               "offset": Box(-1, 1, shape=D), "offset_scale": Box(1e-3, 10, log=True),
               "spread": Box(-1, 1, shape=(N, D)), "spread_scale": Box(1e-3, 10, log=True)}


def _fixed_round():
    return [{**{f"A{i}": np.diag([1.0, 1.5, 2.0]) for i in range(N)},
             "b": np.arange(N * D, dtype=float).reshape(N, D) / 6 - 1, "p": P_LEMMA,
             "tau": 2, "step_frac": 1.0, "offset": np.ones(D) / 2, "offset_scale": 1.0,
             "spread": np.eye(N, D), "spread_scale": 1.0}]


def _round(inst, step_rule):
    """Problem, process, sets, step and a consistent round state of one instance."""
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


@attack_surface("focus.lemma3.descent", space=ROUND_SPACE, fixed=_fixed_round,
                tolerance=ROUNDING, tolerance_why=EXACT, budget={"quick": 200},
                note="step = step_frac x Lemma 3's own bound; states reachable (stored "
                     "gradients at the client models)")
def lemma3(**inst):
    """E_r||x_{r+1} - x*||^2 over Lemma 3's right side (eq. (87))."""
    problem, masks, probs, _, step, st = _round(inst, lambda mu, L, tau, q: lemma3_step(mu, L,
                                                                                       tau))
    mu, L, n, tau = float(problem.client_mu.min()), problem.L, N, inst["tau"]
    lhs = _expect(problem, st, masks, probs, step, tau,
                  lambda s: float(np.sum((s.x - problem.x_star) ** 2)))
    dist = float(np.sum((st.x - problem.x_star) ** 2))
    gap = problem.loss(st.x) - problem.F_star
    rhs = lemma3_rhs(mu=mu, L=L, n=n, step=step, dist=dist, gap=gap,
                     consensus=st.consensus_error())
    return lhs / rhs if rhs > 0 else np.nan


@attack_surface("focus.lemma4.consensus",
                space={**ROUND_SPACE, "p": Box(0.3, 1.0, shape=N)}, fixed=_fixed_round,
                tolerance=ROUNDING, tolerance_why=EXACT, budget={"quick": 200},
                note="step = step_frac x Lemma 4's bound min{q^1.5/(8L sqrt N), "
                     "q^1.5/(8L(tau-1))}; p >= 0.3 as the claim's instances (rare "
                     "participation breaks the lemma: focus.lemma4.rare_participation)")
def lemma4(**inst):
    """E||1 x_{r+1} - X_{(r+1)tau}||^2 over Lemma 4's right side (eq. (97))."""
    return _lemma4_ratio(inst, printed_constant)


def _lemma4_ratio(inst, constant):
    """Left over right side of eq. (97) with gradient constant ``constant(q_min, N)``."""
    lhs, rhs = lemma4_round_sides(inst, constant)
    return lhs / rhs


def lemma4_round_sides(inst, constant):
    """(LHS, RHS) of eq. (97) on one round instance of the Lemma 4 attack spaces: exact
    expectation over the 2^N sets, the library's FOCUS round, Lemma 4's step x step_frac."""
    problem, masks, probs, q_min, step, st = _round(
        inst, lambda mu, L, tau, q: lemma4_step(L, N, tau, q))
    tau = inst["tau"]
    lhs = _expect(problem, st, masks, probs, step, tau, lambda s: s.consensus_error())
    grad = _expect(problem, st, masks, probs, step, tau,
                   lambda s: float(np.sum(problem.gradient(s.x) ** 2)))
    rhs = lemma4_rhs(q_min=q_min, n=N, step=step, consensus=st.consensus_error(), grad=grad,
                     constant=constant(q_min, N))
    return lhs, rhs


THM3_SPACE = {"a": Box(0.01, 10, log=True), "b": Box(-2, 2, shape=(2, 2)),
              "p": Box(0.05, 0.95, shape=2), "tau": Integers(1, 3),
              "step_frac": Box(1e-3, 1.0, log=True)}
THM3_FIXED = [{"a": 0.1, "b": THM3_B, "p": THM3_P, "tau": 1, "step_frac": THM3_STEP / 1.0},
              {"a": 0.1, "b": THM3_B, "p": THM3_P, "tau": 2, "step_frac": THM3_STEP / 1.0}]
MOMENTS = "exact moments: linear solves of size d^2 = 4 (as the claim)"


def _thm3_step(a, tau, step_frac):
    """step_frac x Thm 3's limit min{1/(3L), 1/(4(tau-1)L)}, shared Hessian a I (mu = L = a)."""
    return step_frac * min(1 / (3 * a), np.inf if tau == 1 else 1 / (4 * (tau - 1) * a))


def _thm3_ratio(bound, a, b, p, tau, step_frac):
    step = _thm3_step(a, tau, step_frac)
    lim, dq, sg = _shared_limsup(a, b, Bernoulli(p), step, tau)
    value = bound(step, tau, a, a, dq, sg)
    return lim / value if value > 0 else np.nan


@attack_surface("focus.thm3.printed_bound", space=THM3_SPACE, tolerance=1e-9,
                tolerance_why=MOMENTS, budget={"quick": 150}, shrink=True,
                fixed=[{**f, "step_frac": THM3_STEP * 3 * 0.1} for f in THM3_FIXED])
def thm3_printed_ratio(*, a, b, p, tau, step_frac):
    """Exact limsup E||x_bar - x*||^2 of FedAvg over eq. (67) as printed."""
    return _thm3_ratio(thm3_printed, a, b, p, tau, step_frac)


@attack_surface("focus.thm3.corrected_bound", space=THM3_SPACE, tolerance=1e-9,
                tolerance_why=MOMENTS, budget={"quick": 150},
                fixed=[{**f, "step_frac": THM3_STEP * 3 * 0.1} for f in THM3_FIXED])
def thm3_corrected_ratio(*, a, b, p, tau, step_frac):
    """The same over the bound corrected from the proof."""
    return _thm3_ratio(thm3_corrected, a, b, p, tau, step_frac)


@attack_surface("focus.cor1_2.uniform_bound",
                space={"a": Box(0.01, 10, log=True), "b": Box(-2, 2, shape=(4, 2)),
                       "tau": Integers(1, 3), "step_frac": Box(1e-3, 1.0, log=True)},
                tolerance=1e-12, tolerance_why="exact moments (as the claim)",
                budget={"quick": 150},
                fixed=[{"a": 1.0, "b": [[1.0, 0.5], [-1.0, 0.2], [0.3, -1.0], [-0.3, 0.3]],
                        "tau": 3, "step_frac": 0.03}])
def uniform_bound(*, a, b, tau, step_frac):
    """Exact limsup under 2-of-4 uniform sampling (delta_q = 0) over Corollary 1's bound."""
    step = _thm3_step(a, tau, step_frac)
    lim, dq, sg = _shared_limsup(a, b, UniformWithoutReplacement(4, 2), step, tau)
    value = thm3_printed(step, tau, a, a, 0.0, sg)  # delta_q = 0: Cor. 1 is (67) at kappa = 1
    return lim / value if value > 0 else np.nan


@attack_surface("focus.thm1a.step_condition_gap",
                space={"mu": Box(0.01, 1.0), "L_over_mu": Box(1.0, 100, log=True),
                       "n": Integers(1, 20), "tau": Integers(1, 10), "q_min": Box(1e-3, 1.0)},
                validator=lambda **i: i["q_min"] <= 1 / i["n"] or "q_min > 1/N",
                tolerance=1e-15, tolerance_why="a few ulp of the two step bounds",
                shrink=True,
                fixed=[{"mu": 1.0, "L_over_mu": 2.0, "n": 4, "tau": 3, "q_min": 0.1044}])
def step_gap(*, mu, L_over_mu, n, tau, q_min):
    """Theorem 1(a)'s printed step bound over the proof's requirement (110)."""
    L = mu * L_over_mu
    return thm1a_step_printed(mu, L, n, tau, q_min) / eq110_step(mu, L, n, q_min)


@attack_surface("focus.lemma4.proof_step_104", space={"q": Box(0.01, 1.0)},
                tolerance=1e-12, tolerance_why="relative rounding of two closed forms",
                fixed=[{"q": q} for q in np.linspace(0.01, 1.0, 100)])
def step_104(*, q):
    """(103)'s constant 8/(q(1 - q^2/4)) over (104)'s 16/(3q)."""
    return (8 / (q * (1 - q**2 / 4))) / (16 / (3 * q))


def _m_le_n(*, w, n, m):
    return m <= n or "m > N"


@attack_surface("focus.assumption1.case3_weights_are_q",
                space={"w": Simplex(8, floor=1e-3), "n": Integers(2, 8), "m": Integers(1, 4)},
                validator=_m_le_n, tolerance=0.0,
                tolerance_why="the residual is divided by the claim's rounding tolerance 1e-12",
                shrink=True,
                fixed=[{"w": [.1, .2, .3, .4, 0, 0, 0, 0], "n": 4, "m": 2}])
def weights_are_q(*, w, n, m):
    """max_i |q_i - w_i| / 1e-12 for m-of-N successive sampling with weights w (exact q)."""
    w = w[:n] / w[:n].sum()
    return float(np.abs(WeightedWithoutReplacement(w, m).aggregation_weights() - w).max()) / 1e-12


@attack_surface("focus.assumption1.case3a_printed",
                space={"n": Integers(2, 16), "m": Integers(1, 16)},
                validator=lambda *, n, m: m <= n or "m > N", tolerance=0.0,
                tolerance_why="the residual is divided by a rounding tolerance of 1e-12",
                shrink=True, fixed=[{"n": 8, "m": 2}])
def case3a(*, n, m):
    """max_i |q_i - 1/m| / 1e-12 for uniform m-of-N sampling (exact q)."""
    q = UniformWithoutReplacement(n, m).aggregation_weights()
    return float(np.abs(q - 1.0 / m).max()) / 1e-12


# ---- Theorem 1(a): one FOCUS round against the printed rate, PEP worst case beside it ----

THM1_P = np.array([0.3, 0.5, 0.7, 0.9])
THM1_TAU, THM1_MU, THM1_L = 3, 1.0, 2.0
THM1_SPACE = {k: v for k, v in ROUND_SPACE.items() if k not in ("p", "tau", "step_frac")}


def _thm1_step() -> float:
    q_min = float(Bernoulli(THM1_P).aggregation_weights().min())
    return thm1a_step_printed(THM1_MU, THM1_L, N, THM1_TAU, q_min)


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
    worst = focus_rate(THM1_MU, THM1_L, THM1_P, THM1_TAU, step,
                       function_class="quadratic").worst
    return worst / (1 - step * THM1_MU * N / 2)


@attack_surface("focus.thm1a.mc_below_bound", space=THM1_SPACE,
                fixed=lambda: [{k: v for k, v in f.items() if k in THM1_SPACE}
                               for f in _fixed_round()],
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
    return after / ((1 - step * THM1_MU * N / 2) * _psi(problem, state, weight))


@attack_surface("focus.lemma4.rare_participation",
                space={"n_clients": Integers(4, 8), "p": Box(0.005, 0.3, log=True),
                       "empty_rounds": Integers(0, 200)},
                tolerance=ROUNDING, tolerance_why=EXACT, budget={"quick": 100, "full": 2000},
                fixed=[{"n_clients": 4, "p": 0.02, "empty_rounds": 80}],
                instance=lambda n_clients, p, empty_rounds: lemma4_instance(n_clients, p),
                note="identical clients x^2/2, tau = 1, Lemma 4's largest step, the state "
                     "after a full round and k empty rounds")
def lemma4_rare(*, n_clients, p, empty_rounds):
    """Eq. (97)'s left side over its right side on the reachable one-dimensional family."""
    lhs, rhs, _, _ = lemma4_sides(n_clients, p, empty_rounds)
    return lhs / rhs


def _fixed_corrected():
    """The consensus claim's instance and rare_participation's witness embedded in d = 3
    (identity Hessians, b = 0, p = 0.02, tau = 1, models at e_1, server 80 empty rounds away)."""
    q_min = float(Bernoulli(np.full(N, 0.02)).aggregation_weights().min())
    drift = N * 80 * lemma4_step(1.0, N, 1, q_min)
    witness = {**{f"A{i}": np.eye(D) for i in range(N)}, "b": np.zeros((N, D)),
               "p": np.full(N, 0.02), "tau": 1, "step_frac": 1.0,
               "offset": np.eye(D)[0] * (1 - drift), "offset_scale": 1.0,
               "spread": np.tile(np.eye(D)[0], (N, 1)), "spread_scale": drift}
    return [*_fixed_round(), witness, near_worst_instance()]


@attack_surface("focus.lemma4.corrected",
                space={**ROUND_SPACE, **{f"A{i}": SPD(D, 0.1, 2.0) for i in range(N)},
                       "p": Box(0.02, 1.0, shape=N, log=True), "tau": Integers(1, 3)},
                fixed=_fixed_corrected, tolerance=ROUNDING, tolerance_why=EXACT,
                budget={"quick": 200, "full": 2000},
                note="step = step_frac x Lemma 4's bound; rare participation p >= 0.02, "
                     "spectra free in [0.1, 2] (isotropic clients, as the witness, included)")
def lemma4_corrected(**inst):
    """E||1 x_{r+1} - X_{(r+1)tau}||^2 over the corrected right side (constant x (N + 1))."""
    return _lemma4_ratio(inst, corrected_constant)
