r"""Tightness of [000]'s rates: the exact worst case over the function class (PEP,
``flbounds.pep.server_steps``) against the printed rate, on grids of q, K and the step.

Both SDPs are the deterministic, homogeneous case (no gradient noise, sigma_G = 0: every floor
of Theorems 4-5 vanishes and the theorem is a pure rate; see ``flbounds.pep.server_steps`` for why a
normalised PEP cannot carry the floors). ``holds`` when every worst case within the hypotheses
is at most the printed rate, up to the SDP acceptance bound (``flbounds.pep.gap_tolerance``:
primal-dual gap and residuals below 1e-6 relative). Cells outside the hypotheses (steps above
the admissible one; for Theorem 5, constants at which the q-condition admits no state but the
optimum) are computed and reported in ``details`` only. ``violated`` needs a replayed witness
meeting every hypothesis (``flbounds.pep.server_steps_witness``).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, bounds, claim
from flbounds.pep import gap_tolerance
from flbounds.pep.server_steps import (
    q_condition_coefficients,
    safari_nonconvex_rate,
    safari_rate,
    thm4_q_condition_trivial,
    thm5_steps,
)
from flbounds.pep.server_steps_witness import safari_witness
from verify.pep_cells import solve_or_list

MU, L_SMOOTH = 1.0, 2.0
# Theorem 4's SDP has about K 2^R gradients. At K = 5, R = 3 (40) and q = 0.5, eta_s = the
# printed step no form of the SDP solves accurately (dual residual 3e-4 against a 1e-5 bound,
# flbounds.pep.sdp), so the grid keeps K 2^R <= 24: every (K, R) of the grid but (5, 3).
THM4_MAX_GRADIENTS = 24


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
    if step > 2 / (L_SMOOTH + MU) * (1 + 1e-12):
        return False, "eta_s > 2/(L + mu)"
    if not d > 0:
        return False, "D <= 0: the q-condition's denominator is not positive"
    if a > b / (2 * MU):
        return False, "the q-condition admits no state but x* (vacuous)"
    return True, ""


def _thm5_cell(q, K, fraction):
    step = fraction * 2 / (L_SMOOTH + MU)
    within, why = thm5_hypotheses(q, K, step)
    free = safari_rate(MU, L_SMOOTH, q, K, step, q_condition=None,
                       printed=thm5_printed(q, K, step))
    cell = dict(constants=dict(q=q, K=K, step_server=step, fraction=fraction),
                within_hypotheses=within, outside_because=why, printed=free.printed,
                worst_without_q_condition=free.worst)
    if within:
        res = safari_rate(MU, L_SMOOTH, q, K, step, printed=free.printed)
        cell.update(worst=res.worst, ratio=res.worst / res.printed, gap=res.gap,
                    solver=res.solver)
    return cell


@claim("safari.thm5.tightness", ref="Thm 5, per-round factor (1 - eta_bar)", kind="tightness",
       expected="holds",
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
                    worst_case=_summary(inside))


def _thm5_witness(inside, worst, printed):
    """An excess counts only if the project's SAFARI, run on a 1-D quadratic whose state meets
    the q-condition, replays above the printed rate."""
    excess = [i for i in range(len(inside)) if worst[i] > printed[i] + gap_tolerance(worst[i])]
    if not excess:
        return True, "", None
    c = inside[excess[0]]["constants"]
    wit = safari_witness(MU, L_SMOOTH, c["q"], c["K"], c["step_server"])
    if wit.meets_q_condition and wit.replayed > printed[excess[0]] + gap_tolerance(wit.replayed):
        return True, "", wit.as_dict()
    return False, ("worst case above the printed rate, but no replayed 1-D quadratic meeting "
                   "the q-condition breaks it"), wit.as_dict()


def _thm4_cell(q, K, R, multiple):
    top = 1 / (8 * np.sqrt(30) * L_SMOOTH)
    step = multiple * top
    trivial = thm4_q_condition_trivial(L_SMOOTH, step)
    constants = dict(q=q, K=K, R=R, step_server=step, multiple=multiple)
    printed = bounds.get("safari.thm4").evaluate(
        L=L_SMOOTH, local_steps=K, n_sampled=1, q=max(q, 1e-300), R=R, delta_f=1.0, sigma2=0.0,
        sigma_s2=0.0, sigma_G2=0.0, step=step).value
    res, listed = solve_or_list(lambda: safari_nonconvex_rate(L_SMOOTH, q, K, step, R,
                                                              printed=printed),
                                constants, within=multiple <= 1 and trivial)
    if listed:
        return listed
    return dict(constants=constants,
                within_hypotheses=bool(multiple <= 1 and trivial), worst=res.worst,
                printed=res.printed, ratio=res.worst / res.printed, gap=res.gap,
                solver=res.solver, gram=res.gram_size, seconds=res.seconds)


@claim("safari.thm4.tightness", ref="Thm 4 with sigma = sigma_s = sigma_G = 0",
       kind="tightness", expected="holds",
       statement="Over every L-smooth (non-convex) F (identical clients, no noise), SAFARI "
                 "with eta_c = 2 eta_s/K meets (1/R) sum_{r=1}^R E||grad F(x_r)||^2 <= "
                 "2 (F(x_0) - F*)/(R eta_s) (PEP upper bound, exact over the 2^R round types).",
       quick=dict(qs=(0.5,), Ks=(3,), rounds=(1, 2), multiples=(1.0, 5.0)),
       full=dict(qs=(0.0, 0.5, 0.8, 1.0), Ks=(1, 3, 5), rounds=(1, 2, 3),
                 multiples=(0.25, 1.0, 5.0)))
def thm4_tightness(*, rng, qs, Ks, rounds, multiples):
    """L = 2, eta_s a multiple of 1/(8 sqrt30 L) (the printed eta_c <= 1/(4 sqrt30 L K) with
    eta_c = 2 eta_s/K); multiples > 1 are outside (details only). F* is relaxed to a scalar
    below every computed value, so each SDP value is an upper bound on the class's worst case:
    'worst <= printed' certifies the printed bound on this class. With sigma_G = 0 the
    q-condition holds for every q (checked per cell). Measured about 1/4 of the printed bound
    at every R (R <= 3: the SDP has ~2^R K gradients). The heterogeneous violation
    (safari.thm4.printed_bound) needs 10^5 rounds and the sigma_G floor, beyond a PEP. No
    replayed witness exists for this SDP, so an excess would be not-applicable, never
    violated. Grid: (K, R) with K 2^R <= 24 (THM4_MAX_GRADIENTS: (5, 3) has no accurate
    solve in any form). Every cell of that grid solves accurately since the SDP bounds the initial
    gap by eta_s instead of 1 (flbounds.pep.sdp, 'Scale'); before, the small-step cells
    (0.25x) stopped at optimal_inaccurate. A cell outside the hypotheses whose SDP has no
    accurate solve would be listed without a number (``unsolved``); inside, it makes the claim
    an error. Tolerance: the SDP acceptance bound."""
    cells = [_thm4_cell(q, K, R, m) for q in qs for K in Ks for R in rounds for m in multiples
             if K * 2**R <= THM4_MAX_GRADIENTS]
    inside = [c for c in cells if c["within_hypotheses"]]
    worst = np.array([c["worst"] for c in inside])
    printed = np.array([c["printed"] for c in inside])
    excess = bool(np.any(worst > printed + np.array([gap_tolerance(w) for w in worst])))
    return Evidence(measured=worst, theoretical=printed, relation="<=",
                    tolerance=_gap_tolerance(worst), applicable=not excess,
                    reason="worst case above the printed bound, no replayed witness" if excess
                    else "", details={"cells": cells}, worst_case=_summary(inside))


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
    return np.array(errs)


@claim("safari.thm5.mc_below_worst_case", ref="Thm 5, with the PEP rate", kind="tightness",
       expected="holds",
       statement="Noise-free SAFARI with identical clients: the Monte Carlo E||x_r - x*||^2 "
                 "stays below rho_PEP^r ||x_0 - x*||^2, rho_PEP the exact one-round worst case "
                 "over the class (below the printed 1 - eta_bar).",
       quick=dict(q=0.5, K=3, step=0.02, n_runs=8, n_rounds=300),
       full=dict(q=0.5, K=3, step=0.02, n_runs=64, n_rounds=600))
def thm5_mc_below_worst_case(*, rng, q, K, step, n_runs, n_rounds):
    """rho_PEP is the worst case WITHOUT the q-condition (safari_rate(..., q_condition=None)),
    which bounds E[||x+||^2 | x] <= rho ||x||^2 at every state, so the envelope needs no
    hypothesis on the trajectory; at eta_s = 0.02 it equals the q-conditioned value. A biased
    run (an error floor of 3e-8) crosses it after about 280 rounds, while the printed envelope
    (27 x 0.973^r, still 8e-3 at r = 300) lets it through. Tolerance: 4 MC SE + n ulp + the
    SDP accuracy carried to the r-th power (flbounds.pep.envelope)."""
    from verify.pep_envelope import envelope_evidence

    res = safari_rate(MU, L_SMOOTH, q, K, step, q_condition=None,
                      printed=thm5_printed(q, K, step))
    errs = _safari_errors(rng, q, K, step, n_runs, n_rounds)
    return envelope_evidence(errs, res.worst,
                             details={"step_server": step, "rho_printed": res.printed},
                             worst_case=res.as_dict())
