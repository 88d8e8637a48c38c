"""Crash-safe in-place writes: a recovery record first, then the target (issue 12).

A file is written in place when a rename would break something (it has several hard links, or its
directory is not writable: :mod:`~pi_lsp.tools.file_io.safe_write`). Overwriting in place is not
atomic: a process killed part-way (``kill -9``, a crash, power loss) would leave part of the new
bytes followed by the old ones. So, before the target is touched:

1. the old bytes and the new bytes are written to files in :func:`pending_writes_dir` and fsynced;
2. a record naming the target (real path, device and inode), both sizes and SHA-256 digests, the
   two byte files and the owner process (:mod:`~pi_lsp.tools.process_identity`) is written,
   fsynced and renamed into place (the directory fsynced too).

Then the target is overwritten in chunks of :data:`CHUNK_BYTES`, truncated, fsynced, and the record
and its byte files are removed. A failure the process sees (``ENOSPC``, ``EIO``) puts the old
bytes back at once.

If the process dies instead, the record stays. :func:`recover_pending_writes` (run at the next
start of the daemon or ``pi-lsp exec``, and before the next read or write of that file) finds the
records whose owner is gone and:

- target gone or another inode now: someone replaced it; the record is dropped;
- target holds exactly the old or the new bytes: it is left so (the write completed, or never
  started);
- every byte of the target is the old or the new byte at that position (an interrupted write,
  or an interrupted roll-back): the old bytes are written back, like a failed rename-write;
- anything else: someone changed the file after the crash; it is left alone and a warning logged.

A file this process may write but not read (mode ``-w-``) cannot be journaled; it is written in
place without a record, as Node would.

The folder is ``$PI_LSP_STATE_DIR/pending-writes`` when that variable is set, else
``$XDG_STATE_HOME/pi-lsp/pending-writes`` (default ``~/.local/state``). When it cannot be created
(a home folder the process may not write), ``pi-lsp.pending-writes.UID`` in the system temp
directory is used instead (private to the user; it survives a killed process, not always a reboot).
If neither can be used, the in-place write fails with that error before the target is touched.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import secrets
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from pi_lsp.tools.file_io.durable_io import fsync_directory, write_all
from pi_lsp.tools.process_identity import current_identity, owner_alive

logger = logging.getLogger(__name__)

STATE_DIR_ENV = "PI_LSP_STATE_DIR"
"""Environment variable overriding pi-lsp's per-user state folder."""

CHUNK_BYTES = 1 << 20
"""Bytes per ``pwrite`` when overwriting a target in place."""

_RECORD = ".json"
_COMPARE_BLOCK = 1 << 16


def pending_writes_dir() -> Path:
    """The folder of in-place write records (see the module docstring); not created here."""
    return Path(_pending_writes_dir_name())


def _pending_writes_dir_name() -> str:
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return os.path.join(override, "pending-writes")
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "pi-lsp", "pending-writes")


def fallback_pending_writes_dir() -> Path:
    """Where records go when :func:`pending_writes_dir` cannot be created: the system temp
    directory, one folder per user."""
    return Path(_fallback_dir_name())


def _fallback_dir_name() -> str:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(tempfile.gettempdir(), f"pi-lsp.pending-writes.{uid}")


def _record_dirs() -> list[Path]:
    return [pending_writes_dir(), fallback_pending_writes_dir()]


def _private_dir(folder: Path, *, shared_parent: bool) -> Path:
    """Create ``folder`` (0700) if needed; in a shared parent it must be ours and not a symlink."""
    folder.mkdir(parents=not shared_parent, exist_ok=True, mode=0o700)
    if shared_parent:
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise OSError(errno.EACCES, "not a private folder of this user", str(folder))
    return folder


def _writable_record_dir() -> Path:
    try:
        return _private_dir(pending_writes_dir(), shared_parent=False)
    except OSError as first:
        try:
            return _private_dir(fallback_pending_writes_dir(), shared_parent=True)
        except OSError:
            raise first from None


SETTLED_MTIME_NS = 3_000_000_000
"""How old (nanoseconds) a records folder's modification time must be before a listing of it
that found it empty is trusted while the time stays the same. A file system stamps times with a
coarse clock (ext4 and tmpfs: a kernel tick; ext3: 1 s; FAT: 2 s), so a record added right after
the listing could leave a *recent* time unchanged; an old time cannot be stamped again."""

_dir_names: tuple[tuple[object, ...], tuple[str, str]] | None = None
_seen_empty: dict[str, tuple[int, int, int]] = {}
_seen_missing: set[str] = set()

_STATE_KEY, _XDG_KEY, _HOME_KEY = (os.fsencode(name) for name in (STATE_DIR_ENV, "XDG_STATE_HOME", "HOME"))
_POSIX = os.name == "posix"
_EXISTS_ARGS = {"effective_ids": True} if os.access in os.supports_effective_ids else {}


