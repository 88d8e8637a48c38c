"""Who owns a leftover: a process identity that survives pid reuse (issue 12).

Things a pi-lsp process leaves on disk while it runs (its session temp folder, the recovery record
of an in-place write) carry the identity of their owner, so that the next start can tell "its owner
is gone" (clean it up) from "its owner still runs" (leave it alone), even when the pid has been
reused by another process meanwhile.

An identity is ``{"pid": int, "start": int | None, "boot": str | None}``:

- ``start``: the process's start time, field 22 of ``/proc/PID/stat`` (clock ticks since boot);
- ``boot``: ``/proc/sys/kernel/random/boot_id`` (a new value at every boot, when start times restart).

Where ``/proc`` is missing (macOS), both are ``None`` and only the pid is compared, which can keep a
leftover whose pid was reused (never remove a live owner's).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

_PROC = Path("/proc")


@functools.lru_cache(maxsize=1)
def boot_id() -> str | None:
    """This boot's id (``/proc/sys/kernel/random/boot_id``), ``None`` where unknown."""
    try:
        return (_PROC / "sys" / "kernel" / "random" / "boot_id").read_bytes().decode().strip() or None
    except OSError:
        return None


def start_time(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot; ``None`` when it is gone or unknown."""
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        if fields[0] == b"Z":
            return None  # a zombie has ended: it owns nothing any more
        return int(fields[19])  # field 22 overall; fields[0] is field 3 (state)
    except (IndexError, ValueError):
        return None


def current_identity() -> dict[str, Any]:
    """The identity of this process."""
    pid = os.getpid()
    return {"pid": pid, "start": start_time(pid), "boot": boot_id()}


def owner_alive(identity: Any) -> bool:
    """True while the process ``identity`` names still runs (same pid, start time and boot).

    A malformed identity counts as alive (never remove what cannot be judged).
    """
    if not isinstance(identity, dict):
        return True
    pid = identity.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    recorded_boot = identity.get("boot")
    if recorded_boot is not None and boot_id() is not None and recorded_boot != boot_id():
        return False  # rebooted since: every process of that boot is gone
    recorded_start = identity.get("start")
    if recorded_start is not None and _PROC.is_dir():
        return start_time(pid) == recorded_start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
