"""From the journal to a change set: per file its state, the calls that changed it, and its hunks.

For each file a session (or one turn) changed, the change set compares the content before the
first of those changes with the content after the last (the agent's result) and splits the
difference into hunks. Lines are 0-based in the ranges: ``oldStart``/``oldLines`` in the before
text, ``newStart``/``newLines`` in the agent's result. Each hunk's ``status`` compares the agent's
result with the file's current content (buffer or disk, through ``FileAccess``):

- ``"applied"``: the hunk's lines are still as the agent left them (``currentStart`` says where);
- ``"changed"``: the user (or something else) changed them since: a revert leaves it alone;
- ``"reverted"`` / ``"kept"``: already taken back / reviewed (a reverted hunk whose lines are
  back as the agent left them, after an undo of the revert, is ``"applied"`` again).

A hunk's ``id`` is stable for the same file and content (a hash of path, position and text).
Binary (non UTF-8) files and files whose before content is not restorable have no hunks; their
``restorable`` flag says whether a whole-file revert is possible.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from pi_lsp.changes.journal import UNRESTORABLE, ChangeJournal, FileChange, Turns


@dataclass
class Hunk:
    """One contiguous change (lines 0-based, see the module docstring)."""

    id: str
    old_start: int
    old_lines: list[str]
    new_start: int
    new_lines: list[str]
    status: str = "applied"
    current_start: int | None = None

    def to_wire(self) -> dict[str, Any]:
        """``{id, oldStart, oldLines, newStart, newLines, oldText, newText, status, currentStart?}``."""
        wire: dict[str, Any] = {
            "id": self.id, "oldStart": self.old_start, "oldLines": len(self.old_lines),
            "newStart": self.new_start, "newLines": len(self.new_lines),
            "oldText": "".join(self.old_lines), "newText": "".join(self.new_lines), "status": self.status,
        }
        if self.current_start is not None:
            wire["currentStart"] = self.current_start
        return wire


@dataclass
class FileChangeSet:
    """One file's part of a change set."""

    path: str
    state: str  # created | modified | deleted
    before: str | None
    after: str | None
    tool_calls: list[dict[str, str]]
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False
    restorable: bool = True
    current: str = "agent"
    """The file now: ``agent`` (as the agent left it), ``changed`` (since), ``missing`` (gone),
    ``reverted`` (back to its content before the agent's change)."""

    def to_wire(self) -> dict[str, Any]:
        """The ``pi/changes`` entry of this file."""
        return {
            "path": self.path, "state": self.state, "toolCalls": self.tool_calls,
            "hunks": [h.to_wire() for h in self.hunks], "binary": self.binary,
            "restorable": self.restorable, "current": self.current,
        }


def split_lines(text: str) -> list[str]:
    """Lines with their endings (``\\n``, ``\\r\\n`` or ``\\r`` kept)."""
    return text.splitlines(keepends=True)


def decode(data: bytes | None) -> str | None:
    """UTF-8 text, or ``None`` for no content or bytes that are not UTF-8 (binary)."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def diff_hunks(path: str, before: list[str], after: list[str]) -> list[Hunk]:
    """The hunks that turn ``before`` into ``after`` (line lists with endings)."""
    hunks: list[Hunk] = []
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old, new = before[a0:a1], after[b0:b1]
        key = f"{path}\0{a0}\0{''.join(old)}\0{''.join(new)}".encode("utf-8", "surrogatepass")
        hunks.append(Hunk(hashlib.sha256(key).hexdigest()[:16], a0, old, b0, new))
    return hunks


def locate(after: list[str], current: list[str], hunks: list[Hunk]) -> None:
    """Set each hunk's status/current_start by mapping the agent's result onto the current lines.

    A hunk stays ``applied`` when no difference between ``after`` and ``current`` touches its lines
    (nor, for a pure deletion, its position); its ``current_start`` is then shifted by the lines
    inserted or removed above it.
    """
    if after == current:
        for hunk in hunks:
            hunk.current_start = hunk.new_start
        return
    edits = _line_edits(after, current)
    for hunk in hunks:
        start, end = hunk.new_start, hunk.new_start + len(hunk.new_lines)
        shift = 0
        touched = False
        for _, a0, a1, b0, b1 in edits:
            insertion_at_point = a0 == a1 == start == end  # ambiguous for a pure deletion
            if a1 <= start and not insertion_at_point:
                shift += (b1 - b0) - (a1 - a0)
                continue
            if a0 >= end and not insertion_at_point:
                break
            touched = True
            break
        if touched:
            hunk.status = "changed"
        else:
            hunk.current_start = start + shift


def _line_edits(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The non-equal opcodes turning ``a`` into ``b``: the common head and tail are cut first, so a
    single change (the usual case: the user typed in one place) is found exactly, wherever
    repeated lines would let ``SequenceMatcher`` align it elsewhere."""
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    middle = SequenceMatcher(None, a[head:len(a) - tail], b[head:len(b) - tail], autojunk=False)
    return [(tag, a0 + head, a1 + head, b0 + head, b1 + head)
            for tag, a0, a1, b0, b1 in middle.get_opcodes() if tag != "equal"]


