r"""FedAvg, FOCUS, SCAFFOLD and FedAvg with server momentum written in the vocabulary of
:mod:`flbounds.pep.describe`, with the Lyapunov measures their one-round worst cases use.

Each function returns a :class:`~flbounds.pep.describe.Round`; pass it with a
:class:`~flbounds.pep.describe.Setting` and a measure to
:func:`flbounds.pep.worst_case`. The rounds are those of ``flbounds.algorithms``
(``fedavg``, ``focus``, ``baselines.scaffold``), with SCAFFOLD's global step and the server
momentum of FedAvgM (Hsu, Qi and Brown, 2019) as parameters.

- :func:`fedavg_round` with :func:`~flbounds.pep.measures.distance` (a common minimizer) or
  :func:`~flbounds.pep.measures.two_runs` (heterogeneous clients) is the round of
  :func:`flbounds.pep.fedavg_rate`.
- :func:`focus_round` with :func:`focus_lyapunov` over clients sharing a minimizer is the
  round of :func:`flbounds.pep.focus_rate` (its module docstring shows why sharing the
  minimizer loses nothing for FOCUS).
- :func:`scaffold_round` with :func:`scaffold_lyapunov`: :math:`\|x - x^\star\|^2 + c \sum_i
  \|c_i - \nabla f_i(x^\star)\|^2` with :math:`c = \sum_i c_i / N` (the algorithm's
  invariant), the fixed point's distance.
- :func:`momentum_round` with :func:`momentum_lyapunov`: :math:`\|x - x^\star\|^2 + c
  \|m\|^2`.
"""

from __future__ import annotations

from flbounds.validation import check_positive

from .describe import FixedWeights, Round, client_mean, client_sum, gradient_at, lyapunov
from .steps import (
    local_control_variate,
    local_gd,
    local_tracking,
    server_control_variate,
    server_model_step,
    server_momentum,
    server_tracking,
)


def fedavg_round(local_steps, step, *, aggregate="uniform", global_step=1.0) -> Round:
    r"""FedAvg: :math:`\tau` local gradient steps, :math:`x^+ = x + \eta_g \sum_i w_i(S)
    (z_i - x)` (``aggregate`` the rule of :math:`w`; the mean over S by default, so with
    :math:`\eta_g = 1` the server takes the participants' mean model and keeps :math:`x` on
    an empty round).

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        The local step size :math:`\eta > 0`.
    aggregate : str or aggregation rule, default "uniform"
        The rule of :math:`w` (:mod:`flbounds.pep.aggregation`).
    global_step : float, default 1
        :math:`\eta_g > 0`.

    Returns
    -------
    Round
        Server state ``x``, no client state, push ``delta``.
    """
    return Round("FedAvg", local_gd(local_steps, step), {"delta": aggregate},
                 server_model_step(global_step))


def focus_round(local_steps, step) -> Round:
    r"""FOCUS (push-pull gradient tracking, ``flbounds.algorithms.focus``): state :math:`x, y`
    (server) and :math:`z_i, g_i = \nabla f_i(z_i)` (clients), :math:`y = \sum_i g_i`.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1` (:math:`\tau` gradients, :math:`\tau - 1` local moves).
    step : float
        :math:`\eta > 0`, used by the clients and the server.

    Returns
    -------
    Round
        See :func:`~flbounds.pep.steps.local_tracking` and
        :func:`~flbounds.pep.steps.server_tracking`.

    References
    ----------
    Ying, Li and Yang, FOCUS, NeurIPS 2025, arXiv:2503.20117.
    """
    return Round("FOCUS", local_tracking(local_steps, step), {"v": "sum"},
                 server_tracking(step), server_state=("x", "y"), client_state=("z", "g"),
                 initial={"g": gradient_at("z"), "y": client_sum("g")})


def focus_lyapunov(consensus_weight):
    r""":math:`\Psi = \|x - x^\star\|^2 + c \sum_i \|x - z_i\|^2` (FOCUS's analysis).

    Parameters
    ----------
    consensus_weight : float
        :math:`c > 0`.

    Returns
    -------
    Measure
        :math:`E[\Psi_{r+1}] / \Psi_r`, with the start bounds :math:`\|x\| \le 1`,
        :math:`\|z_i\| \le 1 + c^{-1/2}` for a certified solve.

    References
    ----------
    Ying, Li and Yang, FOCUS, NeurIPS 2025, arXiv:2503.20117.
    """
    c = check_positive(consensus_weight, "consensus_weight")

    def value(state, star):
        x = state["x"]
        return (x - star.x) ** 2 + c * sum((x - z) ** 2 for z in state.client("z"))

    def bounds(state):  # Psi <= 1, x* = 0: ||x|| <= 1, ||x - z_i|| <= c^{-1/2}
        return {state["x"]: 1.0, **{z: 1.0 + c**-0.5 for z in state.client("z")}}

    return lyapunov(value, "E[Psi_{r+1}] / Psi_r, Psi = ||x - x*||^2 + c sum_i ||x - z_i||^2",
                    bounds)


