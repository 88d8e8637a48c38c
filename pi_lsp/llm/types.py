"""Conversation types shared by the agent core, the tools and the providers.

The shapes follow Pi (pi-behaviour.md section 4.1). Python attributes are snake_case; on the wire
(JSON-RPC results, session journals, `pi-lsp exec` output) they are camelCase through aliases, so
always serialise with :func:`to_wire`, which is
``model_dump(mode="json", by_alias=True, exclude_none=True)``.

Timestamps are integer epoch **milliseconds** (:func:`now_ms`).
"""

from __future__ import annotations

import functools
import time
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
"""Why an assistant message ended (Pi's ``StopReason`` without the proxy-only ``pending``)."""


def now_ms() -> int:
    """Current time as integer epoch milliseconds (the unit of every ``timestamp``)."""
    return time.time_ns() // 1_000_000


_Model = TypeVar("_Model", bound=BaseModel)


class WireModel(BaseModel):
    """Base for every wire type: camelCase aliases, population by field name or alias.

    ``defer_build``: a model's validator is built on its first use, not at import, so a process
    that touches only a few types (``pi-lsp exec``) does not pay for all of them at start-up.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True)


class TextContent(WireModel):
    """A text block: ``{type: "text", text}``."""

    type: Literal["text"] = "text"
    text: str


class ImageContent(WireModel):
    """An image block: ``{type: "image", data: <base64>, mimeType}``."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str


