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

With the inotify watch (:mod:`.dir_watch`) neither side of a command walks everything: the
snapshot before it is the last one plus what inotify reported since, and so is the one after it
(:meth:`WorkspaceScanner.after_command`). inotify does not see writes through a shared ``mmap``, so
a :meth:`WorkspaceScanner.confirm` full walk follows each command off the critical path and finds
the files whose stat changed without any event since the command started: only such a write can
have done that, and it was the command's (a file reported after the command ended belongs to a
later actor and is never attributed to it). ``BashChangesHook`` (:mod:`.bash_changes`) runs these.
"""

from __future__ import annotations

import os
import stat
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

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

Change = tuple[str, str | None, str | None]
"""``(path, before digest, after digest)``; a digest ``None`` = no file."""


@dataclass(eq=False)
class CommandSnapshot:
    """The workspace before one command, and what inotify reported while the command was followed.

    ``before``: the snapshot; ``folders``: the workspace folders it covers; ``epoch``: the
    scanner's epoch then (if it moved, something other than inotify reports changed the base);
    ``reported``: every path any drain of the watch named since it was taken (the command's own
    changes and, once it ended, later actors'); ``saved``: the before digest of a path whose cached
    content was replaced meanwhile (by the command's own snapshots or a concurrent one)."""

    before: dict[str, StatKey]
    folders: tuple[str, ...]
    epoch: int
    reported: set[str] = field(default_factory=set)
    saved: dict[str, str] = field(default_factory=dict)


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
        self._lock = threading.RLock()
        """Held by every snapshot and by the state update of a confirmation (which runs in a thread)."""
        self._commands: weakref.WeakSet[CommandSnapshot] = weakref.WeakSet()
        """Commands whose confirmation is still owed (see :meth:`begin_command`)."""
        self._epoch = 0
        """Bumped whenever the base changes other than from inotify reports (a full walk, a confirmation)."""

    def _set_content(self, path: str, value: tuple[StatKey, str] | None) -> None:
        """Replace (``None``: drop) the cached content of ``path``, saving the old digest for each
        followed command whose before snapshot it was."""
        old = self._content.get(path)
        if old is not None and self._commands:
            for command in self._commands:
                if path not in command.saved and command.before.get(path) == old[0]:
                    command.saved[path] = old[1]
        if value is None:
            self._content.pop(path, None)
        else:
            self._content[path] = value

    def _digest(self, path: str, key: StatKey) -> str:
        cached = self._content.get(path)
        clean = self._clean.get(path)
        if cached is not None and cached[0] == key:
            # a blob id stays valid while git's index still names it (a reset may have moved it)
            if not cached[1].startswith(GIT_BLOB) or (clean is not None and cached[1] == GIT_BLOB + clean[1]):
                return cached[1]
        if clean is not None and matches(key, clean[0]):
            marker = GIT_BLOB + clean[1]  # git holds these bytes: read back only if the command changes them
            self._set_content(path, (key, marker))
            return marker
        blobs = self.journal.blobs
        if not blobs.fits(key[0]):
            self._set_content(path, (key, UNRESTORABLE))  # over budget: not read at all
            return UNRESTORABLE
        try:
            with open(path, "rb") as handle:
                data = handle.read(self.journal.blobs.max_file_bytes + 1)
        except OSError:
            return UNRESTORABLE
        digest = self.journal.digest(data) if len(data) <= self.journal.blobs.max_file_bytes else UNRESTORABLE
        self._set_content(path, (key, digest or UNRESTORABLE))
        return digest or UNRESTORABLE

    def close(self) -> None:
        """Drop the inotify watch (the next snapshot walks everything). Idempotent; waits for a
        snapshot running in another thread."""
        with self._lock:
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
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict[str, StatKey]:
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
            self._set_content(path, None)
        self._base, self._base_key = state, key
        return state

    def _full_walk(self, folders: list[Path]) -> dict[str, StatKey]:
        """Walk everything, watching each folder anew when :attr:`watch` is on."""
        self.full_walks += 1
        self._epoch += 1
        if self._watch is not None:
            self._watch.close()
        self._watch = DirWatch.create() if self.watch else None
        return stat_walk(folders, self.excludes, self._watch)

    def _incremental(self, base: dict[str, StatKey], watch: DirWatch) -> dict[str, StatKey] | None:
        """``base`` updated with what the watch saw change, or ``None`` (walk everything). Every
        path it names is added to each followed command's ``reported``."""
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
        for command in self._commands:
            command.reported.update(touched)
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
                self._set_content(path, None)
        return state

    def _before_digests(self, before: dict[str, StatKey], paths: Iterable[str], saved: dict[str, str]) -> dict[str, str]:
        """The digest each of ``paths`` had in ``before`` (those in it): saved, or cached under the
        same stat; otherwise :data:`UNRESTORABLE`."""
        digests: dict[str, str] = {}
        for path in paths:
            key = before.get(path)
            if key is None:
                continue
            cached = self._content.get(path)
            digests[path] = saved.get(path) or (cached[1] if cached is not None and cached[0] == key else UNRESTORABLE)
        return digests

    def _compare(self, folders: list[Path], before: dict[str, StatKey], after: dict[str, StatKey],
                 paths: Iterable[str], saved: dict[str, str]) -> list[Change]:
        """The changes among ``paths`` from ``before`` to ``after`` (the after digests read from
        disk, the before ones from the cache, git blobs read back)."""
        paths = [path for path in paths if before.get(path) != after.get(path)]
        before_digests = self._before_digests(before, paths, saved)
        self._clean = {}  # what the command left is read from disk
        self._materialize(folders, before_digests, paths)
        changes: list[Change] = []
        for path in paths:
            old_digest = before_digests.get(path)
            key = after.get(path)
            if key is None:
                changes.append((path, old_digest, None))
                self._set_content(path, None)
                continue
            new_digest = self._digest(path, key)
            if old_digest != new_digest or old_digest == UNRESTORABLE:
                changes.append((path, old_digest, new_digest))
        return sorted(changes)

    def differences(self, before: dict[str, StatKey]) -> list[Change]:
        """Each file created, changed or deleted since ``before``, found by a full walk (which the
        next snapshot starts from). Updates the cache to the new state."""
        with self._lock:
            return self._walk_differences(before, {})

    def _walk_differences(self, before: dict[str, StatKey], saved: dict[str, str]) -> list[Change]:
        folders = self.folders()
        before_digests = self._before_digests(before, before, saved)  # before the walk's digests replace them
        after = self._full_walk(folders)  # a new watch: nothing before this is missed
        self._base, self._base_key = after, tuple(map(str, folders))  # the next snapshot starts here
        changed = [path for path, key in after.items() if before.get(path) != key]
        return self._compare(folders, before, after, changed + list(before.keys() - after.keys()), before_digests)

    # one command: before, after, confirmation ----------------------------------------------

    def begin_command(self) -> CommandSnapshot:
        """The snapshot before a command, followed until :meth:`confirm` (or an after snapshot
        that walked everything) is done with it."""
        with self._lock:
            before = self._snapshot()
            command = CommandSnapshot(before, self._base_key, self._epoch)
            self._commands.add(command)
            return command

    def after_command(self, command: CommandSnapshot) -> tuple[list[Change], bool]:
        """What the command created, changed or deleted, and whether a :meth:`confirm` walk is owed.

        With a working watch this is the base plus what inotify reported (no full walk), and a
        confirmation is owed (a write through a shared ``mmap`` sends no event); otherwise (no
        watch, the queue overflowed, a folder moved, the workspace folders changed) it is a full
        walk, complete by itself."""
        with self._lock:
            folders = self.folders()
            key = tuple(map(str, folders))
            state = None
            if self._base is not None and self._watch is not None and key == self._base_key == command.folders:
                self._clean = {}  # what the command left is read from disk
                state = self._incremental(self._base, self._watch)
            if state is None:
                self._commands.discard(command)
                return self._walk_differences(command.before, command.saved), False
            self._base = state
            if command.epoch == self._epoch:
                paths: Iterable[str] = command.reported  # the base moved only by these reports
            else:  # something else moved the base meanwhile: compare all
                paths = [p for p, k in state.items() if command.before.get(p) != k] + list(
                    command.before.keys() - state.keys())
            return self._compare(folders, command.before, state, list(paths), command.saved), True

    def confirm(self, command: CommandSnapshot) -> list[Change]:
        """The confirmation walk owed after :meth:`after_command`: the changes (against
        ``command.before``) of the files whose stat differs from the snapshot after the command
        though inotify reported nothing about them since the command started (only a write through
        a shared ``mmap`` does that, and it was the command's). What inotify reported after the command ended (a later tool, the user) is
        never returned. Returns ``[]`` when that cannot be told apart (the watch was lost, the
        folders changed): then nothing is attributed and the next snapshot walks everything."""
        try:
            folders = self.folders()
            walked = stat_walk(folders, self.excludes)  # outside the lock: the next snapshot waits for this
            with self._lock:
                key = tuple(map(str, folders))
                if self._base is None or self._watch is None or key != self._base_key or key != command.folders:
                    return []
                state = self._incremental(self._base, self._watch)  # reports up to now, after the walk
                if state is None:
                    self._base = None
                    return []
                # unreported and not yet in the base (a snapshot that walked everything meanwhile
                # already took them in: the safe side, nothing is attributed twice)
                reported = command.reported
                suspects = [p for p, k in walked.items() if state.get(p) != k and p not in reported] + [
                    p for p in state.keys() - walked.keys() if p not in reported]
                if suspects:
                    state = dict(state)
                    for path in suspects:
                        if path in walked:
                            state[path] = walked[path]
                        else:
                            state.pop(path, None)
                    self._epoch += 1
                self._base = state
                return self._compare(folders, command.before, state, suspects, command.saved) if suspects else []
        finally:
            with self._lock:
                self._commands.discard(command)

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
