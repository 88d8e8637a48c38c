"""Assembling streamed chat completion chunks into an :class:`AssistantMessage`.

Each ``data:`` payload of an OpenAI-compatible stream is a ``chat.completion.chunk``. The
assembler follows pi-ai's ``openai-completions`` stream handling:

- ``choices[0].delta.content`` is assistant text (one text block per message);
- the first non-empty of ``reasoning_content``, ``reasoning``, ``reasoning_text`` is thinking (one
  thinking block, remembering which field it came in);
- ``delta.tool_calls[]`` fragments are matched to a call by ``index`` (parallel calls interleave),
  else by ``id``; the first fragment usually carries ``id`` and ``function.name``, later ones
  pieces of ``function.arguments``. Arguments are parsed once, when the message ends, strictly,
  with :func:`~pi_lsp.llm.partial_json.parse_tool_call_arguments` (Pi 1.x): text that is not a
  JSON object gives ``{}`` and an ``arguments_error``, whatever the finish reason, so a call cut
  short never runs with repaired arguments (issue 12);
- ``finish_reason`` maps ``stop``/``end`` to ``stop``, ``length`` to ``length``,
  ``tool_calls``/``function_call`` to ``toolUse``, anything else to ``error`` with
  ``Provider finish_reason: {reason}``;
- ``usage`` (on the chunk, or on the choice for some servers) becomes :class:`Usage` with cached
  prompt tokens split out as Pi does;
- a chunk ``{"error": {...}}`` is a failure reported by the server mid-stream.

Block order in the final message is the order in which each block first appeared.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.llm.events import (
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from pi_lsp.llm.partial_json import parse_tool_call_arguments
from pi_lsp.llm.types import (
    AssistantMessage,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_FINISH = {"stop": "stop", "end": "stop", "length": "length", "tool_calls": "toolUse", "function_call": "toolUse"}


@dataclass
class _PendingCall:
    position: int
    id: str
    name: str
    args: list[str] = field(default_factory=list)


def usage_from(raw: dict[str, Any]) -> Usage:
    """Pi's ``parseChunkUsage``: cached prompt tokens are ``cache_read``, the rest ``input``."""
    prompt = int(raw.get("prompt_tokens") or 0)
    details = raw.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or raw.get("prompt_cache_hit_tokens") or 0)
    write = int(details.get("cache_write_tokens") or 0)
    cache_read = max(0, cached - write) if write > 0 else cached
    output = int(raw.get("completion_tokens") or 0)
    inp = max(0, prompt - cache_read - write)
    return Usage(
        input=inp, output=output, cache_read=cache_read, cache_write=write,
        total_tokens=inp + output + cache_read + write,
    )


