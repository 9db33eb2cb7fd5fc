"""Whether the process holding a lease, or running a run, may still be working.

The results store asks it of a recorded run (to report a run whose process is gone as
``interrupted``), the leases of a lease's holder (to reclaim the lease of a killed run).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

__all__ = ["holder_alive"]


def holder_alive(host: str, pid, expires: float | None) -> bool:
    """Whether a lease holder (or a run) may still be working.

    On this host the process table decides (a holder with this process's own pid is an
    earlier process whose pid was reused, so gone); elsewhere the expiry does (``None``:
    unknown, so alive).
    """
    if host == socket.gethostname() and isinstance(pid, int):
        return pid != os.getpid() and _pid_alive(pid)
    return expires is None or expires > time.time()


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if sys.platform.startswith("linux"):
        try:   # a zombie (killed, not yet reaped) is not working any more
            stat = Path(f"/proc/{pid}/stat").read_text()
            return stat.rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
