r"""Example 3.1 of K-Vib: the result, its parts, its hypotheses and its claim.

100 random vectors of dimension 1,000; 1,000 runs of RSP and ISP, each with its best
probability (eq. (5), eq. (4)); at K = 10 the two are comparable, at K = 30 ISP is better
(Fig. 1(a)). Instances carry ``z`` (the vectors), ``p`` (the ISP probabilities) and
``budget``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, hypothesis, result
from flbounds.sampling import (
    isp_variance,
    multinomial_variance,
    optimal_isp_probabilities,
)

from .conditions import isp_hypothesis
from .fig1 import FIG1


@hypothesis("inputs", "100 random vectors of dimension 1,000")
def printed_inputs(*, z):
    return tuple(getattr(z, "shape", ())) == (100, 1000)


EXAMPLE3_1 = result(
    "kvib.example3_1", ref="Example 3.1", title="ISP against RSP on 100 random vectors",
    parts={"k10": "at K = 10, RSP and ISP achieve comparable estimate errors",
           "k30": "at K = 30, ISP outperforms RSP"},
    hypotheses=(printed_inputs, isp_hypothesis))


@claim("kvib.example3_1.isp_vs_rsp", ref="Example 3.1, Fig. 1(a)", kind="example",
       expected="holds", result=EXAMPLE3_1, parts=("k10", "k30", FIG1.part("panel_a")),
       statement="100 random vectors in R^1000: ISP with p* is comparable to RSP (eq. 5) at "
                 "K = 10 and better at K = 30.",
       quick=dict(n_clients=100, dim=1000, n_draws=300), full=dict(n_clients=100, dim=1000,
                                                                   n_draws=1000))
def example31(*, rng, n_clients, dim, n_draws):
    r"""V6(g). RSP is read as K multinomial draws from q = a/sum a (its procedure for non-uniform
    p is unspecified). Exact variances are computed; the MC errors are in details. Gate (spec):
    ratio V_ISP/V_RSP <= 0.9 at K=30 and in [0.7, 1.3] at K=10 (exact numbers, no tolerance)."""
    z = rng.standard_normal((n_clients, dim))
    a = np.linalg.norm(z, axis=1)
    ratios, mc, instances = [], {}, []
    for k in (10, 30):
        p = optimal_isp_probabilities(a, k)
        instances.append(dict(z=z, p=p, budget=k, a=a))
        v_isp = isp_variance(p, a)
        v_rsp = multinomial_variance(a / a.sum(), z, k)
        ratios.append(v_isp / v_rsp)
        masks = rng.random((n_draws, n_clients)) < p
        d = masks.astype(float) @ (z / p[:, None])
        mc[f"K{k}_isp_mc_mse"] = float(np.mean(np.sum((d - z.sum(0)) ** 2, axis=1)))
        mc[f"K{k}_isp_exact"], mc[f"K{k}_rsp_exact"] = v_isp, v_rsp
    return Evidence(measured=ratios, theoretical=[(0.7, 1.3), (0.0, 0.9)], relation="in",
                    tolerance=Tolerance.exact("exact variances"), details=mc,
                    instance=instances)
