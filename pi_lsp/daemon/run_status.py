"""One-line descriptions of an agent run, shared by the progress reports and the transcript
document (issue 16): a tool call as ``bash: touch approved.txt``, its outcome, the final state.

All functions take the JSON shapes of ``pi/event`` events (:mod:`pi_lsp.agent.events`) and never
raise on malformed input: an unexpected shape gives a shorter line.
"""

from __future__ import annotations

import json
from typing import Any

APPROVAL_REQUESTED = ("pi_approval_request", "approval_requested")
"""Event types announcing an approval question (today's name and the approvals spec's)."""

MAX_LINE_CHARS = 120
"""A status line is cut to this many code points (with ``…``)."""

_MAIN_ARGUMENT = {
    "read": "path", "edit": "path", "write": "path", "ls": "path",
    "bash": "command", "grep": "pattern", "find": "pattern",
}


def one_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` as one line: whitespace runs (line breaks too) become one space, cut at ``limit``."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def tool_call_line(tool_name: Any, args: Any) -> str:
    """``name: main argument`` (``bash: make test``, ``edit: src/a.py``); other tools and odd
    arguments: ``name: {json}``."""
    name = str(tool_name or "tool")
    if not isinstance(args, dict):
        return name
    key = _MAIN_ARGUMENT.get(name)
    value = args.get(key) if key else None
    if isinstance(value, str) and value:
        return one_line(f"{name}: {value}")
    try:
        return one_line(f"{name}: {json.dumps(args, ensure_ascii=False)}")
    except (TypeError, ValueError):
        return name


def result_text(result: Any) -> str:
    """The text blocks of a tool result payload ``{content: [...]}``, joined."""
    blocks = result.get("content") if isinstance(result, dict) else None
    if not isinstance(blocks, list):
        return ""
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def outcome_line(event: dict[str, Any]) -> str:
    """A ``tool_execution_end`` as ``name: ok, first line of the result`` or ``name failed: …``."""
    name = str(event.get("toolName") or "tool")
    first = next((line for line in result_text(event.get("result")).splitlines() if line.strip()), "")
    if event.get("isError"):
        return one_line(f"{name} failed: {first}" if first else f"{name} failed")
    return one_line(f"{name}: {first}" if first else f"{name}: done")


def final_line(reply: dict[str, Any]) -> str:
    """How a run ended, from the ``{stopReason, errorMessage?}`` reply: ``Done``, ``Aborted``,
    ``Stopped: the turn limit was reached`` or ``Failed: <message>``."""
    reason = reply.get("stopReason")
    message = reply.get("errorMessage")
    if reason == "aborted":
        return "Aborted"
    if reason == "error":
        return one_line(f"Failed: {message}" if message else "Failed", 300)
    if reason == "length":
        return "Stopped: the model's reply hit its length limit"
    if message:
        return one_line(f"Stopped: {message}", 300)
    return "Done"
