"""pi/* params parsing: plain dicts in, typed values out, InvalidParams with a clear message."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from pi_lsp.daemon import rpc
from pi_lsp.llm.types import TextContent, ToolResultMessage


def test_execute_tool_call_parses_a_call_and_defaults_arguments() -> None:
    call = rpc.parse_execute_tool_call({"toolCall": {"id": "c1", "name": "read", "arguments": {"path": "a"}}})
    assert (call.id, call.name, call.arguments) == ("c1", "read", {"path": "a"})
    bare = rpc.parse_execute_tool_call({"toolCall": {"id": "c2", "name": "ls", "arguments": None}})
    assert bare.arguments == {}
    odd = rpc.parse_execute_tool_call({"toolCall": {"id": "c3", "name": "read", "arguments": "x"}})
    assert odd.arguments == "x"  # the pipeline answers it with a validation error result


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        (None, "toolCall is required"),
        ([1, 2], "params must be an object, got array"),
        ({"toolCall": "read"}, "toolCall must be an object, got string"),
        ({"toolCall": {"name": "read"}}, "toolCall.id must be a non-empty string"),
        ({"toolCall": {"id": 5, "name": "read"}}, "toolCall.id must be a non-empty string"),
        ({"toolCall": {"id": "c", "name": None}}, "toolCall.name must be a string"),
    ],
)
def test_execute_tool_call_rejects_bad_shapes(params: object, fragment: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        rpc.parse_execute_tool_call(params)
    assert caught.value.code == -32602
    assert caught.value.message.startswith("pi/executeToolCall: ")
    assert fragment in caught.value.message


def test_execute_tool_calls_keeps_source_order_and_checks_stop_reason() -> None:
    calls, stop = rpc.parse_execute_tool_calls(
        {"toolCalls": [{"id": "b", "name": "ls"}, {"id": "a", "name": "read"}], "stopReason": "length"}
    )
    assert [c.id for c in calls] == ["b", "a"] and stop == "length"
    with pytest.raises(JsonRpcInvalidParams, match="toolCalls\\[1\\].id"):
        rpc.parse_execute_tool_calls({"toolCalls": [{"id": "a", "name": "ls"}, {"name": "ls"}]})
    with pytest.raises(JsonRpcInvalidParams, match="stopReason must be one of"):
        rpc.parse_execute_tool_calls({"toolCalls": [], "stopReason": "tired"})
    with pytest.raises(JsonRpcInvalidParams, match="toolCalls must be an array"):
        rpc.parse_execute_tool_calls({"toolCalls": {"id": "a"}})


def test_set_active_tools_and_document_state_shapes() -> None:
    assert rpc.parse_set_active_tools({"names": ["read", "grep"]}) == ["read", "grep"]
    with pytest.raises(JsonRpcInvalidParams, match="names must be an array"):
        rpc.parse_set_active_tools({"names": "read"})
    assert rpc.parse_document_state({"uri": "file:///a", "version": 3, "dirty": True}) == ("file:///a", 3, True)
    with pytest.raises(JsonRpcInvalidParams, match="dirty must be a boolean"):
        rpc.parse_document_state({"uri": "file:///a", "version": 3, "dirty": "yes"})
    with pytest.raises(JsonRpcInvalidParams, match="version must be an integer"):
        rpc.parse_document_state({"uri": "file:///a", "version": True, "dirty": False})


def test_wire_form_of_a_result_is_camel_case() -> None:
    message = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="hi")], is_error=False)
    wire = rpc.wire(message)
    assert set(wire) == {"role", "toolCallId", "toolName", "content", "isError", "timestamp"}
    assert isinstance(wire["timestamp"], int)
