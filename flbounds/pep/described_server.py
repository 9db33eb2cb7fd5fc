r"""SAFARI, FedAU, MIFA and K-Vib's sampled step written in the vocabulary of
:mod:`flbounds.pep.describe`.

- :func:`safari_round`: SAFARI (Algorithm 1 of SAFARI) is a :class:`~.describe.Mixture`:
  with probability :math:`q` a FedAvg client round (:math:`K` local steps of
  :math:`\eta_c`, the mean over the sampled set, SAFARI's sampling law) and otherwise the
  server's gradient step :math:`x - \eta_s \nabla F(x)`, written as the round
  :func:`server_gradient_round` under full participation (:math:`\nabla F` is the clients'
  mean gradient: every client takes one step of :math:`\eta_s` from :math:`x`, the server
  averages). :mod:`flbounds.pep.server_steps` and :mod:`flbounds.pep.server_hetero` build
  its worst cases.
- :func:`fedau_round`: FedAU's aggregation :math:`x^+ = x + \frac{\eta_g}{N}\sum_{i \in S}
  \omega_i \Delta_i` with the clients' current weight estimates :math:`\omega_i` (a round
  sees them as fixed weights: they depend on the participation history only).
- :func:`mifa_round`: MIFA's memory of every client's latest update, with the server's mean
  of the memory as a state point (updated by the participants' changes, as SCAFFOLD's
  control): :func:`mifa_lyapunov` measures it.
- :func:`kvib_round`: K-Vib's sampled step, FedAvg with the unbiased aggregation
  :math:`x^+ = x + \eta_g \sum_{i \in S} (\lambda_i / \pi_i) \Delta_i`.

The rounds are those of ``flbounds.algorithms`` (``safari``, ``baselines.fedau``,
``baselines.mifa``, ``fedavg_sampler``) without noise; :mod:`flbounds.pep.replay` runs them
on arrays (``tests/flbounds/pep/test_replay_server.py``).
"""

from __future__ import annotations

from flbounds.validation import check_int, check_positive

from .describe import (
    Branch,
    FixedWeights,
    Local,
    Mixture,
    Normalized,
    Round,
    Server,
    Unbiased,
    client_mean,
    lyapunov,
)
from .steps import local_gd, server_model_step


def server_gradient_round(step) -> Round:
    r"""The server's gradient step :math:`x^+ = x - \eta_s \nabla F(x)`, :math:`F` the
    clients' mean: under full participation (the server holds every client's data), each
    client takes one gradient step of :math:`\eta_s` from :math:`x` and the server averages.

    Parameters
    ----------
    step : float
        :math:`\eta_s > 0`.

    Returns
    -------
    Round
        Server state ``x``; push ``delta``, the mean over S.
    """
    return Round("server gradient step", local_gd(1, step), {"delta": "uniform"},
                 server_model_step())


def _keep_model() -> Round:
    """A round that leaves the model unchanged (a deliberately wrong SAFARI server round)."""
    return Round("no server step", Local(lambda f, pulled, state: ({}, {}), "nothing"), {},
                 Server(lambda state, agg: {}, "keeps x"))


def safari_round(q, local_steps, step_client, step_server, participation=None, *,
                 drop_server_step=False) -> Mixture:
    r"""SAFARI's round: with probability :math:`q` a client round (:math:`K` local steps of
    :math:`\eta_c`, the mean over the sampled set), else the server step :math:`x - \eta_s
    \nabla F(x)`.

    Parameters
    ----------
    q : float
        Probability of a client round, in [0, 1].
    local_steps : int
        :math:`K \ge 1`.
    step_client, step_server : float
        :math:`\eta_c, \eta_s > 0`.
    participation : optional
        The sampled set's law on client rounds (:func:`flbounds.pep.expect.law_of`; SAFARI's
        is :func:`flbounds.pep.server_hetero.sampled_sets`); None: every client.
    drop_server_step : bool
        A deliberately wrong round (server rounds keep :math:`x`), for the tests that show a
        tightness claim catches it.

    Returns
    -------
    Mixture
        Two branches (client round, server round).

    References
    ----------
    SAFARI: Server-assisted FL under incomplete client participation, Algorithm 1.
    """
    q = float(q)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    client = Round("SAFARI client round", local_gd(local_steps, step_client),
                   {"delta": "uniform"}, server_model_step())
    server = _keep_model() if drop_server_step else server_gradient_round(step_server)
    return Mixture("SAFARI", (Branch(q, client, participation), Branch(1.0 - q, server)))


