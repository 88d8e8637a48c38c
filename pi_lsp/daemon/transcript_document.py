"""The transcript of an agent session as a Markdown file the user reads in their editor (issue 16).

The file is ``{sessionId}.md`` next to the session's journal (``PI_LSP_SESSIONS_DIR`` or the user
data folder; :func:`pi_lsp.daemon.session_journal.sessions_dir`), outside the workspace, so the
agent's ``find``/``grep`` never see it. It is only ever **appended to**, one complete Markdown
chunk per write, so an editor that reloads it at any moment sees a consistent prefix:

- a title (once per file) and, per run, ``## Prompt`` with the prompt as a quote;
- the assistant's text at the end of each message;
- each tool call as a list item (``- `bash: make test` ``), then its outcome
  (``✓``/``✗`` and the first line of the result), an edit's change as a ``diff`` block;
- approvals asked and answered;
- ``## Result`` with the final state.

Writing never raises: a transcript that cannot be written is logged once and then skipped.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from pi_lsp.daemon.run_status import APPROVAL_REQUESTED, final_line, one_line, result_text, tool_call_line

logger = logging.getLogger(__name__)

MAX_DIFF_LINES = 200
"""An edit's diff longer than this is cut in the transcript (the journal has the full result)."""


def _fence(body: str) -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return fence


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines() or [""])


class TranscriptDocument:
    """Appends one session's transcript to ``path`` (see the module docstring)."""

    def __init__(self, path: Path, session_id: str, cwd: Path) -> None:
        self.path = path
        self._session_id = session_id
        self._cwd = cwd
        self._failed = False

    @property
    def uri(self) -> str:
        """The file's ``file:`` URI (for ``window/showDocument``)."""
        return self.path.resolve().as_uri()

    def start(self, prompt: str) -> None:
        """A run begins: the title when the file is new, then the prompt."""
        chunk = ""
        if not self.path.exists():
            chunk += f"# Pi session {self._session_id}\n\nWorkspace: `{self._cwd}`\n"
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        self._append(chunk + f"\n## Prompt ({stamp})\n\n{_quote(prompt)}\n")

    def event(self, event: dict[str, Any]) -> None:
        """Record a (bounded) ``pi/event`` event when it belongs in the transcript."""
        kind = event.get("type")
        if kind == "message_end":
            message = event.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                text = result_text(message).strip()
                if text:
                    self._append(f"\n{text}\n")
        elif kind == "tool_execution_start":
            self._append(f"\n- `{tool_call_line(event.get('toolName'), event.get('args'))}`\n")
        elif kind == "tool_execution_end":
            self._append(self._outcome(event))
        elif kind in APPROVAL_REQUESTED:
            scope = one_line(str(event.get("scope") or ""))
            reason = one_line(str(event.get("reason") or ""))
            because = f" ({reason})" if reason else ""
            self._append(f"\n- approval asked: {event.get('toolName')} `{scope}`{because}\n")

    def approval(self, entry: dict[str, Any]) -> None:
        """Record an approval decision that involved the user, a grant or the fallback (routine
        allows by policy are left out, as in the daemon's log)."""
        if entry.get("policy") == "allow" and entry.get("decision") == "allow":
            return
        verb = "allowed" if entry.get("decision") == "allow" else "denied"
        reason = one_line(str(entry.get("reason") or ""))
        self._append(f"- approval: {verb} {entry.get('toolName')} `{one_line(str(entry.get('scope') or ''))}`"
                     + (f": {reason}" if reason else "") + "\n")

    def end(self, reply: dict[str, Any]) -> None:
        """The run ended: ``## Result`` with the final state."""
        self._append(f"\n## Result\n\n{final_line(reply)}\n")

    def _outcome(self, event: dict[str, Any]) -> str:
        name = event.get("toolName")
        text = result_text(event.get("result"))
        first = next((line for line in text.splitlines() if line.strip()), "")
        mark = "✗" if event.get("isError") else "✓"
        chunk = f"  - {mark} {one_line(f'{name}: {first}' if first else str(name))}\n"
        result = event.get("result")
        details = result.get("details") if isinstance(result, dict) else None
        patch = details.get("patch") if isinstance(details, dict) else None
        if isinstance(patch, str) and patch.strip() and not event.get("isError"):
            lines = patch.splitlines()
            if len(lines) > MAX_DIFF_LINES:
                lines = lines[:MAX_DIFF_LINES] + [f"… ({len(lines) - MAX_DIFF_LINES} more lines)"]
            body = "\n".join(lines)
            fence = _fence(body)
            chunk += f"\n{fence}diff\n{body}\n{fence}\n"
        return chunk

    def _append(self, chunk: str) -> None:
        if self._failed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(chunk)
        except OSError as exc:
            self._failed = True
            logger.warning("cannot write the transcript %s: %s (it stops here)", self.path, exc)
