r"""Theorem 5.2 of K-Vib: the mixing strategy eq. (12) and the unbiased estimates of the proof
sketch (recipe V13)."""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import optimal_isp_probabilities
from flbounds.sampling.online import (
    Assumption51Feedback,
)

from . import THM5_2


@claim("kvib.eq12.mixing_and_estimates", ref="eq. (12); Thm 5.2 sketch (App. D.3)",
       kind="statement", expected="holds",
       result=THM5_2, parts=("mixing",),
       statement="p~ = (1-theta) p + theta K/N has sum K and theta K/N <= p~ <= 1; "
                 "E[pi~^2] = pi^2, E[l~(p)] = l(p); pi~^2 <= G^2 N/(theta K); "
                 "1/p~ - 1/p <= theta N/K.",
       quick=dict(n_clients=30, k=4, n_draws=40000), full=dict(n_clients=100, k=10,
                                                               n_draws=1000000))
def mixing_and_estimates(*, rng, n_clients, k, n_draws):
    """V13: deterministic parts to rounding, the two means within 4 MC standard errors
    (the importance-weighted estimates are bounded, so the CLT applies)."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    pi = fb.values(1)
    G = fb.G
    theta = 0.3
    p = optimal_isp_probabilities(np.sqrt(rng.lognormal(0, 2, n_clients)), k)
    pt = (1 - theta) * p + theta * k / n_clients
    det = [abs(pt.sum() - k), max(theta * k / n_clients - pt.min(), 0.0), max(pt.max() - 1, 0)]
    bound_gap = float(np.max(1 / pt - 1 / p - theta * n_clients / k))
    masks = rng.random((n_draws, n_clients)) < pt
    est = masks * (pi**2 / pt)                          # pi~^2, one row per draw
    over = float(est.max() - G**2 * n_clients / (theta * k))
    q = rng.uniform(0.1, 1.0, n_clients)                # a fixed p for l~
    ell = est @ (1 / q)
    mean_err = np.abs(est.mean(0) - pi**2)
    se = est.std(0, ddof=1) / np.sqrt(n_draws)
    ell_err = abs(ell.mean() - np.sum(pi**2 / q))
    ell_se = ell.std(ddof=1) / np.sqrt(n_draws)
    measured = np.r_[det, bound_gap, over, mean_err / (4 * se), ell_err / (4 * ell_se)]
    return Evidence(instance=dict(feedback=fb, n_rounds=1, budget=k, n_clients=n_clients),
                    measured=measured, theoretical=np.r_[np.zeros(5), np.ones(n_clients + 1)],
                    relation="<=",
                    tolerance=Tolerance(1e-12, "rounding; MC entries pre-scaled",
                                        "entries 6+ are |mean - exact| / (4 SE), gate 1"))
