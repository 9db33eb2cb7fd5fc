r"""Baselines of FOCUS's Figure 4 (FOCUS, Section 5): FedAU, MIFA, SCAFFOLD, ProxSkip.

Pure functions of (problem, plan, hyper-parameters), vectorized over the participants of a
round (NumPy; these only run at the figure's scale). Where the authors' reference code
(github.com/BichengYing/FedASL) departs from the published method, the published method is
implemented and the departure is named in the docstring. ``step`` is a number or a schedule
with one step per round (:mod:`flbounds.algorithms.schedules`): round r uses :math:`\eta_r`
wherever the method has :math:`\eta`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.algorithms._common import checked_run
from flbounds.problems._base import _Problem
from flbounds.validation import as_float_array, check_int, check_positive


class BaselineTrace(NamedTuple):
    """Server iterates ``x`` (n_rounds + 1, d)."""

    x: np.ndarray


class FedAUTrace(NamedTuple):
    r"""Trace of :func:`fedau`.

    Attributes
    ----------
    x : ndarray, shape (n_rounds + 1, d)
        Server iterates, ``x[0] = x0``.
    omega : ndarray, shape (n_rounds + 1, N)
        The clients' weight estimates after each round (row 0: the initial 1).

    References
    ----------
    S. Wang and M. Ji, A lightweight method for tackling unknown participation statistics in
    federated averaging (FedAU), ICLR 2024.
    """

    x: np.ndarray
    omega: np.ndarray


class MifaTrace(NamedTuple):
    r"""Trace of :func:`mifa`.

    Attributes
    ----------
    x : ndarray, shape (n_rounds + 1, d)
        Server iterates.
    memory : ndarray, shape (N, d)
        At the end, client i's latest update
        :math:`G_i = (x_{r_i} - z_{\tau,i})/(\eta_{r_i}\tau)` (0 before its first
        participation).

    References
    ----------
    X. Gu, K. Huang, J. Zhang and L. Huang, Fast federated learning in the presence of
    arbitrary device unavailability (MIFA), NeurIPS 2021.
    """

    x: np.ndarray
    memory: np.ndarray


class ScaffoldTrace(NamedTuple):
    """Trace of :func:`scaffold`.

    Attributes
    ----------
    x, c : ndarray, shape (n_rounds + 1, d)
        Server iterates and server control variates after each round.
    c_clients : ndarray, shape (N, d)
        The clients' control variates at the end.

    References
    ----------
    S. P. Karimireddy et al., SCAFFOLD: stochastic controlled averaging for federated
    learning, ICML 2020.
    """

    x: np.ndarray
    c: np.ndarray
    c_clients: np.ndarray


def _setup(problem, plan, step, local_steps, x0):
    """Checked plan, the steps per round (R,), local steps, start and the iterate array."""
    plan, steps, local_steps, x = checked_run(problem, plan, step, local_steps, x0,
                                              per_local_step=False)
    xs = np.empty((plan.shape[0] + 1, problem.dim))
    xs[0] = x
    return plan, steps[:, 0], local_steps, x, xs


def _local_gd(problem, x, idx, step, local_steps, correction=None):
    """``local_steps`` steps of z <- z - step (grad f_i(z) - correction_i) from x, for idx."""
    Z = np.empty((idx.size, x.size))
    Z[:] = x
    gradients = _gradients_of(problem, Z, idx)
    for _ in range(local_steps):
        G = gradients(Z)
        Z -= step * (G if correction is None else G - correction)
    return Z


def _gradients_of(problem, Z, idx):
    """``lambda Z: problem.client_gradients(Z, clients=idx)`` for a library problem with the
    clients checked once, not at every local step: the same kernel on the same arrays, so
    the same numbers. A point that is not a C-contiguous finite float64 array of the
    participants' shape goes through ``client_gradients``' check (and its ValueError), as
    there. Any other object with a ``client_gradients`` (a wrapper adding noise, say) is
    called as it is."""
    if type(problem).client_gradients is not _Problem.client_gradients:
        return lambda Z: problem.client_gradients(Z, clients=idx)
    Z, frozen = problem._points(Z, idx)     # the checks of client_gradients, once
    into, shape = problem._gradients_into, (idx.size, problem.dim)

    def gradients(Z):
        if (not isinstance(Z, np.ndarray) or Z.shape != shape or Z.dtype != np.float64
                or not Z.flags.c_contiguous or not np.isfinite(Z).all()):
            Z = as_float_array(Z, "X", shape=shape)     # client_gradients' check (or error)
        out = np.empty(shape)
        into(Z, frozen, out)
        return out

    return gradients


def _close_intervals(omega, n_intervals, open_interval, mask, max_interval):
    """FedAU's weight estimates, in place, after one round: every open interval grows by
    one; a participant's, or one of ``max_interval`` rounds, closes, and the client's
    ``omega`` becomes the mean length of its closed intervals. Elementwise, so the arrays
    are (N,) for one plan or (B, N) for B replicates."""
    open_interval += 1.0
    close = mask | (open_interval >= max_interval)
    omega[close] = (n_intervals[close] * omega[close] + open_interval[close]) / (
        n_intervals[close] + 1.0)
    n_intervals[close] += 1.0
    open_interval[close] = 0.0


def fedau(problem, plan, *, step, local_steps, x0=None, server_step=1.0, max_interval=10,
          normalize=False, weights_from="past") -> FedAUTrace:
    r"""FedAU (Wang and Ji, 2024): FedAvg with online-estimated participation weights.

    Client i keeps :math:`\omega_i`, the running mean of its observed participation intervals;
    an interval is closed when i participates or when it reaches ``max_interval`` = K rounds
    (then it is recorded as K). With :math:`\Delta_i = x^{(r)}_{\tau,i} - x_r`,

    .. math:: x_{r+1} = x_r + \frac{\eta_g}{N} \sum_{i \in S_r} \omega^{(r)}_i \Delta_i

    (the published rule; ``normalize=True`` gives the FOCUS reference notebook's variant
    :math:`x_r + \sum_{S_r} \omega_i\Delta_i / \sum_{S_r}\omega_i`). Weights start at 1. By
    default (``weights_from="past"``) :math:`\omega^{(r)}_i` is the mean of the intervals
    closed *before* round r, so it does not depend on i's participation in round r: the
    authors' code (``github.com/IBM/fedau``, ``main.py``, "interval used in the next round")
    does this, and the paper's analysis needs :math:`\omega^{(r)}_i` independent of
    :math:`q^{(r)}_i`. ``weights_from="current"`` also counts the interval that round r closes
    (the rule of earlier versions of this function). The torch client of the FOCUS reference
    code (``github.com/BichengYing/FedASL``) never advances its interval counter (the
    ``participation_counter`` lines sit in the wrong branch); that bug is not reproduced.

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float
        The local step :math:`\eta > 0`.
    local_steps : int
        :math:`\tau \ge 1` local GD steps per participant and round.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    server_step : float
        :math:`\eta_g > 0` (not used with ``normalize``).
    max_interval : int
        K, the longest participation interval recorded.
    normalize : bool
        The FOCUS reference notebook's normalised average instead of the published rule.
    weights_from : {"past", "current"}, default "past"
        Whether round r's weights count only the intervals closed before round r (the
        method) or also the one round r closes.

    Returns
    -------
    FedAUTrace
        ``x`` (n_rounds + 1, d), the server iterates, and ``omega`` (n_rounds + 1, N), the
        weight estimates after each round (row r + 1: after round r's closures; round r
        weights its participants by row r with ``weights_from="past"``, by row r + 1 with
        ``"current"``).

    References
    ----------
    .. [1] S. Wang, M. Ji. A Lightweight Method for Tackling Unknown Participation
       Statistics in Federated Averaging. ICLR 2024.
    """
    plan, step, local_steps, x, xs = _setup(problem, plan, step, local_steps, x0)
    server_step = check_positive(server_step, "server_step")
    max_interval = check_int(max_interval, "max_interval", minimum=1)
    if weights_from not in ("past", "current"):
        raise ValueError(f"weights_from must be 'past' or 'current', got {weights_from!r}")
    n_clients = problem.n_clients
    omega = np.ones(n_clients)
    omegas = np.empty((plan.shape[0] + 1, n_clients))
    omegas[0] = omega
    n_intervals = np.zeros(n_clients)
    open_interval = np.zeros(n_clients)
    for r, mask in enumerate(plan):
        before = omega.copy() if weights_from == "past" else None
        _close_intervals(omega, n_intervals, open_interval, mask, max_interval)
        idx = np.flatnonzero(mask)
        if idx.size:
            delta = _local_gd(problem, x, idx, step[r], local_steps) - x
            w = (omega if before is None else before)[idx]
            if normalize:
                x = x + (w @ delta) / w.sum()
            else:
                x = x + server_step * (w @ delta) / n_clients
        xs[r + 1] = x
        omegas[r + 1] = omega
    return FedAUTrace(xs, omegas)


def mifa(problem, plan, *, step, local_steps, x0=None) -> MifaTrace:
    r"""MIFA (Gu et al., 2021): the server memorizes every client's latest update.

    A participant pulls :math:`x_r`, runs :math:`\tau` GD steps with :math:`\eta_r` and stores
    :math:`G_i = (x_r - x^{(r)}_{\tau,i})/(\eta_r\tau)`; the server steps
    :math:`x_{r+1} = x_r - \eta_r\tau \frac1N \sum_{i=1}^N G_i` over all clients (stale
    :math:`G_i` for non-participants, 0 before a client's first participation): Algorithm 1
    of the paper, whose server step is the local step (with a constant step,
    :math:`x_{r+1} = x_r - \frac1N\sum_i (x_{r_i} - z_{\tau,i})`, computed so). The
    authors' code (``github.com/hmgxr128/MIFA_code``, ``src/trainers/fdu.py``) makes no step
    until every client has been available once and then fills the memory with every client's
    update at the initial model; here the memory starts at 0 and the run steps from round 0
    (with every client in the first round the two coincide, the code one round later: checked
    in ``tests/flbounds/algorithms/test_authors_code.py``). The FOCUS reference notebook
    instead stores :math:`G_i` relative to the client's *old* local model (stale-model bug)
    and its torch version adds the update (ascent); neither bug is reproduced.

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float
        The local step :math:`\eta > 0`.
    local_steps : int
        :math:`\tau \ge 1` local GD steps per participant and round.
    x0 : array_like, shape (d,), optional
        Start (default 0).

    Returns
    -------
    MifaTrace
        ``x`` (n_rounds + 1, d), the server iterates, and the final memory :math:`G_i`
        (N, d).

    References
    ----------
    .. [1] X. Gu, K. Huang, J. Zhang, L. Huang. Fast Federated Learning in the Presence of
       Arbitrary Device Unavailability. NeurIPS 2021.
    """
    plan, step, local_steps, x, xs = _setup(problem, plan, step, local_steps, x0)
    # raw updates x_{r_i} - z_i and the step eta_{r_i} they were made with: the server step
    # eta_r tau G_i is the raw update times eta_r / eta_{r_i} (exactly 1 for a constant step)
    updates = np.zeros((problem.n_clients, problem.dim))
    made_with = np.full(problem.n_clients, step[0] if step.size else 1.0)
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            updates[idx] = x - _local_gd(problem, x, idx, step[r], local_steps)
            made_with[idx] = step[r]
        x = x - ((step[r] / made_with)[:, None] * updates).mean(axis=0)
        xs[r + 1] = x
    return MifaTrace(xs, updates / (made_with[:, None] * local_steps))


def scaffold(problem, plan, *, step, local_steps, x0=None,
             server_step=1.0) -> ScaffoldTrace:
    r"""SCAFFOLD (Karimireddy et al., 2020), option II, global step :math:`\eta_g`.

    Local: :math:`z \leftarrow z - \eta(\nabla f_i(z) - c_i + c)`, :math:`\tau` steps from
    :math:`x_r`. Then :math:`c_i^+ = c_i - c + (x_r - z_\tau)/(\tau\eta)`,
    :math:`x_{r+1} = x_r + \eta_g |S_r|^{-1}\sum_{S_r}(z_\tau - x_r)` and
    :math:`c \leftarrow c + N^{-1}\sum_{S_r}(c_i^+ - c_i)`. All controls start at 0. The torch
    reference divides by the nominal number of sampled clients instead of :math:`|S_r|`;
    here it is :math:`|S_r|`. Communication: 2d per participant and round.

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float or schedule
        The local step :math:`\eta > 0`, or a schedule (:mod:`flbounds.algorithms.schedules`).
    local_steps : int
        :math:`\tau \ge 1` local GD steps per participant and round.
    x0 : array_like, shape (d,), optional
        Start (default 0).
    server_step : float, default 1
        :math:`\eta_g > 0` (1: the method as run in FOCUS's Figure 4).

    Returns
    -------
    ScaffoldTrace
        ``x`` and the server control ``c`` after every round, the final client controls.

    References
    ----------
    .. [1] S. P. Karimireddy, S. Kale, M. Mohri, S. Reddi, S. Stich, A. T. Suresh. SCAFFOLD:
       Stochastic Controlled Averaging for Federated Learning. ICML 2020.
    """
    plan, step, local_steps, x, xs = _setup(problem, plan, step, local_steps, x0)
    server_step = check_positive(server_step, "server_step")
    c_server = np.zeros(problem.dim)
    cs = np.zeros((plan.shape[0] + 1, problem.dim))
    c_client = np.zeros((problem.n_clients, problem.dim))
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            Z = _local_gd(problem, x, idx, step[r], local_steps, c_client[idx] - c_server)
            c_new = c_client[idx] - c_server + (x - Z) / (local_steps * step[r])
            c_server = c_server + (c_new - c_client[idx]).sum(axis=0) / problem.n_clients
            c_client[idx] = c_new
            delta = (Z - x).mean(axis=0)
            x = x + delta if server_step == 1.0 else x + server_step * delta
        xs[r + 1] = x
        cs[r + 1] = c_server
    return ScaffoldTrace(xs, cs, c_client)


def proxskip(problem, plan, *, step, local_steps, x0=None) -> BaselineTrace:
    r"""ProxSkip / Scaffnew (Mishchenko et al., 2022) with communication every :math:`\tau`
    local steps (probability :math:`p = 1/\tau` replaced by its mean period), as run in
    FOCUS's Figure 4.

    A participant first corrects its control with its last local model :math:`\hat x_i`,
    :math:`h_i \leftarrow h_i + (x_r - \hat x_i)/(\eta\tau)`, then runs
    :math:`z \leftarrow z - \eta(\nabla f_i(z) - h_i)` for :math:`\tau` steps from
    :math:`x_r`; the server averages the participants' models, :math:`x_{r+1} =
    |S_r|^{-1}\sum_{S_r} z_{\tau,i}`, and :math:`\hat x_i \leftarrow z_{\tau,i}`. Controls
    start at 0 and :math:`\hat x_i = x_0`. The method is designed for full participation; with
    it the update is exactly Scaffnew's. Communication: 2d per participant and round.

    Parameters
    ----------
    problem : flbounds.problems problem
        The clients' functions.
    plan : array_like of bool, shape (n_rounds, n_clients)
        Row r is the participation mask of :math:`S_r`.
    step : float
        The local step :math:`\eta > 0`.
    local_steps : int
        :math:`\tau \ge 1` local GD steps per participant and round.
    x0 : array_like, shape (d,), optional
        Start (default 0).

    Returns
    -------
    BaselineTrace
        ``x`` (n_rounds + 1, d), the server iterates.

    References
    ----------
    .. [1] K. Mishchenko, G. Malinovsky, S. Stich, P. Richtarik. ProxSkip: Yes! Local
       Gradient Steps Provably Lead to Communication Acceleration! Finally! ICML 2022.
    """
    plan, step, local_steps, x, xs = _setup(problem, plan, step, local_steps, x0)
    control = np.zeros((problem.n_clients, problem.dim))
    last_local = np.tile(x, (problem.n_clients, 1))
    for r, mask in enumerate(plan):
        idx = np.flatnonzero(mask)
        if idx.size:
            control[idx] += (x - last_local[idx]) / (step[r] * local_steps)
            Z = _local_gd(problem, x, idx, step[r], local_steps, control[idx])
            last_local[idx] = Z
            x = Z.mean(axis=0)
        xs[r + 1] = x
    return BaselineTrace(xs)
