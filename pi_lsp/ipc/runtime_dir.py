"""The private per-user runtime directory that holds the daemons' sockets and registry entries.

Where: ``$PI_LSP_RUNTIME_DIR`` if set, else ``$XDG_RUNTIME_DIR/pi-lsp``, else
``<tempdir>/pi-lsp-<uid>``. It must be a real directory (not a symbolic link) owned by the current
user with no permissions for group or others (0700); it is created so, and refused otherwise
(another user could plant sockets or read tokens there). Layout: ``daemons/<name>.json`` (registry
entries, 0600) and ``sockets/<name>.sock`` (0600).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class UnsafeRuntimeDir(RuntimeError):
    """The runtime directory exists but is not private to this user (the message says why)."""


def runtime_dir() -> Path:
    """The runtime directory's path (not created; see :func:`ensure_private_dir`)."""
    explicit = os.environ.get("PI_LSP_RUNTIME_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / "pi-lsp"
    return Path(tempfile.gettempdir()) / f"pi-lsp-{os.getuid()}"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700) if missing and check that it is private; return it.

    Raises :class:`UnsafeRuntimeDir` when it is a symbolic link, not a directory, owned by another
    user, or open to group/others. Parents are created with the default mode.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UnsafeRuntimeDir(f"{path} is not a directory (a symbolic link or a file)")
    if info.st_uid != os.getuid():
        raise UnsafeRuntimeDir(f"{path} belongs to uid {info.st_uid}, not to this user ({os.getuid()})")
    if info.st_mode & 0o077:
        raise UnsafeRuntimeDir(f"{path} has mode {stat.S_IMODE(info.st_mode):o}; it must be 700")
    return path


def private_subdir(name: str) -> Path:
    """``<runtime dir>/<name>``, both checked private (created 0700 when missing)."""
    return ensure_private_dir(ensure_private_dir(runtime_dir()) / name)
