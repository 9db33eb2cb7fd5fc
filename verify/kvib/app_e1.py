r"""Appendix E.1 of K-Vib (stragglers): the result, its parts, its hypotheses and its claim.

With availability :math:`A\sim\mathrm{Bernoulli}(q)` independent of the ISP draw
:math:`S\sim p`, :math:`\sum_{i\in S\cap A}z_i/(q_ip_i)` is unbiased with variance
:math:`\sum_i(1/(q_ip_i)-1)\|z_i\|^2` (recipe V16). Instances carry ``q``, ``p`` and
``budget``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.participation import Bernoulli
from flbounds.sampling import (
    isp_draw,
    optimal_isp_probabilities,
)

from ..predicates import positive_probabilities
from .conditions import isp_hypothesis


@hypothesis("availability", "availability A_i ~ Bernoulli(q_i), q_i in (0, 1], independent of "
                            "the sampling")
def availability(*, q):
    return positive_probabilities(q)


APP_E1 = result(
    "kvib.app_e1", ref="Appendix E.1", kind="section", title="stragglers",
    parts={"unbiased": "sum_{i in S, i in A} z_i/(q_i p_i) is unbiased",
           "variance": "its variance is sum_i (1/(q_i p_i) - 1) ||z_i||^2"},
    hypotheses=(availability, isp_hypothesis))


@claim("kvib.appE1.stragglers", ref="App. E.1 (stragglers)", kind="statement",
       expected="holds",
       result=APP_E1,
       statement="With availability A ~ Bernoulli(q) independent of ISP sampling, "
                 "sum_{i in S, i in A} z_i/(q_i p_i) is unbiased with variance "
                 "sum (1/(q_i p_i) - 1) ||z_i||^2.",
       quick=dict(n_clients=20, k=4, n_draws=40000), full=dict(n_clients=100, k=10,
                                                               n_draws=400000))
def stragglers(*, rng, n_clients, k, n_draws):
    """V16 by Monte Carlo through the same restriction code the FL loop uses. Measured:
    max_coord |mean - sum z| / (4 SE) and |MSE - formula| / (4 SE); both <= 1."""
    from flbounds.algorithms.fedavg_sampler import restrict_draw

    z = rng.standard_normal((n_clients, 3)) * rng.lognormal(0, 1, (n_clients, 1))
    a = np.linalg.norm(z, axis=1)
    p = optimal_isp_probabilities(a, k, p_min=0.05)
    q = rng.uniform(0.3, 1.0, n_clients)
    plan = Bernoulli(q).plan(rng, n_draws)
    uni = rng.random((n_draws, n_clients))
    est = np.empty((n_draws, 3))
    for m in range(n_draws):
        d = restrict_draw(isp_draw(p, uni[m]), plan[m], q)
        est[m] = d.weights @ z[d.clients]
    total = z.sum(axis=0)
    se = est.std(axis=0, ddof=1) / np.sqrt(n_draws)
    sq = np.sum((est - total) ** 2, axis=1)
    formula = float(np.sum((1 / (q * p) - 1) * a * a))
    bias = float(np.max(np.abs(est.mean(0) - total) / (4 * se)))
    var_dev = abs(sq.mean() - formula) / (4 * sq.std(ddof=1) / np.sqrt(n_draws))
    return Evidence(instance=dict(q=q, p=p, budget=k),
                    measured=[bias, var_dev], theoretical=[1.0, 1.0], relation="<=",
                    tolerance=Tolerance(0.0, "4 MC standard errors (pre-scaled)",
                                        "entries are |deviation| / (4 std/sqrt(M))"),
                    details={"mse": sq.mean(), "formula": formula})
