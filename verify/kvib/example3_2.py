r"""Example 3.2 of K-Vib: the result, its parts and its hypothesis (its printed inputs).

:math:`N=3`, :math:`K=2`, :math:`g_1=(\sqrt2/2,\sqrt2/2)`, :math:`g_2=(1,-2\sqrt2)`,
:math:`g_3=(2\sqrt7,2\sqrt2)`, :math:`\lambda` omitted. The example's numbers are checked by
the claims of :mod:`paper_checks.kvib` (``kvib.example3_2.printed_numbers`` and
``kvib.example3_2.corrected``); instances carry ``g`` (the three vectors), ``budget`` and
``n_clients``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import hypothesis, result

#: the three update vectors of Example 3.2 (N = 3, lambda omitted)
G = np.array([[np.sqrt(2) / 2, np.sqrt(2) / 2], [1.0, -2 * np.sqrt(2)],
              [2 * np.sqrt(7), 2 * np.sqrt(2)]])


@hypothesis("inputs", "N = 3, K = 2, g_1 = (sqrt2/2, sqrt2/2), g_2 = (1, -2 sqrt2), "
                      "g_3 = (2 sqrt7, 2 sqrt2), lambda omitted (the example's printed inputs)")
def printed_inputs(*, g, budget, n_clients):
    g = np.asarray(g, dtype=float)
    return bool(n_clients == 3 and budget == 2 and g.shape == G.shape
                and np.allclose(g, G, rtol=0, atol=1e-15))


EXAMPLE3_2 = result(
    "kvib.example3_2", ref="Example 3.2", title="ISP vs RSP on three vectors: worked numbers",
    parts={"norms": "[||g_1||^2, ||g_2||^2, ||g_3||^2] = [1, 3, 6]",
           "rsp_p": ("RSP optimum p* = K [0.1, 0.3, 0.6] (eq. (5))",
                     "used as the input of rsp_full; eq. (5) itself is kvib.lemma2_2:rsp"),
           "isp_p": "ISP optimum p* = [0.25, 0.75, 1] (eq. (4))",
           "rsp_full": "Sec. 3: RSP with full participation (K = 3) builds d = (6.4, 5.9) and "
                       "||d - sum g_i||^2 = 0.6",
           "isp_full": ("Sec. 3: ISP with full participation has p* = (1, 1, 1) and error 0",
                        "immediate: every d_i/p_i = d_i at p = 1"),
           "size": "Sec. 3: P(|S| = 3) = 0.25 * 0.75 * 1 = 3/16 and P(|S| = 1) = 3/16"},
    hypotheses=(printed_inputs,))
