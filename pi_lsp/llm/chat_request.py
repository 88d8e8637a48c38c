"""The body of an OpenAI chat completions request, built from an :class:`LlmContext`.

Mapping (pi-ai ``openai-completions`` ``convertMessages``/``convertTools``, pi-behaviour.md 4.10):

- the system prompt is a ``system`` message first;
- the transcript is repaired first (:func:`~pi_lsp.llm.transcript.repair_transcript`);
- user text is a string; user content lists become ``text``/``image_url`` parts (images as
  ``data:`` URLs);
- assistant text blocks (non-blank) are joined into one ``content`` string (``null`` when there is
  none); thinking goes back under the delta field it arrived in (``reasoning_content`` ...) when
  known, or as text when another model wrote it; tool calls become ``tool_calls`` with ``arguments`` as JSON text; an assistant message with
  neither content nor tool calls is skipped;
- each tool result is a ``role: "tool"`` message with its text blocks joined by LF (``(see attached
  image)`` when it holds only images). OpenAI chat cannot carry images in a tool message, so the
  images of a run of consecutive tool results follow in one ``user`` message that starts with
  ``Attached image(s) from tool result:``;
- a model without image input gets Pi's placeholders instead of images;
- lone UTF-16 surrogates (from broken input) are replaced by U+FFFD so the body is valid UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pi_lsp.llm.provider import LlmContext, ProviderSettings, ToolSpec
from pi_lsp.llm.transcript import repair_transcript
from pi_lsp.llm.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

TOOL_IMAGES_INTRO = "Attached image(s) from tool result:"
ONLY_IMAGES_TEXT = "(see attached image)"
USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _compact_json(value: Any) -> str:
    """JSON text as JavaScript's ``JSON.stringify`` writes it (no spaces, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def _without_images(content: list[Any], placeholder: str) -> list[Any]:
    """Images replaced by ``placeholder`` text, consecutive placeholders collapsed (Pi)."""
    out: list[Any] = []
    for block in content:
        if isinstance(block, ImageContent):
            if not (out and isinstance(out[-1], TextContent) and out[-1].text == placeholder):
                out.append(TextContent(text=placeholder))
        else:
            out.append(block)
    return out


def _user(message: UserMessage, images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": message.content}
    content = message.content if images else _without_images(message.content, USER_IMAGE_PLACEHOLDER)
    parts = [
        {"type": "text", "text": b.text} if isinstance(b, TextContent) else _image_part(b)
        for b in content
    ]
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: AssistantMessage, same_model: bool) -> dict[str, Any] | None:
    blocks = message.content
    if not same_model:  # another model's reasoning is passed on as plain text (Pi); encrypted is dropped
        blocks = [
            TextContent(text=b.thinking) if isinstance(b, ThinkingContent) else b
            for b in blocks
            if not (isinstance(b, ThinkingContent) and (b.redacted or not b.thinking.strip()))
        ]
    text = "".join(b.text for b in blocks if isinstance(b, TextContent) and b.text.strip())
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    thinking = [b for b in blocks if isinstance(b, ThinkingContent) and b.thinking.strip()]
    if thinking and thinking[0].thinking_signature:
        out[thinking[0].thinking_signature] = "\n".join(b.thinking for b in thinking)
    calls = [b for b in blocks if isinstance(b, ToolCall)]
    if calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": _compact_json(c.arguments)},
            }
            for c in calls
        ]
    if not text and not calls:
        return None
    return out


def _tool_results(run: list[ToolResultMessage], images: bool) -> list[dict[str, Any]]:
    """A run of consecutive tool results: one ``tool`` message each, then their images."""
    out: list[dict[str, Any]] = []
    image_parts: list[dict[str, Any]] = []
    for result in run:
        content = (
            result.content if images else _without_images(result.content, TOOL_IMAGE_PLACEHOLDER)
        )
        text = "\n".join(b.text for b in content if isinstance(b, TextContent))
        out.append({"role": "tool", "content": text or ONLY_IMAGES_TEXT, "tool_call_id": result.tool_call_id})
        image_parts.extend(_image_part(b) for b in content if isinstance(b, ImageContent))
    if image_parts:
        out.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *image_parts]})
    return out


def convert_messages(
    system_prompt: str,
    messages: list[Message],
    *,
    images: bool = True,
    model_key: tuple[str, str, str] | None = None,
) -> list[dict[str, Any]]:
    """The ``messages`` array of the request (see the module docstring for the rules).

    ``model_key`` is ``(provider, api, model)`` of the model being asked; assistant messages from
    another model have their thinking sent as text. ``None`` treats every message as this model's.
    """
    out: list[dict[str, Any]] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    repaired = repair_transcript(messages)
    i = 0
    while i < len(repaired):
        message = repaired[i]
        if isinstance(message, ToolResultMessage):
            j = i
            while j < len(repaired) and isinstance(repaired[j], ToolResultMessage):
                j += 1
            out.extend(_tool_results(repaired[i:j], images))  # type: ignore[arg-type]
            i = j
            continue
        if isinstance(message, UserMessage):
            item = _user(message, images)
        else:
            key = (message.provider, message.api, message.model)
            item = _assistant(message, model_key is None or key == model_key)
        if item is not None:
            out.append(item)
        i += 1
    return out


def convert_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` array: one ``function`` entry per tool spec."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def build_request_body(
    context: LlmContext, settings: ProviderSettings, *, provider_name: str = "openai-compatible"
) -> bytes:
    """The UTF-8 JSON body: streaming with usage, tools when any, optional limits.

    ``provider_name`` is what this provider writes into messages' ``provider`` field (it decides,
    with the model id, which assistant messages count as this model's).
    """
    payload: dict[str, Any] = {
        "model": settings.model,
        "messages": convert_messages(
            context.system_prompt, context.messages, images=settings.supports_images,
            model_key=(provider_name, "openai-completions", settings.model),
        ),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if context.tools:
        payload["tools"] = convert_tools(context.tools)
    elif any(isinstance(m, ToolResultMessage) for m in context.messages):
        payload["tools"] = []
    if settings.max_tokens is not None:
        payload["max_tokens"] = settings.max_tokens
    if settings.temperature is not None:
        payload["temperature"] = settings.temperature
    text = json.dumps(payload, ensure_ascii=False)
    return _SURROGATE.sub("\ufffd", text).encode("utf-8")
