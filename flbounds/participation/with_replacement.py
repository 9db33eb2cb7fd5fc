r"""Sampling with replacement: Li et al.'s Scheme I, plans of counts.

Each round draws :math:`K` client indices independently with probabilities :math:`p_i`
(Li, Huang, Yang, Wang, Zhang, "On the Convergence of FedAvg on Non-IID Data", ICLR 2020,
Scheme I). The plan holds the counts :math:`c_{r,i}` (how often client :math:`i` was drawn in
round :math:`r`; each row sums to :math:`K`), a multinomial :math:`(K; p)` vector, so

.. math::

    E[c_i] = K p_i, \qquad E[c_i c_j] = K(K-1) p_i p_j + \delta_{ij} K p_i, \qquad
    \pi_i = P(c_i > 0) = 1 - (1 - p_i)^K.

:func:`flbounds.algorithms.fedavg` aggregates by counts (a client drawn :math:`c` times runs its
local phase once and enters the aggregate :math:`c` times), and with the uniform rule
:math:`x_{r+1} = \frac1K\sum_i c_i z_i`, whose mean is :math:`\sum_i p_i z_i`: client
:math:`i`'s aggregation weight is :math:`q_i = E[c_i / K] = p_i` (what
:meth:`aggregation_weights` reports for this process, the weight of :math:`i` in the mean of
the count-weighted average; never empty).
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import check_int, check_probability_vector, check_rng

from ._base import _Process


class WithReplacement(_Process):
    r"""K draws with replacement with probabilities ``p`` per round (Scheme I of Li et al.).

    Parameters
    ----------
    p : array_like, shape (n_clients,)
        Draw probabilities, nonnegative, summing to 1.
    n_draws : int
        :math:`K \ge 1` draws per round.

    Notes
    -----
    :meth:`plan` returns int64 counts of shape (n_rounds, n_clients) (rows sum to K), not a
    mask; algorithms that take masks reject it (``ValueError`` naming ``plan``).
    """

    def __init__(self, p, n_draws: int):
        self.p = check_probability_vector(p, "p")
        self.p.setflags(write=False)
        self.n_clients = int(self.p.size)
        self.n_draws = check_int(n_draws, "n_draws", minimum=1)

    def __repr__(self) -> str:
        return f"WithReplacement(n_clients={self.n_clients}, n_draws={self.n_draws})"

    def plan(self, rng: np.random.Generator, n_rounds: int) -> np.ndarray:
        """Counts, int64 (n_rounds, n_clients): row r is the multinomial (K; p) draw of round
        r."""
        check_rng(rng)
        n_rounds = check_int(n_rounds, "n_rounds", minimum=0)
        counts = rng.multinomial(self.n_draws, self.p, size=n_rounds)
        return np.ascontiguousarray(counts, dtype=np.int64).reshape(n_rounds, self.n_clients)

    def count_means(self) -> np.ndarray:
        r"""Exact :math:`E[c_i] = K p_i`, shape (n_clients,)."""
        return self.n_draws * self.p

    def count_second_moments(self) -> np.ndarray:
        r"""Exact :math:`E[c_i c_j] = K(K-1) p_i p_j + \delta_{ij} K p_i`, shape (N, N)."""
        K, p = self.n_draws, self.p
        return K * (K - 1) * np.outer(p, p) + np.diag(K * p)

    @property
    def _inclusion(self):
        with np.errstate(divide="ignore"):      # p_i = 1: log1p(-1) = -inf, pi_i = 1
            return -np.expm1(self.n_draws * np.log1p(-self.p))   # 1 - (1 - p)^K

    @property
    def _aggregation(self):
        return self.p.copy()

    _empty = 0.0
