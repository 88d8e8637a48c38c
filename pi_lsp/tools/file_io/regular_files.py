"""Only regular files are read or written: devices, FIFOs and sockets are refused unopened.

Reading ``/dev/zero`` never ends (memory grows without bound), opening a FIFO blocks until a writer
(or reader) appears, and opening some devices has side effects. So the file tools stat a path first
(following symlinks) and refuse anything that is neither a regular file nor a directory (a
directory keeps its ``EISDIR`` error) before any ``open``. A path swapped for a FIFO between the
stat and the open is caught too: reads open with ``O_NONBLOCK`` and check again with ``fstat``
(a regular file's reads then block where the file system makes them: see :func:`_read_small`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.file_io.os_errors import node_error


class NotRegularFileError(ToolError):
    """``path`` is a character or block device, a FIFO or a socket; the message names which."""


def special_kind(mode: int) -> str | None:
    """What a ``st_mode`` is in words (``"a character device"``), or ``None`` for a regular file
    or a directory (those are handled elsewhere)."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file or directory"  # pragma: no cover - no other types on Linux


def refuse_special(path: str | Path, mode: int) -> None:
    """Raise :class:`NotRegularFileError` when ``mode`` is not a regular file or directory, e.g.
    ``/dev/zero is a character device, not a regular file; read, edit and write only work on
    regular files.`` (``path`` as given, not resolved)."""
    kind = special_kind(mode)
    if kind is None:
        return
    raise NotRegularFileError(
        f"{os.fsdecode(path)} is {kind}, not a regular file; read, edit and write only work on regular files."
    )


def read_regular_file(path: str | Path) -> tuple[bytes, os.stat_result]:
    """All bytes of the regular file ``path`` and its ``fstat``.

    Raises ``OSError`` (``ENOENT``, ``EACCES`` ...; ``EISDIR`` with ``filename=path`` for a
    directory) and :class:`NotRegularFileError` for a device, FIFO or socket, which is never opened
    (or, if it replaced the file after the stat, opened non-blocking and closed unread).
    """
    refuse_special(path, _stat_or_eisdir(path).st_mode)
    return read_checked_file(path)


def read_checked_file(path: str | Path) -> tuple[bytes, os.stat_result]:
    """:func:`read_regular_file` for a caller that has just stat-ed ``path`` and refused a
    directory, device, FIFO or socket itself: the same result and errors without a second stat
    (what is opened is checked again with ``fstat``, so a swap in between is still refused)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            if stat.S_ISDIR(info.st_mode):
                raise node_error("EISDIR", path)
            refuse_special(path, info.st_mode)
        if 0 < info.st_size <= SMALL_FILE_BYTES:
            data = _read_small(fd, info.st_size)  # O_NONBLOCK cleared only if it matters (EAGAIN)
        else:
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read()
    finally:
        os.close(fd)
    return data, info


SMALL_FILE_BYTES = 1 << 20
"""Files up to this size are read with plain ``os.read`` calls (no buffered file object, which
costs more than the read of a small file); larger ones with the file object's ``readall``."""


def _read_small(fd: int, size: int) -> bytes:
    """Every byte up to end of file, asking for ``size + 1`` bytes first: a file of ``size``
    bytes takes two reads (the second finds the end) and its bytes are not copied again; a file
    that grew meanwhile is read on to its end.

    ``fd`` may be non-blocking: local file systems ignore ``O_NONBLOCK`` for regular files, so it
    is left on (one system call less per read, issue 21); one that honours it (some FUSE file
    systems) answers ``EAGAIN``, and the descriptor is then made blocking and the read asked again."""
    chunks: list[bytes] = []
    want = size + 1
    while True:
        try:
            chunk = os.read(fd, want)
        except BlockingIOError:
            os.set_blocking(fd, True)
            continue
        if not chunk:
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.append(chunk)
        want = 1 << 16


def _stat_or_eisdir(path: str | Path) -> os.stat_result:
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise node_error("EISDIR", path)
    return info


__all__ = ["NotRegularFileError", "read_checked_file", "read_regular_file", "refuse_special", "special_kind"]
