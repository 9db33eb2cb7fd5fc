r"""Helpers of Theorems 5.1 and D.1 (no claims here; the claims are in
:mod:`verify.kvib.thm5_1` and :mod:`verify.kvib.thm_d1`): feedback approaching its limit
from below, an uncapped budget, a deterministic FTRL run and the p_min terms of eq. (50).
"""

from __future__ import annotations

import numpy as np

from flbounds.sampling.online import (
    Assumption51Feedback,
    ftrl_full_information,
)


def _from_below(rng: np.random.Generator, n_clients: int) -> Assumption51Feedback:
    r"""Assumption 5.1 feedback approaching its limit from below:
    :math:`\pi_t=\lambda(b-c/\sqrt t)`, :math:`0\le c<b` (so :math:`\pi_t>0`)."""
    base = rng.lognormal(0.0, 1.0, n_clients)
    return Assumption51Feedback(np.full(n_clients, 1.0 / n_clients), base,
                                -rng.uniform(0.0, 0.99, n_clients) * base)


def _uncapped_budget(rng, fb: Assumption51Feedback) -> float:
    """A budget K in [1, K_max] with K max_i pi <= sum pi at t = 1 and in the limit (the
    proof's no-cap regime at both ends; intermediate rounds are not forced)."""
    pi1, pis = fb.values(1), fb.lam * fb.base
    k_max = min(pi1.sum() / pi1.max(), pis.sum() / pis.max())
    return float(rng.uniform(1.0, max(k_max, 1.0)))


def _ftrl_instance(n_clients: int, k: float, n_rounds: int):
    """Deterministic feedback (b = LogNormal quantiles, c = b/2) and its FTRL run (gamma = G^2)."""
    from scipy.stats import norm

    base = np.exp(norm.ppf((np.arange(n_clients) + 0.5) / n_clients))
    fb = Assumption51Feedback(np.full(n_clients, 1.0 / n_clients), base, 0.5 * base)
    return fb, ftrl_full_information(fb, n_rounds, k, fb.G**2)


def _pmin_terms(n, k, G, root, p_min):
    r"""The :math:`p_{\min}`-dependent terms of eq. (50):
    :math:`NG^2/p_{\min}+6Np_{\min}(\sum_i\sqrt{\pi^2_{1:T}(i)})^2/K^2`."""
    return n * G**2 / p_min + 6 * n * p_min * root**2 / k**2


