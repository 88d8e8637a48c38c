"""The body of an Anthropic Messages API request (``POST /v1/messages``), built from an
:class:`~pi_lsp.llm.provider.LlmContext`.

Mapping (pi-ai ``anthropic`` ``convertMessages``; Anthropic's Messages API reference):

- the transcript is repaired first (:func:`~pi_lsp.llm.transcript.repair_transcript`);
- ``system`` is one text block holding the system prompt;
- user text and images become ``text`` / ``image`` blocks (``source: {type: "base64",
  media_type, data}``); blank text blocks are left out (the API rejects them, pi-ai drops them
  too) and a message left with no block is skipped;
- an assistant message keeps its blocks in order: non-blank ``text``; ``thinking`` with its
  ``signature`` and ``redacted_thinking`` with its ``data``, sent back unchanged as the API
  requires for the turns of a tool-use loop; thinking without a signature (a cut stream) or from
  another model is sent as text; tool calls become ``tool_use {id, name, input}`` (``input`` is
  ``{}`` when the arguments were not an object);
- each tool result is a ``tool_result {tool_use_id, content, is_error}`` block; the results of
  one batch and a user message that follows them (a steering message) are merged into one
  ``user`` message, tool results first, since the API wants strictly alternating roles;
- the API rejects ``tool_use``/``tool_result`` blocks in a request that offers no tools, so with no
  tools (every tool deactivated) tool calls and results are sent as text blocks
  (``[Tool call read {...}]``, ``[Tool result read]: ...``);
- tool call ids are made to fit the API's ``^[a-zA-Z0-9_-]{1,64}$`` (other providers' ids may
  not), the same way in ``tool_use`` and ``tool_result``;
- a model without image input gets Pi's placeholders instead of images;
- **prompt caching**: ``cache_control: {type: "ephemeral"}`` breakpoints on the system block, the
  last tool definition and the last block of the last two ``user`` messages, so each request
  reads the prefix the previous one wrote (four breakpoints, the API's maximum);
- ``thinking: {type: "enabled", budget_tokens}`` when ``thinking_budget`` is set, or
  ``{type: "adaptive"}`` for the models that decide their own budget (Opus 4.6+, Sonnet 4.6,
  :func:`adaptive_thinking`; pi-ai does the same), both with ``display: "summarized"`` so the
  thinking text streams on models whose default is to omit it; ``temperature`` is then not sent
  (the API allows none with thinking).

Lone UTF-16 surrogates (broken input) are replaced by U+FFFD so the body is valid UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pi_lsp.llm.provider import ANTHROPIC_DEFAULT_MAX_TOKENS, LlmContext, ProviderSettings, ToolSpec
from pi_lsp.llm.transcript import repair_transcript
from pi_lsp.llm.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)

API = "anthropic-messages"
"""The ``api`` field of the messages this provider writes."""

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
EPHEMERAL = {"type": "ephemeral"}
_SURROGATE = re.compile("[\ud800-\udfff]")
_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


class RequestError(ValueError):
    """Settings that cannot make a valid request (the message is model- and user-facing)."""


def tool_use_id(call_id: str | None) -> str:
    """``call_id`` made to fit ``^[a-zA-Z0-9_-]{1,64}$``: other characters become ``_``, the
    result is cut at 64 characters; an empty id becomes ``toolu_none``."""
    cleaned = _BAD_ID_CHARS.sub("_", call_id or "")[:64]
    return cleaned or "toolu_none"


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _blocks(content: str | list[Any], images: bool, placeholder: str) -> list[dict[str, Any]]:
    """Text and image blocks of user or tool-result content (blank text left out)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    out: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text.strip():
                out.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            if images:
                out.append(_image(block))
            elif not (out and out[-1].get("text") == placeholder):
                out.append({"type": "text", "text": placeholder})
    return out


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _assistant(message: AssistantMessage, same_model: bool, tool_blocks: bool = True) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                out.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            signature = block.thinking_signature
            if same_model and block.redacted and signature:
                out.append({"type": "redacted_thinking", "data": signature})
            elif same_model and signature and not block.redacted:
                out.append({"type": "thinking", "thinking": block.thinking, "signature": signature})
            elif block.thinking.strip() and not block.redacted:
                out.append({"type": "text", "text": block.thinking})
        elif isinstance(block, ToolCall):
            arguments = block.arguments if isinstance(block.arguments, dict) else {}
            if tool_blocks:
                out.append({"type": "tool_use", "id": tool_use_id(block.id), "name": block.name, "input": arguments})
            else:
                out.append({"type": "text", "text": f"[Tool call {block.name} {_compact_json(block.arguments)}]"})
    return out


