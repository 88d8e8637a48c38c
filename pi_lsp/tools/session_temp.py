"""Session temp folders (bash spill files): created with an owner record, swept when stale.

A daemon or ``pi-lsp exec`` session keeps its temp files in one folder, ``pi-lsp-XXXX`` (or
``pi-lsp-exec-XXXX``) in the system temp directory (``TMPDIR``). Every way the process ends removes
it, except SIGKILL (and power loss), after which nothing can run. So the folder holds
:data:`OWNER_FILE`, the :mod:`~pi_lsp.tools.process_identity` of its owner, and the next start of
any pi-lsp process removes the folders whose owner is gone (issue 12).

The record also holds the session's process tag (:data:`~pi_lsp.tools.shell.processes.TAG_VARIABLE`):
the processes a killed session's tools started, which carry it in their environment, are ended
when its folder is swept (:func:`~pi_lsp.tools.leftovers.clean_leftovers`).

Only folders of the current user that carry a readable owner record are ever removed: a folder
without one (being created right now, or made by an older pi-lsp) is left alone.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.tools.process_identity import current_identity, owner_alive

logger = logging.getLogger(__name__)

PREFIX = "pi-lsp-"
"""Every session temp folder's name starts with this (``pi-lsp-exec-`` included)."""

OWNER_FILE = ".owner.json"
"""The owner record inside a session temp folder: ``{"pid", "start", "boot", "processTag"?}``."""


@dataclass(frozen=True)
class StaleSession:
    """A swept folder and the process tag its session gave the processes it started (or ``None``)."""

    folder: Path
    process_tag: str | None


def create_session_temp(prefix: str = PREFIX, root: Path | None = None, process_tag: str | None = None) -> Path:
    """Make a private (mode 0700) session temp folder in ``root`` (default: the system temp
    directory) and record this process as its owner, with the session's ``process_tag``. Raises
    :class:`OSError` when it cannot."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=None if root is None else str(root)))
    owner: dict[str, object] = dict(current_identity())
    if process_tag is not None:
        owner["processTag"] = process_tag
    record = json.dumps(owner).encode()
    fd = os.open(folder / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, record)
    finally:
        os.close(fd)
    return folder


def remove_session_temp(folder: Path) -> None:
    """Remove ``folder`` and everything in it; a folder already gone is fine."""
    shutil.rmtree(folder, ignore_errors=True)


def _owner_of(folder: Path) -> object | None:
    """The folder's owner record, or ``None`` when it has none that can be read."""
    try:
        fd = os.open(folder / OWNER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        raw = os.read(fd, 4096)
    finally:
        os.close(fd)
    try:
        return json.loads(raw)
    except ValueError:
        return None


def sweep_stale_session_temps(root: Path | None = None) -> list[StaleSession]:
    """Remove the session temp folders in ``root`` (default: the system temp directory) whose
    owner process is gone; return them. Never raises (a folder that cannot be judged is kept)."""
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    try:
        names = [name for name in os.listdir(base) if name.startswith(PREFIX)]
    except OSError:
        return []
    uid = os.getuid() if hasattr(os, "getuid") else None
    removed: list[StaleSession] = []
    for name in names:
        folder = base / name
        try:
            info = os.lstat(folder)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or (uid is not None and info.st_uid != uid):
            continue
        owner = _owner_of(folder)
        if owner is None or owner_alive(owner):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            tag = owner.get("processTag") if isinstance(owner, dict) else None
            removed.append(StaleSession(folder, tag if isinstance(tag, str) and tag else None))
    if removed:
        logger.info("removed %d temp folder(s) left by pi-lsp processes that were killed", len(removed))
    return removed
