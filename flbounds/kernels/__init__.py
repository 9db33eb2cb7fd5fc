"""Numba kernels: contiguous float64 arrays in, caller-owned outputs, no RNG, cache=True.

Numba's on-disk cache is checked against the source file of the cached function only, not
against the files it calls into (numba's documented caching limitation): a round loop of
``rounds.py`` compiled with the gradients of ``gradients.py`` would be reused after a change
to ``gradients.py``. The cache directory is therefore keyed by a digest of every kernel
source, so any change to any kernel recompiles all of them and a kernel bug (or fix) reaches
every caller at once. The kernels compile at LLVM optimisation level :data:`KERNEL_OPT` (or at
``NUMBA_OPT`` when it is set), and the directory's name records the levels
(:data:`LEVELS`), so a kernel built at one level never serves a run at another. Where that
directory lives (``NUMBA_CACHE_DIR``, the package, the user cache) and how parallel processes
share one compilation: :mod:`._cache`. With ``FLBOUNDS_COMPILE_LOG=<file>`` every process
appends each kernel it compiles or loads from the cache, with the seconds it took, to that
file (JSON lines).
"""

import os
from pathlib import Path

import numba

from ._cache import (
    cache_dir,
    install_compile_hooks,
    install_stable_cache_keys,
    log_compiles,
    sources_digest,
)

#: LLVM optimisation level the kernels compile at unless ``NUMBA_OPT`` is set (numba's
#: default is 3): level 1 compiles them in 8-14% less CPU time, with the same bits, and they
#: run within a few per cent or faster (``python -m benchmarks opt_level``)
KERNEL_OPT = 1
#: kernels that keep numba's level: the replicate-batched Monte Carlo groups ran 2-12% slower
#: at level 1 in the runs of 2026-11-27 (FedAvg, SAFARI), the logistic FedAvg groups 6% slower
#: on 2026-11-28 (the batched online baselines of ``bandit_replicates`` run as fast at level 1)
KEEP_NUMBA_LEVEL = ("flbounds.kernels.replicates.",)
_USER_OPT = os.environ.get("NUMBA_OPT")
#: the levels the kernels are built at, in the cache folder's name: ``o1`` (``KERNEL_OPT``, the
#: replicate groups at numba's 3) or ``numba-o<N>`` (every kernel at ``NUMBA_OPT``)
LEVELS = f"numba-o{_USER_OPT}" if _USER_OPT else f"o{KERNEL_OPT}"
#: the folder holding the compiled kernels (None: no writable folder, nothing is cached)
CACHE_DIR = cache_dir(f"{sources_digest()}-{LEVELS}")
if os.environ.get("FLBOUNDS_COMPILE_LOG"):   # inside the lock: waiting is not compiling
    log_compiles(Path(os.environ["FLBOUNDS_COMPILE_LOG"]))
if CACHE_DIR is not None:
    numba.config.CACHE_DIR = str(CACHE_DIR)
install_compile_hooks(CACHE_DIR, None if _USER_OPT else KERNEL_OPT, KEEP_NUMBA_LEVEL)
if CACHE_DIR is not None:   # numba's own fallback folder has no digest of the sources
    install_stable_cache_keys()