def fedau_round(local_steps, step, omega, *, server_step=1.0, normalize=False) -> Round:
    r"""FedAU: :math:`x^+ = x + \frac{\eta_g}{N}\sum_{i \in S}\omega_i \Delta_i` (published
    rule; ``normalize``: :math:`x + \sum_S \omega_i \Delta_i / \sum_S \omega_i`), with
    :math:`\Delta_i` after :math:`\tau` local gradient steps.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        The local step :math:`\eta > 0`.
    omega : sequence of float
        The clients' weight estimates :math:`\omega_i > 0` in this round (N of them).
    server_step : float, default 1
        :math:`\eta_g > 0` (not used with ``normalize``).
    normalize : bool
        The reference notebook's normalised average.

    Returns
    -------
    Round
        Server state ``x``, push ``delta``.

    References
    ----------
    S. Wang and M. Ji, A lightweight method for tackling unknown participation statistics in
    federated averaging (FedAU), ICLR 2024.
    """
    omega = tuple(float(w) for w in omega)
    if normalize:
        return Round("FedAU (normalised)", local_gd(local_steps, step),
                     {"delta": Normalized(omega)}, server_model_step())
    return Round("FedAU", local_gd(local_steps, step),
                 {"delta": FixedWeights(omega, 1.0 / len(omega))},
                 server_model_step(server_step))


def _mifa_local(local_steps, step) -> Local:
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")

    def run(f, pulled, state):
        x = pulled["x"]
        z = x
        for _ in range(tau):
            z = z - step * f.gradient(z)
        u = x - z
        return {"u": u}, {"du": u - state["u"]}

    return Local(run, f"{tau} gradient steps, step {step:g}, the update remembered")


def mifa_round(local_steps, step, n_clients) -> Round:
    r"""MIFA at a constant step: a participant stores its update :math:`u_i = x - z_{\tau,i}`
    (:math:`\tau` gradient steps; MIFA's memory :math:`G_i = u_i/(\eta\tau)`), the server
    steps :math:`x^+ = x - \bar u^+` with :math:`\bar u = \frac1N\sum_{i=1}^N u_i` over every
    client (stale updates of the others), kept as :math:`\bar u^+ = \bar u + \frac1N
    \sum_{i \in S}(u_i^+ - u_i)`.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`.
    n_clients : int
        N (``du`` is aggregated with the fixed weights :math:`1/N`).

    Returns
    -------
    Round
        Server state ``x, ubar`` (the clients' mean at the start), client state ``u``.

    References
    ----------
    X. Gu, K. Huang, J. Zhang and L. Huang, Fast federated learning in the presence of
    arbitrary device unavailability (MIFA), NeurIPS 2021, Algorithm 1.
    """
    n = check_int(n_clients, "n_clients", minimum=1)

    def update(state, agg):
        ubar = state["ubar"] + agg["du"]
        return {"ubar": ubar, "x": state["x"] - ubar}

    return Round("MIFA", _mifa_local(local_steps, step), {"du": FixedWeights((1.0 / n,) * n)},
                 Server(update, "ubar += mean du, x -= ubar"), server_state=("x", "ubar"),
                 client_state=("u",), initial={"ubar": client_mean("u")})


def mifa_lyapunov(memory_weight):
    r""":math:`V = \|x - x^\star\|^2 + c \sum_i \|u_i\|^2` (the memory vanishes at the fixed
    point with a common minimizer).

    Parameters
    ----------
    memory_weight : float
        :math:`c > 0`.

    Returns
    -------
    Measure
        :math:`E[V^+] / V`, with the start bounds :math:`\|x\| \le 1`, :math:`\|u_i\| \le
        c^{-1/2}` for a certified solve.
    """
    c = check_positive(memory_weight, "memory_weight")

    def value(state, star):
        return (state["x"] - star.x) ** 2 + c * sum(u**2 for u in state.client("u"))

    return lyapunov(value, "E[V+] / V, V = ||x - x*||^2 + c sum_i ||u_i||^2",
                    lambda state: {state["x"]: 1.0, **{u: c**-0.5 for u in state.client("u")}})


def kvib_round(local_steps, step_local, *, step_global=1.0, weights=None) -> Round:
    r"""K-Vib's sampled step (Algorithm 1 of K-Vib, full-batch local steps): :math:`R` local
    gradient steps of :math:`\eta_l`, :math:`x^+ = x + \eta_g \sum_{i \in S} (\lambda_i /
    \pi_i)(z_i - x)` (unbiased for :math:`\sum_i \lambda_i (z_i - x)`).

    Parameters
    ----------
    local_steps : int
        :math:`R \ge 1`.
    step_local : float
        :math:`\eta_l > 0`.
    step_global : float, default 1
        :math:`\eta_g > 0`.
    weights : sequence of float, optional
        :math:`\lambda_i` (default :math:`1/N`).

    Returns
    -------
    Round
        Server state ``x``, push ``delta`` aggregated by
        :class:`~flbounds.pep.aggregation.Unbiased`.

    References
    ----------
    K-Vib: Algorithm 1 and Theorem 4.1.
    """
    rule = Unbiased(None if weights is None else tuple(float(w) for w in weights))
    return Round("K-Vib sampled step", local_gd(local_steps, step_local), {"delta": rule},
                 server_model_step(step_global))


__all__ = ["fedau_round", "kvib_round", "mifa_lyapunov", "mifa_round", "safari_round",
           "server_gradient_round"]
