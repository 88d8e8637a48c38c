"""Workspace confinement: which absolute paths count as inside the workspace (design.md section 8).

Inside means: within one of the workspace folders or the session's own temp folder, judged on the
**real** path (symlinks resolved, ``..`` removed; a path that does not exist yet is resolved as far
as it exists, like ``os.path.realpath``). A symlink inside the workspace that points outside it is
outside; the folders themselves are compared by their real paths too (``/tmp`` may be a symlink).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path


def real_path(path: Path) -> Path:
    """``os.path.realpath`` of ``path`` (never raises for missing parts; a symlink loop gives the
    path as far as it resolved)."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.normpath(path))


def is_within(path: Path, folder: Path) -> bool:
    """True when ``path`` is ``folder`` or below it (both absolute and normalised; lexical test)."""
    return path == folder or folder in path.parents


class WorkspaceScope:
    """The folders a session may touch without asking.

    ``folders`` returns the current workspace folders (it is called per check, so
    ``didChangeWorkspaceFolders`` is followed); ``temp_dir`` is the session temp folder, or
    ``None``.
    """

    def __init__(self, folders: Callable[[], Sequence[Path]], temp_dir: Path | None = None) -> None:
        self._folders = folders
        self.temp_dir = temp_dir

    def folders(self) -> list[Path]:
        """The workspace folders, absolute and normalised (their lexical form, in order)."""
        return [Path(os.path.normpath(os.path.abspath(f))) for f in self._folders()]

    def roots(self) -> list[Path]:
        """Real paths of the workspace folders and the temp folder (the confinement roots)."""
        roots = [real_path(f) for f in self.folders()]
        if self.temp_dir is not None:
            roots.append(real_path(self.temp_dir))
        return roots

    def contains(self, path: Path) -> bool:
        """True when the real path of ``path`` (absolute) is inside a workspace folder or the temp
        folder (see the module docstring)."""
        real = real_path(path)
        return any(is_within(real, root) for root in self.roots())
