"""Taking agent changes back: hunks, files or turns, never over text changed since (issue 18).

A revert goes out through ``FileAccess`` like the agent's own writes, so a file the editor holds is
reverted with ``workspace/applyEdit`` (one undo step the user can undo) and a closed file on disk.
Only hunks whose lines are still as the agent left them are reverted; a hunk the user changed since
is reported as a conflict and left alone. A created file is deleted only while it still holds the
agent's content; a deleted file is restored only while the path is free. What was reverted is
recorded in the journal, so the change set shows it.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_lsp.changes.change_set import FileChangeSet, Hunk, build, decode, paths, split_lines, undo_hunks
from pi_lsp.changes.journal import UNRESTORABLE, ChangeJournal, Turns
from pi_lsp.tools.file_io.file_access import FileAccess, FileSnapshot
from pi_lsp.tools.file_io.paths import display_path


@dataclass
class RevertReport:
    """``{reverted: [hunk ids], files: [{path, action}], conflicts: [{path, hunk?, reason}]}``."""

    reverted: list[str] = field(default_factory=list)
    files: list[dict[str, str]] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        """The ``pi/revertChanges`` result."""
        return {"reverted": self.reverted, "files": self.files, "conflicts": self.conflicts}


async def current_contents(files: FileAccess, targets: list[str]) -> dict[str, tuple[bytes | None, FileSnapshot | None]]:
    """Each path's content now through ``files`` (buffer or disk): ``(bytes, snapshot)``, or
    ``(None, None)`` when it does not exist."""
    result: dict[str, tuple[bytes | None, FileSnapshot | None]] = {}
    for path in targets:
        try:
            snapshot = await files.read(Path(path))
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                result[path] = (None, None)
                continue
            raise
        result[path] = (snapshot.data, snapshot)
    return result


async def change_set(journal: ChangeJournal, files: FileAccess, session_id: str, turn: Turns) -> list[FileChangeSet]:
    """The change set of a session (or one turn) against the files' current contents (after the
    session's pending bash confirmation walks, :mod:`.pending`)."""
    await journal.pending.settled(session_id)
    now = await current_contents(files, paths(journal, session_id, turn))
    return build(journal, session_id, turn, {p: data for p, (data, _) in now.items()})


async def revert(
    journal: ChangeJournal,
    files: FileAccess,
    session_id: str,
    *,
    turn: Turns = None,
    file_paths: list[str] | None = None,
    hunk_ids: list[str] | None = None,
    cwd: Path | None = None,
) -> RevertReport:
    """Revert what ``session_id`` changed: the hunks ``hunk_ids``, the files ``file_paths``, turn
    ``turn``, or (none given) everything still as the agent left it. See the module docstring.

    ``cwd`` (the workspace) shortens the editor's undo label, ``pi: revert src/a.py``, as the
    agent's own writes are labelled; without it the label holds the absolute path."""
    await journal.pending.settled(session_id)
    now = await current_contents(files, paths(journal, session_id, turn))
    entries = build(journal, session_id, turn, {p: data for p, (data, _) in now.items()})
    report = RevertReport()
    wanted_hunks = set(hunk_ids or [])
    wanted_files = {str(Path(p)) for p in file_paths or []}
    for entry in entries:
        if wanted_files and entry.path not in wanted_files:
            if not wanted_hunks.intersection(h.id for h in entry.hunks):
                continue
        elif wanted_hunks and not wanted_files and not wanted_hunks.intersection(h.id for h in entry.hunks):
            continue
        data, snapshot = now[entry.path]
        label = f"pi: revert {display_path(Path(entry.path), cwd) if cwd is not None else entry.path}"
        whole_file = not wanted_hunks or entry.path in wanted_files
        if entry.state == "modified" and entry.hunks:
            chosen = [h for h in entry.hunks if whole_file or h.id in wanted_hunks]
            await _revert_hunks(files, entry, chosen, data, snapshot, report, label)
        else:
            await _revert_file(journal, files, entry, data, snapshot, report, label)
    journal.mark(session_id, "reverted", report.reverted, [f["path"] for f in report.files])
    return report


async def _revert_hunks(
    files: FileAccess, entry: FileChangeSet, chosen: list[Hunk],
    data: bytes | None, snapshot: FileSnapshot | None, report: RevertReport, label: str,
) -> None:
    text = decode(data)
    doable = [h for h in chosen if h.status in ("applied", "kept") and h.current_start is not None]
    for hunk in chosen:
        if hunk not in doable and hunk.status != "reverted":
            report.conflicts.append({"path": entry.path, "hunk": hunk.id, "reason": (
                "the file is gone" if data is None else "changed since the agent's edit; left as it is")})
    if not doable or text is None or snapshot is None:
        return
    new_data = "".join(undo_hunks(split_lines(text), doable)).encode("utf-8")
    await files.write(Path(entry.path), new_data, previous=snapshot, label=label)
    report.reverted.extend(h.id for h in doable)
    report.files.append({"path": entry.path, "action": "reverted hunks"})


async def _revert_file(
    journal: ChangeJournal, files: FileAccess, entry: FileChangeSet,
    data: bytes | None, snapshot: FileSnapshot | None, report: RevertReport, label: str,
) -> None:
    def conflict(reason: str) -> None:
        report.conflicts.append({"path": entry.path, "reason": reason})

    if entry.current == "reverted":
        return
    if not entry.restorable:
        conflict("its content before the agent's change was too large to keep (not restorable)")
        return
    if entry.current != "agent":
        conflict("changed since the agent's change; left as it is")
        return
    if entry.state == "created":
        try:
            os.unlink(entry.path)
        except FileNotFoundError:
            pass
        report.files.append({"path": entry.path, "action": "deleted"})
        return
    assert entry.before is not None and entry.before != UNRESTORABLE
    before = journal.blobs.get(entry.before)
    await files.write(Path(entry.path), before, previous=snapshot, label=label)
    report.files.append({"path": entry.path, "action": "restored" if entry.state == "deleted" else "reverted"})
