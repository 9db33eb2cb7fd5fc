"""PEP solves shared by the claims of one run, kept beside its results store.

:func:`flbounds.pep.sdp.solve` keeps each accepted solve in the file the variable
``FLBOUNDS_PEP_CACHE`` names (keyed by a digest of the SDP sent to the solver);
``flbounds check`` points it at :data:`PEP_SOLVES_FILE` in its results folder for the length
of the run, so two claims (or two runs) that solve the same SDP solve it once.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

#: the accepted PEP solves, beside the results (:mod:`flbounds.pep.sdp`, Reuse)
PEP_SOLVES_FILE = "pep_solves.sqlite"


@contextlib.contextmanager
def share_pep_solves(directory):
    """Within this block, every PEP solve of this process and of the workers it starts
    reuses the accepted solves kept in ``directory`` (:data:`PEP_SOLVES_FILE`; the variable
    ``FLBOUNDS_PEP_CACHE`` read by :func:`flbounds.pep.sdp.solve`), unless the variable is
    set already (an empty value turns the reuse off). The variable is restored on exit."""
    name = "FLBOUNDS_PEP_CACHE"
    if name in os.environ:
        yield
        return
    os.environ[name] = str(Path(directory) / PEP_SOLVES_FILE)
    try:
        yield
    finally:
        os.environ.pop(name, None)
