r"""Algorithm 1 of K-Vib (FedAvg with an unbiased client sampler): the result and its parts.

Lines 3 (sampling procedure :math:`S^t\sim p^t`), 12 (global estimate
:math:`d^t=\sum_{i\in S^t}\lambda_ig_i^t/p_i^t`) and 14 (the sampler's update from the
sampled norms). Line 12 is checked by ``kvib.def2_1.unbiased_exact`` (on the library's
compiled FedAvg round); line 3's draw laws, for every sampler, by the claims of
:mod:`verify.kvib.draw_laws`; the samplers of line 14 by the results of Algorithm 2.
"""

from __future__ import annotations

from flbounds.ledger import result

from .conditions import budget_of_sampler

ALG1 = result(
    "kvib.alg1", ref="Algorithm 1", title="FedAvg with an unbiased client sampler",
    parts={"line12": "line 12: d^t = sum_{i in S^t} lambda_i g_i^t / p_i^t, and line 13: "
                     "x^{t+1} = x^t - eta_g d^t",
           "line3": "line 3: the server draws S^t ~ p^t (ISP: each client independently "
                    "w.p. p_i; RSP: K i.i.d. draws from q, or K of N uniformly)",
           "line14": ("line 14: p^{t+1} from {||g_i^t||}_{i in S^t}",
                      "the samplers: kvib.alg2 (K-Vib) and the baselines' own references")},
    hypotheses=(budget_of_sampler.only("line12"),))