def _record_dir_names() -> tuple[str, str]:
    """The names of both records folders, recomputed only when what they derive from changed:
    three environment variables and the temp directory.

    On POSIX ``os.environ`` keeps its values in a dict of bytes (``_data``) that every change
    through ``os.environ`` updates; one look-up there costs a twentieth of ``os.environ.get``'s
    four Python frames, and this runs before every disk read (issue 21). Anything else (a
    replaced ``os.environ``, another platform) is read through the mapping."""
    global _dir_names
    data = getattr(os.environ, "_data", None)
    if _POSIX and type(data) is dict:
        key = (data.get(_STATE_KEY), data.get(_XDG_KEY), data.get(_HOME_KEY), tempfile.tempdir)
    else:
        key = (os.environ.get(STATE_DIR_ENV), os.environ.get("XDG_STATE_HOME"), os.environ.get("HOME"), tempfile.tempdir)
    if _dir_names is None or _dir_names[0] != key:
        _dir_names = key, (_pending_writes_dir_name(), _fallback_dir_name())
    return _dir_names[1]


def pending_writes_waiting() -> bool:
    """True when a records folder holds anything: a cheap check before recovering, run before
    every disk read (issue 21).

    A folder that does not exist costs one ``stat``, or one ``access`` (no exception raised)
    when it did not exist at the previous check either; one listed empty costs one ``stat`` as
    long as its device, inode and modification time are those of that listing and the time was
    at least :data:`SETTLED_MTIME_NS` old then (adding a record changes the time). Otherwise it
    is listed. No ``Path`` objects are built."""
    for folder in _record_dir_names():
        if folder in _seen_missing and not os.access(folder, os.F_OK, **_EXISTS_ARGS):
            continue
        try:
            info = os.stat(folder)
        except OSError:
            _seen_missing.add(folder)
            continue
        _seen_missing.discard(folder)
        stamp = (info.st_dev, info.st_ino, info.st_mtime_ns)
        if _seen_empty.get(folder) == stamp:
            continue
        settled = time.time_ns() - info.st_mtime_ns >= SETTLED_MTIME_NS  # the clock before listing
        try:
            if os.listdir(folder):
                return True
        except OSError:
            continue
        if settled:
            _seen_empty[folder] = stamp
    return False


def _durable_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _overwrite(fd: int, data: bytes, old_size: int) -> None:
    """Overwrite an open file with ``data``: reserve space, write in chunks, truncate, fsync."""
    if len(data) > old_size:
        try:
            os.posix_fallocate(fd, 0, len(data))
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS, errno.ENODEV):
                os.ftruncate(fd, old_size)
                raise
    write_all(fd, data, chunk=CHUNK_BYTES)
    os.ftruncate(fd, len(data))
    os.fsync(fd)


class _Journal:
    """One record and its two byte files in :func:`pending_writes_dir`."""

    def __init__(self, folder: Path, stem: str) -> None:
        self.folder = folder
        self.record = folder / f"{stem}{_RECORD}"
        self.old = folder / f"{stem}.old"
        self.new = folder / f"{stem}.new"

    @classmethod
    def begin(cls, real: str, info: os.stat_result, old: bytes, new: bytes) -> "_Journal":
        folder = _writable_record_dir()
        owner = current_identity()
        journal = cls(folder, f"{owner['pid']}-{owner['start']}-{secrets.token_hex(6)}")
        try:
            _durable_file(journal.old, old)
            _durable_file(journal.new, new)
            record = {
                "target": real, "dev": info.st_dev, "ino": info.st_ino, "owner": owner,
                "oldSize": len(old), "oldSha256": hashlib.sha256(old).hexdigest(),
                "newSize": len(new), "newSha256": hashlib.sha256(new).hexdigest(),
                "old": journal.old.name, "new": journal.new.name,
            }
            staging = folder / f"{journal.record.name}.tmp"
            _durable_file(staging, json.dumps(record).encode("utf-8"))
            os.replace(staging, journal.record)
            fsync_directory(folder)
        except BaseException:
            journal.remove()
            _unlink(folder / f"{journal.record.name}.tmp")
            raise
        return journal

    def remove(self) -> None:
        """Drop the record first (what recovery looks for), then the byte files."""
        for path in (self.record, self.old, self.new):
            _unlink(path)


