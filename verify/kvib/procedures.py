r"""Helper of Lemma B.7 (:mod:`verify.kvib.lemma_b7`, no claims here): the pair-inclusion
matrix of a sampling design."""

from __future__ import annotations


def _pair_matrix(masks, probs):
    """P_ij = Pr({i, j} in S) of a design given by masks and probabilities."""
    m = masks.astype(float)
    return (m * probs[:, None]).T @ m


