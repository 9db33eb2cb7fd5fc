"""Processes with independent clients: Bernoulli and the Markov on/off chain."""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
from scipy.special import roots_legendre

from flbounds.tolerances import EPS

from ._base import (
    _QUAD_REL_TOL,
    _TAIL_C,
    _probabilities,
    _Process,
    all_masks,
)


def _bernoulli_rule(p: np.ndarray) -> tuple[int, float]:
    """Number of Gauss nodes and the interval end b for the q-integral (see Bernoulli)."""
    n_exact = max(1, math.ceil(p.size / 2))  # degree N - 1 polynomial: exact on [0, 1]
    total = float(p.sum())
    rest = total - float(p.max())  # lower bound on sum_{j != i} p_j
    b = 1.0 if rest <= _TAIL_C else _TAIL_C / rest
    rho = np.geomspace(1.5, 100.0, 400)
    log_m = total * b * (1.0 + (rho + 1.0 / rho) / 2.0) / 2.0  # log max |h| on the ellipse
    log_err = np.log((1.0 + total) * b / 2.0 * 64.0 / 15.0 / (rho**2 - 1.0)) + log_m
    n_bound = 1 + math.ceil(np.min((log_err - np.log(_QUAD_REL_TOL)) / (2.0 * np.log(rho))))
    return (n_exact, 1.0) if n_exact <= n_bound else (n_bound, b)


def _bernoulli_aggregation(p: np.ndarray, n_nodes: int | None = None, b: float = 1.0):
    r"""q_i = p_i \int_0^b \prod_{j \ne i} (1 - p_j s) ds by an n_nodes Gauss rule."""
    if n_nodes is None:
        n_nodes, b = _bernoulli_rule(p)
    nodes, weights = roots_legendre(n_nodes)
    s = b * (1.0 + nodes) / 2.0  # interior nodes: 1 - p_j s > 0
    log_f = np.log1p(-np.outer(s, p))  # (n_nodes, N): the sum below is pairwise (accurate)
    others = np.exp(log_f.sum(axis=1, keepdims=True) - log_f)  # prod_{j != i}, no 0 division
    return p * ((b * weights / 2.0) @ others)


class Bernoulli(_Process):
    r"""Independent participation: client i joins each round w.p. :math:`p_i` (Case 2 of [1]).

    An empty round is allowed (algorithms treat it as a no-op). Exact moments:
    :math:`\pi_i = p_i`, :math:`P(\emptyset) = \prod_j (1 - p_j)` and

    .. math::

        q_i = p_i E\left[\frac{1}{1 + K_{-i}}\right]
            = p_i \int_0^1 \prod_{j \ne i} (1 - p_j s)\, ds,

    :math:`K_{-i}` Poisson-binomial. The integrand is a polynomial of degree N - 1: for small N
    a ceil(N/2)-node Gauss-Legendre rule on [0, 1] is exact. For large N the integral is cut
    at :math:`b = 50 / \sum_{j \ne i} p_j` (tail below :math:`e^{-50}` relative, using
    :math:`E[1/(1+K)] \ge 1/(1+E K)`) and the node count is the one whose Bernstein-ellipse
    error bound [3] (the integrand is entire) is below 1e-17 relative: some 40 nodes,
    O(N * nodes) work in log space, so N = 10^5 is cheap and nothing overflows. What remains
    is floating-point rounding (mostly of the Gauss weights near s = 0, where the integrand
    concentrates): about 1e-13 relative at worst, measured against a Poisson-binomial
    recursion; a direct product would lose N eps.

    Parameters
    ----------
    p : array_like, shape (n_clients,)
        Participation probabilities in [0, 1].

    References
    ----------
    [1] Ying, Li, Yang (NeurIPS 2025), Assumption 1, Case 2; spec/002_focus.md section 1.5.
    """

    def __init__(self, p):
        self.p = _probabilities(p, "p")
        self.n_clients = int(self.p.size)

    def _plan(self, rng, n_rounds):
        return rng.random((n_rounds, self.n_clients)) < self.p

    _inclusion = property(lambda self: self.p)
    _aggregation = cached_property(lambda self: _bernoulli_aggregation(self.p))

    @cached_property
    def _empty(self):
        with np.errstate(divide="ignore"):
            return float(np.exp(np.sum(np.log1p(-self.p))))

    def _subset_probabilities(self):
        return np.prod(np.where(all_masks(self.n_clients), self.p, 1.0 - self.p), axis=1)


