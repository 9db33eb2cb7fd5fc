r"""Algorithm 2 of FedALS (App. D): FedAvg (local SGD), the result.

Every client runs tau local mini-batch SGD steps (5) from the averaged model, and the full
model is averaged every tau steps. Its one claim compares it with Algorithm 1 at alpha = 1
(``fedals.alg1.alpha1_is_fedavg``, in :mod:`.alg1`). Instances carry ``local_steps``.
"""

from __future__ import annotations

from flbounds.ledger import hypothesis, result

from ._predicates import positive_integers


@hypothesis("tau", "tau >= 1 local steps per round")
def local_steps_positive(*, local_steps):
    return positive_integers(local_steps)


ALG2 = result(
    "fedals.alg2", ref="Algorithm 2", title="FedAvg (local SGD)",
    parts={"fedavg": "tau local SGD steps per client, then the full model averaged (every tau "
                     "steps)"},
    hypotheses=(local_steps_positive,))
