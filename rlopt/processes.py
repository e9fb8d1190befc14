"""Child processes that never outlive their parent: the runner's workers and the
parameter-space search beside a solve.

A signal that reaches only the parent (``kill PID``, a job scheduler, a notebook's
interrupt, systemd) or a parent killed outright must not leave a child computing on.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

__all__ = ["die_with_parent"]


def die_with_parent(parent: int) -> None:
    """Make this (child) process end as soon as ``parent`` (its parent's pid) does, even a
    parent killed with SIGKILL: on Linux the kernel sends SIGKILL then
    (``PR_SET_PDEATHSIG``); elsewhere a daemon thread polls the parent every second."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    else:  # pragma: no cover - macOS, Windows

        def watch():
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # the parent died before the above
        os._exit(1)
