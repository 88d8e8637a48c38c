"""Transcript repair before a request (pi-behaviour.md 4.8; pi-ai ``transformMessages``).

A run that was aborted or failed can leave the transcript in a shape chat APIs reject: an
assistant message cut short, or tool calls with no result. Before each request:

- assistant messages with ``stop_reason`` ``"error"`` or ``"aborted"`` are dropped entirely (they
  are incomplete turns; their tool calls were never executed);
- every tool call of a kept assistant message that has no ``toolResult`` before the next assistant
  or user message (or the end) gets a synthetic error result ``No result provided``, inserted
  right there.

The input list is not modified.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_lsp.llm.types import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

NO_RESULT_TEXT = "No result provided"
"""Pi's text for the synthetic result of an orphaned tool call."""


def _synthetic_results(pending: list[ToolCall], answered: set[str]) -> list[ToolResultMessage]:
    return [
        ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=[TextContent(text=NO_RESULT_TEXT)],
            is_error=True,
        )
        for call in pending
        if call.id not in answered
    ]


def repair_transcript(messages: Sequence[Message]) -> list[Message]:
    """Return the transcript to send: failed turns dropped, orphaned tool calls answered.

    See the module docstring for the rules; the relative order of kept messages is unchanged.
    """
    result: list[Message] = []
    pending: list[ToolCall] = []
    answered: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            result.extend(_synthetic_results(pending, answered))
            pending, answered = [], set()
            if message.stop_reason in ("error", "aborted"):
                continue
            pending = message.tool_calls()
            result.append(message)
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id is not None:
                answered.add(message.tool_call_id)
            result.append(message)
        elif isinstance(message, UserMessage):
            result.extend(_synthetic_results(pending, answered))
            pending, answered = [], set()
            result.append(message)
        else:  # pragma: no cover - Message is a closed union
            result.append(message)
    result.extend(_synthetic_results(pending, answered))
    return result
