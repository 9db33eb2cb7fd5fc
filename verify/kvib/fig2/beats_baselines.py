r"""[003] Sec. 6: "K-Vib beats Vrb, Mabs and Avare", decided by a rule fixed in advance.

Setting: the online problem of Sec. 5 with Assumption 5.1 feedback (N clients, lognormal
levels decaying to their limit), each sampler driven by :func:`flbounds.sampling.online.run_online`
with partial feedback, App. F hyper-parameters and G = the largest feedback. Observable per
run: the cumulative cost :math:`\sum_t \ell_t(w^t) = \sum_t\sum_i \pi_t^2(i)/w_i^t`
(:math:`w` the sampler's inclusion weights), i.e. the regret plus a constant common to all
samplers at the same K.

Rule: for each budget K and each baseline, a one-sided paired t-test over seeds (same seed
child for both samplers) of H0: mean(cost_baseline - cost_KVib) <= 0. The
3 x len(ks) p-values go through Holm's rule at alpha = 0.05. "K-Vib beats them" holds when
every hypothesis is rejected.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import ttest_1samp

from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.sampling import Avare, KVib, Mabs, Vrb
from flbounds.sampling.online import Assumption51Feedback, run_online
from flbounds.stats import holm

from ..sec6 import SEC6

ALPHA = 0.05


def _makers(n, n_rounds, G):
    return {"kvib": lambda k: KVib(n, k, n_rounds, G=G),
            "vrb": lambda k: Vrb(n, k, n_rounds, G=G),
            "mabs": lambda k: Mabs(n, k, n_rounds, G=G),
            "avare": lambda k: Avare(n, k, G=G)}


@claim("kvib.sec6.beats_baselines", ref="Sec. 6.1, Figs. 2-3 ('K-Vib outperforms Vrb, Mabs "
       "and Avare')", kind="remark", expected="violated",
       result=SEC6, parts=("beats_baselines",),
       statement="K-Vib attains a lower cumulative sampling cost (regret) than Vrb, Mabs and "
                 "Avare at every budget K.",
       quick=dict(n_clients=50, n_rounds=300, ks=(2, 5), n_seeds=4),
       full=dict(n_clients=100, n_rounds=2000, ks=(2, 5, 10), n_seeds=8))
def beats_baselines(*, rng, n_clients, n_rounds, ks, n_seeds):
    """Module docstring gives the setting and the Holm rule (family size 3 x len(ks), in
    details). Measured: the number of rejections; theoretical: the family size. Tolerance:
    exact (a count); the statistical error is the family-wise level 0.05. Avare is the
    baselines addendum's reconstruction (the paper gives hyper-parameters only).

    Expected violated on this problem: K-Vib beats Mabs, ties or loses to Vrb, and the
    reconstructed Avare's cost is about 2.5x lower (N = 100, T = 2000: 10739 vs 4444 at
    K = 2); its theory mixing theta = (N/(TK))^{1/3} keeps a large uniform share at these
    horizons. The paper's comparison is on FL training curves (Figs. 2, 4), not this
    cost."""
    fb = Assumption51Feedback.generate(rng, n_clients)
    makers = _makers(n_clients, n_rounds, fb.G)
    cells, pvalues = [], []
    for k in ks:
        costs = {name: [] for name in makers}
        for child in rng.spawn(n_seeds):
            state = child.bit_generator.state
            for name, make in makers.items():
                child.bit_generator.state = state          # same uniforms for every sampler
                costs[name].append(float(run_online(make(k), fb, n_rounds, child).costs.sum()))
        kvib = np.array(costs["kvib"])
        for name in ("vrb", "mabs", "avare"):
            diff = np.array(costs[name]) - kvib
            p = float(ttest_1samp(diff, 0.0, alternative="greater").pvalue)
            pvalues.append(p)
            cells.append(dict(K=k, baseline=name, pvalue=p, kvib_cost=float(kvib.mean()),
                              baseline_cost=float(np.mean(costs[name]))))
    decision = holm(pvalues, ALPHA)
    for cell, adj, rej in zip(cells, decision.adjusted, decision.reject, strict=True):
        cell.update(holm_adjusted=float(adj), kvib_better=bool(rej))
    return Evidence(instance=dict(feedback=fb, n_rounds=n_rounds, budget=np.asarray(ks, float),
                                      n_clients=n_clients),
                    measured=int(decision.reject.sum()), theoretical=decision.m, relation=">=",
                    tolerance=Tolerance.exact("a count of Holm rejections"),
                    details={"cells": cells, "family_size": decision.m, "alpha": ALPHA,
                             "rule": "one-sided paired t-test per (K, baseline), Holm"})
