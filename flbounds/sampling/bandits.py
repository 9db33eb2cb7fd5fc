r"""Adaptive baselines run as multinomial RSP with budget K (spec addendum 003_kvib_baselines).

All three draw K i.i.d. indices from a single-draw distribution :math:`q` (frozen for the
round), use the estimator :math:`\sum_i c_i z_i/(Kq_i)` and pair feedback with clients by id.
Repeated draws of a client are applied ``count`` times.

* :class:`Vrb` (Borsos et al. 2018): exact per the official code.
* :class:`Mabs` (Salehi et al. 2017): EXP3-style update in log space (FedLab's port has an
  index-order bug and a duplicate-collapse bug; neither is reproduced).
* :class:`Avare` (El Hanchi & Stephens 2020): **reconstructed** (last observed norms, floored
  variance-optimal q); its parameters ``C`` and ``delta`` are recorded only.
"""

from __future__ import annotations

import numpy as np

from flbounds.validation import check_int

from .adaptive import (
    Draw,
    Feedback,
    SamplerBase,
    check_feedback,
    check_sizes,
    multinomial_counts,
    multinomial_draw,
)
from .optimal import optimal_isp_probabilities


class _Multinomial(SamplerBase):
    procedure = "multinomial"

    def _init_sizes(self, n_clients, budget):
        self.n_clients, k = check_sizes(n_clients, budget)
        if k != int(k):
            raise ValueError("budget must be an integer number of draws")
        self.budget = int(k)

    def inclusion_weights(self) -> np.ndarray:
        return self.budget * self.probabilities()

    def sample(self, rng: np.random.Generator) -> Draw:
        return multinomial_draw(self.probabilities(), self.budget, rng)

    def sample_many(self, rng: np.random.Generator, n_draws: int) -> np.ndarray:
        n_draws = check_int(n_draws, "n_draws", minimum=1)
        return multinomial_counts(self.probabilities(), self.budget, rng, n_draws)


class Vrb(_Multinomial):
    r"""Variance Reducer Bandit: :math:`q=(1-\theta)\sqrt s/\sum\sqrt s+\theta/N`,
    :math:`s_i \mathrel{+}= c_i\pi^2/q_i` per round (no division by K).

    Defaults (K-Vib App. F): :math:`\theta=(N/T)^{1/3}` (0.3 if :math:`N>T`),
    :math:`\gamma=G^2N/\theta`.

    Parameters
    ----------
    n_clients : int
        N.
    budget : int
        K, the draws per round.
    n_rounds : int
        The horizon T (for the default :math:`\theta`).
    G : float, optional
        The feedback scale (for the default :math:`\gamma`); give ``G`` or ``gamma``.
    gamma : float, optional
        The initial :math:`s_i`.
    theta : float, optional
        The uniform mixing weight.
    """

    def __init__(self, n_clients: int, budget: int, n_rounds: int, *, G: float | None = None,
                 gamma: float | None = None, theta: float | None = None):
        self._init_sizes(n_clients, budget)
        n = self.n_clients
        self.theta = (0.3 if n > n_rounds else (n / n_rounds) ** (1 / 3)) if theta is None \
            else float(theta)
        if gamma is None:
            if G is None or G <= 0:
                raise ValueError("give G > 0 or gamma > 0")
            gamma = G * G * n / self.theta
        self.gamma = float(gamma)
        self.s = np.full(n, self.gamma)

    def probabilities(self) -> np.ndarray:
        w = np.sqrt(self.s)
        return (1 - self.theta) * w / w.sum() + self.theta / self.n_clients

    def update(self, feedback: Feedback) -> None:
        values = check_feedback(feedback)
        d = feedback.draw
        np.add.at(self.s, d.clients, d.counts * values**2 / d.probs)


class Mabs(_Multinomial):
    r"""Multi-armed bandit sampler: :math:`q=(1-\eta)\,\mathrm{softmax}(u)+\eta/N`,
    :math:`u_i \mathrel{+}= c_i\,\delta\,a_i/q_i^3`, :math:`a=\pi^2`,
    :math:`\delta=\sqrt{\eta^4\ln N/(N^5TL^2)}`, :math:`L=G^2` by default.

    Parameters
    ----------
    n_clients : int
        N.
    budget : int
        K, the draws per round.
    n_rounds : int
        The horizon T.
    G : float, optional
        The feedback scale; :math:`L = G^2` unless ``L`` is given.
    L : float, optional
        The bound of the losses.
    eta : float
        The uniform mixing weight.
    fedlab_compat : bool
        Use FedLab's :math:`a=\pi^2/N^2` (with the caller's ``L``).
    """

    def __init__(self, n_clients: int, budget: int, n_rounds: int, *, G: float | None = None,
                 L: float | None = None, eta: float = 0.4, fedlab_compat: bool = False):
        self._init_sizes(n_clients, budget)
        n = self.n_clients
        if L is None:
            if G is None or G <= 0:
                raise ValueError("give G > 0 or L > 0")
            L = G * G
        self.eta, self.L, self.fedlab_compat = float(eta), float(L), bool(fedlab_compat)
        self.delta = np.sqrt(eta**4 * np.log(max(n, 2)) / (n**5 * n_rounds * self.L**2))
        self.u = np.zeros(n)

    def probabilities(self) -> np.ndarray:
        w = np.exp(self.u - self.u.max())
        return (1 - self.eta) * w / w.sum() + self.eta / self.n_clients

    def update(self, feedback: Feedback) -> None:
        values = check_feedback(feedback)
        d = feedback.draw
        a = values**2 / (self.n_clients**2 if self.fedlab_compat else 1.0)
        np.add.at(self.u, d.clients, d.counts * self.delta * a / d.probs**3)


class Avare(_Multinomial):
    r"""Avare (**reconstructed**, low confidence): memory :math:`m_i` of the last observed
    :math:`\pi(i)`, :math:`q=\arg\min_{q\in\Delta,\,q\ge p_{\min}}\sum m_i^2/q_i`
    (water-filling with floor), K i.i.d. draws.

    Defaults (K-Vib App. F): :math:`p_{\min}=1/(5N)`, ``C`` :math:`=1/(1/N-p_{\min})`,
    ``delta`` = 1; ``C`` and ``delta`` are stored but have no effect (their role in the
    original paper could not be confirmed).

    Parameters
    ----------
    n_clients : int
        N.
    budget : int
        K, the draws per round.
    G : float
        The feedback scale.
    m0 : float, optional
        The initial memory (default ``G``).
    p_min : float, optional
        The floor of q (default 1/(5N)).
    C, delta : float, optional
        Stored, without effect (see above).
    """

    def __init__(self, n_clients: int, budget: int, *, G: float = 1.0, m0: float | None = None,
                 p_min: float | None = None, C: float | None = None, delta: float = 1.0):
        self._init_sizes(n_clients, budget)
        n = self.n_clients
        self.p_min = 1.0 / (5 * n) if p_min is None else float(p_min)
        self.C = 1.0 / (1.0 / n - self.p_min) if C is None else float(C)
        self.delta = float(delta)
        self.m0 = float(G if m0 is None else m0)
        self.m = np.full(n, self.m0)

    def probabilities(self) -> np.ndarray:
        return optimal_isp_probabilities(self.m, 1.0, p_min=self.p_min)

    def update(self, feedback: Feedback) -> None:
        values = check_feedback(feedback)
        self.m[feedback.draw.clients] = values
