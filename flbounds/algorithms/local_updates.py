r"""The built-in local updates of the generic FedAvg-family round
(:func:`flbounds.algorithms.fedavg_family`): FedAvg's gradient step, FedProx's proximal step,
heavy-ball local momentum and SCAFFOLD's control variates, each a numba step (and, for
SCAFFOLD, a ``finish``) described by :func:`~flbounds.algorithms.custom.local_update`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from flbounds.algorithms.custom import LocalUpdate, local_update
from flbounds.validation import check_int

__all__ = ["local_gd", "local_momentum", "local_prox", "local_scaffold"]


@njit(cache=True, fastmath=False)
def _gd_step(z, g, x, state, eta, params):
    for p in range(z.shape[0]):
        z[p] -= eta * g[p]


@njit(cache=True, fastmath=False)
def _prox_step(z, g, x, state, eta, params):
    mu = params[0]
    for p in range(z.shape[0]):
        z[p] -= eta * (g[p] + mu * (z[p] - x[p]))


@njit(cache=True, fastmath=False)
def _momentum_step(z, g, x, state, eta, params):
    beta = params[0]
    for p in range(z.shape[0]):
        state[p] = beta * state[p] + g[p]
        z[p] -= eta * state[p]


def local_gd() -> LocalUpdate:
    r"""FedAvg's local step, :math:`z \leftarrow z - \eta g`.

    Returns
    -------
    LocalUpdate
        No parameters, no state.
    """
    return local_update(_gd_step, label="gradient step")


def local_prox(mu) -> LocalUpdate:
    r"""FedProx's local step on :math:`f_i(z) + \frac\mu2\lVert z - x\rVert^2`,
    :math:`z \leftarrow z - \eta(g + \mu(z - x))`.

    Parameters
    ----------
    mu : float
        The proximal parameter, finite, :math:`\mu \ge 0` (0: :func:`local_gd`'s step).

    Returns
    -------
    LocalUpdate
        ``params = [mu]``, no state.

    References
    ----------
    T. Li et al., Federated optimization in heterogeneous networks (FedProx), MLSys 2020.
    """
    mu = float(mu)
    if not (np.isfinite(mu) and mu >= 0.0):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    return local_update(_prox_step, params=[mu], label=f"proximal gradient step, mu={mu:g}")


def local_momentum(beta, dim) -> LocalUpdate:
    r"""Heavy-ball local steps, :math:`m_i \leftarrow \beta m_i + g`,
    :math:`z \leftarrow z - \eta m_i`, the buffer :math:`m_i` (length ``dim``) kept by the
    client across rounds.

    Parameters
    ----------
    beta : float
        The momentum, :math:`0 \le \beta < 1`.
    dim : int
        The length of the buffer, the problem's dimension d (>= 1).

    Returns
    -------
    LocalUpdate
        ``params = [beta]``, ``state_size = dim`` (the buffers start at ``state0``, default 0).
    """
    beta = float(beta)
    if not (np.isfinite(beta) and 0.0 <= beta < 1.0):
        raise ValueError(f"beta must lie in [0, 1), got {beta}")
    return local_update(_momentum_step, params=[beta], state_size=check_int(dim, "dim",
                                                                           minimum=1),
                        label=f"momentum step, beta={beta:g}")


@njit(cache=True, fastmath=False)
def _scaffold_step(z, g, x, state, server, eta, params):
    for p in range(z.shape[0]):
        z[p] -= eta * (g[p] - state[p] + server[p])


@njit(cache=True, fastmath=False)
def _scaffold_finish(z, x, state, server, report, eta_sum, params):
    for p in range(z.shape[0]):
        new = state[p] - server[p] + (x[p] - z[p]) / eta_sum
        report[p] = new - state[p]
        state[p] = new


def local_scaffold(dim) -> LocalUpdate:
    r"""SCAFFOLD's local step and control variates (option II) in the generic round:
    :math:`z \leftarrow z - \eta(g - c_i + c)`, then :math:`c_i^+ = c_i - c + (x - z)/
    \sum_t\eta_t`, reporting :math:`c_i^+ - c_i`, so that :math:`c \leftarrow c + N^{-1}
    \sum_{S_r}(c_i^+ - c_i)`. With the default aggregation and ``server_step`` this is
    :func:`~flbounds.algorithms.scaffold` (to rounding: it divides by :math:`\tau\eta`).

    Parameters
    ----------
    dim : int
        The problem's dimension d (the controls' length).

    Returns
    -------
    LocalUpdate
        No parameters; ``state_size = server_size = dim`` (controls start at ``state0`` and
        ``server0``, default 0).

    References
    ----------
    S. P. Karimireddy et al., SCAFFOLD: stochastic controlled averaging for federated
    learning, ICML 2020.
    """
    dim = check_int(dim, "dim", minimum=1)
    return local_update(_scaffold_step, state_size=dim, finish=_scaffold_finish,
                        server_size=dim, label="SCAFFOLD step (option II)")