def _tool_result_as_text(result: ToolResultMessage, images: bool) -> list[dict[str, Any]]:
    label = f"[Tool result {result.tool_name}{' (error)' if result.is_error else ''}]:"
    content = _blocks(result.content, images, TOOL_IMAGE_PLACEHOLDER)
    if content and content[0]["type"] == "text":
        return [{"type": "text", "text": f"{label} {content[0]['text']}"}, *content[1:]]
    return [{"type": "text", "text": label}, *content]


def _tool_result(result: ToolResultMessage, images: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id(result.tool_call_id)}
    content = _blocks(result.content, images, TOOL_IMAGE_PLACEHOLDER)
    if content:
        block["content"] = content
    if result.is_error:
        block["is_error"] = True
    return block


def convert_messages(
    messages: list[Message],
    *,
    images: bool = True,
    model_key: tuple[str, str, str] | None = None,
    tool_blocks: bool = True,
) -> list[dict[str, Any]]:
    """The ``messages`` array (see the module docstring), without cache breakpoints.

    ``model_key`` is ``(provider, api, model)`` of the model being asked; thinking of assistant
    messages from another model is sent as text. ``None`` treats every message as this model's.
    ``tool_blocks`` false sends tool calls and results as text (a request without tools).
    """
    out: list[dict[str, Any]] = []
    for message in repair_transcript(messages):
        if isinstance(message, AssistantMessage):
            key = (message.provider, message.api, message.model)
            role, blocks = "assistant", _assistant(message, model_key is None or key == model_key, tool_blocks)
        elif isinstance(message, ToolResultMessage):
            role = "user"
            blocks = [_tool_result(message, images)] if tool_blocks else _tool_result_as_text(message, images)
        else:
            role, blocks = "user", _blocks(message.content, images, USER_IMAGE_PLACEHOLDER)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def convert_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` array: ``{name, description, input_schema}`` per tool spec."""
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def add_cache_breakpoints(payload: dict[str, Any]) -> None:
    """Put ``cache_control`` on the system block, the last tool and the last block of the last two
    user messages of ``payload`` (in place; see the module docstring)."""
    system = payload.get("system")
    if system:
        system[-1]["cache_control"] = EPHEMERAL
    tools = payload.get("tools")
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    marked = 0
    for message in reversed(payload["messages"]):
        if marked == 2:
            break
        if message["role"] == "user" and message["content"]:
            message["content"][-1]["cache_control"] = EPHEMERAL
            marked += 1


_ADAPTIVE = ("opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6")


def adaptive_thinking(model: str) -> bool:
    """True for models that take ``thinking: {type: "adaptive"}`` instead of a token budget."""
    return any(key in model for key in _ADAPTIVE)


def max_tokens(settings: ProviderSettings) -> int:
    """``max_tokens`` to send: ``maxTokens``, else :data:`ANTHROPIC_DEFAULT_MAX_TOKENS` plus the
    thinking budget (the API counts thinking within ``max_tokens``). Raises
    :class:`RequestError` when a set ``maxTokens`` leaves no room beyond the thinking budget."""
    budget = 0 if adaptive_thinking(settings.model) else settings.thinking_budget or 0
    if settings.max_tokens is None:
        return ANTHROPIC_DEFAULT_MAX_TOKENS + budget
    if budget and settings.max_tokens <= budget:
        raise RequestError(
            f"maxTokens ({settings.max_tokens}) must be larger than the thinking budget ({budget}): "
            "Anthropic counts thinking tokens within max_tokens"
        )
    return settings.max_tokens


def build_request_body(
    context: LlmContext, settings: ProviderSettings, *, provider_name: str = "anthropic"
) -> bytes:
    """The UTF-8 JSON body of a streaming Messages API request (see the module docstring).

    ``provider_name`` is what this provider writes into messages' ``provider`` field (it decides,
    with the model id, which assistant messages count as this model's). Raises
    :class:`RequestError` for settings the API would reject (:func:`max_tokens`).
    """
    payload: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": max_tokens(settings),
        "stream": True,
    }
    if context.system_prompt:
        payload["system"] = [{"type": "text", "text": context.system_prompt}]
    payload["messages"] = convert_messages(
        context.messages, images=settings.supports_images, model_key=(provider_name, API, settings.model),
        tool_blocks=bool(context.tools),
    )
    if context.tools:
        payload["tools"] = convert_tools(context.tools)
    if settings.thinking_budget and adaptive_thinking(settings.model):
        payload["thinking"] = {"type": "adaptive", "display": "summarized"}
    elif settings.thinking_budget:
        payload["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget, "display": "summarized"}
    elif settings.temperature is not None:
        payload["temperature"] = settings.temperature
    add_cache_breakpoints(payload)
    text = json.dumps(payload, ensure_ascii=False)
    return _SURROGATE.sub("\ufffd", text).encode("utf-8")
