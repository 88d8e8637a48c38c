"""The two low-level steps every durable write shares: write all bytes, fsync a folder.

Used by the rename-write (:mod:`safe_write`) and the journaled in-place write
(:mod:`in_place_write`); both then fsync the file itself before relying on it.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_all(fd: int, data: bytes | memoryview, offset: int = 0, chunk: int | None = None) -> None:
    """Write every byte of ``data`` to ``fd`` at ``offset`` (bytes), looping over short writes.

    ``chunk`` caps one ``pwrite`` (bytes; ``None``: all at once), so a huge write can be split.
    Raises ``OSError`` as ``os.pwrite`` does (ENOSPC, EIO ...); bytes already written stay written.
    """
    view = memoryview(data)
    size = chunk or len(view) or 1
    while view:
        written = os.pwrite(fd, view[:size], offset)
        view = view[written:]
        offset += written


def fsync_directory(directory: str | Path) -> None:
    """Make a new or renamed entry of ``directory`` durable (POSIX: fsync the folder itself).

    Never raises: a folder that cannot be opened or fsynced (some filesystems refuse it) is
    skipped; the file's own fsync still holds its data.
    """
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
