"""Attack surface of Remark 4.2's use of Lemma C.1 (the proof step to (72)), judged by Remark
4.2's Case I hypothesis (``instance=``)."""

from __future__ import annotations

from flbounds.falsify import attack_surface

from ..attacks import C1_FIXED, C1_SPACE, IDENTITY, _c1_residual, c1_instance


@attack_surface("fedals.lemmaC1.merged_duplicates", space=C1_SPACE, fixed=C1_FIXED,
                tolerance=0.0, tolerance_why=IDENTITY, shrink=True,
                instance=lambda **point: dict(c1_instance(**point), case="I",
                                              n_clients=point["n_clients"]))
def lemma_c1_merged(*, x, w, n_clients, n_participants):
    """Lemma C.1 with a client drawn m times weighted m/K_hat (what averaging gives)."""
    return _c1_residual(x, w, n_clients, n_participants, merged=True)
