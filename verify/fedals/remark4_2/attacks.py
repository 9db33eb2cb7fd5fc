"""Attack surface of Remark 4.2's use of Lemma C.1 (the proof step to (72)), judged by Remark
4.2's Case I hypothesis (``instance=``)."""

from __future__ import annotations

import numpy as np

from flbounds.falsify import attack_surface
from flbounds.theory.data_models import RidgeModel

from ..attacks import C1_FIXED, C1_SPACE, IDENTITY, _c1_residual, c1_instance

#: a model meeting Remark 4.2's convexity (ridge, mu = lambda = 1, L = 2); the identities are
#: linear in the clients' risks x and shift- and scale-invariant (the weights sum to 1 on both
#: sides), so any x is an affine image of generic risks of such a model
_MODEL = RidgeModel(np.zeros((1, 5)), 1.0, 1.0)


@attack_surface("fedals.lemmaC1.merged_duplicates", space=C1_SPACE, fixed=C1_FIXED,
                # full budget: seeds 0 and 1 at 5000 evaluations reach 1.05341e14 / 1.05336e14,
                # within 1e-3 of it from evaluation 1290 / 1742; 3500 >= twice that
                budget={"quick": 300, "full": 3500},
                tolerance=0.0, tolerance_why=IDENTITY, shrink=True,
                instance=lambda **point: dict(c1_instance(**point), case="I",
                                              n_clients=point["n_clients"], local="erm",
                                              model=_MODEL))
def lemma_c1_merged(*, x, w, n_clients, n_participants):
    """Lemma C.1 with a client drawn m times weighted m/K_hat (what averaging gives)."""
    return _c1_residual(x, w, n_clients, n_participants, merged=True)
