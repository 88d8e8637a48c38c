"""Agent events as plain JSON dicts with Pi's names and camelCase keys (pi-behaviour.md 4.9, design.md 6).

Each constructor returns a fresh dict whose first key is ``type``; payload values are already
JSON-shaped (wire models go through :func:`pi_lsp.llm.types.to_wire`), so the daemon can put an
event straight into a ``pi/event`` notification and a session journal.

Sinks are synchronous (:data:`EventSink`) and must not block: the daemon queues and coalesces (at
most 4 ``tool_execution_update`` per second, design.md 6). The tool pipeline emits the
``tool_execution_*`` events; the agent loop adds the agent, turn and message events below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from pi_lsp.agent.tool import ToolResult
from pi_lsp.llm.types import StopReason, to_wire

EventSink = Callable[[dict[str, Any]], None]
"""Receives one event dict. Synchronous, must not block and should not raise (the pipeline logs and
ignores a sink's exception)."""


def tool_result_payload(result: ToolResult) -> dict[str, Any]:
    """A :class:`ToolResult` as JSON: ``{content: [...], details?}`` (``details`` left out when None)."""
    payload: dict[str, Any] = {"content": [to_wire(block) for block in result.content]}
    if result.details is not None:
        payload["details"] = _json(result.details)
    return payload


def tool_execution_start(tool_call_id: str | None, tool_name: str, args: Any) -> dict[str, Any]:
    """``tool_execution_start {toolCallId, toolName, args}``; ``args`` are the raw call arguments."""
    return {"type": "tool_execution_start", "toolCallId": tool_call_id, "toolName": tool_name, "args": args}


def tool_execution_update(
    tool_call_id: str | None, tool_name: str, args: Any, partial_result: ToolResult
) -> dict[str, Any]:
    """``tool_execution_update {toolCallId, toolName, args, partialResult}``."""
    return {
        "type": "tool_execution_update",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "args": args,
        "partialResult": tool_result_payload(partial_result),
    }


def tool_execution_end(
    tool_call_id: str | None, tool_name: str, result: ToolResult, is_error: bool
) -> dict[str, Any]:
    """``tool_execution_end {toolCallId, toolName, result: {content, details?}, isError}``."""
    return {
        "type": "tool_execution_end",
        "toolCallId": tool_call_id,
        "toolName": tool_name,
        "result": tool_result_payload(result),
        "isError": is_error,
    }


def message_start(message: BaseModel) -> dict[str, Any]:
    """``message_start {message}`` (a user, assistant or toolResult message)."""
    return {"type": "message_start", "message": to_wire(message)}


def message_update(delta: dict[str, Any]) -> dict[str, Any]:
    """``message_update {delta}``: only what is new in the streaming assistant message, never the
    whole message (design.md 6). ``delta`` is ``{type: "text", text}``, ``{type: "thinking",
    thinking}`` or ``{type: "toolCall", index, id?, name?, arguments?}`` (``arguments``: a fragment
    of the call's JSON text; ``index``: 0-based position among the message's tool calls)."""
    return {"type": "message_update", "delta": delta}


def message_end(message: BaseModel) -> dict[str, Any]:
    """``message_end {message}``."""
    return {"type": "message_end", "message": to_wire(message)}


def agent_start() -> dict[str, Any]:
    """``agent_start {}``: a run began."""
    return {"type": "agent_start"}


def agent_end(stop_reason: StopReason | None, error_message: str | None = None) -> dict[str, Any]:
    """``agent_end {stopReason, errorMessage?}``: the run ended."""
    event: dict[str, Any] = {"type": "agent_end", "stopReason": stop_reason}
    if error_message is not None:
        event["errorMessage"] = error_message
    return event


def turn_start() -> dict[str, Any]:
    """``turn_start {}``: one model call plus its tool batch begins."""
    return {"type": "turn_start"}


def turn_end(message: BaseModel, tool_results: list[BaseModel]) -> dict[str, Any]:
    """``turn_end {message: assistant, toolResults: [...]}`` (results in source order)."""
    return {
        "type": "turn_end",
        "message": to_wire(message),
        "toolResults": [to_wire(result) for result in tool_results],
    }


def compaction_start(reason: str, tokens_before: int, context_window: int) -> dict[str, Any]:
    """``compaction_start {reason, tokensBefore, contextWindow}``: the history is being compacted
    before the next request (``reason``: ``threshold`` or ``overflow``); a summary request may
    follow, so this can take a while. pi-lsp's event (Pi's is ``auto_compaction_start``)."""
    return {"type": "compaction_start", "reason": reason, "tokensBefore": tokens_before, "contextWindow": context_window}


def compaction(
    reason: str,
    tokens_before: int,
    tokens_after: int,
    *,
    summarized: bool,
    trimmed_tool_results: int,
    kept_messages: int,
    summary: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """``compaction {reason, tokensBefore, tokensAfter, summarized, trimmedToolResults,
    keptMessages, summary?, timestamp?}``: the history was compacted (estimated tokens).
    ``keptMessages``: how many messages follow the summary verbatim (the whole transcript when
    nothing was summarised); ``timestamp``: the summary message's (epoch ms)."""
    event: dict[str, Any] = {
        "type": "compaction", "reason": reason, "tokensBefore": tokens_before, "tokensAfter": tokens_after,
        "summarized": summarized, "trimmedToolResults": trimmed_tool_results, "keptMessages": kept_messages,
    }
    if summary is not None:
        event["summary"] = summary
    if timestamp is not None:
        event["timestamp"] = timestamp
    return event


def _json(value: Any) -> Any:
    """``details`` may hold pydantic models or dataclass-free plain data; make it JSON-shaped."""
    if isinstance(value, BaseModel):
        return to_wire(value)
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value
