"""Review and rewind without a plugin (issue 16 over issue 18's change journal): code actions.

On a line the agent changed (a hunk of the change set that is still as the agent left it, status
``applied`` or ``kept``), "Pi: undo this agent hunk" runs ``pi.revertHunk {sessionId, hunk}``;
anywhere in a file, "Pi: undo the last turn" runs ``pi.revertTurn {sessionId, turn}`` for the last
model turn that changed files and still has something to take back (after an undo, the turn
before it). Both act on the most
recent session of this daemon that changed files (the one the user just ran), through
:func:`pi_lsp.changes.revert.revert`: the same path as ``pi/revertChanges`` (an open file gets one
``workspace/applyEdit``, one undo step; a hunk changed by the user since is left alone and
reported). Kind ``refactor.pi.revert``.

They are computed for requests the user invoked (``context.triggerKind`` Invoked or absent), not
for a client's automatic requests on every cursor move (VS Code's lightbulb): reading the change
set's files each time is not worth it.

Lines are 0-based; a hunk covers ``currentStart`` to ``currentStart + newLines - 1`` (a deletion:
the line at ``currentStart``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types

from pi_lsp.changes.change_set import FileChangeSet, build, paths
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.revert import current_contents
from pi_lsp.daemon.command_names import KIND_REVERT, REVERT_HUNK, REVERT_TURN
from pi_lsp.daemon.command_names import REVERT_COMMANDS as COMMANDS
from pi_lsp.tools.file_io.file_access import FileAccess

HUNK_TITLE = "Pi: undo this agent hunk"
TURN_TITLE = "Pi: undo the last turn"

_UNDOABLE = ("applied", "kept")


def latest_changed_session(journal: ChangeJournal, session_ids: Iterable[str]) -> str | None:
    """The last of ``session_ids`` (oldest first) whose journal holds changes."""
    for session_id in reversed(list(session_ids)):
        if journal.changes(session_id):
            return session_id
    return None


async def change_actions(
    journal: ChangeJournal,
    files: FileAccess,
    session_id: str,
    path: Path | None,
    lines: tuple[int, int],
) -> list[tuple[str, str, dict[str, Any]]]:
    """``(title, command, argument)`` of the revert actions for ``lines`` (0-based, inclusive) of
    ``path`` (as the document names it, or its real path) in ``session_id``'s change set (see the
    module docstring)."""
    actions: list[tuple[str, str, dict[str, Any]]] = []
    await journal.pending.settled(session_id)  # bash confirmation walks still recording
    changes = journal.changes(session_id)
    names = {str(path), os.path.realpath(path)} if path is not None else set()
    changed = next((change.path for change in changes if change.path in names), None)
    if changed is not None:
        for entry in await _entries(journal, files, session_id, None, [changed]):
            for hunk in entry.hunks:
                if hunk.status in _UNDOABLE and hunk.current_start is not None:
                    first = hunk.current_start
                    last = first + max(len(hunk.new_lines), 1) - 1
                    if first <= lines[1] and lines[0] <= last:
                        actions.append((HUNK_TITLE, REVERT_HUNK, {"sessionId": session_id, "hunk": hunk.id}))
    for turn in sorted({change.turn for change in changes if change.turn > 0}, reverse=True):
        if any(_undoable(entry) for entry in await _entries(journal, files, session_id, turn, None)):
            actions.append((TURN_TITLE, REVERT_TURN, {"sessionId": session_id, "turn": turn}))
            break
    return actions


def as_code_actions(
    found: list[tuple[str, str, dict[str, Any]]], *, literal_support: bool, only: list[str] | None
) -> list[types.CodeAction | types.Command]:
    """The code actions (or bare commands) for ``found``, filtered by ``context.only``."""
    if only and not any(KIND_REVERT == p or KIND_REVERT.startswith(p + ".") for p in only):
        return []
    result: list[types.CodeAction | types.Command] = []
    for title, command, argument in found:
        cmd = types.Command(title=title, command=command, arguments=[argument])
        result.append(types.CodeAction(title=title, kind=KIND_REVERT, command=cmd) if literal_support else cmd)
    return result


def parse_revert_argument(command: str, arguments: list[Any]) -> tuple[str, str | None, int | None]:
    """``(sessionId, hunk, turn)`` of ``pi.revertHunk``/``pi.revertTurn``; ``ValueError`` naming
    the bad field."""
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise ValueError("expects one argument {sessionId, hunk} or {sessionId, turn}")
    value = arguments[0]
    session_id = value.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("sessionId must be a non-empty string")
    if command == REVERT_HUNK:
        hunk = value.get("hunk")
        if not isinstance(hunk, str) or not hunk:
            raise ValueError("hunk must be a non-empty string")
        return session_id, hunk, None
    turn = value.get("turn")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        raise ValueError("turn must be a positive integer")
    return session_id, None, turn


async def _entries(
    journal: ChangeJournal, files: FileAccess, session_id: str, turn: int | None, only_paths: list[str] | None
) -> list[FileChangeSet]:
    targets = paths(journal, session_id, turn) if only_paths is None else only_paths
    now = await current_contents(files, targets)
    entries = build(journal, session_id, turn, {p: data for p, (data, _) in now.items()})
    return [entry for entry in entries if entry.path in now]


def _undoable(entry: FileChangeSet) -> bool:
    if entry.hunks:
        return any(hunk.status in _UNDOABLE for hunk in entry.hunks)
    return entry.current == "agent" and entry.restorable
