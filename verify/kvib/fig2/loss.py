r"""Figure 2 of K-Vib, test-loss panel: "K-Vib ... faster test-loss convergence" on FedProx
Synthetic(0, 0), against uniform ISP / RSP, Vrb, Mabs and Avare.

Setting as :mod:`verify.kvib.fig2` (N = 100, K = 10, multinomial logistic regression, R = 5
local GD steps of 0.1, :math:`\eta_g = 1`, Sec. 6's practical G), with the K-Vib code's
90/10 train/test split per client; the test loss is the cross-entropy of the server model
on all clients' test samples, weighted by test size. Each seed draws one federation; every
sampler runs on it with its own generator.

Rule, fixed in advance. "Faster convergence" is read as a lower area under the test-loss
curve: the observable per run is the mean test loss over rounds 1..T. For each baseline,
two one-sided paired t-tests over seeds on (baseline - K-Vib): "K-Vib lower" and "K-Vib
higher", each family Holm-corrected over the 5 baselines at alpha = 0.05. Verdict: holds
when K-Vib is significantly lower than all 5; violated when some baseline is significantly
lower than K-Vib (the reverse family); otherwise not decided at this size
(``not-applicable``), since a failure to reject is not evidence against the paper.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import ttest_1samp

from flbounds.algorithms.fedavg_sampler import local_updates
from flbounds.ledger import Evidence, Tolerance, claim
from flbounds.stats import holm

from ..fedprox_synthetic import fedprox_synthetic_split
from ..fl import side_by_side
from . import FIG2
from .panels import LOCAL_STEPS, STEP, K, N, _makers

ALPHA = 0.05
BASELINES = ("uniform_isp", "uniform_rsp", "vrb", "mabs", "avare")


def _test_loss(test, xs):
    """Test-size-weighted cross-entropy of every server model in ``xs`` (T + 1, d)."""
    n = test.n_clients
    losses = test.client_losses(np.repeat(xs, n, axis=0), clients=np.tile(np.arange(n),
                                                                         xs.shape[0]))
    return losses.reshape(xs.shape[0], n) @ test.weights


def _seed_losses(child, n_rounds, cap):
    """Mean test loss over rounds 1..T per sampler on one federation."""
    train, test = fedprox_synthetic_split(child, 0.0, 0.0, n_clients=N, max_samples=cap)
    z0 = train.weights[:, None] * local_updates(train, np.zeros(train.dim),
                                                local_steps=LOCAL_STEPS, step=STEP)
    G = float(np.linalg.norm(z0, axis=1).mean())
    makers = _makers(n_rounds, G)
    traces = side_by_side(train, [make() for make in makers.values()],
                          child.spawn(len(makers)), n_rounds=n_rounds, local_steps=LOCAL_STEPS,
                          step=STEP, diagnostics=False)  # only the iterates are read
    return {name: float(_test_loss(test, tr.x)[1:].mean())
            for name, tr in zip(makers, traces, strict=True)}


@claim("kvib.fig2.test_loss_panel", ref="Fig. 2 (test-loss panel), Sec. 6.1", kind="remark",
       expected="not-applicable",
       result=FIG2, parts=("test_loss",), expected_full="not-applicable",
       statement="On FedProx Synthetic(0, 0), FedAvg with K-Vib reaches a lower test loss "
                 "faster (lower mean test loss over the run) than with uniform ISP/RSP, Vrb, "
                 "Mabs and Avare.",
       quick=dict(n_seeds=4, n_rounds=15, cap=50), full=dict(n_seeds=8, n_rounds=100, cap=200))
def test_loss_panel(*, rng, n_seeds, n_rounds, cap):
    """Module docstring: the rule (two Holm families of 5). Measured: the number of
    baselines K-Vib beats significantly; theoretical 5 (>=); not-applicable unless that
    holds or the reverse family rejects. Tolerance: exact (a count); family-wise level 0.05
    per family. Seed 0: quick (4 seeds x 15 rounds) K-Vib 2.078 against 2.056-2.074, no
    rejection either way; full (8 seeds x 100 rounds) K-Vib 1.380 against 1.385-1.474,
    significantly lower than Mabs only: ``not-applicable`` on both profiles."""
    runs = [_seed_losses(child, n_rounds, cap) for child in rng.spawn(n_seeds)]
    kvib = np.array([r["kvib"] for r in runs])
    diffs = {b: np.array([r[b] for r in runs]) - kvib for b in BASELINES}
    better = holm([float(ttest_1samp(d, 0.0, alternative="greater").pvalue)
                   for d in diffs.values()], ALPHA)
    worse = holm([float(ttest_1samp(d, 0.0, alternative="less").pvalue)
                  for d in diffs.values()], ALPHA)
    cells = [dict(baseline=b, mean_test_loss=float(kvib.mean() + diffs[b].mean()),
                  kvib_lower=bool(lo), kvib_higher=bool(hi))
             for b, lo, hi in zip(BASELINES, better.reject, worse.reject, strict=True)]
    n_better, n_worse = int(better.reject.sum()), int(worse.reject.sum())
    decided = n_better == better.m or n_worse > 0
    return Evidence(instance=dict(n_clients=N, budget=K, synthetic=(0.0, 0.0)),
                    measured=n_better if n_worse == 0 else -n_worse, theoretical=better.m,
                    relation=">=", tolerance=Tolerance.exact("a count of Holm rejections"),
                    details={"cells": cells, "family_size": better.m, "alpha": ALPHA,
                             "kvib_mean_test_loss": float(kvib.mean()),
                             "n_kvib_lower": n_better, "n_kvib_higher": n_worse},
                    applicable=decided,
                    reason="" if decided else
                    "undecided at this size: K-Vib neither beats every baseline nor loses "
                    "significantly to one")
