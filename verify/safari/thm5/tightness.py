r"""Tightness of SAFARI Theorem 5: the exact worst case over the function class (PEP,
``flbounds.pep.server_steps``) against the printed rate, on grids of q, K and the step (Theorem
4's SDP is in :mod:`verify.safari.thm4.tightness`).

Both SDPs are the deterministic, homogeneous case (no gradient noise, sigma_G = 0: every floor
of Theorems 4-5 vanishes and the theorem is a pure rate; see ``verify.safari.pep_conditions``
for why a normalised PEP cannot carry the floors). ``holds`` when every worst case within the
hypotheses is at most the printed rate, up to the SDP acceptance bound
(``flbounds.pep.gap_tolerance``: primal-dual gap and residuals below 1e-6 relative). Cells
outside the hypotheses (steps above the admissible one; for Theorem 5, constants at which the
q-condition admits no state but the optimum) are computed and reported in ``details`` only.
``violated`` needs a replayed witness meeting every hypothesis
(``flbounds.pep.server_steps_witness``, through ``verify.safari.pep_conditions.thm5_witness``).
The steps (eta_c coupled to eta_s) and the q-condition as the SDP's state constraint come from
:mod:`verify.safari.pep_conditions`. Each cell inside the hypotheses is an instance of the claim
(mu, L, the steps): the ledger evaluates the step condition and the coupling on it; the
class-level hypotheses (smoothness, strong convexity, the q-condition) are constraints of the
SDP and are not evaluated on a problem.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from flbounds.ledger import Evidence, Tolerance, bounds, claim
from flbounds.pep import gap_tolerance
from flbounds.pep.server_steps import safari_rate

from ..alg1 import ALG1
from ..assumptions import optimisation_instance
from ..pep_conditions import (
    q_condition_coefficients,
    thm5_state_constraint,
    thm5_steps,
    thm5_witness,
)
from . import THM5, client_step, step_condition

MU, L_SMOOTH = 1.0, 2.0


def thm5_printed(q, K, step, sigma_G2=0.0):
    """Theorem 5 at R = 1, ||x_0 - x*||^2 = 1, no noise (the PEP's normalisation)."""
    return bounds.get("safari.thm5").evaluate(
        mu=MU, L=L_SMOOTH, local_steps=K, n_sampled=1, q=max(q, 1e-300), R=1, dist0=1.0,
        sigma2=0.0, sigma_s2=0.0, sigma_G2=sigma_G2, step=step).value


def _gap_tolerance(worst):
    return Tolerance(np.array([gap_tolerance(w) for w in worst]), "SDP acceptance bound",
                     "primal-dual gap and solver residuals <= 1e-6 relative (flbounds.pep.sdp)")


def _summary(inside):
    top = max(inside, key=lambda c: c["worst"] / c["printed"])
    return dict(worst=top["worst"], printed=top["printed"], ratio=top["ratio"], gap=top["gap"],
                solver=top["solver"], cell=top["constants"],
                tight=bool(abs(top["worst"] - top["printed"]) <= gap_tolerance(top["worst"])),
                min_looseness_in_one_minus_rate=min(
                    ((1 - c["worst"]) / (1 - c["printed"]) for c in inside if c["printed"] < 1),
                    default=None))


def thm5_hypotheses(q, K, step, corrected=False):
    """(within, why not) for Theorem 5 at these constants: eta_s <= 2/(L + mu), the proof's
    D > 0, and a state other than x* meeting the q-condition (a <= b/(2 mu): G_4/G_3 ranges
    over [1/(2L), 1/(2mu)] on the class)."""
    _, eta_bar = thm5_steps(MU, L_SMOOTH, K, step)
    a, b, d = q_condition_coefficients(MU, L_SMOOTH, q, eta_bar, corrected)
    if not step_condition.evaluate(dict(step_server=step, L=L_SMOOTH, mu=MU)):
        return False, "eta_s > 2/(L + mu)"
    if not d > 0:
        return False, "D <= 0: the q-condition's denominator is not positive"
    if a > b / (2 * MU):
        return False, "the q-condition admits no state but x* (vacuous)"
    return True, ""


def _thm5_cell(q, K, fraction):
    step = fraction * 2 / (L_SMOOTH + MU)
    within, why = thm5_hypotheses(q, K, step)
    eta_c, _ = thm5_steps(MU, L_SMOOTH, K, step)
    free = safari_rate(MU, L_SMOOTH, q, K, eta_c, step, printed=thm5_printed(q, K, step))
    cell = dict(constants=dict(q=q, K=K, step_server=step, fraction=fraction),
                within_hypotheses=within, outside_because=why, printed=free.printed,
                worst_without_q_condition=free.worst)
    if within:
        res = safari_rate(MU, L_SMOOTH, q, K, eta_c, step, printed=free.printed,
                          state_constraint=thm5_state_constraint(MU, L_SMOOTH, q, K, step))
        cell.update(worst=res.worst, ratio=res.worst / res.printed, gap=res.gap,
                    solver=res.solver, status=res.status)
    return cell


@claim("safari.thm5.tightness", ref="Thm 5, per-round factor (1 - eta_bar)", kind="tightness",
       expected="holds", result=THM5, parts=("one_round",),
       statement="Over every L-smooth mu-strongly convex F (identical clients, no noise) and "
                 "every state meeting the per-round q-condition, one SAFARI round contracts "
                 "E||x - x*||^2 by at most the printed 1 - eta_bar, eta_bar = "
                 "2 eta_s L mu/(L + mu) (PEP, exact expectation over the round type).",
       quick=dict(qs=(0.0, 0.5, 1.0), Ks=(1, 3), fractions=(0.02, 0.3, 1.0, 2.0)),
       full=dict(qs=(0.0, 0.25, 0.5, 0.8, 1.0), Ks=(1, 3, 5),
                 fractions=(0.005, 0.02, 0.1, 0.3, 0.6, 1.0, 2.0)))
def thm5_tightness(*, rng, qs, Ks, fractions):
    """mu = 1, L = 2, eta_c = 4 L eta_s/(K(L + mu)) as Theorem 5 couples them, eta_s a
    fraction of 2/(L + mu). The q-condition (printed constants, the proof's linear form
    q N <= (1 - q) D) is a constraint of the SDP. Details also give each cell's worst case
    WITHOUT the q-condition: at large steps eta_c exceeds 2/L and the client round expands,
    so there the q-condition, not the step condition, is what keeps the theorem true. The
    printed rate is tight at q = 0 (server-only gradient descent at eta_s = 2/(L + mu)) but
    that cell has D <= 0. Tolerance: the SDP acceptance bound."""
    cells = [_thm5_cell(q, K, f) for q in qs for K in Ks for f in fractions]
    inside = [c for c in cells if c["within_hypotheses"]]
    worst = np.array([c["worst"] for c in inside])
    printed = np.array([c["printed"] for c in inside])
    applicable, reason, witness = _thm5_witness(inside, worst, printed)
    return Evidence(measured=worst, theoretical=printed, relation="<=",
                    tolerance=_gap_tolerance(worst), applicable=applicable, reason=reason,
                    details={"cells": cells, "witness": witness,
                             "n_outside": len(cells) - len(inside)},
                    worst_case=_summary(inside), instance=[cell_instance(c) for c in inside])


def cell_instance(cell) -> dict:
    """The values of Theorem 5's step and coupling at a PEP cell (mu = 1, L = 2)."""
    c = cell["constants"]
    return dict(mu=MU, L=L_SMOOTH, step_server=c["step_server"], local_steps=c["K"],
                step_client=client_step(step_server=c["step_server"], L=L_SMOOTH, mu=MU,
                                        local_steps=c["K"]))


def _thm5_witness(inside, worst, printed):
    """An excess counts only if the project's SAFARI, run on a 1-D quadratic whose state meets
    the q-condition, replays above the printed rate."""
    excess = [i for i in range(len(inside)) if worst[i] > printed[i] + gap_tolerance(worst[i])]
    if not excess:
        return True, "", None
    c = inside[excess[0]]["constants"]
    wit = thm5_witness(MU, L_SMOOTH, c["q"], c["K"], c["step_server"])
    top = printed[excess[0]] + gap_tolerance(wit.replayed)
    if wit.meets_state_constraint and wit.replayed > top:
        return True, "", wit.as_dict()
    return False, ("worst case above the printed rate, but no replayed 1-D quadratic meeting "
                   "the q-condition breaks it"), wit.as_dict()


def _safari_errors(rng, q, K, step, n_runs, n_rounds):
    """||x_r - x*||^2 of noise-free SAFARI on 4 identical quadratic clients (d = 3, spectrum
    [1, 2], minimizer 0), 2 sampled per round, from x_0 = (3, 3, 3)."""
    from flbounds.algorithms.safari import safari, safari_plan
    from flbounds.problems import Quadratic, random_quadratics

    one = random_quadratics(rng, 1, 3, mu=MU, L=L_SMOOTH)
    problem = Quadratic(np.repeat(one.A, 4, axis=0), np.zeros((4, 3)))
    eta_c, _ = thm5_steps(MU, L_SMOOTH, K, step)
    errs = []
    for child in rng.spawn(n_runs):
        plan = safari_plan(child, n_rounds=n_rounds, q=q, eligible=np.arange(4), n_sampled=2,
                           local_steps=K, dim=3, client_noise_std=0.0, server_noise_std=0.0)
        x = safari(problem, plan, step_client=eta_c, step_server=step, x0=np.full(3, 3.0)).x
        errs.append(np.sum(x**2, axis=1))
    instance = optimisation_instance(problem, sigma_G2=0.0, noise_var=0.0, noise_var_s=0.0,
                                     mu=MU, step_server=step, step_client=eta_c,
                                     local_steps=K)
    return np.array(errs), instance


@claim("safari.thm5.mc_below_worst_case", ref="Thm 5, with the PEP rate", kind="tightness",
       expected="holds", parts=(ALG1.part("client_round"), ALG1.part("server_round")),
       statement="Noise-free SAFARI with identical clients: the Monte Carlo E||x_r - x*||^2 "
                 "stays below rho_PEP^r ||x_0 - x*||^2, rho_PEP the exact one-round worst case "
                 "over the class (below the printed 1 - eta_bar).",
       quick=dict(q=0.5, K=3, step=0.02, n_runs=8, n_rounds=300),
       full=dict(q=0.5, K=3, step=0.02, n_runs=64, n_rounds=600))
def thm5_mc_below_worst_case(*, rng, q, K, step, n_runs, n_rounds):
    """rho_PEP is the worst case WITHOUT the q-condition (safari_rate without a state
    constraint),
    which bounds E[||x+||^2 | x] <= rho ||x||^2 at every state, so the envelope needs no
    hypothesis on the trajectory; at eta_s = 0.02 it equals the q-conditioned value. A biased
    run (an error floor of 3e-8) crosses it after about 280 rounds, while the printed envelope
    (27 x 0.973^r, still 8e-3 at r = 300) lets it through. Tolerance: 4 MC SE + n ulp + the
    SDP accuracy carried to the r-th power (flbounds.pep.envelope).

    Attached to Algorithm 1, not to Theorem 5's bound: the envelope is the class's worst case
    without the q-condition, so what the claim tests is the library's SAFARI rounds against
    the exact worst case of the rounds as printed (a biased implementation comes out
    `violated`), and Theorem 5's printed q-condition (closed form) is vacuous on identical
    clients (safari.thm5.printed_closed_form_homogeneous). The instance records the class's
    constants and the steps."""
    from verify.pep_envelope import envelope_evidence

    eta_c, _ = thm5_steps(MU, L_SMOOTH, K, step)
    res = safari_rate(MU, L_SMOOTH, q, K, eta_c, step, printed=thm5_printed(q, K, step))
    errs, instance = _safari_errors(rng, q, K, step, n_runs, n_rounds)
    evidence = envelope_evidence(errs, res.worst,
                                 details={"step_server": step, "rho_printed": res.printed},
                                 worst_case=res.as_dict())
    return replace(evidence, instance=instance)
