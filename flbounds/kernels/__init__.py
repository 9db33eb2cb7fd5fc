"""Numba kernels: contiguous float64 arrays in, caller-owned outputs, no RNG, cache=True.

Numba's on-disk cache is checked against the source file of the cached function only, not
against the files it calls into (numba's documented caching limitation): a round loop of
``rounds.py`` compiled with the gradients of ``gradients.py`` would be reused after a change
to ``gradients.py``. The cache directory is therefore keyed by a digest of every kernel
source, so any change to any kernel recompiles all of them and a kernel bug (or fix) reaches
every caller at once.
"""

import hashlib
import os
from pathlib import Path

import numba


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


_BASE = numba.config.CACHE_DIR or str(Path(__file__).parent / "__pycache__")
numba.config.CACHE_DIR = os.path.join(_BASE, f"kernels-{_sources_digest()}")
