"""The recorded-session format served by ``pi-lsp replay`` (design.md section 6).

A recording is JSON Lines: one line per model turn, in order (linear: the N-th request gets the
N-th line). Blank lines and lines starting with ``//`` are skipped (room for comments). A line::

    {"reply": {"text": "...", "thinking": "...",
               "toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "a.txt"}}],
               "stopReason": "toolUse", "usage": {"input": 10, "output": 5}},
     "expect": {"toolResultIds": ["call_0"], "toolResultContains": ["passed"],
                "userContains": "fix", "toolsInclude": ["grep"]}}

``reply`` is what the assistant says. A tool call gives either ``arguments`` (any JSON value, sent
as its JSON text) or ``rawArguments`` (the exact text to stream, e.g. broken JSON).
``stopReason`` defaults to ``toolUse`` when there are tool calls, else ``stop``.

``expect`` (optional) is what the request should contain; a replay server only *logs* a mismatch
(:meth:`RecordedTurn.divergences`), it still serves the turn:

- ``toolResultIds``: the ``tool_call_id``s of the ``tool`` messages at the end of the request, in
  order;
- ``toolResultContains``: strings that must each occur in those trailing tool messages;
- ``userContains``: a string the last user message must contain;
- ``toolsInclude``: tool names that must be offered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from pi_lsp.llm.types import AssistantMessage, TextContent, ThinkingContent, ToolCall, Usage, WireModel


class RecordingError(ValueError):
    """A recording file that cannot be used; the message names the file and line (1-based)."""


class RecordedToolCall(WireModel):
    """One tool call of a recorded reply."""

    id: str
    name: str
    arguments: Any = None
    raw_arguments: str | None = None

    def argument_text(self) -> str:
        """The arguments as streamed: ``rawArguments`` verbatim, else ``arguments`` as JSON."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps({} if self.arguments is None else self.arguments, ensure_ascii=False)


class RecordedReply(WireModel):
    """What the assistant replies in one turn."""

    text: str = ""
    thinking: str = ""
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    stop_reason: Literal["stop", "length", "toolUse"] | None = None
    usage: Usage = Field(default_factory=Usage)

    @model_validator(mode="after")
    def _default_stop_reason(self) -> "RecordedReply":
        if self.stop_reason is None:
            self.stop_reason = "toolUse" if self.tool_calls else "stop"
        return self


class RecordedExpectation(WireModel):
    """What the request for this turn is expected to contain (see the module docstring)."""

    tool_result_ids: list[str] | None = None
    tool_result_contains: list[str] = Field(default_factory=list)
    user_contains: str | None = None
    tools_include: list[str] = Field(default_factory=list)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class RecordedTurn(WireModel):
    """One line of a recording: the reply and, optionally, the expectation on the request."""

    reply: RecordedReply
    expect: RecordedExpectation | None = None

    def divergences(self, body: Any) -> list[str]:
        """How an OpenAI chat completions request ``body`` differs from ``expect`` (one short
        sentence each; empty when it matches or nothing is expected)."""
        if self.expect is None:
            return []
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list):
            return ["the request has no messages array"]
        out: list[str] = []
        trailing: list[dict[str, Any]] = []
        for message in reversed(messages):
            if not isinstance(message, dict) or message.get("role") != "tool":
                break
            trailing.insert(0, message)
        exp = self.expect
        if exp.tool_result_ids is not None:
            ids = [m.get("tool_call_id") for m in trailing]
            if ids != exp.tool_result_ids:
                out.append(f"expected tool results for {exp.tool_result_ids}, got {ids}")
        results_text = "\n".join(_text_of(m.get("content")) for m in trailing)
        for needle in exp.tool_result_contains:
            if needle not in results_text:
                out.append(f"expected the tool results to contain {needle!r}")
        if exp.user_contains is not None:
            users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
            last = _text_of(users[-1].get("content")) if users else ""
            if exp.user_contains not in last:
                out.append(f"expected the last user message to contain {exp.user_contains!r}")
        offered = {
            t.get("function", {}).get("name")
            for t in body.get("tools") or []
            if isinstance(t, dict)
        }
        missing = [name for name in exp.tools_include if name not in offered]
        if missing:
            out.append(f"expected tools {missing} to be offered")
        return out


def parse_recording(text: str, *, source: str = "<recording>") -> list[RecordedTurn]:
    """Parse JSON Lines text into turns. Raises :class:`RecordingError` naming ``source`` and the
    1-based line of the first bad line; an empty recording is an error too."""
    turns: list[RecordedTurn] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        try:
            turns.append(RecordedTurn.model_validate_json(stripped))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))  # empty for text that is not JSON
            raise RecordingError(f"{source}:{number}: {where + ': ' if where else ''}{first.get('msg')}") from None
    if not turns:
        raise RecordingError(f"{source}: no turns recorded")
    return turns


def load_recording(path: str | Path) -> list[RecordedTurn]:
    """Read a recording file (UTF-8). Raises :class:`RecordingError` for unreadable or bad files."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(f"{path}: cannot read the recording ({exc})") from None
    return parse_recording(text, source=str(path))


def turn_from_message(
    message: AssistantMessage, expect: RecordedExpectation | None = None
) -> RecordedTurn:
    """Record a real assistant message (for capturing sessions against a live endpoint).

    Error and aborted messages cannot be replayed and raise ``ValueError``.
    """
    if message.stop_reason not in ("stop", "length", "toolUse"):
        raise ValueError(f"cannot record a message that ended with {message.stop_reason!r}")
    text = "".join(b.text for b in message.content if isinstance(b, TextContent))
    thinking = "".join(b.thinking for b in message.content if isinstance(b, ThinkingContent))
    calls = [
        RecordedToolCall(id=b.id, name=b.name, arguments=b.arguments)
        for b in message.content
        if isinstance(b, ToolCall)
    ]
    reply = RecordedReply(
        text=text, thinking=thinking, tool_calls=calls, stop_reason=message.stop_reason, usage=message.usage
    )
    return RecordedTurn(reply=reply, expect=expect)


def dump_turn(turn: RecordedTurn) -> str:
    """One JSON line (no trailing newline) for ``turn``, camelCase, defaults left out."""
    return turn.model_dump_json(by_alias=True, exclude_none=True, exclude_defaults=True)
