"""Differential tests: request shaping and argument recovery against pi-ai 0.73.1 itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_partial_json import CASES

from pi_lsp.llm.chat_request import convert_messages
from pi_lsp.llm.partial_json import parse_streaming_json
from pi_lsp.llm.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    to_wire,
)
from tests.peer import run_peer_script

pytestmark = pytest.mark.peer

PNG = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
OURS = dict(provider="openai-compatible", api="openai-completions", model="m")


def _call(call_id: str, **args: object) -> ToolCall:
    return ToolCall(id=call_id, name="read", arguments=args)


def _result(call_id: str, *content: object) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=list(content))


TRANSCRIPTS = {
    "plain": [UserMessage(content="hi"), AssistantMessage(content=[TextContent(text="hello")], **OURS)],
    "tools and images": [
        UserMessage(content=[TextContent(text="see"), PNG]),
        AssistantMessage(content=[TextContent(text="  "), _call("a", path="x.png"), _call("b", path="y")], stop_reason="toolUse", **OURS),
        _result("a", PNG),
        _result("b", TextContent(text="one"), TextContent(text="two")),
        AssistantMessage(content=[TextContent(text="done")], **OURS),
    ],
    "orphans and failed turns": [
        UserMessage(content="go"),
        AssistantMessage(content=[_call("a", path="1"), _call("b", path="2")], stop_reason="toolUse", **OURS),
        _result("b", TextContent(text="ok")),
        UserMessage(content="stop that"),
        AssistantMessage(content=[TextContent(text="partial"), _call("c")], stop_reason="aborted", **OURS),
        AssistantMessage(content=[], stop_reason="error", error_message="boom", **OURS),
        UserMessage(content="again"),
        AssistantMessage(content=[_call("d", path="3")], stop_reason="toolUse", **OURS),
    ],
    "thinking, same and other model": [
        UserMessage(content="q"),
        AssistantMessage(content=[ThinkingContent(thinking="hmm", thinking_signature="reasoning_content"),
                                  TextContent(text="a1")], **OURS),
        UserMessage(content="q2"),
        AssistantMessage(content=[ThinkingContent(thinking="other mind"), TextContent(text="a2")],
                         provider="elsewhere", api="openai-completions", model="x"),
        UserMessage(content="q3"),
        AssistantMessage(content=[ThinkingContent(thinking="   "), TextContent(text="")], **OURS),
    ],
    "image placeholder collapse": [
        UserMessage(content=[PNG, PNG, TextContent(text="t"), PNG]),
        AssistantMessage(content=[_call("a")], stop_reason="toolUse", **OURS),
        _result("a", PNG, PNG),
    ],
}


def test_argument_recovery_matches_pi(peer: Path) -> None:
    texts = [text for text, _ in CASES] + ['{"a": 1.', '{"a":1,,"b":2}', '{"x": "caf\\u00e9", "y": [true, fal']
    answers = run_peer_script(peer, "llm/peer_llm.mjs", [{"op": "parse", "text": t} for t in texts])
    differ = {}
    for text, answer in zip(texts, answers):
        ours = parse_streaming_json(text)
        if ours != answer["value"]:
            differ[text] = (ours, answer["value"])
    # malformed numbers and doubled commas are recovered a little more generously than Pi does
    assert differ == {'{"a": 1.': ({"a": 1}, {}), '{"a":1,,"b":2}': ({"a": 1, "b": 2}, {"a": 1})}


@pytest.mark.parametrize("images", [True, False])
def test_request_messages_match_pi(peer: Path, images: bool) -> None:
    requests = [
        {"op": "convert", "systemPrompt": "sys", "messages": [to_wire(m) for m in transcript], "images": images}
        for transcript in TRANSCRIPTS.values()
    ]
    answers = run_peer_script(peer, "llm/peer_llm.mjs", requests)
    for name, transcript, answer in zip(TRANSCRIPTS, TRANSCRIPTS.values(), answers):
        ours = convert_messages("sys", transcript, images=images, model_key=("openai-compatible", "openai-completions", "m"))
        assert ours == answer["value"], name