def scaffold_round(local_steps, step, n_clients, *, global_step=1.0,
                   aggregate="uniform") -> Round:
    r"""SCAFFOLD, option II (``flbounds.algorithms.scaffold`` at :math:`\eta_g = 1`): server
    :math:`x, c = \sum_i c_i / N`, clients :math:`c_i`; :math:`x^+ = x + \eta_g \sum_i w_i(S)
    (z_i - x)`, :math:`c^+ = c + \sum_{i \in S} (c_i^+ - c_i) / N`.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        The local step size :math:`\eta > 0`.
    n_clients : int
        N (``dc`` is aggregated with the fixed weights :math:`1/N`).
    global_step : float, default 1
        :math:`\eta_g > 0`.
    aggregate : str or aggregation rule, default "uniform"
        The rule of :math:`w` for ``delta``.

    Returns
    -------
    Round
        Server state ``x, c`` (:math:`c` the clients' mean at the start), client state ``ci``.

    References
    ----------
    S. P. Karimireddy et al., SCAFFOLD, ICML 2020.
    """
    n = int(n_clients)
    return Round("SCAFFOLD", local_control_variate(local_steps, step),
                 {"delta": aggregate, "dc": FixedWeights((1.0 / n,) * n)},
                 server_control_variate(global_step), server_state=("x", "c"),
                 client_state=("ci",), pull=("x", "c"), initial={"c": client_mean("ci")})


def scaffold_lyapunov(control_weight):
    r""":math:`V = \|x - x^\star\|^2 + c \sum_i \|c_i - \nabla f_i(x^\star)\|^2`.

    Parameters
    ----------
    control_weight : float
        :math:`c > 0`.

    Returns
    -------
    Measure
        :math:`E[V^+] / V`, with the start bounds :math:`\|x\| \le 1`,
        :math:`\|c_i\| \le c^{-1/2}` for a certified solve.
    """
    c = check_positive(control_weight, "control_weight")

    def value(state, star):
        return (state["x"] - star.x) ** 2 + c * sum(
            (ci - g) ** 2 for ci, g in zip(state.client("ci"), star.gradients, strict=True))

    def bounds(state):  # V <= 1 with every grad f_i(x*) = 0
        return {state["x"]: 1.0, **{ci: c**-0.5 for ci in state.client("ci")}}

    return lyapunov(value, "E[V+] / V, V = ||x - x*||^2 + c sum_i ||c_i - grad f_i(x*)||^2",
                    bounds)


def momentum_round(local_steps, step, beta, *, global_step=1.0, aggregate="uniform") -> Round:
    r"""FedAvg with server momentum: :math:`m^+ = \beta m + \Delta`, :math:`x^+ = x + \eta_g
    m^+`, :math:`\Delta = \sum_i w_i(S)(z_i - x)`.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        The local step size :math:`\eta > 0`.
    beta : float
        The server momentum, :math:`0 \le \beta < 1`.
    global_step : float, default 1
        :math:`\eta_g > 0`.
    aggregate : str or aggregation rule, default "uniform"
        The rule of :math:`w`.

    Returns
    -------
    Round
        Server state ``x, m``.

    References
    ----------
    T.-M. H. Hsu, H. Qi and M. Brown, Measuring the effects of non-identical data
    distribution for federated visual classification (FedAvgM), arXiv:1909.06335, 2019.
    """
    return Round("FedAvg with server momentum", local_gd(local_steps, step),
                 {"delta": aggregate}, server_momentum(beta, global_step),
                 server_state=("x", "m"))


def momentum_lyapunov(momentum_weight):
    r""":math:`V = \|x - x^\star\|^2 + c \|m\|^2`.

    Parameters
    ----------
    momentum_weight : float
        :math:`c > 0`.

    Returns
    -------
    Measure
        :math:`E[V^+] / V`, with the start bounds :math:`\|x\| \le 1`,
        :math:`\|m\| \le c^{-1/2}` for a certified solve.
    """
    c = check_positive(momentum_weight, "momentum_weight")
    return lyapunov(lambda state, star: (state["x"] - star.x) ** 2 + c * state["m"] ** 2,
                    "E[V+] / V, V = ||x - x*||^2 + c ||m||^2",
                    lambda state: {state["x"]: 1.0, state["m"]: c**-0.5})


__all__ = ["fedavg_round", "focus_lyapunov", "focus_round", "momentum_lyapunov",
           "momentum_round", "scaffold_lyapunov", "scaffold_round"]
