"""``LocalFileAccess``: the :class:`~pi_lsp.tools.file_io.file_access.FileAccess` seam on the plain filesystem.

Used by ``pi-lsp exec`` and, in the daemon, for files the editor does not hold. Calls that may take
long run in a worker thread (:func:`asyncio.to_thread`) so the event loop stays responsive: every
write (it fsyncs) and every read of more than :data:`INLINE_READ_BYTES`. Metadata checks
(``access``) and small reads run inline: they cost microseconds, far less than a thread hop
(about 0.2 ms here), and path resolution already stats the same path on the loop. Writes are the
safe writes of design.md section 7, implemented in :mod:`pi_lsp.tools.file_io.safe_write`.

Errors are :class:`OSError` with ``errno`` and ``filename`` set to the path the caller gave (not
the resolved real path), so the tools can print them in Node's words (:mod:`.os_errors`).
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from pi_lsp.agent.tool import ToolContext
from pi_lsp.tools.file_io.file_access import FileSnapshot, WriteReport
from pi_lsp.tools.file_io.in_place_write import pending_writes_waiting, recover_pending_writes
from pi_lsp.tools.file_io.os_errors import access_denied, node_error
from pi_lsp.tools.file_io.regular_files import read_checked_file, refuse_special
from pi_lsp.tools.file_io.safe_write import write_file_safely


INLINE_READ_BYTES = 128 * 1024
"""Files up to this size are read on the event loop; larger ones in a worker thread."""


def _access(path: str, write: bool) -> None:
    mode = os.R_OK | (os.W_OK if write else 0)
    if os.access(path, mode):  # the common case in one system call, without an exception
        return
    os.stat(path)  # ENOENT, ENOTDIR, ELOOP, EACCES on a parent, with errno and filename
    if not os.access(path, mode):  # asked again: the file may have appeared meanwhile
        raise access_denied(path, write=write)


_WRITABLE = os.R_OK | os.W_OK
_S_ISREG = stat.S_ISREG


def _refuse_not_file(path: str, mode: int) -> None:
    """Raise for what is not a regular file: ``EISDIR`` for a directory, else
    :class:`~pi_lsp.tools.file_io.regular_files.NotRegularFileError` (unopened)."""
    if stat.S_ISDIR(mode):
        raise node_error("EISDIR", path)
    refuse_special(path, mode)


def _read(path: Path, text: str) -> FileSnapshot:
    data, _info = read_checked_file(text)  # _refuse_not_file refused what is not a file a moment ago
    return FileSnapshot(path, None, data, "disk")  # the real path is resolved if asked for


class LocalFileAccess:
    """Read and write files directly on disk (implements :class:`~pi_lsp.tools.file_io.file_access.FileAccess`).

    - :meth:`access` works like Node's ``fs.access``: ``ENOENT``/``ENOTDIR``/``ELOOP`` from the
      lookup, ``EACCES`` when the mode is not granted (root is granted everything, as in Node); a
      directory passes (reading it then fails with ``EISDIR``).
    - :meth:`read` returns the raw bytes (after finishing an in-place write of that file that a
      killed process left, :mod:`~pi_lsp.tools.file_io.in_place_write`); a directory raises ``EISDIR``, a symlink loop ``ELOOP``;
      a device, FIFO or socket raises :class:`~pi_lsp.tools.file_io.regular_files.NotRegularFileError`
      (a ``ToolError``) without being opened.
    - :meth:`write` creates parent directories and replaces the content safely (see
      :func:`~pi_lsp.tools.file_io.safe_write.write_file_safely`); ``previous``, ``label`` and ``ctx`` are
      for editors and ignored here. It returns ``WriteReport(via="disk")``. An existing device,
      FIFO or socket is refused the same way as for :meth:`read`, unopened.
    """

    async def access(self, path: Path, *, write: bool = False) -> None:
        """Check ``path`` exists and is readable (and writable with ``write``); raise ``OSError``."""
        text = os.fspath(path)
        if not os.access(text, _WRITABLE if write else os.R_OK):  # granted: one system call, no frame
            _access(text, write)

    async def read(self, path: Path, ctx: ToolContext | None = None, *, real_path: str | None = None) -> FileSnapshot:
        """The bytes of ``path`` on disk as a :class:`FileSnapshot` (``source="disk"``; ``real_path``
        is not needed on disk)."""
        text = os.fspath(path)  # a str from here on: a Path costs a Python call per system call
        info = os.stat(text)
        if not _S_ISREG(info.st_mode):
            _refuse_not_file(text, info.st_mode)
        if pending_writes_waiting():  # a killed process may have left this file half written
            await asyncio.to_thread(recover_pending_writes, os.path.realpath(text))
        if info.st_size <= INLINE_READ_BYTES:  # read_checked_file: _refuse_not_file ruled out the rest
            return FileSnapshot(path, None, read_checked_file(text)[0], "disk")
        return await asyncio.to_thread(_read, path, text)

    async def write(
        self,
        path: Path,
        data: bytes,
        *,
        previous: FileSnapshot | None,
        label: str,
        ctx: ToolContext | None = None,
    ) -> WriteReport:
        """Replace the content of ``path`` with ``data``; the old file stays intact on failure."""
        await asyncio.to_thread(write_file_safely, path, data)
        return WriteReport(via="disk")

