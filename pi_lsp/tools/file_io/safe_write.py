"""Safe file writes (design.md section 7): a failed write leaves the old file byte-identical.

:func:`write_file_safely` is the one place pi-lsp replaces a file's content on disk:

1. Parent directories are created (``mkdir -p``, Pi's write behaviour).
2. The real path is resolved first, so writing through a symlink changes the target and the
   symlink stays a symlink.
3. Usually the new bytes go to a temp file in the target's directory, which gets the old file's
   mode (and owner where the process may set it), is fsynced, and then atomically renamed over the
   target; the directory is fsynced too. Readers see the old or the new file, never a mix.
4. In place instead, when a rename would break something: the file has several hard links (the
   other names must see the change) or the directory is not writable. In place, a recovery record
   with the old and new bytes is made durable first (:mod:`~pi_lsp.tools.file_io.in_place_write`),
   so even ``kill -9`` part-way leaves the old or the new bytes once the next start (or the next
   access of that file) has recovered; on a failure the process sees, the old bytes are written
   back at once.

The temp file (``.NAME.HEX.pi-tmp``) is ``flock``-ed by its writer. A killed writer leaves it
behind: every write of ``NAME`` first removes the temp files of ``NAME`` that no live process
holds (issue 12).

Errors are :class:`OSError` whose ``filename`` is the path the caller gave (directories for
``mkdir`` failures); each is tagged with its syscall (:func:`~pi_lsp.tools.file_io.os_errors.tag_syscall`)
so the tool can print it in Node's words.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import stat
from pathlib import Path

from pi_lsp.tools.file_io.durable_io import fsync_directory, write_all
from pi_lsp.tools.file_io.in_place_write import recover_pending_writes, write_in_place
from pi_lsp.tools.file_io.os_errors import access_denied, node_error, tag_syscall
from pi_lsp.tools.file_io.regular_files import refuse_special

_TEMP_SUFFIX = ".pi-tmp"
_TEMP_HEX = 12


def _mkdir_parents(directory: str) -> None:
    """``mkdir -p`` with Node's error reporting: an existing non-directory raises ``EEXIST``."""
    try:
        os.mkdir(directory)
    except FileNotFoundError:
        parent = os.path.dirname(directory)
        if parent == directory:
            raise
        _mkdir_parents(parent)
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise
    except OSError:
        if not os.path.isdir(directory):
            raise


def _lock_temp(fd: int) -> bool:
    """Take the writer's lock on a new temp file; ``False`` when a sweeper holds it already (it
    is about to remove the file: pick another name). Filesystems without ``flock`` pass."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        pass
    return True


def sweep_stale_temps(real: str) -> list[str]:
    """Remove the temp files of ``real`` (``.NAME.HEX.pi-tmp`` beside it) that no live writer
    holds, i.e. those a killed write left; return their paths. Never raises."""
    directory = os.path.dirname(real)
    pattern = re.compile(re.escape(f".{os.path.basename(real)}.") + f"[0-9a-f]{{{_TEMP_HEX}}}" + re.escape(_TEMP_SUFFIX))
    try:
        names = [name for name in os.listdir(directory) if pattern.fullmatch(name)]
    except OSError:
        return []
    removed: list[str] = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a live writer holds it (or locks are unsupported: leave it)
            current = os.lstat(path)
            if (current.st_dev, current.st_ino) == (info.st_dev, info.st_ino):
                os.unlink(path)
                removed.append(path)
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


def _write_by_rename(real: str, data: bytes, info: os.stat_result | None) -> None:
    """Write a temp file next to ``real`` and rename it over ``real``; no temp file survives."""
    directory = os.path.dirname(real)
    name = os.path.basename(real)
    temp = ""
    fd = -1
    for _ in range(100):
        temp = os.path.join(directory, f".{name}.{secrets.token_hex(_TEMP_HEX // 2)}{_TEMP_SUFFIX}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        if _lock_temp(fd):
            break
        os.close(fd)
    else:  # pragma: no cover - 100 random collisions
        raise node_error("EEXIST", temp)
    try:
        try:
            write_all(fd, data)
            if info is not None:
                try:
                    os.fchown(fd, info.st_uid, info.st_gid)
                except OSError:
                    pass  # not allowed to give the file away: keep our own ownership
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
            os.fsync(fd)
            os.replace(temp, real)
        finally:
            os.close(fd)  # only now: the lock keeps a sweep away from the temp file until renamed
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    fsync_directory(directory)


def write_file_safely(path: Path, data: bytes) -> None:
    """Replace the content of ``path`` (absolute) with ``data`` (bytes, written as given).

    Creates missing parent directories. Raises :class:`OSError`: ``EISDIR`` for a directory,
    ``EACCES`` for a file the process may not write, ``ELOOP`` for a symlink loop, ``EEXIST`` /
    ``ENOTDIR`` when a parent is a file, ``ENOSPC``/``EIO`` from the disk; and
    :class:`~pi_lsp.tools.file_io.regular_files.NotRegularFileError` for an existing device, FIFO or socket
    (never opened). On any failure the old
    file is byte-identical and no temp file is left behind; temp files that killed writes of
    ``path`` left are removed. An in-place write first makes its recovery record durable
    (:mod:`~pi_lsp.tools.file_io.in_place_write`); failing to do so is reported like a failed
    write and leaves the file untouched.
    """
    given = os.fspath(path)
    try:
        _mkdir_parents(os.path.dirname(given))
    except OSError as exc:
        raise tag_syscall(exc, "mkdir")
    try:
        try:
            info: os.stat_result | None = os.stat(given)
        except FileNotFoundError:
            info = None
        real = os.path.realpath(given)
        if info is not None:
            if stat.S_ISDIR(info.st_mode):
                raise node_error("EISDIR", given)
            refuse_special(given, info.st_mode)  # a FIFO would block, a device never fill
            if not os.access(real, os.W_OK):
                raise access_denied(given, write=True)  # EROFS on a read-only filesystem
        directory_writable = os.access(os.path.dirname(real), os.W_OK | os.X_OK)
        in_place = info is not None and (
            not stat.S_ISREG(info.st_mode) or info.st_nlink > 1 or not directory_writable
        )
    except OSError as exc:
        exc.filename = given
        raise tag_syscall(exc, "open")
    if info is not None:
        recover_pending_writes(real)  # a killed in-place write of this file is settled first
    sweep_stale_temps(real)
    try:
        if in_place:
            assert info is not None
            write_in_place(real, data, info)
        else:
            _write_by_rename(real, data, info)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG):
            exc.filename = None
            raise tag_syscall(exc, "write")
        exc.filename = given
        exc.filename2 = None
        raise tag_syscall(exc, "open")
