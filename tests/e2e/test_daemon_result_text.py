"""A ``pi/executeToolCall`` result goes out as JSON text pydantic wrote (issue 21): the client gets
the values ``to_wire`` gives, non-ASCII text intact; text UTF-8 cannot carry goes the old way."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.daemon.pygls_protocol import JsonResult, JsonText
from pi_lsp.daemon.rpc import wire, wire_text
from pi_lsp.demo.fake_editor import FakeEditor
from pi_lsp.llm.types import TextContent, ToolResultMessage


async def test_a_result_with_non_ascii_and_one_with_a_lone_surrogate_both_arrive(make_editor, tmp_path: Path) -> None:
    (tmp_path / "ü.txt").write_text("naïve ☃ \u2028 \"q\"\n", encoding="utf-8")
    editor: FakeEditor = await make_editor()
    read = await editor.call("read", {"path": "ü.txt"})
    assert read["isError"] is False and editor.result_text(read) == "naïve ☃ \u2028 \"q\"\n"
    assert read["toolCallId"] == "call-1" and read["toolName"] == "read" and isinstance(read["timestamp"], int)
    editor.open("ü.txt")  # the buffer's copy, with the same text
    assert editor.result_text(await editor.call("read", {"path": "ü.txt"})) == "naïve ☃ \u2028 \"q\"\n"
    # a path with a lone surrogate (JSON allows the escape): named as Node prints it, U+FFFD
    missing = await editor.call("read", {"path": "a\ud800b.txt"})
    assert missing["isError"] is True and "a\ufffdb.txt'" in editor.result_text(missing)


def test_text_utf8_cannot_carry_is_sent_as_the_dict_of_to_wire() -> None:
    def message(text: str) -> ToolResultMessage:
        return ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent(text=text)], timestamp=1)

    plain = wire_text(message("é"))
    assert type(plain) is JsonText
    assert plain.data == '{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"é"}],"isError":false,"timestamp":1}'.encode()
    lone = wire_text(message("a\ud800"))
    assert type(lone) is JsonResult and lone == wire(message("a\ud800"))