# ---------------------------------------------------------------------------- uniform m-of-N


class MarkovOnOff(_Process):
    r"""Each client an independent two-state (on/off) Markov chain, stationary from round 0.

    :math:`P(\text{on} \to \text{on}) = a_i` (``stay_on``) and
    :math:`P(\text{off} \to \text{on}) = b_i = \pi_i (1 - a_i)/(1 - \pi_i)`, so the stationary
    on-probability is :math:`\pi_i` (``rates``). Round 0 is drawn from the stationary law, so
    every round is marginally Bernoulli(:math:`\pi`) independently across clients, and the
    inclusion probabilities, aggregation weights and empty probability are exactly those of
    :class:`Bernoulli` (rates). Lag-one correlation of :math:`1\{i \in S_r\}`: :math:`a_i - b_i`.

    Parameters
    ----------
    rates : array_like, shape (n_clients,)
        Stationary on-probabilities in [0, 1].
    stay_on : float or array_like, shape (n_clients,)
        :math:`a_i \in [0, 1]`; needs :math:`b_i \le 1`, i.e. :math:`a_i \ge (2\pi_i - 1)/\pi_i`,
        and :math:`a_i = 1` where :math:`\pi_i = 1`.
    """

    def __init__(self, rates, stay_on):
        self.rates = _probabilities(rates, "rates")
        self.n_clients = int(self.rates.size)
        try:
            a = np.broadcast_to(np.asarray(stay_on, dtype=np.float64), self.rates.shape)
        except ValueError as err:
            raise ValueError(f"stay_on must be a scalar or shape {self.rates.shape}") from err
        self.stay_on = _probabilities(a, "stay_on")
        self.switch_on = self._switch_on(self.rates, self.stay_on)
        self._marginal = Bernoulli(self.rates)

    @staticmethod
    def _switch_on(pi: np.ndarray, a: np.ndarray) -> np.ndarray:
        if np.any((pi == 1.0) & (a != 1.0)):
            raise ValueError("stay_on must be 1 for clients with rates == 1")
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.where(pi < 1.0, pi * (1.0 - a) / (1.0 - pi), 1.0)
        if np.any(b > 1.0 + 4 * EPS):
            raise ValueError("stay_on too small: P(off -> on) = rates (1 - stay_on) / "
                             "(1 - rates) exceeds 1; need stay_on >= (2 rates - 1) / rates")
        b = np.minimum(b, 1.0)  # only rounding-level excess reaches here
        b.setflags(write=False)
        return b

    @property
    def lag_one_correlation(self) -> np.ndarray:
        """Second eigenvalue stay_on - switch_on of each chain; for 0 < rates < 1 it is the
        lag-one correlation corr(1{i in S_r}, 1{i in S_r+1})."""
        return self.stay_on - self.switch_on

    def _plan(self, rng, n_rounds):
        u = rng.random((n_rounds, self.n_clients))
        plan = np.empty((n_rounds, self.n_clients), dtype=bool)
        if n_rounds:
            plan[0] = u[0] < self.rates
        for r in range(1, n_rounds):
            plan[r] = np.where(plan[r - 1], u[r] < self.stay_on, u[r] < self.switch_on)
        return plan

    _inclusion = property(lambda self: self._marginal._inclusion)
    _aggregation = property(lambda self: self._marginal._aggregation)
    _empty = property(lambda self: self._marginal._empty)

    def _subset_probabilities(self):
        return self._marginal._subset_probabilities()


# ---------------------------------------------------------------------------- exclusion
