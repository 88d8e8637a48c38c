"""What a ``bash`` command changed under the workspace folders: snapshots before and after it.

A snapshot is a stat walk (``os.scandir``, symbolic links not followed, excluded folder names
skipped): ``path -> (size, mtime_ns, inode)``. Comparing the one taken before a command with the
one after gives the files it created, modified (any stat field differs) and deleted. To restore a
modified or deleted file the journal needs its content from *before* the command: the scanner keeps
each file's content in the blob store, read once and again only when its stat changed, so after the
first snapshot of a session a snapshot costs a stat walk plus reading what changed. A file whose
content does not fit the blob store's budget is recorded as not restorable.

``BashChangesHook`` is the pipeline hook pair: before a ``bash`` call it takes a snapshot, after it
records the differences under the call's session, turn and id.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from pi_lsp.agent.hooks import AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallResult
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.changes.journal import UNRESTORABLE, ChangeJournal

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", "target", "dist", "build", ".next", ".cache",
)
"""Folder names never walked: version control, dependencies, virtual environments, build output."""

StatKey = tuple[int, int, int]


def stat_walk(folders: Iterable[Path], excludes: frozenset[str]) -> dict[str, StatKey]:
    """Every regular file under ``folders``: absolute path -> (size in bytes, mtime_ns, inode)."""
    found: dict[str, StatKey] = {}
    stack = [str(folder) for folder in folders]
    while stack:
        directory = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in excludes:
                            stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                        found[entry.path] = (info.st_size, info.st_mtime_ns, info.st_ino)
                except OSError:
                    continue
    return found


class WorkspaceScanner:
    """Snapshots of the workspace with a content cache (see the module docstring)."""

    def __init__(self, journal: ChangeJournal, folders: Callable[[], list[Path]],
                 excludes: Iterable[str] = DEFAULT_EXCLUDES) -> None:
        self.journal = journal
        self.folders = folders
        self.excludes = frozenset(excludes)
        self._content: dict[str, tuple[StatKey, str]] = {}

    def _digest(self, path: str, key: StatKey) -> str:
        cached = self._content.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        blobs = self.journal.blobs
        if key[0] > blobs.max_file_bytes or blobs.total_bytes() + key[0] > blobs.max_total_bytes:
            self._content[path] = (key, UNRESTORABLE)  # over budget: not read at all
            return UNRESTORABLE
        try:
            with open(path, "rb") as handle:
                data = handle.read(self.journal.blobs.max_file_bytes + 1)
        except OSError:
            return UNRESTORABLE
        digest = self.journal.digest(data) if len(data) <= self.journal.blobs.max_file_bytes else UNRESTORABLE
        self._content[path] = (key, digest or UNRESTORABLE)
        return digest or UNRESTORABLE

    def snapshot(self) -> dict[str, StatKey]:
        """A stat snapshot, with the content of every new or changed file cached."""
        state = stat_walk(self.folders(), self.excludes)
        for path, key in state.items():
            self._digest(path, key)
        for path in set(self._content) - set(state):
            del self._content[path]
        return state

    def differences(self, before: dict[str, StatKey]) -> list[tuple[str, str | None, str | None]]:
        """``(path, before digest, after digest)`` of each file created, changed or deleted since
        ``before`` (a digest ``None`` = no file). Updates the cache to the new state."""
        before_digests = {path: self._content.get(path, ((0, 0, 0), UNRESTORABLE))[1] for path in before}
        after = stat_walk(self.folders(), self.excludes)
        changes: list[tuple[str, str | None, str | None]] = []
        for path, key in after.items():
            old_key = before.get(path)
            if old_key == key:
                continue
            new_digest = self._digest(path, key)
            old_digest = before_digests.get(path) if old_key is not None else None
            if old_digest != new_digest or old_digest == UNRESTORABLE:
                changes.append((path, old_digest, new_digest))
        for path in before.keys() - after.keys():
            changes.append((path, before_digests[path], None))
            self._content.pop(path, None)
        return sorted(changes)


class BashChangesHook:
    """Before/after hooks that journal what each ``bash`` call changed in the workspace."""

    def __init__(self, scanner: WorkspaceScanner) -> None:
        self.scanner = scanner
        self._before: dict[str, dict[str, StatKey]] = {}

    async def before(self, context: BeforeToolCallContext, signal: AbortSignal) -> BeforeToolCallResult | None:
        """Snapshot the workspace before a ``bash`` call (other tools: nothing)."""
        if context.tool_call.name == "bash":
            self._before[context.tool_call.id] = await asyncio.to_thread(self.scanner.snapshot)
        return None

    async def after(self, context: AfterToolCallContext, signal: AbortSignal) -> AfterToolCallResult | None:
        """Journal what the ``bash`` call changed; the result is left as it is."""
        before = self._before.pop(context.tool_call.id, None)
        if before is None:
            return None
        changes = await asyncio.to_thread(self.scanner.differences, before)
        for path, old, new in changes:
            self.scanner.journal.record(context.session_id, context.tool_call.id, "bash", Path(path), old, new)
        return None
