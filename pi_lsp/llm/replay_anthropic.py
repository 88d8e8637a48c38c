"""A recorded turn as Anthropic Messages API stream events (``pi-lsp replay --format anthropic``).

:func:`turn_events` gives the events of one streamed reply the way the API sends them
(Anthropic's streaming documentation): ``message_start`` (usage with the input and cache figures),
then per block ``content_block_start``, its deltas and ``content_block_stop`` (a ``thinking`` block
with ``thinking_delta`` pieces and one ``signature_delta``; a ``text`` block with ``text_delta``
pieces; each tool call a ``tool_use`` block whose input JSON text arrives as ``input_json_delta``
pieces), a ``ping`` after the first block, ``message_delta`` with the stop reason and output
usage, and ``message_stop``. :func:`sse_bytes` frames one event (``event:`` and ``data:`` lines).

:func:`as_chat_request` views a Messages API request body as the chat completions shape that
:meth:`~pi_lsp.llm.recording.RecordedTurn.divergences` checks.
"""

from __future__ import annotations

import json
from typing import Any

from pi_lsp.llm.recording import RecordedTurn

_STOP = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def turn_events(
    turn: RecordedTurn, *, model: str, number: int, text_chunk_chars: int = 24, arg_chunk_chars: int = 16
) -> list[dict[str, Any]]:
    """The stream events of ``turn`` (see the module docstring), in order."""
    reply, usage = turn.reply, turn.reply.usage
    out: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": f"msg_replay_{number}", "type": "message", "role": "assistant", "content": [], "model": model,
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": usage.input, "cache_creation_input_tokens": usage.cache_write,
                  "cache_read_input_tokens": usage.cache_read, "output_tokens": 1},
    }}]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        out.append({"type": "content_block_start", "index": index, "content_block": start})
        out.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        out.append({"type": "content_block_stop", "index": index})
        if index == 0:
            out.append({"type": "ping"})
        index += 1

    if reply.thinking:
        block({"type": "thinking", "thinking": ""},
              [{"type": "thinking_delta", "thinking": p} for p in _pieces(reply.thinking, text_chunk_chars)]
              + [{"type": "signature_delta", "signature": f"replay-signature-{number}"}])
    if reply.text:
        block({"type": "text", "text": ""},
              [{"type": "text_delta", "text": p} for p in _pieces(reply.text, text_chunk_chars)])
    for call in reply.tool_calls:
        block({"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
              [{"type": "input_json_delta", "partial_json": p} for p in _pieces(call.argument_text(), arg_chunk_chars)])
    out.append({"type": "message_delta", "delta": {"stop_reason": _STOP[reply.stop_reason or "stop"], "stop_sequence": None},
                "usage": {"output_tokens": usage.output}})
    out.append({"type": "message_stop"})
    return out


def sse_bytes(event: dict[str, Any]) -> bytes:
    """One event framed as the API frames it: ``event: {type}``, ``data: {json}``, blank line."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode("utf-8")


def _text(blocks: Any) -> str:
    if isinstance(blocks, str):
        return blocks
    if isinstance(blocks, list):
        return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    return ""


def as_chat_request(body: Any) -> Any:
    """``body`` with ``tool_result`` blocks as ``role: "tool"`` messages, user text as ``user``
    messages and tools as ``{function: {name}}`` (what ``RecordedTurn.divergences`` reads)."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return body
    messages: list[dict[str, Any]] = []
    for message in body["messages"]:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") != "user":
            messages.append({"role": str(message.get("role")), "content": _text(content)})
            continue
        blocks = content if isinstance(content, list) else [{"type": "text", "text": _text(content)}]
        for item in blocks:
            if isinstance(item, dict) and item.get("type") == "tool_result":
                messages.append({"role": "tool", "tool_call_id": item.get("tool_use_id"),
                                 "content": _text(item.get("content"))})
        texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if texts:
            messages.append({"role": "user", "content": _text(texts)})
    tools = [{"function": {"name": t.get("name")}} for t in body.get("tools") or [] if isinstance(t, dict)]
    return {**body, "messages": messages, "tools": tools}