def undo_hunks(current: list[str], hunks: list[Hunk]) -> list[str]:
    """``current`` with each located hunk's lines (at ``current_start``) replaced by its old lines.

    Only hunks located by :func:`locate` (``current_start`` set) may be given; they do not overlap.
    """
    lines = list(current)
    for hunk in sorted(hunks, key=lambda h: h.current_start or 0, reverse=True):
        assert hunk.current_start is not None
        start = hunk.current_start
        lines[start:start + len(hunk.new_lines)] = hunk.old_lines
    return lines


def build(journal: ChangeJournal, session_id: str, turn: Turns, current: dict[str, bytes | None]) -> list[FileChangeSet]:
    """The change set of ``session_id`` (one ``turn``, a span of turns, or all), against ``current`` contents.

    ``current`` maps each path of the change set (see :func:`paths`) to its content now (``None``
    when it does not exist).
    """
    by_path: dict[str, list[FileChange]] = {}
    for change in journal.changes(session_id, turn):
        by_path.setdefault(change.path, []).append(change)
    kept, reverted = journal.kept(session_id), journal.reverted(session_id)
    result: list[FileChangeSet] = []
    for path, changes in by_path.items():
        before, after = changes[0].before, changes[-1].after
        state = "created" if before is None else "deleted" if after is None else "modified"
        calls = [_call(journal, session_id, c) for c in changes]
        entry = FileChangeSet(path, state, before, after, calls)
        entry.restorable = before != UNRESTORABLE and after != UNRESTORABLE
        now = current.get(path)
        after_bytes, before_bytes = _blob(journal, after), _blob(journal, before)
        if now is None:
            entry.current = "agent" if after is None else "reverted" if before is None else "missing"
        elif before_bytes is not None and now == before_bytes:
            entry.current = "reverted"
        else:
            entry.current = "agent" if after_bytes is not None and now == after_bytes else "changed"
        before_text, after_text = decode(before_bytes), decode(after_bytes)
        if state == "modified" and entry.restorable and before_text is not None and after_text is not None:
            entry.hunks = diff_hunks(path, split_lines(before_text), split_lines(after_text))
            now_text = decode(now)
            if now_text is None:
                for hunk in entry.hunks:
                    hunk.status = "changed"
            else:
                locate(split_lines(after_text), split_lines(now_text), entry.hunks)
        elif state == "modified":
            # binary only when kept bytes are not text; contents not kept (too large) are unknown
            entry.binary = (before_bytes is not None and before_text is None) or (
                after_bytes is not None and after_text is None
            )
        for hunk in entry.hunks:
            # a reverted hunk whose lines are back as the agent left them (the user undid the
            # revert in the editor) is applied again, so it can be reverted again
            if hunk.id in reverted and hunk.status != "applied":
                hunk.status = "reverted"
            elif hunk.id in kept and hunk.status == "applied":
                hunk.status = "kept"
        result.append(entry)
    return result


def _call(journal: ChangeJournal, session_id: str, change: FileChange) -> dict[str, str]:
    """A ``toolCalls`` entry: ``{toolCallId, toolName, turn, prompt?}`` (numbers as strings)."""
    call = {"toolCallId": change.tool_call_id, "toolName": change.tool_name, "turn": str(change.turn)}
    prompt = journal.prompt_of(session_id, change.turn)
    if prompt is not None:
        call["prompt"] = str(prompt)
    return call


def paths(journal: ChangeJournal, session_id: str, turn: Turns) -> list[str]:
    """The files the change set of ``session_id`` (``turn``) covers, in first-change order."""
    return list(dict.fromkeys(c.path for c in journal.changes(session_id, turn)))


def _blob(journal: ChangeJournal, digest: str | None) -> bytes | None:
    if digest is None or digest == UNRESTORABLE:
        return None
    try:
        return journal.blobs.get(digest)
    except KeyError:
        return None
