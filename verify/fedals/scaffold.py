r"""SCAFFOLD (Algorithm 3) and FedALS + SCAFFOLD (Algorithm 4) of [001, App. D]: the printed
control-variate arithmetic against the corrected one, on a small deterministic instance.

Instance (written out in every claim's ``details``): K clients (K = 2 or 3, the first K rows
below) with quadratic losses :math:`f_k(x) = \tfrac12 (x - b_k)^\top A_k (x - b_k)` in
:math:`\mathbb R^2`, exact gradients, zero initial model and control variates; the body
:math:`\phi` is coordinate 0 (period :math:`\alpha\tau`), the head h coordinate 1 (period
:math:`\tau`), :math:`\tau = 5`, :math:`\eta = 0.05`, the intended schedule (syncs at the end
of each period). The global minimiser is :math:`x^\star = (\sum_k A_k)^{-1}\sum_k A_k b_k`.

The schedule part of Algorithm 4 (``else if`` on ``mod(r tau + t, tau) = 0``) repeats
Algorithm 1's defect, checked by ``fedals.alg1.printed_averages_body``; read literally it never
refreshes :math:`c^\phi` nor averages :math:`\phi`, and at t = 0 the head displacement
:math:`h_{k,r,0} - h_{k,r,t}` is 0. These claims therefore run every variant on the intended
schedule, so that they isolate the control-variate arithmetic (lines 5, 7 and 10).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from flbounds.algorithms.fedals import fedals, fedals_periods, intended_schedule
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.tolerances import UNIT_ROUNDOFF

HESSIANS = np.array([[[2.0, 0.5], [0.5, 1.0]],
                     [[0.5, -0.2], [-0.2, 1.5]],
                     [[1.0, 0.0], [0.0, 1.0]]])
TARGETS = np.array([[1.0, -2.0], [-3.0, 2.0], [2.0, 1.0]])

SETUP = dict(local_steps=5, step=0.05)
QUICK = dict(SETUP, n_clients=[2, 3], alphas=[1, 4], n_steps=3500)
FULL = dict(SETUP, n_clients=[2, 3], alphas=[1, 4, 10], n_steps=8000)


def _instance(n_clients):
    A, b = HESSIANS[:n_clients], TARGETS[:n_clients]
    x_star = np.linalg.solve(A.sum(0), np.einsum("kij,kj->i", A, b))
    grads_at_star = np.einsum("kij,kj->ki", A, x_star - b)
    scale = float(max(np.linalg.norm(x_star), np.linalg.norm(b, axis=1).max(),
                      np.linalg.norm(grads_at_star, axis=1).max()))
    return A, b, x_star, scale


@lru_cache(maxsize=64)
def _errors(control, n_clients, alpha, n_steps, local_steps, step):
    """||average - x*|| after every body period (alpha tau steps); deterministic (no
    randomness), so cached across the claims of this module. Read-only result."""
    A, b, x_star, _ = _instance(n_clients)

    def grad(theta, _batch):
        return np.einsum("kij,kj->ki", A, theta - b)

    periods = list(fedals_periods(local_steps, alpha)[::-1])
    sync = intended_schedule(n_steps, periods)
    with np.errstate(over="ignore", invalid="ignore"):
        tr = fedals(grad, np.zeros((n_clients, 2)), [None] * n_steps, step=step, sync=sync,
                    groups=[slice(0, 1), slice(1, 2)], control=control, periods=periods,
                    record_every=periods[0])
        err = np.linalg.norm(tr.history - x_star, axis=-1)
    out = np.where(np.isfinite(err), err, np.inf)
    out.flags.writeable = False
    return out


def _rate(errors, floor):
    r"""Per-period factor :math:`\hat\rho` from a log-linear fit of the errors above ``floor``
    (periods 3 onwards: the first ones are transient); inf if fewer than 3 such points."""
    j = np.arange(len(errors))
    keep = (j >= 2) & np.isfinite(errors) & (errors > floor)
    if keep.sum() < 3:
        return float("inf")
    return float(np.exp(np.polyfit(j[keep], np.log(errors[keep]), 1)[0]))


def _rounding_floor(n_clients, alpha, params):
    r"""Attainable accuracy of the corrected iteration in float64 (a contraction).

    Per body period the :math:`\alpha\tau` steps each add a relative rounding error of a few
    units u to quantities of size at most S (iterate, targets, control variates at the fixed
    point); a contraction with factor :math:`\hat\rho` per period accumulates at most
    :math:`\delta/(1-\hat\rho)`. Floor :math:`= 8\,\alpha\tau\,u\,S/(1-\hat\rho)`, with
    :math:`\hat\rho` fitted on the corrected run's geometric phase (0 if it does not contract).
    """
    *_, scale = _instance(n_clients)
    errs = _errors("scaffold", n_clients, alpha, params["n_steps"], params["local_steps"],
                   params["step"])
    rho = _rate(errs, 1e3 * UNIT_ROUNDOFF * scale)
    floor = (8 * alpha * params["local_steps"] * UNIT_ROUNDOFF * scale / (1 - rho)
             if rho < 1 else 0.0)
    return floor, rho, errs


def _cells(control, params):
    rows, measured, floors = [], [], []
    for K in params["n_clients"]:
        A, b, x_star, scale = _instance(K)
        for a in params["alphas"]:
            floor, rho_ok, _ = _rounding_floor(K, a, params)
            errs = _errors(control, K, a, params["n_steps"], params["local_steps"],
                           params["step"])
            finite = np.nonzero(np.isfinite(errs))[0]
            marks = sorted({0, 4, 9, 24, int(finite[-1]), len(errs) // 2, len(errs) - 1})
            rows.append({"n_clients": K, "alpha": a, "final_error": float(errs[-1]),
                         "errors_at_period": {int(m) + 1: float(errs[m]) for m in marks
                                              if m < len(errs)},
                         "last_finite_period": int(finite[-1]) + 1,
                         "factor_per_period": _rate(errs, 1e3 * UNIT_ROUNDOFF * scale),
                         "corrected_factor_per_period": rho_ok, "tolerance": floor})
            measured.append(float(errs[-1]))
            floors.append(floor)
    instance = {"A_k": HESSIANS[:max(params["n_clients"])].tolist(),
                "b_k": TARGETS[:max(params["n_clients"])].tolist(),
                "x_star": {K: _instance(K)[2].tolist() for K in params["n_clients"]},
                "phi": "coordinate 0, period alpha tau", "h": "coordinate 1, period tau",
                "tau": params["local_steps"], "eta": params["step"],
                "n_steps": params["n_steps"], "init": "theta = 0, c_k = 0",
                "schedule": "intended (sync after steps s with (s+1) mod P_g = 0)"}
    return np.array(measured), np.array(floors), {"instance": instance, "cells": rows}


def _evidence(control, params):
    measured, floors, details = _cells(control, params)
    return Evidence(measured=measured, theoretical=np.zeros_like(measured), relation="<=",
                    tolerance=Tolerance(floors, "float64 floor of a contraction",
                                        "8 alpha tau u S / (1 - rho_hat), rho_hat fitted per "
                                        "body period on the corrected run; see "
                                        "_rounding_floor"),
                    details=details)


@claim("fedals.alg4.corrected_scaffold_exact", ref="Alg. 3-4 (corrected), [KKM+20]",
       kind="algorithm", expected="holds",
       statement="FedALS+SCAFFOLD with the corrected control update (server variate "
                 "c = (1/K) sum c_k in the local step, refresh c_k <- c_k - c + drift/(eta P_g)) "
                 "removes client drift: with exact gradients it converges to the global "
                 "minimiser, for alpha = 1 (SCAFFOLD) and alpha > 1.",
       quick=QUICK, full=FULL)
def corrected_scaffold(*, rng, n_clients, alphas, n_steps, local_steps, step):
    r"""Both corrections of spec 7.12 (mean instead of sum, sign of :math:`c_k - c`): the
    refresh makes :math:`c_k` the average gradient of client k over the block's last period
    (option II of [KKM+20]), so the fixed point of the iteration has :math:`c_k = \nabla
    f_k(x^\star)` and every client at :math:`x^\star`. On the deterministic instance of the
    module docstring the error contracts geometrically (factor per body period in details,
    e.g. about 0.75 for alpha = 1) down to the float64 floor. measured: the final
    :math:`\|\hat\theta - x^\star\|` per (K, alpha) cell; theoretical 0; tolerance the derived
    rounding floor :math:`8\alpha\tau u S/(1-\hat\rho)` (6.5e-14 to 1.1e-13 here), S the largest of
    :math:`\|x^\star\|, \|b_k\|, \|\nabla f_k(x^\star)\|`. Expected ``holds``.
    FedAvg/FedALS without control variates keep a drift bias on the same instance."""
    return _evidence("scaffold", dict(n_clients=n_clients, alphas=alphas, n_steps=n_steps,
                                      local_steps=local_steps, step=step))


@claim("fedals.alg4.printed_literal", ref="Alg. 4, lines 5, 7, 10 (as printed)",
       kind="algorithm", expected="violated",
       statement="FedALS+SCAFFOLD with the control arithmetic exactly as printed (local step "
                 "g - c_k + sum_k c_k; refresh c_k <- (1/K) sum c_k - c_k + drift/(eta P_g)) "
                 "converges to the global minimiser.",
       quick=QUICK, full=FULL)
def printed_literal(*, rng, n_clients, alphas, n_steps, local_steps, step):
    r"""Algorithm 4's lines 5, 7 and 10 read literally (schedule: the intended one, see the
    module docstring). The refresh has the sign of :math:`c_k - \bar c` flipped: with the
    drift over a period equal to :math:`\bar g_k - c_k + K\bar c` it gives :math:`c_k^+ =
    \bar g_k - 2c_k + (K+1)\bar c`, so the control variates oscillate with growing amplitude
    instead of settling at :math:`\nabla f_k(x^\star)`. On the K = 2 instance (the smallest,
    written out in details) the error grows geometrically (factor per body period in details:
    about 1.9 for alpha = 1, 12.5 for alpha = 4, 560 for alpha = 10; error about 1e25 after 25
    body periods for alpha = 4) and overflows to inf before the run ends. measured: final
    error per cell; tolerance the corrected algorithm's float64 floor on the same cell.
    Expected ``violated``. The sign error alone is already fatal: details give the variant
    with the server term read as the mean (``printed_alg4_mean``), which diverges with the
    same factors."""
    params = dict(n_clients=n_clients, alphas=alphas, n_steps=n_steps,
                  local_steps=local_steps, step=step)
    ev = _evidence("printed_alg4", params)
    _, _, mean_only = _cells("printed_alg4_mean", params)
    ev.details["sign_error_alone"] = [
        {k: r[k] for k in ("n_clients", "alpha", "final_error", "factor_per_period")}
        for r in mean_only["cells"]]
    return ev


@claim("fedals.alg4.sign_flipped_only", ref="Alg. 4, line 5 with line 7/10 sign flipped",
       kind="algorithm", expected="violated",
       statement="Flipping only the sign of the control refresh of Algorithm 4 (c_k <- c_k - "
                 "(1/K) sum c_k + drift/(eta P_g)), with the local step's printed server term "
                 "sum_k c_k kept, converges to the global minimiser for every K.",
       quick=QUICK, full=FULL)
def sign_flipped_only(*, rng, n_clients, alphas, n_steps, local_steps, step):
    r"""The sign flip alone is not enough. With the server term :math:`\sum_k c_k = K\bar c`
    in the local step, the drift over a period is :math:`\bar g_k - c_k + K\bar c`, so the
    refresh gives :math:`c_k^+ = \bar g_k + (K-1)\bar c` and :math:`\bar c^+ = \bar g + (K-1)
    \bar c`: for K = 2 an integrator (the run converges to x* at the float64 floor, details),
    for K >= 3 an amplifier. Smallest counterexample: the K = 3 instance of the module
    docstring (A_3 = I, b_3 = (2, 1) added), whose error grows geometrically for every alpha.
    Growth factor per body period for K = 3: about 1.34 (alpha = 1) and 3.2 (alpha = 4);
    for K = 2 the integrator converges slowly (about 0.95 per period for alpha = 1), so the
    runs are long enough (3500 steps quick) for it to reach the floor.
    measured: final error per cell (K = 2 cells hold, K = 3 cells fail); tolerance the
    corrected algorithm's float64 floor. Expected ``violated``; the statement that holds is
    ``fedals.alg4.corrected_scaffold_exact`` (both corrections)."""
    return _evidence("sign_flipped_alg4", dict(n_clients=n_clients, alphas=alphas,
                                               n_steps=n_steps, local_steps=local_steps,
                                               step=step))


@claim("fedals.alg3.printed_scaffold_exact", ref="Alg. 3, lines 5, 7 (as printed)",
       kind="algorithm", expected="violated",
       statement="SCAFFOLD's control arithmetic as printed in Algorithm 3 (local step "
                 "g - c_k + sum_k c_k; refresh c_k <- sum_k c_k - c_k + drift/(eta P_g)), run "
                 "on the FedALS schedule, converges to the global minimiser.",
       quick=QUICK, full=FULL)
def printed_scaffold(*, rng, n_clients, alphas, n_steps, local_steps, step):
    r"""Algorithm 3 as printed (sum instead of mean and the flipped sign, spec 7.12); alpha
    = 1 is SCAFFOLD itself. Same deterministic instance and tolerance as the corrected claim.
    The iterates diverge (factor per period > 1, overflow in the longer runs; details).
    Expected ``violated``."""
    return _evidence("printed", dict(n_clients=n_clients, alphas=alphas, n_steps=n_steps,
                                     local_steps=local_steps, step=step))
