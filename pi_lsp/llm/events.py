"""The events a provider stream yields while one assistant message arrives.

A stream is ``start``, then any number of deltas, then exactly one ``done`` carrying the final
:class:`~pi_lsp.llm.types.AssistantMessage` (its ``stop_reason`` says how it ended: ``stop``,
``length``, ``toolUse``, ``error`` with ``error_message``, or ``aborted``). ``start`` is skipped
when the request failed before any response arrived; ``done`` never is.

These are Pi's ``AssistantMessageEvent``s (pi-ai ``event-stream``) reduced to what pi-lsp uses:
no ``*_start``/``*_end`` for text and thinking, and deltas carry only the new text, never the
partial message (design.md section 6 bounds event payloads).

``index`` in the tool-call events is the position of that call among the message's tool calls
(0-based, in source order), which is also the order of :meth:`AssistantMessage.tool_calls`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from pi_lsp.llm.types import AssistantMessage, ToolCall


@dataclass(slots=True)
class StartEvent:
    """The server accepted the request and started streaming."""

    type: Literal["start"] = "start"


@dataclass(slots=True)
class TextDelta:
    """New assistant text (``delta`` is appended to the message's text block)."""

    delta: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class ThinkingDelta:
    """New reasoning text (``reasoning_content``/``reasoning`` deltas)."""

    delta: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(slots=True)
class ToolCallStart:
    """A tool call began; ``id`` and ``name`` are what the server sent so far (may be ``""``)."""

    index: int
    id: str
    name: str
    type: Literal["toolcall_start"] = "toolcall_start"


@dataclass(slots=True)
class ToolCallDelta:
    """A fragment of a tool call's JSON arguments, as streamed (not parseable on its own)."""

    index: int
    delta: str
    type: Literal["toolcall_delta"] = "toolcall_delta"


@dataclass(slots=True)
class ToolCallEnd:
    """A tool call is complete; ``tool_call.arguments`` is the parsed (or repaired) object."""

    index: int
    tool_call: ToolCall
    type: Literal["toolcall_end"] = "toolcall_end"


@dataclass(slots=True)
class DoneEvent:
    """The last event of every stream: the final message, successful or not."""

    message: AssistantMessage
    type: Literal["done"] = "done"


StreamEvent = Union[
    StartEvent, TextDelta, ThinkingDelta, ToolCallStart, ToolCallDelta, ToolCallEnd, DoneEvent
]
"""Any event of a provider stream; dispatch on ``.type``."""