class ChunkAssembler:
    """Feed parsed chunks with :meth:`add`; build the message with :meth:`finish`.

    ``received_summary()`` describes what arrived so far, for error messages about cut streams.
    """

    def __init__(self, *, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self._order: list[str] = []  # "text", "thinking", or "call:<position>"
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._thinking_field: str | None = None
        self._calls: list[_PendingCall] = []
        self._by_index: dict[int, _PendingCall] = {}
        self._by_id: dict[str, _PendingCall] = {}
        self.usage = Usage()
        self.finish_reason: str | None = None
        self.stop_reason: StopReason = "stop"
        self.error_message: str | None = None
        self.server_error: str | None = None

    def add(self, chunk: Any) -> list[StreamEvent]:
        """Apply one parsed chunk; return the delta events it produced (in order).

        Written for speed (it runs once per streamed chunk): exact type checks, and the plain
        text delta (``{"content": ...}`` with at most ``role`` beside it) skips the other fields.
        """
        if type(chunk) is not dict:
            return []
        if chunk.get("error"):
            error = chunk["error"]
            message = error.get("message") if type(error) is dict else None
            self.server_error = str(message or error)
            return []
        usage = chunk.get("usage")
        if usage and type(usage) is dict:
            self.usage = usage_from(usage)
        choices = chunk.get("choices")
        if not choices or type(choices) is not list:
            return []
        choice = choices[0]
        if type(choice) is not dict:
            return []
        if not usage and type(choice.get("usage")) is dict:
            self.usage = usage_from(choice["usage"])
        reason = choice.get("finish_reason")
        if reason:
            self._finish(str(reason))
        delta = choice.get("delta")
        if delta is None:
            delta = choice.get("message")
        if type(delta) is not dict:
            return []
        events: list[StreamEvent] = []
        content = delta.get("content")
        if content and type(content) is str:
            if not self._text:
                self._order.append("text")
            self._text.append(content)
            events.append(TextDelta(content))
            if len(delta) == 1 or (len(delta) == 2 and "role" in delta):
                return events
        for name in _REASONING_FIELDS:
            value = delta.get(name)
            if value and type(value) is str:
                if self._thinking_field is None:
                    self._thinking_field = name
                    self._order.append("thinking")
                self._thinking.append(value)
                events.append(ThinkingDelta(value))
                break
        calls = delta.get("tool_calls")
        if calls and type(calls) is list:
            for fragment in calls:
                if type(fragment) is dict:
                    self._call_fragment(fragment, events)
        return events

    def _finish(self, reason: str) -> None:
        self.finish_reason = reason
        mapped = _FINISH.get(reason)
        if mapped is None:
            self.stop_reason = "error"
            self.error_message = f"Provider finish_reason: {reason}"
        else:
            self.stop_reason = mapped  # type: ignore[assignment]

    def _call_fragment(self, fragment: dict[str, Any], events: list[StreamEvent]) -> None:
        index = fragment.get("index")
        index = index if isinstance(index, int) else None
        call_id = fragment.get("id") if isinstance(fragment.get("id"), str) else None
        function = fragment.get("function") if isinstance(fragment.get("function"), dict) else {}
        call = self._by_index.get(index) if index is not None else None
        if call is None and call_id:
            call = self._by_id.get(call_id)
        if call is None:
            call = _PendingCall(len(self._calls), call_id or "", str(function.get("name") or ""))
            self._calls.append(call)
            self._order.append(f"call:{call.position}")
            events.append(ToolCallStart(call.position, call.id, call.name))
        if index is not None:
            self._by_index.setdefault(index, call)
        if call_id:
            self._by_id[call_id] = call
            if not call.id:
                call.id = call_id
        if not call.name and function.get("name"):
            call.name = str(function["name"])
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        if arguments:
            call.args.append(arguments)
            events.append(ToolCallDelta(call.position, arguments))

    @property
    def complete(self) -> bool:
        """True once a ``finish_reason`` arrived."""
        return self.finish_reason is not None

    def received_summary(self) -> str:
        """e.g. ``received 120 characters of text and 1 tool call`` (or ``received nothing``)."""
        parts = []
        text = sum(len(t) for t in self._text)
        if text:
            parts.append(f"{text} characters of text")
        thinking = sum(len(t) for t in self._thinking)
        if thinking:
            parts.append(f"{thinking} characters of thinking")
        if self._calls:
            parts.append(f"{len(self._calls)} tool call" + ("s" if len(self._calls) > 1 else ""))
        return "received " + (" and ".join(parts) if parts else "nothing")

    def finish(self) -> tuple[AssistantMessage, list[ToolCallEnd]]:
        """The message so far (stop reason as mapped; callers override it on failure) and one
        ``toolcall_end`` per call, in source order, arguments parsed."""
        content: list[Any] = []
        ends: list[ToolCallEnd] = []
        for slot in self._order:
            if slot == "text":
                content.append(TextContent(text="".join(self._text)))
            elif slot == "thinking":
                content.append(
                    ThinkingContent(thinking="".join(self._thinking), thinking_signature=self._thinking_field)
                )
            else:
                pending = self._calls[int(slot[5:])]
                arguments, error = parse_tool_call_arguments("".join(pending.args))
                call = ToolCall(id=pending.id, name=pending.name, arguments=arguments, arguments_error=error)
                content.append(call)
                ends.append(ToolCallEnd(pending.position, call))
        message = AssistantMessage(
            content=content,
            provider=self.provider,
            model=self.model,
            usage=self.usage,
            stop_reason=self.stop_reason,
            error_message=self.error_message,
        )
        return message, ends
