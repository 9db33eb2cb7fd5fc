r"""Shared machinery of SCAFFOLD (Algorithm 3) and FedALS + SCAFFOLD (Algorithm 4) of [001,
App. D]: the printed control-variate arithmetic against the corrected one, on a small
deterministic instance (the claims are in :mod:`.alg3` and :mod:`.alg4`).

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
from flbounds.ledger import Evidence, Tolerance, hypothesis
from flbounds.tolerances import UNIT_ROUNDOFF

from ._predicates import positive_integers

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


def instances(params):
    """The values the hypotheses of Algorithms 3-4 read, one instance per client count."""
    return [dict(hessians=HESSIANS[:K], step=params["step"], local_steps=params["local_steps"],
                 alphas=params["alphas"], n_clients=K) for K in params["n_clients"]]


@hypothesis("inputs", "the algorithm's inputs: step eta > 0, tau >= 1 local steps, an integer "
                      "alpha >= 1, K >= 2 clients")
def inputs(*, step, local_steps, alphas, n_clients):
    return bool(step > 0 and n_clients >= 2 and positive_integers(local_steps)
                and positive_integers(alphas))


@hypothesis("exact_setting", "SCAFFOLD's setting [KKM+20] with exact gradients: every client "
                             "loss strongly convex and smooth (SPD quadratics), so the global "
                             "minimiser is unique and drift-free methods reach it")
def strongly_convex_quadratics(*, hessians):
    eig = np.linalg.eigvalsh(0.5 * (hessians + np.swapaxes(hessians, -1, -2)))
    return bool(np.all(eig > 0) and np.allclose(hessians, np.swapaxes(hessians, -1, -2)))


def _evidence(control, params):
    measured, floors, details = _cells(control, params)
    return Evidence(measured=measured, theoretical=np.zeros_like(measured), relation="<=",
                    instance=instances(params),
                    tolerance=Tolerance(floors, "float64 floor of a contraction",
                                        "8 alpha tau u S / (1 - rho_hat), rho_hat fitted per "
                                        "body period on the corrected run; see "
                                        "_rounding_floor"),
                    details=details)
