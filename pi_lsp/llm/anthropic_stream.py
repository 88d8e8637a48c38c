"""Assembling Anthropic Messages API stream events into an :class:`AssistantMessage`.

Each server-sent event of a ``stream: true`` reply carries a JSON object whose ``type`` names it
(the SSE ``event:`` line repeats it). :class:`MessageAssembler` follows Anthropic's streaming
documentation and pi-ai's ``anthropic`` provider:

- ``message_start``: the usage so far (``input_tokens``, ``cache_read_input_tokens``,
  ``cache_creation_input_tokens``, ``output_tokens``);
- ``content_block_start {index, content_block}``: a ``text``, ``thinking``, ``redacted_thinking``
  or ``tool_use`` block begins (other block types, e.g. server tools, are ignored);
- ``content_block_delta {index, delta}``: ``text_delta`` (text), ``thinking_delta`` (thinking),
  ``signature_delta`` (the thinking block's signature), ``input_json_delta`` (a piece of the tool
  input's JSON text; parsed once when the message ends with
  :func:`~pi_lsp.llm.partial_json.parse_streaming_json`, which repairs a cut input);
- ``content_block_stop``: nothing to do (blocks are built at the end);
- ``message_delta {delta: {stop_reason}, usage}``: the stop reason and the cumulative usage;
- ``message_stop``: the end; ``ping``: nothing;
- ``error {error: {type, message}}``: a failure reported by the server mid-stream.

Stop reasons: ``end_turn``, ``stop_sequence`` and ``pause_turn`` (only server tools pause, and
pi-lsp offers none) map to ``stop``; ``max_tokens`` and ``model_context_window_exceeded`` to
``length`` (the loop's length rule applies); ``tool_use`` to ``toolUse``; ``refusal`` and anything
unknown to ``error`` with a message saying so.

Block order in the final message is the stream's ``index`` order; a tool call's position (the
``index`` of the tool-call events) counts tool calls only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.llm.events import StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from pi_lsp.llm.partial_json import parse_streaming_json
from pi_lsp.llm.types import (
    AssistantMessage,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

REDACTED_THINKING_TEXT = "[Reasoning redacted]"
"""The ``thinking`` text of a redacted block (Pi's placeholder)."""
REFUSAL_TEXT = "The model declined to answer (stop_reason: refusal)"

_STOP = {
    "end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop",
    "max_tokens": "length", "model_context_window_exceeded": "length", "tool_use": "toolUse",
}
_RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


@dataclass
class _Block:
    kind: str  # "text", "thinking", "redacted", "tool"
    parts: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    id: str = ""
    name: str = ""
    position: int = -1


def usage_from(raw: dict[str, Any], previous: Usage | None = None) -> Usage:
    """Anthropic usage to :class:`Usage`: ``input_tokens`` (not cached), ``output_tokens``,
    ``cache_read_input_tokens`` and ``cache_creation_input_tokens``; a field absent from ``raw``
    keeps its value from ``previous`` (``message_delta`` may carry only ``output_tokens``)."""
    base = previous or Usage()

    def pick(name: str, old: int) -> int:
        value = raw.get(name)
        return int(value) if isinstance(value, (int, float)) and value >= 0 else old

    inp = pick("input_tokens", base.input)
    out = pick("output_tokens", base.output)
    read = pick("cache_read_input_tokens", base.cache_read)
    write = pick("cache_creation_input_tokens", base.cache_write)
    return Usage(input=inp, output=out, cache_read=read, cache_write=write, total_tokens=inp + out + read + write)


class MessageAssembler:
    """Feed parsed events with :meth:`add`; build the message with :meth:`finish`.

    ``server_error`` is set by an ``error`` event (``"{message} ({type})"``), ``server_error_type``
    to its type; :attr:`retryable_error` tells whether that type is worth another attempt.
    ``received_content`` is true once a content block started.
    """

    def __init__(self, *, provider: str, model: str, api: str) -> None:
        self.provider, self.model, self.api = provider, model, api
        self._blocks: dict[int, _Block] = {}
        self._order: list[int] = []
        self._calls = 0
        self.usage = Usage()
        self.stop_reason: StopReason = "stop"
        self.error_message: str | None = None
        self.raw_stop_reason: str | None = None
        self.stopped = False
        self.server_error: str | None = None
        self.server_error_type: str | None = None

    @property
    def complete(self) -> bool:
        """True once the stop reason arrived (``message_delta``) or the message ended."""
        return self.raw_stop_reason is not None or self.stopped

    @property
    def received_content(self) -> bool:
        return bool(self._order)

    @property
    def retryable_error(self) -> bool:
        return self.server_error_type in _RETRYABLE_ERRORS

    def add(self, event: Any) -> list[StreamEvent]:
        """Apply one parsed event; return the delta events it produced (in order)."""
        if type(event) is not dict:
            return []
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_start":
            return self._start(event)
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                self.usage = usage_from(message["usage"])
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self._stop(delta["stop_reason"])
            if isinstance(event.get("usage"), dict):
                self.usage = usage_from(event["usage"], self.usage)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            error = event.get("error")
            if isinstance(error, dict):
                self.server_error_type = str(error.get("type") or "error")
                text = str(error.get("message") or self.server_error_type)
                self.server_error = f"{text} ({self.server_error_type})"
            else:
                self.server_error = str(error or "unknown error")
        return []

    def _stop(self, reason: str) -> None:
        self.raw_stop_reason = reason
        mapped = _STOP.get(reason)
        if mapped is not None:
            self.stop_reason = mapped  # type: ignore[assignment]
        elif reason == "refusal":
            self.stop_reason, self.error_message = "error", REFUSAL_TEXT
        else:
            self.stop_reason, self.error_message = "error", f"Provider stop_reason: {reason}"

    def _start(self, event: dict[str, Any]) -> list[StreamEvent]:
        index, block = event.get("index"), event.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict) or index in self._blocks:
            return []
        kind = block.get("type")
        if kind == "text":
            entry = _Block("text")
            text = block.get("text")
            self._add_block(index, entry)
            if isinstance(text, str) and text:
                entry.parts.append(text)
                return [TextDelta(text)]
        elif kind == "thinking":
            entry = _Block("thinking")
            self._add_block(index, entry)
            if isinstance(block.get("signature"), str):
                entry.signature.append(block["signature"])
            if isinstance(block.get("thinking"), str) and block["thinking"]:
                entry.parts.append(block["thinking"])
                return [ThinkingDelta(block["thinking"])]
        elif kind == "redacted_thinking":
            entry = _Block("redacted")
            if isinstance(block.get("data"), str):
                entry.signature.append(block["data"])
            self._add_block(index, entry)
        elif kind == "tool_use":
            entry = _Block("tool", id=str(block.get("id") or ""), name=str(block.get("name") or ""))
            entry.position = self._calls
            self._calls += 1
            initial = block.get("input")
            if isinstance(initial, dict) and initial:
                # a server that sends the whole input at the start instead of as deltas
                entry.parts.append(json.dumps(initial, ensure_ascii=False))
            self._add_block(index, entry)
            return [ToolCallStart(entry.position, entry.id, entry.name)]
        return []

    def _add_block(self, index: int, entry: _Block) -> None:
        self._blocks[index] = entry
        self._order.append(index)

    def _delta(self, event: dict[str, Any]) -> list[StreamEvent]:
        entry = self._blocks.get(event.get("index"))  # type: ignore[arg-type]
        delta = event.get("delta")
        if entry is None or type(delta) is not dict:
            return []
        kind = delta.get("type")
        if kind == "text_delta" and entry.kind == "text":
            text = delta.get("text")
            if isinstance(text, str) and text:
                entry.parts.append(text)
                return [TextDelta(text)]
        elif kind == "input_json_delta" and entry.kind == "tool":
            piece = delta.get("partial_json")
            if isinstance(piece, str) and piece:
                entry.parts.append(piece)
                return [ToolCallDelta(entry.position, piece)]
        elif kind == "thinking_delta" and entry.kind == "thinking":
            text = delta.get("thinking")
            if isinstance(text, str) and text:
                entry.parts.append(text)
                return [ThinkingDelta(text)]
        elif kind == "signature_delta" and entry.kind == "thinking":
            if isinstance(delta.get("signature"), str):
                entry.signature.append(delta["signature"])
        return []

    def received_summary(self) -> str:
        """e.g. ``received 120 characters of text and 1 tool call`` (or ``received nothing``)."""
        text = sum(len(p) for b in self._blocks.values() if b.kind == "text" for p in b.parts)
        thinking = sum(len(p) for b in self._blocks.values() if b.kind == "thinking" for p in b.parts)
        parts = []
        if text:
            parts.append(f"{text} characters of text")
        if thinking:
            parts.append(f"{thinking} characters of thinking")
        if self._calls:
            parts.append(f"{self._calls} tool call" + ("s" if self._calls > 1 else ""))
        return "received " + (" and ".join(parts) if parts else "nothing")

    def finish(self) -> tuple[AssistantMessage, list[ToolCallEnd]]:
        """The message so far (stop reason as mapped; callers override it on failure) and one
        ``toolcall_end`` per call, in source order, arguments parsed."""
        content: list[Any] = []
        ends: list[ToolCallEnd] = []
        for index in sorted(self._order):
            entry = self._blocks[index]
            if entry.kind == "text":
                content.append(TextContent(text="".join(entry.parts)))
            elif entry.kind == "thinking":
                content.append(ThinkingContent(thinking="".join(entry.parts), thinking_signature="".join(entry.signature) or None))
            elif entry.kind == "redacted":
                content.append(ThinkingContent(
                    thinking=REDACTED_THINKING_TEXT, thinking_signature="".join(entry.signature), redacted=True))
            else:
                call = ToolCall(id=entry.id, name=entry.name, arguments=parse_streaming_json("".join(entry.parts)))
                content.append(call)
                ends.append(ToolCallEnd(entry.position, call))
        ends.sort(key=lambda end: end.index)
        message = AssistantMessage(
            content=content, api=self.api, provider=self.provider, model=self.model,
            usage=self.usage, stop_reason=self.stop_reason, error_message=self.error_message,
        )
        return message, ends
