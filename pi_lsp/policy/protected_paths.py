"""Protected paths: files an agent must never write and may read only when the user agrees.

The built-in list (issue 9, design.md section 8), checked on **both** the normalised path the model
named (``..`` removed) and its real path (symlinks resolved), so neither ``a/../.env`` nor a
symlink ``notes.txt -> .env`` nor a link into ``~/.ssh`` gets past it:

- ``.git/**``: any path with a component named ``.git`` (the repository of the workspace and
  nested ones; the ``.git`` entry itself too, which may be a gitfile);
- ``**/.ssh/**``: any path with a component named ``.ssh``;
- base names ``.env`` and ``.env.*`` except ``.env.example``, ``.env.sample``, ``.env.template``;
- base names ``*.pem``, ``*.key``, ``id_rsa*``, ``id_ed25519*``, ``id_ecdsa*``.

Plus the ``pi.protectedPaths`` setting: extra globs in the :mod:`pi_lsp.policy.path_glob` dialect
(base-name patterns, folder-relative patterns, absolute ``/`` or ``~/`` patterns), also checked on
both forms of the path. The policy refuses ``edit`` and ``write`` of a protected path whatever the
rules say and asks before ``read`` sends one to the model.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path

from pi_lsp.policy.path_glob import GlobError, PathGlob
from pi_lsp.policy.workspace_scope import WorkspaceScope, real_path

PROTECTED_DIRECTORIES: dict[str, str] = {".git": ".git/**", ".ssh": "**/.ssh/**"}
"""A path with one of these components is protected; the value is the pattern reported."""

PROTECTED_NAMES: tuple[str, ...] = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*")
"""Base-name patterns (``fnmatch`` syntax, case-sensitive) of protected files."""

ENV_EXCEPTIONS: frozenset[str] = frozenset({".env.example", ".env.sample", ".env.template"})
"""``.env.*`` names that hold no secrets by convention and stay writable."""


_NAME_PATTERN = re.compile(
    "|".join([fnmatch.translate(p) for p in PROTECTED_NAMES] + [re.escape(d) + r"\Z" for d in PROTECTED_DIRECTORIES])
)


_ANY_NAME = re.compile("|".join(fnmatch.translate(p) for p in PROTECTED_NAMES))


def _builtin_match(path: str) -> str | None:
    """The built-in pattern ``path`` (absolute, normalised, ``/``-separated) matches, or ``None``.

    It runs for every path a call names (issue 21): a substring test rules out the protected
    folders and one compiled alternation the protected names before the ordered look-ups."""
    if any(directory in path for directory in PROTECTED_DIRECTORIES):
        for part in path.split("/"):
            pattern = PROTECTED_DIRECTORIES.get(part)
            if pattern is not None:
                return pattern
    name = path[path.rfind("/") + 1 :]
    if name in ENV_EXCEPTIONS or _ANY_NAME.match(name) is None:
        return None
    for pattern in PROTECTED_NAMES:
        if fnmatch.fnmatchcase(name, pattern):
            return pattern
    return None  # pragma: no cover - _ANY_NAME matched one of them


_builtin_match_cached = functools.lru_cache(maxsize=1024)(_builtin_match)
""":func:`_builtin_match` remembered per path text: a pure function of the string (no file
system), asked twice per call for the same few paths (issue 21)."""

_normpath = functools.lru_cache(maxsize=1024)(os.path.normpath)
"""``os.path.normpath`` of a path text, remembered: a pure function of the string."""


GIT_REPOSITORY_PARTS: frozenset[str] = frozenset(
    {"HEAD", "config", "commondir", "gitdir", "packed-refs", "index", "objects", "refs", "hooks", "info", "worktrees"}
)
"""Names git reads inside a repository folder (``$GIT_DIR``)."""


def git_repository_part(path: str) -> str | None:
    """Why writing ``path`` (absolute) would write a git repository where git would find it, or
    ``None``. Git treats any folder holding ``HEAD``, ``objects/`` and ``refs/`` (or ``HEAD`` and
    ``commondir``) as a repository and runs programs named in its ``config`` (issue 13), so,
    like ``.git/**``, these are protected for ``edit`` and ``write``:

    - a file named ``HEAD`` anywhere (no repository can be made without one);
    - ``config``, ``objects/...``, ``refs/...``, ``hooks/...`` and git's other repository names
      (:data:`GIT_REPOSITORY_PARTS`) in a folder that already holds a ``HEAD``.

    Checked on the path as given and on its real path."""
    for candidate in {os.path.normpath(path), real_path(path)}:
        parts = candidate.split("/")
        if parts[-1] == "HEAD":
            return "HEAD makes its folder a git repository"
        for index in range(1, len(parts)):
            if parts[index] in GIT_REPOSITORY_PARTS:
                folder = "/".join(parts[:index]) or "/"
                if os.path.lexists(os.path.join(folder, "HEAD")):
                    return f"{parts[index]} of the git repository folder {folder}"
    return None


class ProtectedPaths:
    """The built-in list plus extra globs.

    Build it with :meth:`from_settings`, which reports extra patterns that do not compile instead
    of raising (those are left out; the built-in list always applies).
    """

    def __init__(self, extra: Sequence[PathGlob] = ()) -> None:
        self.extra = list(extra)

    @classmethod
    def from_settings(cls, patterns: Sequence[object]) -> tuple["ProtectedPaths", list[str]]:
        """Compile ``pi.protectedPaths``; return the object and one message per rejected pattern."""
        globs: list[PathGlob] = []
        problems: list[str] = []
        for index, pattern in enumerate(patterns):
            if not isinstance(pattern, str):
                problems.append(f"pi.protectedPaths[{index}]: not a string ({pattern!r}); ignored")
                continue
            try:
                globs.append(PathGlob.compile(pattern))
            except GlobError as exc:
                problems.append(f"pi.protectedPaths[{index}]: invalid glob {pattern!r} ({exc}); ignored")
        return cls(globs), problems

    def may_protect_name(self, name: str) -> bool:
        """A fast pre-check for walks (about 1 microsecond): ``False`` only when no pattern can
        protect an entry called ``name`` whose parent folders are not protected; call
        :meth:`match` for the ``True`` ones. Always ``True`` with extra patterns configured."""
        return bool(self.extra) or _NAME_PATTERN.match(name) is not None

    def match(self, path: Path, scope: WorkspaceScope, real: str | None = None) -> str | None:
        """The pattern that protects ``path`` (absolute), or ``None``.

        ``path`` is checked as given (normalised: ``..`` removed) and as its real path (``real``
        when the caller already resolved it); folder-relative extra patterns are matched against
        the lexical and the real workspace folders.
        """
        lexical = _normpath(os.fspath(path))
        resolved = real if real is not None else real_path(lexical)
        candidates = (lexical, resolved) if resolved != lexical else (lexical,)
        for candidate in candidates:
            found = _builtin_match_cached(candidate)
            if found is not None:
                return found
        if not self.extra:
            return None
        folders = scope.folders()
        folders += [root for root in scope.roots() if root not in folders]
        for candidate in candidates:
            for glob in self.extra:
                if glob.matches(Path(candidate), folders):
                    return glob.pattern
        return None
