r"""Figure 1 of K-Vib (the variance of ISP estimates is lower than RSP): the result and its parts.

Panel (a) draws Example 3.1's estimate errors (checked by ``kvib.example3_1.isp_vs_rsp``),
panel (b) all estimates of Example 3.2 (its numbers: ``kvib.example3_2``); the caption's
assertion is checked on random instances by ``kvib.sec3.isp_vs_best_rsp_exact``.
"""

from __future__ import annotations

from flbounds.ledger import result

from .conditions import budget_hypothesis, positive_weights

FIG1 = result(
    "kvib.fig1", ref="Figure 1", title="ISP estimates have lower variance than RSP",
    parts={"lower_variance": "caption: the variance of ISP estimates is lower than RSP",
           "panel_a": "(a) estimate errors of RSP, uniform RSP and ISP (Example 3.1)",
           "panel_b": ("(b) every estimate of Example 3.2 (RSP(g_i, g_j), ISP(g_i, g_j), "
                       "Global)", "a drawing; its numbers are kvib.example3_2's parts")},
    hypotheses=(positive_weights, budget_hypothesis))
