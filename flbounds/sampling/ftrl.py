r"""K-Vib, Algorithm 2 of K-Vib: FTRL on importance-weighted squared feedback, mixed with uniform.

.. math::
    p^t = \arg\min_{p\in\mathcal P_K}\sum_i\frac{\omega_i+\gamma}{p_i}
        = \operatorname{clip}(\sqrt{\omega+\gamma}/\tau, 0, 1),\qquad
    \tilde p^t = (1-\theta)p^t + \theta K/N,

ISP with :math:`\tilde p^t`, and :math:`\omega_i \mathrel{+}= \pi_t(i)^2/\tilde p^t_i` for the
sampled clients. Theory hyper-parameters (Thm 5.2): :math:`\theta=(N/(TK))^{1/3}` (needs
:math:`TK\ge N`) and :math:`\gamma=G^2N/(K\theta)`.

``variant="code"`` is the released code's form :math:`p\propto\omega+\gamma` (capped, no square
root), solved with the *correct* water-filling: the released solver's off-by-one is never
reproduced (claim ``kvib.code.solver_off_by_one`` documents it).
"""

from __future__ import annotations

import numpy as np

from .adaptive import Draw, Feedback, SamplerBase, check_feedback, check_sizes, isp_draw
from .optimal import optimal_isp_probabilities

VARIANTS = ("paper", "code")


def kvib_theta(n_clients: int, budget: float, n_rounds: int) -> float:
    r"""K-Vib's mixing weight :math:`\theta=(N/(TK))^{1/3}` of Theorem 5.2.

    Parameters
    ----------
    n_clients : int
        N.
    budget : float
        The expected sample size K.
    n_rounds : int
        The horizon T, with :math:`TK \ge N` (else :math:`\theta > 1`: ``ValueError``).

    Returns
    -------
    float
        :math:`\theta \in (0, 1]`.

    References
    ----------
    .. [1] D. Zeng et al. Enhanced Federated Optimization: Adaptive Unbiased Client Sampling
       with Reduced Variance. TMLR 2025. arXiv:2310.02698, Theorem 5.2.
    """
    if n_rounds * budget < n_clients:
        raise ValueError(f"Thm 5.2 needs n_rounds * budget >= n_clients, got "
                         f"{n_rounds} * {budget} < {n_clients}")
    return float((n_clients / (n_rounds * budget)) ** (1.0 / 3.0))


class KVib(SamplerBase):
    r"""K-Vib sampler (Algorithm 2).

    Parameters
    ----------
    n_clients, budget : int, float
        :math:`N` and the expected sample size :math:`K`.
    n_rounds : int
        Horizon :math:`T` (used for the default :math:`\theta`).
    G : float, optional
        Feedback scale; :math:`\gamma = G^2N/(K\theta)` when ``gamma`` is not given.
    gamma, theta : float, optional
        Override the theory values (e.g. Fig. 3(c): :math:`\theta=0.3`).
    variant : {"paper", "code"}
        ``"paper"``: :math:`p\propto\sqrt{\omega+\gamma}` (Lemma 5.1); ``"code"``:
        :math:`p\propto\omega+\gamma` (released code, correct solver).
    """

    procedure = "isp"

    def __init__(self, n_clients: int, budget: float, n_rounds: int, *, G: float | None = None,
                 gamma: float | None = None, theta: float | None = None,
                 variant: str = "paper"):
        self.n_clients, self.budget = check_sizes(n_clients, budget)
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.variant = variant
        self.theta = kvib_theta(self.n_clients, self.budget, n_rounds) if theta is None \
            else float(theta)
        if not 0.0 <= self.theta <= 1.0:
            raise ValueError(f"theta must lie in [0, 1], got {self.theta}")
        if gamma is None:
            if G is None or G <= 0:
                raise ValueError("give G > 0 (gamma = G^2 N/(K theta)) or gamma > 0")
            if self.theta == 0:
                raise ValueError("theta = 0 needs an explicit gamma")
            gamma = G * G * self.n_clients / (self.budget * self.theta)
        if not gamma > 0:
            raise ValueError(f"gamma must be positive, got {gamma!r}")
        self.gamma = float(gamma)
        self.omega = np.zeros(self.n_clients)

    def base_probabilities(self) -> np.ndarray:
        """FTRL solution :math:`p^t` before mixing."""
        w = self.omega + self.gamma
        return optimal_isp_probabilities(np.sqrt(w) if self.variant == "paper" else w,
                                         self.budget)

    def probabilities(self) -> np.ndarray:
        """Mixed probabilities :math:`\\tilde p^t` (sum K, each >= theta K/N)."""
        p = self.base_probabilities()
        return (1.0 - self.theta) * p + self.theta * self.budget / self.n_clients

    def sample(self, rng: np.random.Generator) -> Draw:
        return isp_draw(self.probabilities(), rng.random(self.n_clients))

    def sample_many(self, rng: np.random.Generator, n_draws: int) -> np.ndarray:
        return self._isp_many(self.probabilities(), rng, n_draws)

    def update(self, feedback: Feedback) -> None:
        values = check_feedback(feedback)
        np.add.at(self.omega, feedback.draw.clients, values**2 / feedback.draw.probs)