def write_in_place(real: str, data: bytes, info: os.stat_result) -> None:
    """Overwrite ``real`` (a real path to an existing regular file, ``info`` its ``stat``) with
    ``data``, keeping its inode, journaled so that a crash at any moment leaves the old or the new
    bytes once :func:`recover_pending_writes` ran. Raises :class:`OSError` (the old bytes are back
    whenever the disk allows); an error creating the journal leaves the target untouched."""
    recover_pending_writes(real)
    try:
        with open(real, "rb") as handle:
            old: bytes | None = handle.read()
    except PermissionError:
        old = None  # a write-only file: it cannot be journaled (module docstring)
    journal = _Journal.begin(real, info, old, data) if old is not None else None
    fd = os.open(real, os.O_WRONLY | os.O_CLOEXEC)
    try:
        try:
            _overwrite(fd, data, info.st_size if old is None else len(old))
        except OSError:
            if old is not None:
                try:
                    write_all(fd, old, chunk=CHUNK_BYTES)
                    os.ftruncate(fd, len(old))
                    os.fsync(fd)
                except OSError:
                    journal = None  # the roll-back failed too: the record stays for recovery
            raise
    finally:
        os.close(fd)
        if journal is not None:
            journal.remove()


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _ours(content: bytes, old: bytes, new: bytes) -> bool:
    """True when every byte of ``content`` is, at its position, the byte of ``old`` (padded with
    the zeros a reservation adds) or of ``new``: a state our own interrupted writes can leave."""
    size = max(len(old), len(new))
    if len(content) > size:
        return False
    base = old.ljust(size, b"\0")
    for start in range(0, len(content), _COMPARE_BLOCK):
        end = start + _COMPARE_BLOCK
        piece = content[start:end]
        if piece == base[start:end][: len(piece)] or piece == new[start:end]:
            continue
        for index, byte in enumerate(piece, start):
            if byte != base[index] and (index >= len(new) or byte != new[index]):
                return False
    return True


_GONE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM, errno.EISDIR)


def _recover(journal: _Journal, record: dict[str, Any]) -> None:
    """Settle one stale record (module docstring); raises :class:`OSError` when the target could
    not be read or restored for a reason that may pass (``EIO``, ``EROFS``), keeping the record."""
    target = record.get("target")
    if not isinstance(target, str):
        return
    try:
        old = journal.old.read_bytes()
        new = journal.new.read_bytes()
    except OSError:
        logger.warning("in-place write of %s: its saved bytes are gone; cannot check it", target)
        return
    if hashlib.sha256(old).hexdigest() != record.get("oldSha256") or \
            hashlib.sha256(new).hexdigest() != record.get("newSha256"):
        logger.warning("in-place write of %s: its saved bytes are damaged; left as it is", target)
        return
    try:
        fd = os.open(target, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in _GONE:
            return  # removed, replaced by a symlink, or no longer ours to write: nothing to restore
        raise
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != (record.get("dev"), record.get("ino")):
            return  # another file under that name now
        content = b"".join(iter(lambda: os.read(fd, CHUNK_BYTES), b""))
        if content in (old, new):
            return
        if not _ours(content, old, new):
            logger.warning("in-place write of %s was interrupted and the file changed since; left as it is", target)
            return
        write_all(fd, old, chunk=CHUNK_BYTES)
        os.ftruncate(fd, len(old))
        os.fsync(fd)
        logger.warning("an in-place write of %s was interrupted: its old bytes were restored", target)
    finally:
        os.close(fd)


def recover_pending_writes(target: str | None = None) -> list[str]:
    """Finish the in-place writes whose process died (see the module docstring); only those of
    ``target`` (a real path) when given. Returns the targets settled. Never raises: a target that
    cannot be restored now (``EIO``, ``EROFS``) is logged and its record kept for the next try."""
    handled: list[str] = []
    for folder in _record_dirs():
        handled += _recover_in(folder, target)
    return handled


def _recover_in(folder: Path, target: str | None) -> list[str]:
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    handled: list[str] = []
    for name in names:
        if name.endswith(_RECORD):
            journal = _Journal(folder, name[: -len(_RECORD)])
            record = _read_record(journal.record)
            if record is None or (target is not None and record.get("target") != target):
                continue
            if owner_alive(record.get("owner")):
                continue
            try:
                _recover(journal, record)
            except OSError as exc:
                logger.warning("could not finish an interrupted write of %s: %s", record.get("target"), exc)
                continue
            journal.remove()
            handled.append(str(record.get("target")))
        else:
            _sweep_orphan(folder, name)
    return handled


def _sweep_orphan(folder: Path, name: str) -> None:
    """Remove a byte file or staging record whose record never came to be and whose owner is gone."""
    stem = name.split(".", 1)[0]
    if (folder / f"{stem}{_RECORD}").exists():
        return
    pid, _, rest = stem.partition("-")
    start = rest.partition("-")[0]
    try:
        owner = {"pid": int(pid), "start": None if start == "None" else int(start), "boot": None}
    except ValueError:
        return
    if not owner_alive(owner):
        _unlink(folder / name)
