"""Event constructors: Pi's names, ``type`` first, camelCase, JSON-shaped payloads (pi-behaviour.md 4.9)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from pi_lsp.agent import events
from pi_lsp.agent.tool import ToolResult
from pi_lsp.llm.types import AssistantMessage, ImageContent, TextContent, ToolResultMessage, UserMessage


class Detail(BaseModel):
    first_changed_line: int


def test_tool_events_are_json_and_typed_first() -> None:
    result = ToolResult(
        content=[TextContent(text="t"), ImageContent(data="QQ==", mime_type="image/png")],
        details={"diff": Detail(first_changed_line=3), "list": (1, 2)},
    )
    end = events.tool_execution_end("c1", "read", result, False)
    assert list(end) == ["type", "toolCallId", "toolName", "result", "isError"]
    assert end["result"] == {
        "content": [{"type": "text", "text": "t"}, {"type": "image", "data": "QQ==", "mimeType": "image/png"}],
        "details": {"diff": {"first_changed_line": 3}, "list": [1, 2]},
    }
    json.dumps(end)  # plain JSON all the way down
    update = events.tool_execution_update("c1", "bash", {"command": "ls"}, ToolResult.text("partial"))
    assert update["partialResult"] == {"content": [{"type": "text", "text": "partial"}]}
    assert events.tool_execution_start("c1", "bash", {"command": "ls"}) == {
        "type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {"command": "ls"}
    }


def test_loop_events_carry_wire_messages() -> None:
    user = UserMessage(content="hi", timestamp=5)
    assert events.message_start(user) == {"type": "message_start", "message": {"role": "user", "content": "hi", "timestamp": 5}}
    assert events.message_end(user)["type"] == "message_end"
    assistant = AssistantMessage(stop_reason="toolUse", timestamp=6)
    result = ToolResultMessage(tool_call_id="c", tool_name="ls", content=[TextContent(text="x")], timestamp=7)
    turn = events.turn_end(assistant, [result])
    assert turn["message"]["stopReason"] == "toolUse" and turn["toolResults"][0]["toolCallId"] == "c"
    assert events.agent_start() == {"type": "agent_start"} and events.turn_start() == {"type": "turn_start"}
    assert events.agent_end("stop") == {"type": "agent_end", "stopReason": "stop"}
    assert events.agent_end("error", "boom") == {"type": "agent_end", "stopReason": "error", "errorMessage": "boom"}