class ThinkingContent(WireModel):
    """Reasoning text streamed by the model (``reasoning_content`` in OpenAI-compatible APIs,
    ``thinking`` blocks in Anthropic's Messages API)."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    """For OpenAI-compatible servers: the delta field the reasoning came in (``reasoning_content``,
    ``reasoning``); the provider sends the reasoning back under that field (Pi does the same).
    For Anthropic: the block's ``signature`` (the ``data`` of a redacted block), which must be
    sent back unchanged with the block."""
    redacted: bool | None = None
    """Anthropic ``redacted_thinking``: the reasoning is encrypted in ``thinking_signature`` and
    ``thinking`` is a placeholder (Pi's field of the same name)."""


class ToolCall(WireModel):
    """A tool call inside an assistant message: ``{type: "toolCall", id, name, arguments}``.

    ``arguments`` is whatever the model sent; the pipeline validates it (it may not even be an
    object when it arrives from an external client). ``arguments_error`` (Pi 1.x's
    ``argumentsError``) is set when a streamed call finished with arguments that are not a JSON
    object (:func:`~pi_lsp.llm.partial_json.parse_tool_call_arguments`); such a call never runs.
    """

    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: Any = Field(default_factory=dict)
    arguments_error: str | None = None


class Usage(WireModel):
    """Token usage of one assistant message (zero when the provider did not report it)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0


ResultContent = Annotated[Union[TextContent, ImageContent], Field(discriminator="type")]
AssistantContent = Annotated[
    Union[TextContent, ThinkingContent, ToolCall], Field(discriminator="type")
]
UserContent = ResultContent


class UserMessage(WireModel):
    """``{role: "user", content: str | [text|image], timestamp}``."""

    role: Literal["user"] = "user"
    content: Union[str, list[UserContent]]
    timestamp: int = Field(default_factory=now_ms)


class AssistantMessage(WireModel):
    """``{role: "assistant", content, api, provider, model, usage, stopReason, errorMessage?, timestamp}``."""

    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str = "openai-completions"
    provider: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: int = Field(default_factory=now_ms)

    def tool_calls(self) -> list[ToolCall]:
        """The tool-call blocks of this message, in source order."""
        return [block for block in self.content if isinstance(block, ToolCall)]


class ToolResultMessage(WireModel):
    """The receipt of one tool call (design.md section 2, step 7).

    ``{role: "toolResult", toolCallId, toolName, content: [text|image], details?, isError, timestamp}``.
    ``tool_call_id`` is ``None`` only for `pi-lsp exec` input lines that were not a tool call.
    """

    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str | None
    tool_name: str
    content: list[ResultContent]
    details: Any = None
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)


_new_instance = object.__new__
_set_attribute = object.__setattr__
_RESULT_FIELDS_SET = frozenset({"tool_call_id", "tool_name", "content", "details", "is_error"})
_CALL_FIELDS_SET = frozenset({"id", "name", "arguments"})
_TEXT_FIELDS_SET = frozenset({"text"})


def _built(cls: type[_Model], values: dict[str, Any], fields_set: frozenset[str]) -> _Model:
    """An instance of ``cls`` holding ``values`` (every field, by name) as they are: what
    pydantic's ``model_construct`` sets (``__dict__``, the fields set, no extra, no private
    values), without its per-field alias walk, which costs four times a validation (issue 21).
    Only for values the caller knows are of the fields' types; ``tests/llm/test_built_models.py`` pins
    the result equal to a validated instance."""
    instance = _new_instance(cls)
    _set_attribute(instance, "__dict__", values)
    _set_attribute(instance, "__pydantic_fields_set__", set(fields_set))
    _set_attribute(instance, "__pydantic_extra__", None)
    _set_attribute(instance, "__pydantic_private__", None)
    return instance


def tool_result_message(
    tool_call_id: str, tool_name: str, content: list[Any], details: Any, is_error: bool
) -> ToolResultMessage:
    """``ToolResultMessage(tool_call_id=..., tool_name=..., content=..., details=..., is_error=...)``
    (``timestamp`` now), built without validation when the values are already of the fields' types:
    string id and name, a bool, and a list of :class:`TextContent` / :class:`ImageContent`
    instances (copied, as validation copies it). Anything else is validated (and may raise
    pydantic's ``ValidationError``). One is built per tool call (issue 21)."""
    if type(tool_call_id) is str and type(tool_name) is str and type(is_error) is bool and type(content) is list:
        for block in content:
            if type(block) is not TextContent and type(block) is not ImageContent:
                break
        else:
            return _built(ToolResultMessage, {
                "role": "toolResult", "tool_call_id": tool_call_id, "tool_name": tool_name,
                "content": list(content), "details": details, "is_error": is_error, "timestamp": now_ms(),
            }, _RESULT_FIELDS_SET)
    return ToolResultMessage(
        tool_call_id=tool_call_id, tool_name=tool_name, content=content, details=details, is_error=is_error
    )


def text_content(text: str) -> TextContent:
    """``TextContent(text=text)``, built without validation for a ``str`` (else validated); most
    tool results are one text block (issue 21)."""
    if type(text) is str:
        return _built(TextContent, {"type": "text", "text": text}, _TEXT_FIELDS_SET)
    return TextContent(text=text)


def tool_call(call_id: str, name: str, arguments: Any) -> ToolCall:
    """``ToolCall(id=call_id, name=name, arguments=arguments)`` for a string id and name (checked
    by the caller, else validated), built without validation (``arguments`` is any value; the
    pipeline validates it against the tool's schema). One is built per incoming call (issue 21)."""
    if type(call_id) is str and type(name) is str:
        return _built(ToolCall, {
            "type": "toolCall", "id": call_id, "name": name, "arguments": arguments, "arguments_error": None,
        }, _CALL_FIELDS_SET)
    return ToolCall(id=call_id, name=name, arguments=arguments)


Message = Annotated[
    Union[UserMessage, AssistantMessage, ToolResultMessage], Field(discriminator="role")
]


def to_wire(model: BaseModel) -> dict[str, Any]:
    """Serialise a wire model the one way the project does: JSON mode, camelCase, no ``None``."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def to_wire_json(model: BaseModel) -> bytes:
    """:func:`to_wire` written straight to JSON text by pydantic: UTF-8 bytes, compact (no spaces,
    as JavaScript's ``JSON.stringify``), a non-finite number as ``null``. The same values as
    ``json.dumps(to_wire(model))`` in about a third of the time (issue 21).

    Raises ``ValueError`` (``pydantic_core.PydanticSerializationError``) for text UTF-8 cannot
    carry (a lone surrogate from a ``\\ud800`` escape): callers then write :func:`to_wire`'s dict.
    """
    return _serializer(type(model)).to_json(model, by_alias=True, exclude_none=True)


@functools.cache
def _serializer(cls: type[BaseModel]) -> Any:
    """``cls``'s pydantic serializer, once built: a ``defer_build`` model's class attribute is a
    stand-in until then, which looks the real one up on every use."""
    cls.model_rebuild()
    return cls.__pydantic_serializer__
