r"""Definition (7) of FedALS (Sec. 4.2): the R-round generalization error.

.. math::
    \Delta_{FedAvg}(S) = \frac1R\sum_{r=1}^R E_{k\sim\mathcal K}\Big[E_{z\sim\mathcal D_k}
    l(M_{\hat\theta_r}, z) - \frac1{|Z_{k,r}|}\sum_{i\in Z_{k,r}} l(M_{\hat\theta_r},
    z_{k,i})\Big],

with :math:`\hat\theta_r` the model at the start of round r and :math:`Z_{k,r}` the samples
client k uses in round r (drawn without replacement, as Theorem 4.3 assumes). Instances carry
``data_reuse``.
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, result

from ._local_sgd import R_FULL, R_QUICK, _avg_se, round_instances, shared_r_round_runs
from ._predicates import fresh_data

DEF7 = result(
    "fedals.def7", ref="Definition (7)", kind="definition",
    title="the R-round generalization error of Sec. 4.2, eq. (7)",
    parts={"definition": "(7): the round average of E_{k~K}[R_k(theta_r) - R_{Z_kr}(theta_r)], "
                         "theta_r the start-of-round model"},
    hypotheses=(fresh_data,))


@claim("fedals.def7.literal_is_degenerate", ref="Sec. 4.2, eq. (7)", kind="remark",
       expected="holds", result=DEF7, parts=("definition",),
       statement="Definition (7) evaluates the start-of-round model theta_r on the round's "
                 "fresh samples Z_kr, which it has never seen, so its expectation is exactly 0.",
       quick=R_QUICK, full=R_FULL)
def literal_degenerate(*, rng, **params):
    r"""V6(a). theta_r is fixed before Z_{k,r} is drawn, so E[R_k(theta_r) - R_{Z_k}(theta_r)]
    = 0 for every round: (7) as printed measures no generalization (spec 7.6). measured:
    the round-averaged literal (7) per tau; theoretical 0; tolerance 4 MC SE. ``holds`` is the
    expected outcome (the note about the paper's definition is confirmed).
    """
    runs, _ = shared_r_round_runs(rng, **params)
    stats = [_avg_se(r["trace"].literal) for r in runs]
    return Evidence(measured=[m for m, _ in stats], theoretical=np.zeros(len(stats)),
                    relation="==", instance=round_instances(runs),
                    tolerance=Tolerance.mc([s for _, s in stats], k=4),
                    details={"tau": params["local_steps"],
                             "corrected": [_avg_se(r["trace"].corrected)[0] for r in runs]})
