"""What a ``bash`` command changed under the workspace folders: snapshots before and after it.

A snapshot is a stat walk (``os.scandir``, symbolic links not followed, excluded folder names
skipped): ``path -> (size, mtime_ns, inode)``. Comparing the one taken before a command with the
one after gives the files it created, modified (any stat field differs) and deleted. To restore a
modified or deleted file the journal needs its content from *before* the command: the scanner keeps
each file's content in the blob store, read once and again only when its stat changed, so after the
first snapshot of a session a snapshot costs a stat walk plus reading what changed. A file whose
content does not fit the blob store's budget is recorded as not restorable.

In a git work tree most files need no copy at all: a tracked file whose stat matches git's index
is the index's blob (:mod:`.git_index`), so the snapshot notes the blob id, and only when a command
changed or deleted such a file is its old content read back from git into the blob store. So the
first snapshot of a session reads only untracked and locally modified files.

``BashChangesHook`` is the pipeline hook pair: before a ``bash`` call it takes a snapshot, after it
records the differences under the call's session, turn and id.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from pi_lsp.agent.hooks import AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext, BeforeToolCallResult
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.changes.dir_watch import DirWatch
from pi_lsp.changes.git_index import GitIndex, matches
from pi_lsp.changes.journal import UNRESTORABLE, ChangeJournal

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", "target", "dist", "build", ".next", ".cache",
)
"""Folder names never walked: version control, dependencies, virtual environments, build output."""

StatKey = tuple[int, int, int]

GIT_BLOB = "git:"
"""A cached content that is a git blob (``git:<blob id>``): read back from git when needed."""


def stat_walk(folders: Iterable[Path | str], excludes: frozenset[str], watch: DirWatch | None = None) -> dict[str, StatKey]:
    """Every regular file under ``folders``: absolute path -> (size in bytes, mtime_ns, inode).
    With ``watch``, each folder is watched before it is listed (:mod:`.dir_watch`)."""
    found: dict[str, StatKey] = {}
    stack = [str(folder) for folder in folders]
    while stack:
        directory = stack.pop()
        if watch is not None:
            watch.watch(directory)
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
                 excludes: Iterable[str] = DEFAULT_EXCLUDES, git: GitIndex | None = None,
                 watch: bool = True) -> None:
        self.journal = journal
        self.folders = folders
        self.excludes = frozenset(excludes)
        self.git = git
        """Where clean tracked files are read back from instead of copied (``None``: copy all)."""
        self.watch = watch
        """Take a snapshot from the last one plus what inotify saw change (:mod:`.dir_watch`)
        instead of a full walk when it can."""
        self._content: dict[str, tuple[StatKey, str]] = {}
        self._clean: dict[str, tuple[StatKey, str]] = {}
        self._watch: DirWatch | None = None
        self._base: dict[str, StatKey] | None = None
        self._base_key: tuple[str, ...] = ()
        self.full_walks = 0
        """How many snapshots walked everything (for tests and the bench)."""

    def _digest(self, path: str, key: StatKey) -> str:
        cached = self._content.get(path)
        clean = self._clean.get(path)
        if cached is not None and cached[0] == key:
            # a blob id stays valid while git's index still names it (a reset may have moved it)
            if not cached[1].startswith(GIT_BLOB) or (clean is not None and cached[1] == GIT_BLOB + clean[1]):
                return cached[1]
        if clean is not None and matches(key, clean[0]):
            marker = GIT_BLOB + clean[1]  # git holds these bytes: read back only if the command changes them
            self._content[path] = (key, marker)
            return marker
        blobs = self.journal.blobs
        if not blobs.fits(key[0]):
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

    def close(self) -> None:
        """Drop the inotify watch (the next snapshot walks everything). Idempotent."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._base = None

    def cached_digests(self) -> list[str]:
        """The blob digests the content cache holds (the blob collector keeps them)."""
        return [digest for _, digest in list(self._content.values())
                if digest != UNRESTORABLE and not digest.startswith(GIT_BLOB)]

    def snapshot(self) -> dict[str, StatKey]:
        """A stat snapshot, with the content of every new or changed file cached (or, for a
        clean file git tracks, its blob id). After a full walk, as long as inotify covers the tree,
        the next snapshot is the last one plus a re-stat of the paths that changed since."""
        folders = self.folders()
        self._clean = {}
        if self.git is not None:
            for folder in folders:
                clean = self.git.clean_blobs(folder)
                if len(folders) == 1:
                    self._clean = clean  # read only: no copy of a large index
                else:
                    self._clean.update(clean)
        # a file no event names kept its bytes, so its cached digest (or git blob id: content
        # addressed) stays right even when git's index changed meanwhile
        key = tuple(map(str, folders))
        if self._base is not None and self._watch is not None and key == self._base_key:
            state = self._incremental(self._base, self._watch)
            if state is not None:
                self._base = state
                return state
        state = self._full_walk(folders)
        for path, stat_key in state.items():
            self._digest(path, stat_key)
        for path in set(self._content) - set(state):
            del self._content[path]
        self._base, self._base_key = state, key
        return state

    def _full_walk(self, folders: list[Path]) -> dict[str, StatKey]:
        """Walk everything, watching each folder anew when :attr:`watch` is on."""
        self.full_walks += 1
        if self._watch is not None:
            self._watch.close()
        self._watch = DirWatch.create() if self.watch else None
        return stat_walk(folders, self.excludes, self._watch)

    def _incremental(self, base: dict[str, StatKey], watch: DirWatch) -> dict[str, StatKey] | None:
        """``base`` updated with what the watch saw change, or ``None`` (walk everything)."""
        drained = watch.drain()
        if drained is None:
            return None
        changed, new_folders = drained
        if not changed and not new_folders:
            return base
        state = dict(base)
        touched = set(changed)
        for folder in new_folders:
            if os.path.basename(folder) in self.excludes:
                continue
            found = stat_walk([folder], self.excludes, watch)
            state.update(found)
            touched.update(found)
        if watch.lost:
            return None
        for path in changed:
            try:
                info = os.lstat(path)
            except OSError:
                state.pop(path, None)
                continue
            if stat.S_ISREG(info.st_mode):
                state[path] = (info.st_size, info.st_mtime_ns, info.st_ino)
            else:
                state.pop(path, None)
        for path in touched:
            if path in state:
                self._digest(path, state[path])
            else:
                self._content.pop(path, None)
        return state

    def differences(self, before: dict[str, StatKey]) -> list[tuple[str, str | None, str | None]]:
        """``(path, before digest, after digest)`` of each file created, changed or deleted since
        ``before`` (a digest ``None`` = no file). Updates the cache to the new state."""
        before_digests = {path: self._content.get(path, ((0, 0, 0), UNRESTORABLE))[1] for path in before}
        folders = self.folders()
        self._clean = {}  # what the command left is read from disk
        after = self._full_walk(folders)  # never from the watch: nothing the command did is missed
        touched = [path for path, key in after.items() if path in before and before[path] != key]
        gone = list(before.keys() - after.keys())
        self._materialize(folders, before_digests, touched + gone)
        changes: list[tuple[str, str | None, str | None]] = []
        for path, key in after.items():
            old_key = before.get(path)
            if old_key == key:
                continue
            new_digest = self._digest(path, key)
            old_digest = before_digests.get(path) if old_key is not None else None
            if old_digest != new_digest or old_digest == UNRESTORABLE:
                changes.append((path, old_digest, new_digest))
        for path in gone:
            changes.append((path, before_digests[path], None))
            self._content.pop(path, None)
        self._base, self._base_key = after, tuple(map(str, folders))  # the next snapshot starts here
        return sorted(changes)

    def _materialize(self, folders: list[Path], digests: dict[str, str], paths: list[str]) -> None:
        """Replace the git blob ids among ``digests[path]`` by blob store digests of their content
        read back from git (:data:`UNRESTORABLE` when git no longer has it or it is over budget)."""
        wanted = [path for path in paths if digests.get(path, "").startswith(GIT_BLOB)]
        if not wanted or self.git is None:
            for path in wanted:
                digests[path] = UNRESTORABLE
            return
        by_folder: dict[Path, list[str]] = {}
        for path in wanted:
            folder = next((f for f in folders if path.startswith(str(f) + os.sep)), None)
            if folder is None:
                digests[path] = UNRESTORABLE
            else:
                by_folder.setdefault(folder, []).append(path)
        for folder, group in by_folder.items():
            blobs = self.git.read_blobs(folder, sorted({digests[p][len(GIT_BLOB):] for p in group}))
            for path in group:
                data = blobs.get(digests[path][len(GIT_BLOB):])
                digests[path] = UNRESTORABLE if data is None else self.journal.digest(data) or UNRESTORABLE


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
