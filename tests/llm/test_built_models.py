"""The wire models built without validation (``tool_result_message``, ``tool_call``,
``text_content``, issue 21) are the instances validation would build: equal, the same fields
set, the same JSON, copied and re-validated where validation would copy or check.

If a pydantic release changes what an instance holds, these fail before anything else does."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pi_lsp.llm.types import (
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    text_content,
    to_wire,
    to_wire_json,
    tool_call,
    tool_result_message,
)


def _same(built: object, validated: object, fields_set: set[str]) -> None:
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == fields_set  # type: ignore[attr-defined]
    assert built.__pydantic_extra__ == validated.__pydantic_extra__  # type: ignore[attr-defined]
    assert to_wire(built) == to_wire(validated)  # type: ignore[arg-type]
    assert to_wire_json(built) == to_wire_json(validated)  # type: ignore[arg-type]


@pytest.mark.parametrize("details", [None, {}, {"truncation": {"truncated": True, "lines": [1, 2]}}, "x"])
@pytest.mark.parametrize("is_error", [False, True])
def test_tool_result_message_is_the_validated_one(details: object, is_error: bool) -> None:
    content = [TextContent(text="é\n"), ImageContent(data="aGk=", mime_type="image/png")]
    built = tool_result_message("call-1", "read", content, details, is_error)
    fields = dict(tool_call_id="call-1", tool_name="read", content=content, details=details, is_error=is_error)
    validated = ToolResultMessage(**fields, timestamp=built.timestamp)
    _same(built, validated, ToolResultMessage(**fields).model_fields_set)
    assert built.content is not content  # a copy, as validation makes
    assert built.model_copy(update={"is_error": not is_error}).is_error is (not is_error)


def test_tool_result_message_validates_what_is_not_of_the_field_types() -> None:
    from_dicts = tool_result_message("c", "read", [{"type": "text", "text": "hi"}], None, False)
    assert from_dicts.content == [TextContent(text="hi")]
    with pytest.raises(ValidationError):
        tool_result_message("c", "read", [{"type": "audio"}], None, False)
    with pytest.raises(ValidationError):
        tool_result_message("c", "read", "not a list", None, False)  # type: ignore[arg-type]


def test_tool_call_is_the_validated_one() -> None:
    arguments = {"path": "a.py", "offset": 2}
    built = tool_call("id-1", "read", arguments)
    validated = ToolCall(id="id-1", name="read", arguments=arguments)
    _same(built, validated, validated.model_fields_set)
    assert built.arguments is arguments and built.arguments_error is None
    with pytest.raises(ValidationError):
        tool_call(None, "read", {})  # type: ignore[arg-type]


def test_text_content_is_the_validated_one() -> None:
    validated = TextContent(text="a\x00b\u00e9\U0001f600")
    _same(text_content("a\x00b\u00e9\U0001f600"), validated, validated.model_fields_set)
    assert text_content("\ud800") == TextContent(text="\ud800")  # a lone surrogate stays, as validated
    with pytest.raises(ValidationError):
        text_content(3)  # type: ignore[arg-type]
