"""Which workspace paths changed since a full snapshot, from Linux inotify (issue 18, bench).

The bash snapshots before and after a command would otherwise stat every file of the workspace (0.5 s on
30,000 files, 100x a bare ``bash -c true``). :class:`DirWatch` watches every folder a full stat walk
visits (the watch is added *before* the folder is listed, so a change after its entry was read is
reported), and :meth:`DirWatch.drain` says which paths changed since: the next snapshot re-reads
only those. The answer is ``None`` ("walk everything again") whenever it could be incomplete: the
kernel's queue overflowed, a watched folder was deleted, moved or unmounted, a folder was moved in
or out, or a watch could not be added (``max_user_watches``).

Linux only (``inotify_init1`` through ``ctypes``); elsewhere :meth:`DirWatch.create` returns ``None``
and every snapshot is a full walk. inotify does not see writes through a shared ``mmap`` or on a
network file system by another machine; so after each command a full walk in the background
confirms the snapshot (:meth:`pi_lsp.changes.workspace_scan.WorkspaceScanner.confirm`) and finds
what the events missed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
LOST = IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
"""Events after which the watch no longer covers the tree as it was walked."""

_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)

_libc: ctypes.CDLL | None = None


def _load_libc() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            lib.inotify_init1.argtypes = [ctypes.c_int]
            lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            _libc = lib
        except (OSError, AttributeError):
            return None
    return _libc


class DirWatch:
    """inotify watches over the folders of one full walk (see the module docstring)."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self._fd = fd
        self._dirs: dict[int, str] = {}
        self.lost = False
        """True once the watch may have missed a change (until the next full walk)."""

    @classmethod
    def create(cls) -> DirWatch | None:
        """A new, empty watch; ``None`` where inotify is not available."""
        libc = _load_libc()
        if libc is None:
            return None
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return None
        return cls(libc, fd)

    def watch(self, directory: str) -> None:
        """Watch ``directory`` (call before listing it); a failure marks the watch lost."""
        if self.lost:
            return
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(directory), MASK)
        if wd < 0:
            self.lost = True
            return
        self._dirs[wd] = directory

    def drain(self) -> tuple[set[str], set[str]] | None:
        """``(changed paths, new folders)`` since the last drain, or ``None`` when the watch may
        have missed something (then walk everything). Paths are absolute; a changed path may be
        a file, a symbolic link or a name that no longer exists."""
        if self.lost:
            return None
        changed: set[str] = set()
        folders: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                self.lost = True
                return None
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size: offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                directory = self._dirs.get(wd)
                if mask & LOST or directory is None:
                    self.lost = True
                    return None
                path = os.path.join(directory, os.fsdecode(name)) if name else directory
                if mask & IN_ISDIR:
                    if mask & (IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE):
                        self.lost = True  # a folder moved or removed: its watches no longer fit
                        return None
                    if mask & IN_CREATE:
                        folders.add(path)
                    continue
                changed.add(path)
        return changed, folders

    def close(self) -> None:
        """Drop every watch. Idempotent."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self.lost = True
