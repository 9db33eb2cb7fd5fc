r"""Table IV of SubTrunc re-simulated: SubTrunc with :math:`\phi(x) = x` against
:math:`\phi(x) = \ln(1 + x)` on the label-skewed FedAvg problems of
:mod:`verify.subtrunc.fairness`, with that module's margin rule, shared runs and profiles
(quick: skipped as underpowered; full: 30 seeds x 100 rounds).

Printed (MNIST / CIFAR10): the identity gives the lower dissimilarity (7.91 vs 7.96,
11.93 vs 12.46) and the lower accuracy (83.42 vs 83.72, 35.29 vs 35.53). The accuracy side
is reported in the details, not decided.
"""

from __future__ import annotations

from flbounds.ledger import claim

from ..fairness import (
    DECIDING,
    QUICK_SKIP,
    RUNS_FULL,
    SUBTRUNC,
    _margin_evidence,
    _paired_rows,
    _skipped,
)
from . import TABLE4

SUBTRUNC_IDENTITY = SUBTRUNC._replace(phi="identity")


@claim("subtrunc.fl.identity_phi_lowers_dissimilarity", ref="Table IV, Sec. V-C",
       kind="reproduction", expected="inconclusive", result=TABLE4, parts=("identity_phi",),
       statement="SubTrunc with phi = identity lowers client dissimilarity (std, MAD) vs "
                 "phi = ln(1 + x) by at least 1% of the latter's.",
       quick=QUICK_SKIP, full=RUNS_FULL)
def identity_phi_lowers_dissimilarity(*, rng, n_seeds, n_rounds, decide):
    """Paired difference identity - ln(1 + x) (lam = 0.95, b = 1.1), rows per dataset and
    statistic, decided by the 1% margin rule of verify.subtrunc.fairness; test accuracy of
    both is in the rows' details via the shared runs. ``inconclusive`` at quick (runs
    skipped); the full-size verdict is recorded by ``--profile full``."""
    if not decide:
        return _skipped(n_seeds, n_rounds)
    rows = _paired_rows(rng, SUBTRUNC_IDENTITY, SUBTRUNC, DECIDING + ("test_accuracy",),
                        n_seeds, n_rounds)
    deciding = [r for r in rows if r["metric"] in DECIDING]
    return _margin_evidence(deciding, n_seeds, n_rounds,
                            accuracy_rows=[r for r in rows if r["metric"] == "test_accuracy"],
                            rules=[SUBTRUNC_IDENTITY.label(), SUBTRUNC.label()])
