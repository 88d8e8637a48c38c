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

from pi_lsp.tools.file_io.real_paths import realpath


def real_path(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath`` of ``path`` as a string (never raises: a NUL byte or an OS error gives
    the normalised path; missing parts and symlink loops resolve as far as they can). Every call
    judges the file system as it is now, by :func:`~pi_lsp.tools.file_io.real_paths.realpath`'s
    fast walk (issue 21)."""
    try:
        return realpath(path)
    except (OSError, ValueError):
        return os.path.normpath(path)


class WorkspaceScope:
    """The folders a session may touch without asking.

    ``folders`` returns the current workspace folders (it is called per check, so
    ``didChangeWorkspaceFolders`` is followed; the resolved roots are recomputed only when the list
    changes); ``temp_dir`` is the session temp folder, or ``None``.
    """

    def __init__(self, folders: Callable[[], Sequence[Path]], temp_dir: Path | None = None) -> None:
        self._folders = folders
        self.temp_dir = temp_dir
        self._key: tuple[Path, ...] | None = None
        self._lexical: list[Path] = []
        self._roots: list[Path] = []
        self._prefixes: list[str] = []
        self._exact: frozenset[str] = frozenset()

    def _refresh(self) -> None:
        key = tuple(self._folders())
        if key == self._key:
            return
        self._lexical = [Path(os.path.normpath(os.path.abspath(f))) for f in key]
        roots = [Path(real_path(f)) for f in self._lexical]
        if self.temp_dir is not None:
            roots.append(Path(real_path(self.temp_dir)))
        self._roots = roots
        self._prefixes = [str(root).rstrip("/") + "/" for root in roots]
        self._exact = frozenset(prefix[:-1] for prefix in self._prefixes)
        self._key = key

    def folders(self) -> list[Path]:
        """The workspace folders, absolute and normalised (their lexical form, in order)."""
        self._refresh()
        return list(self._lexical)

    def roots(self) -> list[Path]:
        """Real paths of the workspace folders and the temp folder (the confinement roots)."""
        self._refresh()
        return list(self._roots)

    def contains(self, path: Path, real: str | None = None) -> bool:
        """True when the real path of ``path`` (absolute; ``real`` when already resolved) is inside
        a workspace folder or the temp folder (see the module docstring)."""
        self._refresh()
        text = real if real is not None else real_path(path)
        for prefix in self._prefixes:
            if text.startswith(prefix):
                return True
        return text in self._exact
