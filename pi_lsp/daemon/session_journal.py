"""Session journals: one JSON Lines file per agent session (design.md 6).

Where: ``$PI_LSP_SESSIONS_DIR`` when set (tests and the demo use a temp folder), else
``platformdirs.user_data_dir("pi-lsp")/sessions``. The file is ``{sessionId}.jsonl``; session ids
are restricted to ``[A-Za-z0-9_-]`` (1 to 128 characters) so an id can never name a path outside
the folder.

Lines (camelCase JSON, one object each, appended and flushed as they happen):

- ``{"type": "session", "version": 1, "id", "cwd", "timestamp"}`` first;
- ``{"type": "message", "message": {...}}`` for every user, assistant and toolResult message, at
  its ``message_end`` (the wire form of :mod:`pi_lsp.llm.types`);
- ``{"type": "run_end", "stopReason", "errorMessage"?, "timestamp"}`` when a run ends;
- ``{"type": "compaction", "summary", "keptMessages", "tokensBefore", "tokensAfter", "timestamp"}``
  when the history was summarised (:mod:`pi_lsp.agent.compaction`): the messages before it are
  kept in the journal (the full history), but the transcript continues from the summary and the
  last ``keptMessages`` journaled messages, which is what :func:`load_messages` rebuilds;
- ``{"type": "approval", ...}`` for every approval decision of the session's tool calls
  (:mod:`pi_lsp.policy.approvals` describes the keys), through :meth:`SessionJournal.record`.

A journal that cannot be written is logged once and the session goes on (journaling never fails a
run). :func:`load_messages` reads a journal back into the transcript (bad lines skipped);
:func:`interrupted_results` closes the tool calls a daemon that stopped mid-run left without
results; :func:`list_sessions` summarises a workspace's journals for ``pi/sessions``.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import TypeAdapter, ValidationError

from pi_lsp.llm.types import AssistantMessage, Message, TextContent, ToolResultMessage, now_ms

logger = logging.getLogger(__name__)

SESSIONS_DIR_ENV = "PI_LSP_SESSIONS_DIR"
"""Environment variable overriding the journal folder."""

SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
"""What a session id may look like (it becomes a file name)."""

_MESSAGE = TypeAdapter(Message)

INTERRUPTED_TEXT = (
    "Interrupted: pi-lsp stopped before this tool call finished (the session was resumed after a "
    "restart). It may have run partly; check its effects before repeating it."
)
"""The error result given to a tool call a stopped daemon left without a result."""

FIRST_PROMPT_CHARS = 200
"""``firstPrompt`` in :func:`list_sessions` is cut to this many characters (with ``...``)."""


def sessions_dir() -> Path:
    """The journal folder (see the module docstring); not created here."""
    override = os.environ.get(SESSIONS_DIR_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir("pi-lsp")) / "sessions"


def valid_session_id(session_id: str) -> bool:
    """True when ``session_id`` can name a journal file."""
    return bool(SESSION_ID.match(session_id))


class SessionJournal:
    """Appends the lines of one session's journal (see the module docstring).

    ``folder``: where the file lives (default :func:`sessions_dir`). Raises ``ValueError`` for an
    invalid ``session_id``. Writing never raises.
    """

    def __init__(self, session_id: str, cwd: Path, folder: Path | None = None) -> None:
        if not valid_session_id(session_id):
            raise ValueError(f"invalid session id {session_id!r}")
        self.path = (folder or sessions_dir()) / f"{session_id}.jsonl"
        self._failed = False
        if not self.path.exists():
            self._write({"type": "session", "version": 1, "id": session_id, "cwd": str(cwd), "timestamp": now_ms()})

    def message(self, message: dict[str, Any]) -> None:
        """Journal one message (its wire dict)."""
        self._write({"type": "message", "message": message})

    def record(self, line: dict[str, Any]) -> None:
        """Journal another kind of line as given (it carries its own ``type``: approvals)."""
        self._write(line)

    def compaction(self, event: dict[str, Any]) -> None:
        """Journal a ``compaction`` event that made a summary (others change nothing lasting)."""
        if not event.get("summarized"):
            return
        self._write({
            "type": "compaction", "summary": event.get("summary", ""), "keptMessages": event.get("keptMessages", 0),
            "tokensBefore": event.get("tokensBefore"), "tokensAfter": event.get("tokensAfter"),
            "timestamp": event.get("timestamp") or now_ms(),
        })

    def run_end(self, stop_reason: str, error_message: str | None) -> None:
        """Journal the end of a run."""
        line: dict[str, Any] = {"type": "run_end", "stopReason": stop_reason, "timestamp": now_ms()}
        if error_message is not None:
            line["errorMessage"] = error_message
        self._write(line)

    def _write(self, line: dict[str, Any]) -> None:
        if self._failed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        except OSError as exc:
            self._failed = True
            logger.warning("cannot write the session journal %s: %s (journaling stops)", self.path, exc)


def load_messages(session_id: str, folder: Path | None = None) -> list[Message] | None:
    """The transcript journaled for ``session_id``, or ``None`` when there is no such journal.

    Lines that are not JSON or not a valid message are skipped (logged); an invalid id is ``None``.
    """
    if not valid_session_id(session_id):
        return None
    path = (folder or sessions_dir()) / f"{session_id}.jsonl"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    messages: list[Message] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            data = json.loads(line)
            if isinstance(data, dict) and data.get("type") == "message":
                messages.append(_MESSAGE.validate_python(data["message"]))
            elif isinstance(data, dict) and data.get("type") == "compaction" and isinstance(data.get("summary"), str):
                kept = int(data.get("keptMessages") or 0)
                tail = messages[len(messages) - kept :] if 0 < kept <= len(messages) else []
                from pi_lsp.agent.compaction import summary_message  # with the first resume, not at start

                messages = [summary_message(data["summary"], data.get("timestamp")), *tail]
        except (ValueError, KeyError, ValidationError) as exc:
            logger.warning("%s:%d: skipped a bad journal line (%s)", path, number, exc)
    return messages


def interrupted_results(messages: list[Message]) -> list[ToolResultMessage]:
    """Error results (:data:`INTERRUPTED_TEXT`) for the tool calls of the last assistant message
    that have no result after it: what a daemon killed during a tool batch leaves behind. Empty
    when the transcript ends cleanly."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AssistantMessage)), None)
    if last is None:
        return []
    assistant = messages[last]
    assert isinstance(assistant, AssistantMessage)
    if assistant.stop_reason in ("error", "aborted"):
        return []
    answered = {m.tool_call_id for m in messages[last + 1 :] if isinstance(m, ToolResultMessage)}
    return [
        ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=INTERRUPTED_TEXT)], is_error=True)
        for call in assistant.tool_calls()
        if call.id not in answered
    ]


