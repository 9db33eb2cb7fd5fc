r"""Lemma 4 of FOCUS corrected: the proof redone with the factor N + 1 of step (100) kept.

Notation (one round, as the claims): server model :math:`x = \bar x_{r\tau+1}`, client models
:math:`m_i = x_{r\tau,i}`, consensus error :math:`C = \|x - \bar x_{r\tau}\|^2 +
\sum_i\|x - m_i\|^2` (the N + 1 rows of :math:`\mathbb 1\bar x_{r\tau+1} - \mathbf x_{r\tau}`);
after a round with participants S: :math:`m_i'`, :math:`y' = \sum_i\nabla f_i(m_i')`,
:math:`x' = x - \eta y'`, :math:`C' = \eta^2\|y'\|^2 + \sum_i\|x' - m_i'\|^2`;
:math:`q = q_{\min}`, :math:`p_i = P(i \in S) \ge q_i \ge q`, :math:`\varepsilon =
\tfrac{64}{31}\eta^2L^2(\tau-1)^2`.

1. (98): :math:`x' - m_i' = (x - m_i') - \eta y'`, so with Young's :math:`\rho` and the
   server row :math:`\eta^2\|y'\|^2 \le \eta^2\|y'\|^2/(1-\rho)`,
   :math:`C' \le A/\rho + (N+1)\eta^2\|y'\|^2/(1-\rho)`, :math:`A = \sum_i\|x - m_i'\|^2`.
   The stacked vector :math:`\mathbb 1\bar y` has N + 1 equal rows; (100) bounds its squared
   norm by a bound on :math:`\|\bar y\|^2` alone: the factor N + 1 is lost there.
2. (99), (101): a client outside S keeps :math:`\|x - m_i\|^2`; one inside S carries its local
   drift, :math:`\le \varepsilon\|x - m_i\|^2` by (92)-(94) counted with :math:`(\tau-1)^2`
   terms; so :math:`E A \le (1 - q')\,C`, :math:`q' = q(1-\varepsilon)`. (The drift is driven
   by :math:`x - m_i`, so it belongs with C, not with C' as in (101).)
3. (100): :math:`\|y'\|^2 \le 2NL^2 C' + 2N^2\|\nabla F(x')\|^2` (L-smoothness only).
4. :math:`\rho = (1-q')/(1-q'/2)`: :math:`(1-\delta)\,E C' \le (1 - q'/2)\,C +
   4(N+1)N^2\eta^2/q'\; E\|\nabla F(x')\|^2`, :math:`\delta = 4(N+1)NL^2\eta^2/q'`.
5. Lemma 4's step gives :math:`\eta^2L^2 \le q^3/(64N)` and :math:`\eta^2L^2(\tau-1)^2 \le
   q^3/64`, so :math:`\varepsilon \le 1/31`; with :math:`q \le 1/N` (:math:`\sum_i q_i =
   P(S \ne \emptyset) \le 1`), :math:`\delta \le 31(N+1)q^2/480 \le 2q/15`. Then
   :math:`(1 - q'/2)/(1-\delta) \le 1 - q/3` (as :math:`15/31 \ge 1/3 + 2/15`) and the
   gradient constant is :math:`4(N+1)/(q'(1-\delta)) \le 4.77\,(N+1)/q \le 16(N+1)/(3q)`.

Hence, under Lemma 4's own hypotheses (any participation law, any :math:`\tau`):
:math:`E\,C' \le (1 - q/3)\,C + \tfrac{16(N+1)\eta^2N^2}{3q}\,E\|\nabla F(x')\|^2` — eq. (97)
with the gradient constant multiplied by N + 1. (:math:`q' = 1` only for one client that
always participates with :math:`\tau = 1`; then A = 0 and step 1 holds without the split.)
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.participation import Bernoulli
from flbounds.problems import Quadratic

from ...replay import shared_generator
from ..instances import lemma4_step
from ..one_round import ROUNDING
from . import LEMMA4, lemma4_rhs
from .consensus import _lemma4
from .counterexample import lemma4_instance, lemma4_parts

#: The near-worst round found by the attack on this claim (``flbounds falsify
#: focus.lemma4.corrected --budget 8000 --seed 3``: ratio 0.98918), rounded to 6 digits and
#: symmetrised; kept as a fixed instance so a FOCUS round that moves the consensus error by a
#: fraction of the remaining 1.1% slack fails the claim. N = 4, d = 3, rare participation
#: (p ~ 0.02), tau = 2, a small step: the contraction (1 - q_min/3) itself is nearly attained.
NEAR_WORST = {
    "A0": [[0.496482, -0.451257, 0.025046], [-0.451257, 0.635179, -0.173039],
           [0.025046, -0.173039, 1.447535]],
    "A1": [[0.890115, -0.295523, -0.331279], [-0.295523, 0.808891, -0.007017],
           [-0.331279, -0.007017, 1.147634]],
    "A2": [[1.496604, 0.134224, 0.085487], [0.134224, 1.662967, -0.012525],
           [0.085487, -0.012525, 1.588196]],
    "A3": [[1.032654, -0.400102, 0.417022], [-0.400102, 1.282835, -0.044129],
           [0.417022, -0.044129, 1.598827]],
    "b": [[1.391551, -2.965101, -0.07928], [1.658771, 2.544803, 0.976543],
          [2.259686, 1.568042, -1.73116], [-2.293257, 1.681011, 1.447521]],
    "p": [0.020023, 0.02003, 0.020004, 0.020049], "tau": 2, "step_frac": 0.00242191,
    "offset": [0.999339, -0.658, 0.683633], "offset_scale": 8.76391,
    "spread": [[0.724181, -0.584865, 0.557783], [0.596056, -0.660208, 0.610896],
               [0.623282, -0.58691, 0.638065], [0.613604, -0.444407, 0.555637]],
    "spread_scale": 0.00481778,
}


def near_worst_instance() -> dict:
    """:data:`NEAR_WORST` with arrays (the attack space's instance format)."""
    return {k: np.asarray(v, dtype=float) if isinstance(v, list) else v
            for k, v in NEAR_WORST.items()}


def near_worst_sides(constant=None) -> tuple[float, float]:
    """(LHS, RHS) of eq. (97) on :data:`NEAR_WORST` (default: the corrected constant)."""
    from .attacks import lemma4_round_sides  # the attack module imports this one

    return lemma4_round_sides(near_worst_instance(), constant or corrected_constant)


def near_worst_hypotheses_instance() -> dict:
    """The values Lemma 4's hypotheses read on :data:`NEAR_WORST` (step = step_frac times
    the lemma's bound, as the attack space builds it)."""
    inst = near_worst_instance()
    problem = Quadratic(np.stack([inst[f"A{i}"] for i in range(4)]), inst["b"])
    q = Bernoulli(inst["p"]).aggregation_weights()
    step = inst["step_frac"] * lemma4_step(problem.L, 4, inst["tau"], float(q.min()))
    return dict(q=q, problem=problem, mu=float(problem.client_mu.min()), L=problem.L,
                tau=inst["tau"], step=step)


def corrected_constant(q_min: float, n_clients: int) -> float:
    """Gradient constant of the corrected eq. (97): 16 (N + 1)/(3 q_min)."""
    return 16 * (n_clients + 1) / (3 * q_min)


def printed_constant(q_min: float, n_clients: int) -> float:
    """Gradient constant printed in eq. (97): 16/(3 q_min) (the factor N + 1 removed)."""
    return 16 / (3 * q_min)


def rare_sides(n_clients, p, empty_rounds, constant=corrected_constant):
    """(LHS, RHS) of eq. (97) with gradient constant ``constant(q_min, N)`` on the reachable
    rare-participation family of :func:`~verify.focus.lemma4.counterexample.lemma4_parts`."""
    lhs, consensus, grad, q_min, step = lemma4_parts(n_clients, p, empty_rounds)
    rhs = lemma4_rhs(q_min=q_min, n=n_clients, step=step, consensus=consensus, grad=grad,
                     constant=constant(q_min, n_clients))
    return lhs, rhs


def _rare_family(variants, constant):
    sides = [rare_sides(n, p, k, constant) for n, p, k in variants]
    lhs, rhs = (np.array(v) for v in zip(*sides, strict=True))
    return lhs, rhs


@claim("focus.lemma4.corrected", ref="Lemma 4, eq. (97); proof (98)-(104) with (100) fixed",
       kind="statement", expected="holds",
       corrects="focus.lemma4.rare_participation", result=LEMMA4, parts=("rate",),
       statement="Under Lemma 4's hypotheses (eta <= min{q^{3/2}/(8L sqrt N), "
                 "q^{3/2}/(8L(tau-1))}, any participation): E||1 x_{r+1} - X_{(r+1)tau}||_F^2 "
                 "<= (1 - q_min/3)||1 x_r - X_{r tau}||_F^2 + (16 (N+1) eta^2 N^2/(3 q_min)) "
                 "E||grad F(x_{r+1})||^2 (the printed constant times N + 1).",
       quick=dict(n_states=60, taus=(2, 3),
                  variants=((4, 0.02, 80), (6, 0.05, 20), (8, 0.1, 10))),
       full=dict(n_states=1000, taus=(1, 2, 3, 5, 10),
                 variants=((4, 0.02, 80), (4, 0.02, 2000), (6, 0.05, 20), (8, 0.1, 10),
                           (8, 0.005, 200), (10, 0.05, 40))))
def corrected(*, rng, n_states, taus, variants):
    r"""Exact conditional expectation over the :math:`2^N` participation sets (as
    ``focus.lemma4.consensus``) on two regimes: (a) the reachable rare-participation states of
    ``focus.lemma4.rare_participation`` — its witness (N = 4, p = 0.02, 80 empty rounds,
    :math:`\tau = 1`) and the larger-N variants ``variants`` (N, p, empty rounds) — and (b)
    ``focus.lemma4.consensus``'s random states (p = 0.3..0.9, :math:`\tau` in ``taus``; its
    stream, so its expectations are computed once per ledger run), all at
    Lemma 4's largest step. The derivation is in the module docstring. Details report the
    ratio LHS/RHS per rare instance with the corrected constant and with the factor N + 1
    removed (the printed statement, above 1 on these instances), and the largest ratio on
    regime (b); (c) the near-worst round the attack found (``NEAR_WORST``, ratio 0.9892),
    a fixed instance close enough to the bound that an error of about 1% in the FOCUS round
    moves it over. Tolerance: rounding, 1e-12 relative to each bound."""
    lhs_a, rhs_a = _rare_family(variants, corrected_constant)
    instances = [lemma4_instance(n, p) for n, p, _ in variants]
    lhs_b, rhs_b = _lemma4(shared_generator(rng, "focus.lemma4.consensus"), n_states, taus,
                           corrected_constant, instances)
    instances.append(near_worst_hypotheses_instance())
    lhs_c, rhs_c = near_worst_sides()
    _, without = _rare_family(variants, printed_constant)
    measured = np.concatenate([lhs_a, lhs_b, [lhs_c]])
    theoretical = np.concatenate([rhs_a, rhs_b, [rhs_c]])
    names = [f"N={n}, p={p}, k={k}" for n, p, k in variants]
    return Evidence(
        measured=measured, theoretical=theoretical, relation="<=", instance=instances,
        tolerance=Tolerance(ROUNDING * np.abs(theoretical), "rounding",
                            "1e-12 x each bound (exact enumeration, as the lemma checks)"),
        details={"ratio_rare": dict(zip(names, (lhs_a / rhs_a).tolist(), strict=True)),
                 "ratio_rare_without_factor": dict(zip(names, (lhs_a / without).tolist(),
                                                       strict=True)),
                 "max_ratio_consensus_regime": float(np.max(lhs_b / rhs_b)),
                 "ratio_near_worst": lhs_c / rhs_c,
                 "derived_constant": "4 (N+1)/(q'(1-delta)) <= 4.77 (N+1)/q_min"})
