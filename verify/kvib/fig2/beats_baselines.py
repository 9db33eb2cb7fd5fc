r"""K-Vib Sec. 6: "K-Vib beats Vrb, Mabs and Avare", decided by a rule fixed in advance.

Setting: the online problem of Sec. 5 with Assumption 5.1 feedback (N clients, lognormal
levels decaying to their limit), each sampler driven by
:func:`flbounds.sampling.online.run_online` with partial feedback (K-Vib by its compiled twin
:func:`~flbounds.sampling.online.kvib_online`: the same draws, the costs to rounding), App. F
hyper-parameters and G = the largest feedback. Observable per run: the cumulative cost
:math:`\sum_t \ell_t(w^t) = \sum_t\sum_i \pi_t^2(i)/w_i^t`
(:math:`w` the sampler's inclusion weights), i.e. the regret plus a constant common to all
samplers at the same K.

Rule, fixed before the data: for each budget K and each baseline, two one-sided paired
t-tests over seeds (same seed child for both samplers) of the difference
d = cost_baseline - cost_KVib: H0: mean(d) <= 0 (rejected: K-Vib is better) and H0: mean(d) >= 0
(rejected: K-Vib is worse). The 2 x 3 x len(ks) p-values go through Holm's rule at
alpha = 0.05. The paper's effect is shown when every "K-Vib better" hypothesis is rejected;
it is contradicted when some "K-Vib worse" hypothesis is rejected (a baseline significantly
better at some K); otherwise the test cannot decide (``inconclusive``, with the smallest mean
difference each cell could detect at power 0.8).

The paper compares the samplers on FL training curves of real data (Figs. 2, 4); this is a
synthetic stand-in (kind ``reproduction``): not reproducing the effect is not a paper error.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import claim
from flbounds.sampling import Avare, KVib, Mabs, Vrb
from flbounds.sampling.online import Assumption51Feedback, kvib_online, run_online
from flbounds.sampling.online_batched import baseline_costs

from ..sec6 import SEC6
from ._paired import compare

ALPHA = 0.05
#: the power at which the smallest detectable difference is reported
POWER = 0.8


def _makers(n, n_rounds, G):
    return {"kvib": lambda k: KVib(n, k, n_rounds, G=G),
            "vrb": lambda k: Vrb(n, k, n_rounds, G=G),
            "mabs": lambda k: Mabs(n, k, n_rounds, G=G),
            "avare": lambda k: Avare(n, k, G=G)}


def _at(state) -> np.random.Generator:
    """A fresh generator in the PCG64 ``state`` (a seed's child before any draw)."""
    gen = np.random.Generator(np.random.PCG64())
    gen.bit_generator.state = state
    return gen


@claim("kvib.sec6.beats_baselines", ref="Sec. 6.1, Figs. 2-3 ('K-Vib outperforms Vrb, Mabs "
       "and Avare')", kind="reproduction", expected="not-reproduced",
       result=SEC6, parts=("beats_baselines",),
       statement="K-Vib attains a lower cumulative sampling cost (regret) than Vrb, Mabs and "
                 "Avare at every budget K.",
       quick=dict(n_clients=50, n_rounds=300, ks=(2, 5), n_seeds=4),
       full=dict(n_clients=100, n_rounds=2000, ks=(2, 5, 10), n_seeds=8))
def beats_baselines(*, rng, n_clients, n_rounds, ks, n_seeds):
    """Module docstring gives the setting and the two-sided Holm rule (family size
    2 x 3 x len(ks), in details). Measured: the number of "K-Vib better" rejections;
    theoretical: their number of cells. Tolerance: exact (a count); the statistical error is
    the family-wise level 0.05. Avare is the baselines addendum's reconstruction (the paper
    gives hyper-parameters only).

    Expected not-reproduced on this problem: K-Vib beats Mabs, ties or loses to Vrb, and the
    reconstructed Avare's cost is about 2.5x lower (N = 100, T = 2000: 10739 vs 4444 at
    K = 2), significantly at both profiles; its theory mixing theta = (N/(TK))^{1/3} keeps a
    large uniform share at these horizons."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    makers = _makers(n_clients, n_rounds, fb.G)
    cells, diffs = [], []
    for k in ks:
        # every sampler starts from the same state of each seed's child (same uniforms);
        # Vrb and Mabs run as one batch per sampler, bit for bit their unbatched runs
        states = [child.bit_generator.state for child in rng.spawn(n_seeds)]
        # K-Vib by its compiled loop (the draws of its sampler class, the costs to rounding)
        costs = {"kvib": [float(kvib_online(fb, n_rounds, k, _at(state), G=fb.G).costs.sum())
                          for state in states],
                 "avare": [float(run_online(makers["avare"](k), fb, n_rounds, _at(state))
                                 .costs.sum()) for state in states]}
        for name in ("vrb", "mabs"):
            batch = baseline_costs(name, fb, [k], n_rounds, [_at(state) for state in states],
                                   G=fb.G)
            costs[name] = [float(batch[s, 0].sum()) for s in range(n_seeds)]
        kvib = np.array(costs["kvib"])
        for name in ("vrb", "mabs", "avare"):
            cells.append(dict(label=f"K={k} {name}", K=k, baseline=name,
                              kvib_cost=float(kvib.mean()),
                              baseline_cost=float(np.mean(costs[name]))))
            diffs.append(np.array(costs[name]) - kvib)
    return compare(cells, diffs, alpha=ALPHA, power=POWER,
                   instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                 n_clients=n_clients), details={})
