r"""Helpers of the K-Vib guards of the compiled paths (no claims here; the claims are
``kvib.lemma2_2.compiled_optimum`` in :mod:`verify.kvib.lemma2_2` and ``kvib.alg2.compiled_loop``
in :mod:`verify.kvib.alg2`).

The online experiments run K-Vib through a compiled loop (:func:`flbounds.sampling.online.
kvib_online`) and sum per-round optima with a compiled water-filling; the sampler class
:class:`flbounds.sampling.KVib`, driven round by round, transcribes Algorithm 2 line by line
on the Python solver of Lemma 2.2. Both claim the same numbers (same random stream), so the
regret claims built on the compiled loop are claims about Algorithm 2 only if they agree.
"""

from __future__ import annotations

from flbounds.ledger import Tolerance
from flbounds.sampling.online import Assumption51Feedback

ROUNDING = Tolerance.rounding(1e-9, "relative; sums of <= 10^4 float64 terms, each from a "
                              "water level solved to rounding (~N eps), differ by << 1e-9")


def _feedback(rng, n):
    """Assumption 5.1 feedback with heavy-tailed levels, so water-filling caps some clients."""
    return Assumption51Feedback.generate(rng, n, profile="lognormal")


