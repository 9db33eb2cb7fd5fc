r"""Non-adaptive samplers and the full-information oracle (K-Vib, Sec. 2.5 and App. C)."""

from __future__ import annotations

import numpy as np

from .adaptive import Draw, Feedback, SamplerBase, check_feedback, check_sizes, isp_draw
from .optimal import optimal_isp_probabilities


class UniformISP(SamplerBase):
    r"""Independent sampling with :math:`p_i=K/N`; estimator weight N/K.

    Parameters
    ----------
    n_clients : int
        N, at least 1.
    budget : float
        The expected sample size K, :math:`0 < K \le N`.

    References
    ----------
    .. [1] D. Zeng et al. Enhanced Federated Optimization: Adaptive Unbiased Client Sampling
       with Reduced Variance. TMLR 2025. arXiv:2310.02698, eq. (28).
    """

    procedure = "isp"

    def __init__(self, n_clients: int, budget: float):
        self.n_clients, self.budget = check_sizes(n_clients, budget)

    def probabilities(self) -> np.ndarray:
        return np.full(self.n_clients, self.budget / self.n_clients)

    def sample(self, rng: np.random.Generator) -> Draw:
        return isp_draw(self.probabilities(), rng.random(self.n_clients))

    def sample_many(self, rng: np.random.Generator, n_draws: int) -> np.ndarray:
        return self._isp_many(self.probabilities(), rng, n_draws)

    def update(self, feedback: Feedback) -> None:
        check_feedback(feedback)


class UniformRSP(SamplerBase):
    r"""Uniform :math:`K`-subset without replacement with the unbiased :math:`N/K` estimator.

    (The released code aggregates a uniform subset with lambda-normalised FedAvg weights, which
    is biased; this toolkit uses the unbiased estimator.)

    Parameters
    ----------
    n_clients : int
        N, at least 1.
    budget : int
        The expected sample size K, :math:`0 < K \le N`.
    """

    procedure = "subset"

    def __init__(self, n_clients: int, budget: int):
        self.n_clients, k = check_sizes(n_clients, budget)
        if k != int(k):
            raise ValueError("budget must be an integer for sampling without replacement")
        self.budget = int(k)

    def probabilities(self) -> np.ndarray:
        return np.full(self.n_clients, self.budget / self.n_clients)

    def sample(self, rng: np.random.Generator) -> Draw:
        clients = np.sort(rng.choice(self.n_clients, size=self.budget, replace=False))
        # every draw's counts, weights and probabilities are the same: fresh copies of one
        # template (cheaper than making them anew; a caller may write into its draw)
        counts, weights, probs = self._template()
        return Draw(clients, counts.copy(), weights.copy(), probs.copy())

    def _template(self):
        key = (self.n_clients, self.budget)
        if getattr(self, "_arrays_for", None) != key:
            p = self.budget / self.n_clients
            self._arrays = (np.ones(self.budget, dtype=np.int64),
                            np.full(self.budget, 1.0 / p), np.full(self.budget, p))
            self._arrays_for = key
        return self._arrays

    def update(self, feedback: Feedback) -> None:
        check_feedback(feedback)


class OracleISP(SamplerBase):
    r"""Optimal ISP per round from *all* clients' feedback (:math:`\beta_1=0` reference).

    Call ``reveal(values)`` with every client's :math:`\pi_t(i)` before ``sample``; the
    probabilities are :func:`~flbounds.sampling.optimal_isp_probabilities` of those values
    with a floor ``p_min`` (the released ``OptimalSampler`` has the solver off-by-one, not
    reproduced).

    Parameters
    ----------
    n_clients : int
        N, at least 1.
    budget : float
        The expected sample size K, :math:`0 < K \le N`.
    p_min : float, optional
        The probabilities' floor; default 1e-12 K/N, so that clients with zero feedback stay
        drawable.
    """

    procedure = "isp"

    def __init__(self, n_clients: int, budget: float, *, p_min: float | None = None):
        self.n_clients, self.budget = check_sizes(n_clients, budget)
        self.p_min = 1e-12 * self.budget / self.n_clients if p_min is None else float(p_min)
        self._p = np.full(self.n_clients, self.budget / self.n_clients)

    def reveal(self, values) -> None:
        self._p = optimal_isp_probabilities(values, self.budget, p_min=self.p_min)

    def probabilities(self) -> np.ndarray:
        return self._p.copy()

    def sample(self, rng: np.random.Generator) -> Draw:
        return isp_draw(self._p, rng.random(self.n_clients))

    def sample_many(self, rng: np.random.Generator, n_draws: int) -> np.ndarray:
        return self._isp_many(self._p, rng, n_draws)

    def update(self, feedback: Feedback) -> None:
        check_feedback(feedback)
