"""The change journal: every agent mutation of a file, per session and turn, persisted as JSON Lines.

One file per session, ``<directory>/<sessionId>.jsonl``, appended line by line so it survives a
daemon restart (a torn last line is skipped on load). Lines:

- ``{"type": "turn", "turn": n}``: the session's turn ``n`` began (1-based; calls before any turn,
  such as the session ``external``'s, belong to turn 0);
- ``{"type": "prompt", "prompt": n, "afterTurn": t}``: the session's ``n``-th ``pi/prompt`` run
  began after turn ``t``: its turns are ``t + 1`` up to the turn before the next prompt's (a
  prompt is what the user asked; a turn is one model call of it);
- ``{"type": "change", "seq", "turn", "toolCallId", "toolName", "path", "before", "after",
  "timestamp"}``: ``path`` absolute; ``before``/``after`` a blob digest, ``null`` for "did not
  exist" / "deleted", or ``"unrestorable"`` when the content was over the blob store's limits;
- ``{"type": "kept", "hunks": [ids]}``: hunks the user reviewed and kept;
- ``{"type": "reverted", "hunks": [ids], "files": [paths]}``: what a revert took back.

Timestamps are epoch milliseconds.
"""

from __future__ import annotations

import bisect
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.pending import PendingRecords

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


@dataclass(frozen=True)
class TurnSpan:
    """Turns ``first`` to ``last`` (both included, 1-based); empty when ``last < first``."""

    first: int
    last: int

    def __contains__(self, turn: object) -> bool:
        return isinstance(turn, int) and self.first <= turn <= self.last


Turns = int | TurnSpan | None
"""Which turns a change set covers: one turn, a span, or (``None``) the whole session."""


@dataclass
class _Session:
    turn: int = 0
    prompt_starts: list[int] = field(default_factory=list)
    """For each prompt (1-based by position), the turn after which it began."""
    changes: list[FileChange] | None = None
    kept: set[str] | None = None
    reverted: set[str] | None = None


class ChangeJournal:
    """The journal of every session of one daemon (or headless) process."""

    def __init__(self, directory: Path, blobs: BlobStore) -> None:
        self.directory = directory
        self.blobs = blobs
        self._sessions: dict[str, _Session] = {}
        self.pending = PendingRecords()
        """Records still being computed (bash confirmation walks): readers await :meth:`PendingRecords.settled`."""
        self._lock = threading.RLock()  # a confirmation walk records from its thread

    def _file(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.jsonl"

    def _session(self, session_id: str) -> _Session:
        with self._lock:
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
            elif kind == "prompt":
                state.prompt_starts.append(int(entry.get("afterTurn", state.turn)))
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

    def begin_prompt(self, session_id: str) -> int:
        """A ``pi/prompt`` run of ``session_id`` begins (before its first turn); returns its number
        (1-based)."""
        state = self._session(session_id)
        state.prompt_starts.append(state.turn)
        number = len(state.prompt_starts)
        self._append(session_id, {"type": "prompt", "prompt": number, "afterTurn": state.turn})
        return number

    def digest(self, data: bytes | None) -> str | None:
        """The blob digest of ``data`` (``None`` for no file, :data:`UNRESTORABLE` when too large)."""
        if data is None:
            return None
        return self.blobs.put(data) or UNRESTORABLE

    def record(
        self, session_id: str, tool_call_id: str, tool_name: str, path: Path,
        before: str | None, after: str | None, turn: int | None = None,
    ) -> FileChange | None:
        """Record one mutation (digests from :meth:`digest`) in ``turn`` (default: the current
        one); ``None`` when nothing changed. Thread-safe."""
        if before == after and before != UNRESTORABLE:
            return None
        with self._lock:
            state = self._session(session_id)
            assert state.changes is not None
            change = FileChange(
                seq=len(state.changes) + 1, turn=state.turn if turn is None else turn, tool_call_id=tool_call_id,
                tool_name=tool_name, path=str(path), before=before, after=after, timestamp=int(time.time() * 1000),
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

    def changes(self, session_id: str, turn: Turns = None) -> list[FileChange]:
        """The session's changes in order (only those of ``turn``, a turn or a span, when given)."""
        changes = self._session(session_id).changes or []
        if isinstance(turn, TurnSpan):
            return [c for c in changes if c.turn in turn]
        return [c for c in changes if turn is None or c.turn == turn]

    def prompt_count(self, session_id: str) -> int:
        """How many ``pi/prompt`` runs the journal knows of (sessions journaled before prompts were
        recorded: 0)."""
        return len(self._session(session_id).prompt_starts)

    def prompt_turns(self, session_id: str, prompt: int) -> TurnSpan | None:
        """The turns of prompt ``prompt`` (1-based); ``None`` when the session has no such prompt."""
        state = self._session(session_id)
        starts = state.prompt_starts
        if not 1 <= prompt <= len(starts):
            return None
        last = starts[prompt] if prompt < len(starts) else state.turn
        return TurnSpan(starts[prompt - 1] + 1, last)

    def prompt_of(self, session_id: str, turn: int) -> int | None:
        """The prompt (1-based) turn ``turn`` belonged to, or ``None`` (turn 0, or not recorded)."""
        starts = self._session(session_id).prompt_starts
        number = bisect.bisect_left(starts, turn)  # prompts that began before this turn
        return number if turn > 0 and number > 0 else None

    def kept(self, session_id: str) -> set[str]:
        """Ids of hunks the user kept."""
        return set(self._session(session_id).kept or ())

    def reverted(self, session_id: str) -> set[str]:
        """Ids of hunks already reverted."""
        return set(self._session(session_id).reverted or ())
