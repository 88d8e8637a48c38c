"""Safe file writes (design.md section 7): a failed write leaves the old file byte-identical.

:func:`write_file_safely` is the one place pi-lsp replaces a file's content on disk:

1. Parent directories are created (``mkdir -p``, Pi's write behaviour).
2. The real path is resolved first, so writing through a symlink changes the target and the
   symlink stays a symlink.
3. Usually the new bytes go to a temp file in the target's directory, which gets the old file's
   mode (and owner where the process may set it), is fsynced, and then atomically renamed over the
   target; the directory is fsynced too. Readers see the old or the new file, never a mix.
4. In place instead, when a rename would break something: the file has several hard links (the
   other names must see the change) or the directory is not writable. In place, space is reserved first (``posix_fallocate``) and on a failure part-way the old
   bytes are written back, so the file ends identical whenever the disk allows it.

Errors are :class:`OSError` whose ``filename`` is the path the caller gave (directories for
``mkdir`` failures); each is tagged with its syscall (:func:`~pi_lsp.tools.file_io.os_errors.tag_syscall`)
so the tool can print it in Node's words.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from pi_lsp.tools.file_io.os_errors import node_error, tag_syscall
from pi_lsp.tools.file_io.regular_files import refuse_special

_TEMP_SUFFIX = ".pi-tmp"


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


def _write_all(fd: int, data: bytes, offset: int = 0) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot fsync a directory; the data itself is synced
    finally:
        os.close(fd)


def _write_in_place(real: str, data: bytes, old_size: int) -> None:
    """Overwrite ``real`` keeping its inode; restore the old bytes if the write fails part-way."""
    try:
        with open(real, "rb") as handle:
            old: bytes | None = handle.read()
    except OSError:
        old = None  # write-only file: cannot restore, but still write like Node would
    fd = os.open(real, os.O_WRONLY | os.O_CLOEXEC)
    try:
        if len(data) > old_size:
            try:
                os.posix_fallocate(fd, 0, len(data))
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS, errno.ENODEV):
                    os.ftruncate(fd, old_size)
                    raise
        try:
            _write_all(fd, data)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError:
            if old is not None:
                try:
                    _write_all(fd, old)
                    os.ftruncate(fd, len(old))
                    os.fsync(fd)
                except OSError:
                    pass
            raise
    finally:
        os.close(fd)


def _write_by_rename(real: str, data: bytes, info: os.stat_result | None) -> None:
    """Write a temp file next to ``real`` and rename it over ``real``; no temp file survives."""
    directory = os.path.dirname(real)
    name = os.path.basename(real)
    temp = ""
    fd = -1
    for _ in range(100):
        temp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}{_TEMP_SUFFIX}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 random collisions
        raise node_error("EEXIST", temp)
    try:
        try:
            _write_all(fd, data)
            if info is not None:
                try:
                    os.fchown(fd, info.st_uid, info.st_gid)
                except OSError:
                    pass  # not allowed to give the file away: keep our own ownership
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, real)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


def write_file_safely(path: Path, data: bytes) -> None:
    """Replace the content of ``path`` (absolute) with ``data`` (bytes, written as given).

    Creates missing parent directories. Raises :class:`OSError`: ``EISDIR`` for a directory,
    ``EACCES`` for a file the process may not write, ``ELOOP`` for a symlink loop, ``EEXIST`` /
    ``ENOTDIR`` when a parent is a file, ``ENOSPC``/``EIO`` from the disk; and
    :class:`~pi_lsp.tools.file_io.regular_files.NotRegularFileError` for an existing device, FIFO or socket
    (never opened). On any failure the old
    file is byte-identical and no temp file is left behind.
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
                raise node_error("EACCES", given)
        directory_writable = os.access(os.path.dirname(real), os.W_OK | os.X_OK)
        in_place = info is not None and (
            not stat.S_ISREG(info.st_mode) or info.st_nlink > 1 or not directory_writable
        )
    except OSError as exc:
        exc.filename = given
        raise tag_syscall(exc, "open")
    try:
        if in_place:
            assert info is not None
            _write_in_place(real, data, info.st_size)
        else:
            _write_by_rename(real, data, info)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG):
            exc.filename = None
            raise tag_syscall(exc, "write")
        exc.filename = given
        exc.filename2 = None
        raise tag_syscall(exc, "open")
