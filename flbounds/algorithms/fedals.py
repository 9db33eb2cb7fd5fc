r"""FedALS (Algorithm 1 of FedALS), its SCAFFOLD variant (Algorithm 4), and a plain local-SGD
FedAvg reference (Algorithm 2).

The model parameters (last axis, length P) are split into groups (slices); group g is
averaged across clients every :math:`P_g` local steps. FedALS: the head h (the last layer) has
period :math:`\tau`, the body :math:`\phi` (the representation layers) period
:math:`\alpha\tau`; the full model is averaged once more at the output. :math:`\alpha = 1` is
FedAvg with :math:`\tau` local steps.

Schedules are boolean arrays ``sync`` of shape (T, G): ``sync[s, g]`` averages group g right
after local step s. :func:`intended_schedule` is what the paper means (and what the authors'
code does, two independent checks); :func:`printed_schedule` is Algorithm 1 read literally,
whose ``else if`` branch never fires for integer alpha (spec 7.8-7.9).

Every function is pure: the gradient oracle and the batch plan are inputs; nothing is drawn.
Clients are axis -2 of the parameter array; any leading axes are independent replicates.

References
----------
.. FedALS P. Gholami, H. Seferoglu, "Improved generalization bounds for communication efficient
   federated learning", Algorithms 1-4 (Sec. 5, App. D).
.. [KKM+20] S. P. Karimireddy et al., "SCAFFOLD", ICML 2020 (control update, option II).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from flbounds.algorithms import schedules
from flbounds.algorithms._fedals_passes import FUSED_STEP_MIN as FUSED_STEP_MIN
from flbounds.algorithms._fedals_passes import (
    _average_group,
    _descend,
    _refresh_mean,
    weighted_average,
)
from flbounds.validation import check_int

CONVENTIONS = ("end", "code")
CONTROLS = ("none", "scaffold", "printed", "printed_alg4", "sign_flipped_alg4",
            "printed_alg4_mean")
# control-variate arithmetic per variant: (server variate used in the local step, sign of the
# (c_k - cbar) term in the refresh, cbar in the refresh); "mean" is the weighted average
# sum_k w_k c_k, "sum" the plain sum_k c_k, "uniform" the printed (1/K) sum_k c_k.
_CONTROL_RULES = {
    "scaffold": ("mean", 1.0, "mean"),
    "printed": ("sum", -1.0, "sum"),
    "printed_alg4": ("sum", -1.0, "uniform"),
    "sign_flipped_alg4": ("sum", 1.0, "uniform"),
    "printed_alg4_mean": ("uniform", -1.0, "uniform"),
}


def intended_schedule(n_steps: int, periods: Sequence[int], *, convention: str = "end"):
    r"""Sync mask (T, G) with group g averaged every ``periods[g]`` steps.

    ``convention="end"``: after steps s with (s + 1) mod P_g = 0 (end of each period, the
    FedAvg round structure, :math:`\lfloor T/P_g\rfloor` syncs); ``"code"``: after steps with
    s mod P_g = 0, s = 0..T-1 (the authors' ``DSGDAlg``, :math:`\lceil T/P_g\rceil` syncs).

    Parameters
    ----------
    n_steps : int
        T, at least 1.
    periods : sequence of int
        :math:`P_g \ge 1`, one per parameter group.
    convention : {"end", "code"}
        Which steps sync (above).

    Returns
    -------
    numpy.ndarray of bool, shape (T, G)
        True where group g is averaged after step s.
    """
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}")
    periods = np.asarray(periods)
    if n_steps < 1 or np.any(periods < 1) or not np.all(periods == np.round(periods)):
        raise ValueError("n_steps and periods must be positive integers")
    s = np.arange(n_steps)[:, None]
    return ((s + 1) % periods == 0) if convention == "end" else (s % periods == 0)


def fedals_periods(local_steps: int, alpha: int) -> tuple[int, int]:
    """(head period, body period) = (tau, alpha tau) for integer tau, alpha >= 1."""
    if local_steps < 1 or alpha < 1 or int(alpha) != alpha or int(local_steps) != local_steps:
        raise ValueError("local_steps and alpha must be integers >= 1")
    return int(local_steps), int(alpha * local_steps)


def printed_schedule(n_rounds: int, local_steps: int, alpha: float) -> np.ndarray:
    r"""Algorithm 1 lines 3-10 read literally: for r = 1..R, t = 0..tau-1, average h if
    :math:`(r\tau + t) \bmod \tau = 0`, else if :math:`(r\tau + t) \bmod \alpha\tau = 0` average
    :math:`\phi`. Columns (head, body), shape (R tau, 2). Alpha may be non-integer here.

    The literal text also applies the averaging to the index-t iterate after the index-(t+1)
    one was computed (a no-op); the toolkit's printed variant applies it to the current
    iterate, the charitable reading, so the only difference from the intent is the schedule.

    Parameters
    ----------
    n_rounds : int
        R, at least 1.
    local_steps : int
        :math:`\tau \ge 1`.
    alpha : float
        The body's period multiple, :math:`\alpha > 0`.

    Returns
    -------
    numpy.ndarray of bool, shape (R tau, 2)
        Columns (head, body): True where that group is averaged.

    References
    ----------
    .. [1] P. Gholami, H. Seferoglu. Improved Generalization Bounds for Communication
       Efficient Federated Learning. arXiv:2404.11754 (2024), Algorithm 1, lines 3-10.
    """
    if n_rounds < 1 or local_steps < 1 or alpha <= 0:
        raise ValueError("n_rounds, local_steps must be >= 1 and alpha > 0")
    r = np.arange(1, n_rounds + 1)[:, None]
    t = np.arange(local_steps)[None, :]
    step = (r * local_steps + t).ravel().astype(float)
    head = np.isclose(np.mod(step, local_steps), 0.0)
    body = ~head & np.isclose(np.mod(step, alpha * local_steps), 0.0)
    return np.stack([head, body], axis=1)


class FedALSTrace(NamedTuple):
    r"""Result of :func:`fedals`.

    ``output``: the final full weighted average (..., P); ``clients``: client parameters after
    the last step (..., K, P); ``n_syncs``: syncs per group (G,); ``consensus``: per group, the
    consensus distance :math:`\sum_k w_k\|\theta_k - \bar\theta\|^2` of that group just
    before each of its syncs, an array (n_syncs_g, ...) per group (empty unless recorded);
    ``history``: the full weighted average after every ``record_every``-th step,
    (T // record_every, ..., P) (None unless requested).
    """

    output: np.ndarray
    clients: np.ndarray
    n_syncs: np.ndarray
    consensus: list
    history: np.ndarray | None = None


def _check_inputs(theta0, weights, sync, groups, step):
    theta = np.array(theta0, dtype=float)
    if theta.ndim < 2 or not np.all(np.isfinite(theta)):
        raise ValueError("theta0 must be a finite array (..., n_clients, n_params)")
    K, P = theta.shape[-2:]
    w = np.full(K, 1.0 / K) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (K,) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-12:
        raise ValueError("weights must be K nonnegative numbers summing to 1")
    sync = np.asarray(sync, dtype=bool)
    if sync.ndim != 2 or sync.shape[1] != len(groups):
        raise ValueError("sync must be a bool (n_steps, n_groups) array")
    covered = np.zeros(P, dtype=int)
    for g in groups:
        covered[g] += 1
    if np.any(covered != 1):
        raise ValueError("groups must be slices partitioning the parameter axis")
    scalar, steps = schedules.resolve(step, sync.shape[0], 1)
    return theta, w, sync, scalar, steps[:, 0]


def fedals(grad: Callable, theta0, plan, *, step: float, sync, groups: Sequence[slice],
           weights=None, control: str = "none", periods: Sequence[int] | None = None,
           record_consensus: bool = False, record_every: int | None = None,
           descend: Callable | None = None) -> FedALSTrace:
    r"""Local SGD with group-wise periodic averaging (FedALS and its SCAFFOLD variant).

    Each step s: every client takes :math:`\theta_k \leftarrow \theta_k - \eta(g_k - c_k + c)`
    with :math:`g_k` = ``grad(theta, plan[s])`` (c = c_k = 0 without control variates); then
    for every group with ``sync[s, g]`` the group is replaced by :math:`\sum_k w_k\theta_k`.

    Parameters
    ----------
    grad
        ``grad(theta (..., K, P), batch) -> (..., K, P)``, stochastic gradients of the clients'
        losses on the batch ``plan[s]`` (its meaning is the oracle's).
    theta0
        Initial parameters (..., K, P) (identical across clients for FedAvg/FedALS).
    plan
        Sequence of length T of per-step batches (e.g. an index array (T, ..., K, b)).
    step : float, Schedule or array
        Learning rate :math:`\eta`, or a schedule over the T steps
        (:mod:`flbounds.algorithms.schedules`; its "rounds" are the steps s). With a schedule
        the control refresh divides by the sum of the steps since the group's last sync
        (:math:`\eta P_g` for a constant step).
    sync, groups
        Schedule (T, G) and the G parameter slices.
    control
        ``"none"``; ``"scaffold"``: per-group control variates, refreshed at the group's sync
        by :math:`c_k \leftarrow c_k - c + (\theta^{prev} - \theta_k)/(\eta P_g)`, then
        :math:`c = \sum_k w_k c_k` (option II of [KKM+20], the correction of Algorithms 3-4);
        ``"printed"``: Algorithm 3 as printed (lines 5, 7), :math:`c = \sum_k c_k` in the
        local step and :math:`c_k \leftarrow \sum_{k'} c_{k'} - c_k + (\theta^{prev} -
        \theta_k)/(\eta P_g)`; ``"printed_alg4"``: Algorithm 4 as printed (lines 5, 7, 10),
        :math:`\sum_k c_k` in the local step and :math:`c_k \leftarrow \frac1K\sum_{k'}
        c_{k'} - c_k + (\theta^{prev} - \theta_k)/(\eta P_g)`; ``"sign_flipped_alg4"``:
        Algorithm 4 with only the sign of the :math:`(c_k - \bar c)` term flipped,
        :math:`c_k \leftarrow c_k - \frac1K\sum_{k'} c_{k'} + \dots`, the local step still
        using :math:`\sum_k c_k`; ``"printed_alg4_mean"``: Algorithm 4's printed refresh with
        the local step's :math:`\sum_k c_k` read as :math:`\frac1K\sum_k c_k` (the sign
        error alone).
    periods
        :math:`P_g` per group (needed for the control variates).
    record_every
        If given, keep the full weighted average after every ``record_every``-th step
        (``history`` of the trace).
    descend
        Optional ``descend(theta, step, batch)``: the local step :math:`\theta \leftarrow
        \theta - \eta\, g` in place, fused into the oracle (each model moved right after its
        gradient, the gradient never stored; the same numbers as ``grad`` and the step).
        With control variates it is called as ``descend(theta, step, batch, c_k, c)`` and
        takes the corrected step along :math:`(g - c_k) + c` (c with the clients' axis
        dropped), rounded as written.
    """
    theta, w, sync, scalar, steps = _check_inputs(theta0, weights, sync, groups, step)
    if control not in CONTROLS:
        raise ValueError(f"control must be one of {CONTROLS}")
    if control != "none" and (periods is None or len(periods) != len(groups)):
        raise ValueError("periods (one per group) are required with control variates")
    if len(plan) < sync.shape[0]:
        raise ValueError("plan must have at least one batch per step")
    c_k = np.zeros_like(theta)
    c = np.zeros(theta.shape[:-2] + theta.shape[-1:])
    prev = theta.copy()
    consensus = [[] for _ in groups]
    if record_every is not None and (int(record_every) != record_every or record_every < 1):
        raise ValueError("record_every must be a positive integer")
    history = []
    elapsed = np.zeros(len(groups))     # sum of the steps since each group's last sync
    for s in range(sync.shape[0]):
        if descend is not None:     # in place (theta is our copy)
            descend(theta, steps[s], plan[s], *(() if control == "none" else (c_k, c)))
        else:
            direction = grad(theta, plan[s])
            if control != "none":
                direction = direction - c_k + c[..., None, :]
            _descend(theta, steps[s], direction)      # in place (theta is our copy)
        elapsed += steps[s]
        for g, sl in enumerate(groups):
            if not sync[s, g]:
                continue
            if record_consensus:
                dev = np.sum((theta[..., sl] - weighted_average(theta[..., sl], w)[..., None, :])
                             ** 2, axis=-1)
                consensus[g].append(dev @ w)
            if control != "none":
                scale = scalar * periods[g] if scalar is not None else elapsed[g]
                _refresh_controls(c_k, c, theta, prev, sl, w, scale, _CONTROL_RULES[control])
            elapsed[g] = 0.0
            _average_group(theta, w, sl)
            if control != "none":     # the drift reference of the control refresh
                prev[..., sl] = theta[..., sl]
        if record_every is not None and (s + 1) % record_every == 0:
            history.append(weighted_average(theta, w))
    return FedALSTrace(weighted_average(theta, w), theta, sync.sum(axis=0),
                       [np.array(v) for v in consensus],
                       None if record_every is None else np.array(history))


def _server_variate(c_k, w, kind):
    """sum_k w_k c_k ("mean"), sum_k c_k ("sum") or (1/K) sum_k c_k ("uniform")."""
    if kind == "mean":
        return weighted_average(c_k, w)
    total = c_k.sum(axis=-2)
    return total if kind == "sum" else total / c_k.shape[-2]


def _refresh_controls(c_k, c, theta, prev, sl, w, scale, rule):
    """In place: c_k <- sign (c_k - cbar) + drift / scale on group ``sl``, then the server
    variate used by the local step."""
    if rule == _CONTROL_RULES["scaffold"] and _refresh_mean(c_k, c, theta, prev, sl, w, scale):
        return
    server_kind, sign, bar_kind = rule
    drift = (prev[..., sl] - theta[..., sl]) / scale
    bar = _server_variate(c_k[..., sl], w, bar_kind)
    c_k[..., sl] = sign * (c_k[..., sl] - bar[..., None, :]) + drift
    c[..., sl] = _server_variate(c_k[..., sl], w, server_kind)


def local_sgd_fedavg(grad: Callable, theta0, plan, *, step: float, local_steps: int,
                     n_rounds: int, weights=None) -> np.ndarray:
    r"""Reference FedAvg (Algorithm 2): R rounds of :math:`\tau` local SGD steps, then every
    client is reset to the weighted average; returns the final average (..., P).

    Written as the textbook double loop, independently of the schedule machinery of
    :func:`fedals`, to test that FedALS with alpha = 1 is FedAvg bit for bit.

    Parameters
    ----------
    grad : callable
        ``grad(theta, plan_entry)``: the stochastic gradients of every client, shaped as
        ``theta``.
    theta0 : array_like, shape (..., K, P)
        The clients' start.
    plan : sequence
        One entry per local step (the minibatches), passed to ``grad``.
    step : float, Schedule or array
        The SGD step, or a schedule per round or per local step
        (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`\tau`, local steps per round.
    n_rounds : int
        R.
    weights : array_like, shape (K,), optional
        The averaging weights (default uniform).

    Returns
    -------
    numpy.ndarray, shape (..., P)
        The final weighted average.

    References
    ----------
    .. [1] P. Gholami, H. Seferoglu. Improved Generalization Bounds for Communication
       Efficient Federated Learning. arXiv:2404.11754 (2024), Algorithm 2.
    """
    n_rounds = check_int(n_rounds, "n_rounds", minimum=0)
    local_steps = check_int(local_steps, "local_steps", minimum=1)
    steps = schedules.resolve(step, n_rounds, local_steps)[1]
    theta = np.array(theta0, dtype=float)
    K = theta.shape[-2]
    w = np.full(K, 1.0 / K) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (K,) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-12:
        raise ValueError("weights must be K nonnegative numbers summing to 1")
    s = 0
    for r in range(n_rounds):
        for t in range(local_steps):
            eta = steps[r, t] if steps.shape[1] > 1 else steps[r, 0]
            theta = theta - eta * grad(theta, plan[s])
            s += 1
        avg = weighted_average(theta, w)
        theta = np.broadcast_to(avg[..., None, :], theta.shape).copy()
    return weighted_average(theta, w)


def communication_cost(n_steps: int, local_steps: int, alpha: int, head_params: int,
                       body_params: int, *, both_directions: bool = True) -> int:
    r"""Parameters sent per client: :math:`2[\lceil T/\tau\rceil P_h + \lceil T/(\alpha\tau)
    \rceil P_\phi]` (upload + download; the reconstruction that reproduces Table 2)."""
    head, body = fedals_periods(local_steps, alpha)
    count = -(-n_steps // head) * head_params + -(-n_steps // body) * body_params
    return (2 if both_directions else 1) * count
