"""The change journal: every agent mutation of a file, per session and turn, persisted as JSON Lines.

One file per session, ``<directory>/<sessionId>.jsonl``, appended line by line so it survives a
daemon restart (a torn last line is skipped on load). Lines:

- ``{"type": "turn", "turn": n}``: the session's turn ``n`` began (1-based; calls before any turn,
  such as the session ``external``'s, belong to turn 0);
- ``{"type": "change", "seq", "turn", "toolCallId", "toolName", "path", "before", "after",
  "timestamp"}``: ``path`` absolute; ``before``/``after`` a blob digest, ``null`` for "did not
  exist" / "deleted", or ``"unrestorable"`` when the content was over the blob store's limits;
- ``{"type": "kept", "hunks": [ids]}``: hunks the user reviewed and kept;
- ``{"type": "reverted", "hunks": [ids], "files": [paths]}``: what a revert took back.

Timestamps are epoch milliseconds.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_lsp.changes.blobs import BlobStore

logger = logging.getLogger(__name__)

UNRESTORABLE = "unrestorable"
"""The ``before``/``after`` of a content the blob store could not keep."""


@dataclass(frozen=True)
class FileChange:
    """One recorded mutation (see the module docstring for the fields)."""

    seq: int
    turn: int
    tool_call_id: str
    tool_name: str
    path: str
    before: str | None
    after: str | None
    timestamp: int


@dataclass
class _Session:
    turn: int = 0
    changes: list[FileChange] | None = None
    kept: set[str] | None = None
    reverted: set[str] | None = None


class ChangeJournal:
    """The journal of every session of one daemon (or headless) process."""

    def __init__(self, directory: Path, blobs: BlobStore) -> None:
        self.directory = directory
        self.blobs = blobs
        self._sessions: dict[str, _Session] = {}

    def _file(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.jsonl"

    def _session(self, session_id: str) -> _Session:
        state = self._sessions.get(session_id)
        if state is None:
            state = _Session(changes=[], kept=set(), reverted=set())
            self._load(session_id, state)
            self._sessions[session_id] = state
        return state

    def _load(self, session_id: str, state: _Session) -> None:
        try:
            lines = self._file(session_id).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        except OSError as exc:
            logger.warning("change journal %s unreadable: %s", session_id, exc)
            return
        assert state.changes is not None and state.kept is not None and state.reverted is not None
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn last line
            kind = entry.get("type")
            if kind == "turn":
                state.turn = int(entry.get("turn", state.turn))
            elif kind == "change":
                state.changes.append(FileChange(
                    seq=entry["seq"], turn=entry["turn"], tool_call_id=entry["toolCallId"],
                    tool_name=entry["toolName"], path=entry["path"], before=entry["before"],
                    after=entry["after"], timestamp=entry["timestamp"],
                ))
            elif kind == "kept":
                state.kept.update(entry.get("hunks", []))
            elif kind == "reverted":
                state.reverted.update(entry.get("hunks", []))

    def _append(self, session_id: str, entry: dict[str, Any]) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._file(session_id).open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False, allow_nan=False) + "\n")
        except OSError as exc:
            logger.warning("change journal %s not written: %s", session_id, exc)

    # recording -----------------------------------------------------------------------------

    def begin_turn(self, session_id: str) -> int:
        """A new turn of ``session_id`` begins; returns its number (1-based)."""
        state = self._session(session_id)
        state.turn += 1
        self._append(session_id, {"type": "turn", "turn": state.turn})
        return state.turn

    def digest(self, data: bytes | None) -> str | None:
        """The blob digest of ``data`` (``None`` for no file, :data:`UNRESTORABLE` when too large)."""
        if data is None:
            return None
        return self.blobs.put(data) or UNRESTORABLE

    def record(
        self, session_id: str, tool_call_id: str, tool_name: str, path: Path,
        before: str | None, after: str | None,
    ) -> FileChange | None:
        """Record one mutation (digests from :meth:`digest`); ``None`` when nothing changed."""
        if before == after and before != UNRESTORABLE:
            return None
        state = self._session(session_id)
        assert state.changes is not None
        change = FileChange(
            seq=len(state.changes) + 1, turn=state.turn, tool_call_id=tool_call_id, tool_name=tool_name,
            path=str(path), before=before, after=after, timestamp=int(time.time() * 1000),
        )
        state.changes.append(change)
        self._append(session_id, {
            "type": "change", "seq": change.seq, "turn": change.turn, "toolCallId": tool_call_id,
            "toolName": tool_name, "path": change.path, "before": before, "after": after,
            "timestamp": change.timestamp,
        })
        return change

    def mark(self, session_id: str, kind: str, hunks: list[str], files: list[str] | None = None) -> None:
        """Record hunks ``kind`` = ``"kept"`` or ``"reverted"`` (and, for a revert, whole files)."""
        state = self._session(session_id)
        target = state.kept if kind == "kept" else state.reverted
        assert target is not None
        target.update(hunks)
        entry: dict[str, Any] = {"type": kind, "hunks": hunks}
        if files:
            entry["files"] = files
        self._append(session_id, entry)

    # reading -------------------------------------------------------------------------------

    def current_turn(self, session_id: str) -> int:
        """The session's current turn (0 before the first)."""
        return self._session(session_id).turn

    def changes(self, session_id: str, turn: int | None = None) -> list[FileChange]:
        """The session's changes in order (only turn ``turn`` when given)."""
        changes = self._session(session_id).changes or []
        return [c for c in changes if turn is None or c.turn == turn]

    def kept(self, session_id: str) -> set[str]:
        """Ids of hunks the user kept."""
        return set(self._session(session_id).kept or ())

    def reverted(self, session_id: str) -> set[str]:
        """Ids of hunks already reverted."""
        return set(self._session(session_id).reverted or ())
