r"""Appendix G of K-Vib: K-Vib's weights kept sorted and updated by binary search.

The incremental sampler (:class:`flbounds.sampling.incremental.KVibIncremental`) runs next
to the re-sorting one (:class:`flbounds.sampling.KVib`) on the same Assumption 5.1 feedback
and the same uniforms: the probabilities must agree to rounding in every round, the sorted
list must equal a fresh sort of the weights, and each update must take at most
:math:`\lceil\log_2(N+1)\rceil` comparisons (App. G's :math:`O(\log N)` search; the shift of
the entries is a memory move, see the module of the sampler).
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result
from flbounds.sampling import Feedback, KVib, isp_draw
from flbounds.sampling.incremental import KVibIncremental
from flbounds.sampling.online import Assumption51Feedback

from .conditions import budget_of_sampler

APP_G = result(
    "kvib.app_g", ref="Appendix G", kind="section", title="efficient implementation of K-Vib",
    parts={"update": "keeping omega sorted and moving each updated entry by binary search gives "
                     "K-Vib's probabilities with O(log N) comparisons per update"},
    hypotheses=(budget_of_sampler,))


def compare_runs(rng, n_clients, budget, n_rounds, variant):
    """Largest probability gap, rounds whose sorted list differs from np.sort, and the most
    comparisons one update took."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    resort = KVib(n_clients, budget, n_rounds, G=fb.G, variant=variant)
    incremental = KVibIncremental(n_clients, budget, n_rounds, G=fb.G, variant=variant)
    gap, mismatched = 0.0, 0
    for t in range(1, n_rounds + 1):
        p = resort.probabilities()
        gap = max(gap, float(np.max(np.abs(p - incremental.probabilities()))))
        uniforms = rng.random(n_clients)
        draw_a = isp_draw(p, uniforms)        # what KVib.sample does with rng.random(N)
        draw_b = isp_draw(incremental.probabilities(), uniforms)
        if not np.array_equal(draw_a.clients, draw_b.clients):
            mismatched += 1
        values = fb.values(t)[draw_a.clients]
        resort.update(Feedback(draw_a, values))
        incremental.update(Feedback(draw_a, values))
        if not np.array_equal(np.sort(resort.omega), incremental.sorted.values):
            mismatched += 1
    return gap, mismatched, incremental.sorted.max_per_update


@claim("kvib.appG.incremental_update", ref="App. G (efficient implementation)",
       kind="algorithm", expected="holds",
       result=APP_G,
       statement="Keeping the cumulative weights sorted and moving each updated weight by binary "
                 "search gives K-Vib's probabilities with O(log N) comparisons per update.",
       quick=dict(n_clients=(10, 200), n_rounds=100),
       full=dict(n_clients=(10, 200, 5000), n_rounds=2000))
def incremental_update(*, rng, n_clients, n_rounds):
    """Both variants ("paper": p ~ sqrt(omega + gamma); "code": p ~ omega + gamma), K = N/10
    (at least 1), theory theta and gamma with G = the largest first-round feedback.
    Measured per cell: [probability gap, mismatched rounds, comparisons per update];
    bound: [rounding 64 N eps, 0, ceil(log2(N + 1))]. Tolerance: none beyond the bound."""
    measured, bound, cells = [], [], []
    for n in n_clients:
        for variant in ("paper", "code"):
            budget = float(max(1, n // 10))
            gap, mismatched, comps = compare_runs(rng, n, budget, n_rounds, variant)
            limit = [64 * n * np.finfo(float).eps, 0, int(np.ceil(np.log2(n + 1)))]
            measured.append([gap, mismatched, comps])
            bound.append(limit)
            cells.append(dict(n_clients=n, variant=variant, probability_gap=gap,
                              mismatched_rounds=mismatched, max_comparisons=comps,
                              log2_bound=limit[2]))
    return Evidence(instance=[dict(n_clients=n, budget=float(max(1, n // 10))) for n in n_clients],
                    measured=np.array(measured, dtype=float),
                    theoretical=np.array(bound, dtype=float), relation="<=",
                    tolerance=Tolerance.exact("bounds listed per column (rounding: 64 N eps "
                                              "for two water-filling orders of summation)"),
                    details={"cells": cells})