def _prompt_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    text = " ".join(str(content or "").split())
    return text if len(text) <= FIRST_PROMPT_CHARS else text[: FIRST_PROMPT_CHARS - 3] + "..."


def summarize_journal(path: Path) -> dict[str, Any] | None:
    """``{id, cwd, firstPrompt, timestamp, updated, turns, prompts}`` of one journal file, or
    ``None`` when it is unreadable or has no ``session`` header. ``timestamp`` is the session's
    start, ``updated`` its last journaled line (epoch ms); ``turns`` counts assistant replies,
    ``prompts`` user messages; ``firstPrompt`` is the first user message's text, whitespace
    collapsed, at most :data:`FIRST_PROMPT_CHARS` characters."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    summary: dict[str, Any] | None = None
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        if summary is None:
            if data.get("type") != "session" or not isinstance(data.get("id"), str):
                return None
            summary = {"id": data["id"], "cwd": data.get("cwd"), "firstPrompt": "", "timestamp": data.get("timestamp"),
                       "updated": data.get("timestamp"), "turns": 0, "prompts": 0}
            continue
        message = data.get("message") if data.get("type") == "message" else None
        stamp = (message or data).get("timestamp") if isinstance(message or data, dict) else None
        if isinstance(stamp, int):
            summary["updated"] = stamp
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            summary["turns"] += 1
        elif message.get("role") == "user":
            summary["prompts"] += 1
            if not summary["firstPrompt"]:
                summary["firstPrompt"] = _prompt_text(message)
    return summary


def list_sessions(cwd: Path, folder: Path | None = None) -> list[dict[str, Any]]:
    """Summaries (:func:`summarize_journal`) of the journals whose session ran in ``cwd``, most
    recently updated first. A missing folder is an empty list."""
    base = folder or sessions_dir()
    try:
        paths = sorted(base.glob("*.jsonl"))
    except OSError:
        return []
    wanted = str(cwd)
    out = [s for p in paths if (s := summarize_journal(p)) is not None and s.get("cwd") == wanted]
    out.sort(key=lambda s: (s.get("updated") or 0), reverse=True)
    return out
