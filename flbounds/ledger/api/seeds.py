"""Seeds of claims and of their cells: one generator per (root seed, claim id[, cell])."""

from __future__ import annotations

import hashlib
import json

import numpy as np


def check_seed(seed) -> int:
    """``seed`` as an int, else ``ValueError`` naming it (a non-negative integer)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def claim_seed_sequence(seed: int, claim_id: str) -> np.random.SeedSequence:
    """SeedSequence keyed by (root seed, claim id); replicates use ``.spawn`` on the result.

    Parameters
    ----------
    seed : int
        The root seed, a non-negative integer (else ``ValueError``).
    claim_id : str
        The claim's id; its SHA-256 digest gives the spawn key.

    Returns
    -------
    numpy.random.SeedSequence
        Entropy ``seed``, spawn key four 32-bit words of the digest.
    """
    check_seed(seed)
    digest = hashlib.sha256(claim_id.encode()).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=int(seed), spawn_key=words)


def cell_seed_sequence(seed: int, claim_id: str, cell: dict) -> np.random.SeedSequence:
    """SeedSequence of one cell: keyed by (root seed, claim id, the cell's parameters as
    canonical JSON), so a cell draws the same numbers wherever and whenever it runs."""
    base = claim_seed_sequence(seed, claim_id)
    digest = hashlib.sha256(json.dumps(cell, sort_keys=True).encode()).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=base.entropy, spawn_key=base.spawn_key + words)
