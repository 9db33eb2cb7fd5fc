r"""K-Vib App. B.2 (arbitrary sampling, Lemma B.7) and Algorithm 2's printed probability line
([003]; spec section 6 items 2 and 6)."""

from __future__ import annotations


def _pair_matrix(masks, probs):
    """P_ij = Pr({i, j} in S) of a design given by masks and probabilities."""
    m = masks.astype(float)
    return (m * probs[:, None]).T @ m


