r"""Tightness of SAFARI Theorem 4: the exact worst case over L-smooth non-convex F (PEP,
``flbounds.pep.server_steps``, identical clients, no noise) against the printed bound, on a grid
of q, K, R and the step (see :mod:`verify.safari.thm5.tightness` for the conventions). Each
cell inside the hypotheses is an instance of the claim (L, the steps): the ledger evaluates the
step condition and the coupling on it; the class-level hypotheses are constraints of the SDP.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, bounds, claim
from flbounds.pep import gap_tolerance
from flbounds.pep.server_steps import safari_nonconvex_rate
from verify.pep_cells import solve_or_list

from ..pep_conditions import thm4_client_step, thm4_q_condition_trivial
from ..thm5.tightness import L_SMOOTH, _gap_tolerance, _summary
from . import THM4, step_condition, step_limit

# Theorem 4's SDP has about K 2^R gradients. At K = 5, R = 3 (40) and q = 0.5, eta_s = the
# printed step no form of the SDP solves accurately (dual residual 3e-4 against a 1e-5 bound,
# flbounds.pep.sdp), so the grid keeps K 2^R <= 24: every (K, R) of the grid but (5, 3).
THM4_MAX_GRADIENTS = 24


def _thm4_cell(q, K, R, multiple):
    top = step_limit(L=L_SMOOTH, local_steps=K) * K / 2   # eta_s with eta_c = 2 eta_s/K
    step = multiple * top
    trivial = thm4_q_condition_trivial(L_SMOOTH, step)
    eta_c = thm4_client_step(K, step)
    within = step_condition.evaluate(dict(step_client=eta_c, L=L_SMOOTH,
                                          local_steps=K)) and trivial
    constants = dict(q=q, K=K, R=R, step_server=step, multiple=multiple)
    printed = bounds.get("safari.thm4").evaluate(
        L=L_SMOOTH, local_steps=K, n_sampled=1, q=max(q, 1e-300), R=R, delta_f=1.0, sigma2=0.0,
        sigma_s2=0.0, sigma_G2=0.0, step=step).value
    res, listed = solve_or_list(lambda: safari_nonconvex_rate(L_SMOOTH, q, K, eta_c, step, R,
                                                              printed=printed),
                                constants, within=within)
    if listed:
        return listed
    return dict(constants=constants,
                within_hypotheses=bool(within), worst=res.worst,
                printed=res.printed, ratio=res.worst / res.printed, gap=res.gap,
                solver=res.solver, status=res.status, gram=res.gram_size, seconds=res.seconds)


@claim("safari.thm4.tightness", ref="Thm 4 with sigma = sigma_s = sigma_G = 0",
       kind="tightness", expected="holds", result=THM4, parts=("bound",),
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
                    else "", details={"cells": cells}, worst_case=_summary(inside),
                    instance=[cell_instance(c) for c in inside])


def cell_instance(cell) -> dict:
    """The values of Theorem 4's step condition and coupling at a PEP cell (L = 2)."""
    c = cell["constants"]
    return dict(L=L_SMOOTH, local_steps=c["K"], step_server=c["step_server"],
                step_client=2 * c["step_server"] / c["K"])


