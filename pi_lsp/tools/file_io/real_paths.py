"""``os.path.realpath`` without its bookkeeping for the paths the tools resolve (issue 21).

Every call of a file tool needs the real path of the file it names (workspace confinement, the
editor's open documents are keyed by it). ``os.path.realpath`` costs about ten times the
``lstat`` calls it makes. :func:`realpath` gives exactly its answer: for an absolute path that
``os.path.normpath`` leaves as it is (what :mod:`~pi_lsp.tools.file_io.paths` resolves model
paths to) it makes the same ``lstat`` of each leading part, and at the first symbolic link it
hands the path to ``os.path.realpath``; any other path goes there at once. A part that cannot be
``lstat``-ed counts as no link in both (the rest of the path is kept as it is). Nothing is
cached: every call sees the file system as it is.

First, for a path that exists, Linux already knows the answer: open it with ``O_PATH`` (no read
access needed, a FIFO does not block) and read ``/proc/self/fd/N``: three system calls whatever
the depth. Where that does not answer (a missing path, a loop, a file removed meanwhile, whose
link ends in `` (deleted)``, no ``O_PATH`` or ``/proc``) the walk above does.
"""

from __future__ import annotations

import errno
import os
import stat

_O_PATH = getattr(os, "O_PATH", None)
_DELETED = " (deleted)"
_kernel_works = _O_PATH is not None and os.path.isdir("/proc/self/fd")
_NOT_FOUND = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.ENAMETOOLONG})
"""Errors of a path look-up: ``os.stat`` fails with them as ``open(O_PATH)`` does (the same walk)."""


def realpath(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath(path)`` (a ``str`` path; the same result and the same errors, e.g.
    ``ValueError`` for a NUL byte)."""
    text = os.fspath(path)
    if type(text) is not str:
        return os.path.realpath(text)
    if _kernel_works and "\0" not in text:
        resolved = _ask_kernel(text)
        if resolved is not None:
            return resolved
    if not _plain_absolute(text):
        return os.path.realpath(text)
    end = 0
    while (end := text.find("/", end + 1)) != -1:
        if _is_link(text[:end]):
            return os.path.realpath(text)
    return os.path.realpath(text) if _is_link(text) else text


def _plain_absolute(text: str) -> bool:
    """True for an absolute path that ``os.path.normpath`` leaves as it is, other than ``/``."""
    return (
        text[:1] == "/"
        and "//" not in text
        and "/./" not in text
        and "/../" not in text
        and not text.endswith(("/", "/.", "/.."))
    )


def _is_link(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _ask_kernel(text: str) -> str | None:
    """The kernel's real path of an existing ``text`` (module docstring), or None."""
    try:
        fd = os.open(text, _O_PATH | os.O_CLOEXEC)  # type: ignore[operator]
    except OSError:
        return None
    try:
        resolved = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)
    if resolved.startswith("/") and not resolved.endswith(_DELETED):
        return resolved
    return None


def existing_real_path(path: str) -> tuple[bool, str | None]:
    """Whether ``path`` exists, as ``os.path.exists`` answers (symlinks followed), and its real
    path when the same look-up gives it: ``(True, realpath)``, ``(False, None)``, or
    ``(True, None)`` when it exists but the kernel did not tell (call :func:`realpath` then).

    The ``O_PATH`` open of the module docstring answers both at once (read's existence check and
    the policy's real path of the same file, issue 21). An open that fails for another reason
    than the look-up (no file descriptor left, ...) is answered by ``os.path.exists``.
    """
    if not _kernel_works or "\0" in path:
        return os.path.exists(path), None
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC)  # type: ignore[operator]
    except OSError as exc:
        return (False, None) if exc.errno in _NOT_FOUND else (os.path.exists(path), None)
    except ValueError:  # a name the file system encoding cannot hold names no file
        return False, None
    try:
        resolved = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True, None
    finally:
        os.close(fd)
    if resolved.startswith("/") and not resolved.endswith(_DELETED):
        return True, resolved
    return True, None
