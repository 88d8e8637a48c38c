"""OS errors in Node's words, so models see what Pi's tools show (design.md section 2).

Pi runs on Node, whose filesystem errors read ``ENOENT: no such file or directory, access
'/abs/missing.txt'``: the error code, libuv's description, the syscall and the path. Python's
``[Errno 2] No such file or directory: '...'`` must never reach a model. The descriptions below are
libuv's (``uv_strerror``), checked against the peer for ENOENT, EISDIR, ELOOP, ENOTDIR, EEXIST and
EIO.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

_LIBUV_MESSAGES: dict[str, str] = {
    "E2BIG": "argument list too long",
    "EACCES": "permission denied",
    "EAGAIN": "resource temporarily unavailable",
    "EBADF": "bad file descriptor",
    "EBUSY": "resource busy or locked",
    "ECANCELED": "operation canceled",
    "EDQUOT": "disk quota exceeded",
    "EEXIST": "file already exists",
    "EFAULT": "bad address in system call argument",
    "EFBIG": "file too large",
    "EINTR": "interrupted system call",
    "EINVAL": "invalid argument",
    "EIO": "i/o error",
    "EISDIR": "illegal operation on a directory",
    "ELOOP": "too many symbolic links encountered",
    "EMFILE": "too many open files",
    "EMLINK": "too many links",
    "ENAMETOOLONG": "name too long",
    "ENFILE": "file table overflow",
    "ENODEV": "no such device",
    "ENOENT": "no such file or directory",
    "ENOMEM": "not enough memory",
    "ENOSPC": "no space left on device",
    "ENOSYS": "function not implemented",
    "ENOTDIR": "not a directory",
    "ENOTEMPTY": "directory not empty",
    "ENOTSUP": "operation not supported on socket",
    "ENXIO": "no such device or address",
    "EPERM": "operation not permitted",
    "EPIPE": "broken pipe",
    "EROFS": "read-only file system",
    "ESPIPE": "invalid seek",
    "ETIMEDOUT": "connection timed out",
    "ETXTBSY": "text file is busy",
    "EXDEV": "cross-device link not permitted",
}


def os_error_code(exc: OSError) -> str | None:
    """The symbolic errno of ``exc`` (``"ENOENT"``, ``"EACCES"``, ``"EISDIR"`` ...) or ``None``.

    Uses :data:`errno.errorcode`; ``EOPNOTSUPP``/``ENOTSUP`` and ``EWOULDBLOCK``/``EAGAIN`` (same
    numbers on Linux) are reported with Node's names ``ENOTSUP`` and ``EAGAIN``.
    """
    if exc.errno is None:
        return None
    if exc.errno == getattr(errno, "ENOTSUP", None):
        return "ENOTSUP"
    if exc.errno == errno.EAGAIN:
        return "EAGAIN"
    return errno.errorcode.get(exc.errno)


def _description(exc: OSError, code: str | None) -> str:
    if code is not None and code in _LIBUV_MESSAGES:
        return _LIBUV_MESSAGES[code]
    return os.strerror(exc.errno).lower() if exc.errno is not None else "unknown error"


_SYSCALL_ATTRIBUTE = "pi_syscall"


def tag_syscall(exc: OSError, syscall: str) -> OSError:
    """Record on ``exc`` which syscall failed (``"open"``, ``"mkdir"``, ``"write"``) and return it.

    Code that knows better than its caller which step failed (the safe write) tags the error;
    :func:`node_style_message` then prints that syscall instead of the caller's default.
    """
    setattr(exc, _SYSCALL_ATTRIBUTE, syscall)
    return exc


def node_style_message(exc: OSError, syscall: str, path: str | Path | None = None) -> str:
    """Node's message for ``exc`` raised by ``syscall`` on ``path``.

    ``syscall`` is a default: a syscall recorded with :func:`tag_syscall` wins.

    ``ENOENT: no such file or directory, access '/abs/missing.txt'``; without a path
    (``path=None`` and none on ``exc``) it ends after the syscall: ``EISDIR: illegal operation on a
    directory, read``. ``path`` defaults to ``exc.filename``; ``exc.filename2`` is shown as
    `` -> 'dest'`` (rename, link). An error without errno gives ``Error: {text}``.
    """
    code = os_error_code(exc)
    if code is None:
        text = exc.strerror or (str(exc.args[0]) if exc.args else "unknown error")
        return f"Error: {text}"
    syscall = getattr(exc, _SYSCALL_ATTRIBUTE, syscall)
    message = f"{code}: {_description(exc, code)}, {syscall}"
    target = path if path is not None else exc.filename
    if target is not None:
        message += f" '{os.fsdecode(target)}'"
        if exc.filename2 is not None:
            message += f" -> '{os.fsdecode(exc.filename2)}'"
    return message


def access_denied(path: str | Path, *, write: bool) -> OSError:
    """The error ``access(2)`` gives for ``path`` when :func:`os.access` said no (Python hides
    the errno): ``EROFS`` when write access was asked on a read-only filesystem (Node and so Pi
    say ``EROFS: read-only file system``), else ``EACCES``."""
    if write:
        try:
            if os.statvfs(path).f_flag & os.ST_RDONLY:
                return node_error("EROFS", path)
        except (OSError, AttributeError):
            pass
    return node_error("EACCES", path)


def node_error(code: str, path: str | Path | None = None) -> OSError:
    """Build an :class:`OSError` for ``code`` (``"EISDIR"``) with ``errno`` and ``filename`` set,
    for FileAccess implementations that detect a condition themselves (a directory given as a
    file). Raises ``ValueError`` for a code this platform does not have."""
    number = getattr(errno, code, None)
    if number is None:
        raise ValueError(f"unknown errno code {code}")
    filename = os.fspath(path) if path is not None else None
    return OSError(number, os.strerror(number), filename)
