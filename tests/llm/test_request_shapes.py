"""Request bodies, transcript repair, SSE decoding and error descriptions (pure functions)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.llm.chat_request import build_request_body, convert_messages
from pi_lsp.llm.http_errors import describe_http_error, is_retryable_status, parse_retry_after
from pi_lsp.llm.provider import LlmContext, ProviderSettings
from pi_lsp.llm.sse import SseDecoder, iter_events
from pi_lsp.llm.transcript import NO_RESULT_TEXT, repair_transcript
from pi_lsp.llm.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

PNG = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")


def _assistant(*calls: str, stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(content=[ToolCall(id=c, name="read", arguments={"path": c}) for c in calls], stop_reason=stop)


def _result(call_id: str, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text=text)])


def test_repair_drops_failed_turns_and_answers_orphaned_calls() -> None:
    transcript = [
        UserMessage(content="go"),
        _assistant("a", "b"),
        _result("a"),
        UserMessage(content="interrupt"),
        _assistant("c", stop="aborted"),
        _assistant("d"),
    ]
    repaired = repair_transcript(transcript)
    roles = [(m.role, getattr(m, "tool_call_id", None)) for m in repaired]
    assert roles == [
        ("user", None), ("assistant", None), ("toolResult", "a"), ("toolResult", "b"),
        ("user", None), ("assistant", None), ("toolResult", "d"),
    ]
    synthetic = repaired[3]
    assert synthetic.is_error and synthetic.content == [TextContent(text=NO_RESULT_TEXT)]
    assert len(transcript) == 6  # input untouched


def test_tool_result_images_follow_in_a_user_message() -> None:
    messages = [
        UserMessage(content=[TextContent(text="look"), PNG]),
        _assistant("a", "b"),
        ToolResultMessage(tool_call_id="a", tool_name="read", content=[PNG]),
        ToolResultMessage(tool_call_id="b", tool_name="read", content=[TextContent(text="t1"), TextContent(text="t2")]),
    ]
    out = convert_messages("sys", messages)
    assert out[1] == {"role": "user", "content": [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]}
    assert out[2]["content"] is None
    assert json.loads(out[2]["tool_calls"][0]["function"]["arguments"]) == {"path": "a"}
    assert out[3] == {"role": "tool", "content": "(see attached image)", "tool_call_id": "a"}
    assert out[4] == {"role": "tool", "content": "t1\nt2", "tool_call_id": "b"}
    assert out[5]["role"] == "user" and out[5]["content"][0] == {"type": "text", "text": "Attached image(s) from tool result:"}
    assert len(out) == 6
    text_only = convert_messages("", messages, images=False)
    assert text_only[0]["content"][1] == {"type": "text", "text": "(image omitted: model does not support images)"}
    assert text_only[2]["content"] == "(tool image omitted: model does not support images)"
    assert all(m["role"] != "user" or m is text_only[0] for m in text_only)


def test_body_replaces_lone_surrogates_and_sends_limits() -> None:
    ctx = LlmContext("s", [UserMessage(content="bad \ud800 char")], [])
    body = build_request_body(ctx, ProviderSettings(model="m", max_tokens=100, temperature=0.5))
    data = json.loads(body.decode("utf-8"))
    assert data["messages"][1]["content"] == "bad \ufffd char"
    assert (data["max_tokens"], data["temperature"]) == (100, 0.5)
    assert "tools" not in data


def test_sse_decoder_handles_every_line_ending_and_comments() -> None:
    body = b": keep-alive\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: one\ndata:two\n\ndata: [DONE]\r\r"
    assert list(iter_events(body)) == ['{"a":1}', "one\ntwo", "[DONE]"]


@settings(deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=7), max_size=40))
def test_sse_decoder_is_independent_of_chunk_boundaries(sizes: list[int]) -> None:
    body = "data: héllo\r\n\r\ndata: {\"x\": \"ü\"}\n\ndata: a\rdata: b\r\rdata: [DONE]\n\n".encode()
    decoder, events, pos = SseDecoder(), [], 0
    for size in sizes:
        events += decoder.feed(body[pos : pos + size])
        pos += size
    events += decoder.feed(body[pos:])
    events += decoder.close()
    assert events == ["héllo", '{"x": "ü"}', "a\nb", "[DONE]"]


def test_sse_decoder_keeps_an_unterminated_event_unless_asked() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: partial") == []
    assert decoder.close() == [] and decoder.pending_bytes > 0
    assert SseDecoder().close(dispatch_incomplete=True) == []
    other = SseDecoder()
    other.feed(b"data: partial")
    assert other.close(dispatch_incomplete=True) == ["partial"]


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412490.0) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert [s for s in (400, 401, 408, 409, 429, 500, 503, 599) if is_retryable_status(s)] == [408, 409, 429, 500, 503, 599]


def test_error_descriptions() -> None:
    assert describe_http_error(404, "Not Found", "text/plain", b"no such model") == "404 no such model"
    assert describe_http_error(400, "Bad Request", "application/json", b'{"detail": "bad field"}') == "400 bad field"
    assert describe_http_error(500, "Internal Server Error", "", b"") == "500 Internal Server Error"
    rate = describe_http_error(400, "x", "application/json", b'{"error": {"message": "Too many tokens per minute: rate limit"}}')
    assert not rate.startswith("Context overflow")
    llama = describe_http_error(400, "x", "application/json",
                                b'{"error": {"message": "the request exceeds the available context size, try increasing it"}}')
    assert llama.startswith("Context overflow")
    long_text = describe_http_error(500, "x", "text/plain", b"y" * 5000)
    assert len(long_text) < 320 and long_text.endswith("...")


def test_redacted_thinking_of_another_provider_is_not_sent_as_text() -> None:
    from pi_lsp.llm.types import AssistantMessage, TextContent, ThinkingContent, UserMessage

    claude = AssistantMessage(
        content=[ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="EmwK", redacted=True),
                 ThinkingContent(thinking="plan", thinking_signature="sig"), TextContent(text="ok")],
        api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5",
    )
    out = convert_messages("", [UserMessage(content="a"), claude], model_key=("openai-compatible", "openai-completions", "m"))
    assert out[1] == {"role": "assistant", "content": "planok"}
