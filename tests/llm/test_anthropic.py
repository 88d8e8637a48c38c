"""The Anthropic Messages API provider against a real HTTP server on 127.0.0.1 (scripted_http),
streaming the byte-level fixtures of fixtures/anthropic (written from Anthropic's streaming docs)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from scripted_http import Reply, ScriptedServer

from pi_lsp.llm.anthropic import ANTHROPIC_VERSION, AnthropicProvider
from pi_lsp.llm.anthropic_stream import REDACTED_THINKING_TEXT, REFUSAL_TEXT
from pi_lsp.llm.events import DoneEvent, StartEvent, TextDelta, ThinkingDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from pi_lsp.llm.http_errors import is_context_overflow
from pi_lsp.llm.provider import LlmContext, Provider, ProviderSettings, ToolSpec
from pi_lsp.llm.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"
READ_TOOL = ToolSpec(
    name="read", description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
BASH_TOOL = ToolSpec(
    name="bash", description="Run a command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)


def fixture(name: str, piece: int = 41) -> list[bytes]:
    """The fixture's bytes in ``piece``-byte chunks (events and UTF-8 characters split across reads)."""
    data = (FIXTURES / name).read_bytes()
    return [data[i : i + piece] for i in range(0, len(data), piece)]


def settings(url: str, **overrides: object) -> ProviderSettings:
    base = dict(
        base_url=url, model="claude-sonnet-4-5", max_retries=2, backoff_initial_seconds=0.01,
        backoff_max_seconds=0.05, connect_timeout_seconds=2, read_timeout_seconds=5,
    )
    base.update(overrides)
    return ProviderSettings(**base)  # type: ignore[arg-type]


def context(*messages: object, tools: list[ToolSpec] | None = None) -> LlmContext:
    return LlmContext(
        system_prompt="You are terse.",
        messages=list(messages) or [UserMessage(content="hello")],  # type: ignore[arg-type]
        tools=[READ_TOOL] if tools is None else tools,
    )


async def collect(provider: AnthropicProvider, ctx: LlmContext, cancel: asyncio.Event | None = None):
    events = []
    async for event in provider.stream(ctx, cancel=cancel):
        events.append(event)
    assert isinstance(events[-1], DoneEvent)
    assert sum(isinstance(e, DoneEvent) for e in events) == 1
    return events, events[-1].message


async def run(replies: list[Reply], ctx: LlmContext | None = None, **overrides: object):
    async with ScriptedServer(replies) as server:
        provider = AnthropicProvider(settings(server.url, **overrides))
        try:
            events, message = await collect(provider, ctx or context())
        finally:
            await provider.aclose()
    return server, events, message


async def test_text_reply_and_request_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test-123")
    server, events, message = await run([Reply(chunks=fixture("text.sse"))], api_key_env="TEST_ANTHROPIC_KEY")
    assert isinstance(events[0], StartEvent)
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hello", "! Ünïcode ✓ works."]
    assert message.content == [TextContent(text="Hello! Ünïcode ✓ works.")]
    assert message.stop_reason == "stop" and message.error_message is None
    assert (message.api, message.provider, message.model) == ("anthropic-messages", "anthropic", "claude-sonnet-4-5")
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (25, 15, 40)
    request = server.seen[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert request.headers["x-api-key"] == "sk-ant-test-123"
    assert request.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert "authorization" not in request.headers and "anthropic-beta" not in request.headers
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16384,
        "stream": True,
        "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}],
        "tools": [{"name": "read", "description": "Read a file", "input_schema": READ_TOOL.parameters,
                   "cache_control": {"type": "ephemeral"}}],
    }


async def test_parallel_tool_use_becomes_tool_calls_in_order() -> None:
    _, events, message = await run([Reply(chunks=fixture("parallel_tools.sse", 17))])
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.id, s.name) for s in starts] == [(0, "toolu_01ReadAlpha", "read"), (1, "toolu_01ReadBeta", "read")]
    assert "".join(e.delta for e in events if isinstance(e, ToolCallDelta) and e.index == 1) == \
        '{"path": "src/beta.py", "limit": 20}'
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [e.index for e in ends] == [0, 1]
    assert message.stop_reason == "toolUse"
    assert message.content == [
        TextContent(text="I'll read both files."),
        ToolCall(id="toolu_01ReadAlpha", name="read", arguments={"path": "src/alpha.py"}),
        ToolCall(id="toolu_01ReadBeta", name="read", arguments={"path": "src/beta.py", "limit": 20}),
    ]
    assert (message.usage.input, message.usage.output) == (472, 89)


async def test_thinking_with_signature_and_redacted_thinking_round_trip() -> None:
    final_text = fixture("text.sse")
    async with ScriptedServer([Reply(chunks=fixture("thinking.sse", 29)), Reply(chunks=final_text)]) as server:
        provider = AnthropicProvider(settings(server.url, thinking_budget=2048, temperature=0.5))
        ctx = context(UserMessage(content="run the tests"), tools=[BASH_TOOL])
        events, message = await collect(provider, ctx)
        assert [e.delta for e in events if isinstance(e, ThinkingDelta)] == [
            "The user wants the tests run.\n", "pytest is the runner here."]
        assert message.content == [
            ThinkingContent(thinking="The user wants the tests run.\npytest is the runner here.",
                            thinking_signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"),
            ThinkingContent(thinking=REDACTED_THINKING_TEXT, redacted=True,
                            thinking_signature="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"),
            ToolCall(id="toolu_01BashTests", name="bash", arguments={"command": "pytest -q"}),
        ]
        # the next request sends the thinking blocks back unchanged before the tool use
        result = ToolResultMessage(tool_call_id="toolu_01BashTests", tool_name="bash",
                                   content=[TextContent(text="3 failed")], is_error=True)
        ctx.messages += [message, result]
        await collect(provider, ctx)
        await provider.aclose()
    first, second = server.seen[0].body, server.seen[1].body
    assert server.seen[0].headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048, "display": "summarized"}
    assert first["max_tokens"] == 16384 + 2048
    assert "temperature" not in first
    assert second["messages"][1] == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "The user wants the tests run.\npytest is the runner here.",
         "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
        {"type": "redacted_thinking",
         "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"},
        {"type": "tool_use", "id": "toolu_01BashTests", "name": "bash", "input": {"command": "pytest -q"}},
    ]}
    assert second["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01BashTests", "is_error": True,
         "content": [{"type": "text", "text": "3 failed"}], "cache_control": {"type": "ephemeral"}}]}
    # the previous user message keeps its breakpoint, so this request reads what the last one wrote
    assert second["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}


async def test_cut_connection_is_an_error_that_keeps_the_partial_text() -> None:
    _, _, message = await run([Reply(chunks=fixture("cut.sse"), cut=True)])
    assert message.stop_reason == "error"
    assert (message.error_message or "").endswith("the stream was cut (received 12 characters of text)")
    assert message.content == [TextContent(text="Partial answ")]


async def test_body_ending_before_the_stop_reason_is_an_error() -> None:
    _, _, message = await run([Reply(chunks=fixture("cut.sse"))])
    assert message.stop_reason == "error"
    assert message.error_message == (
        "The stream ended before the response was complete (received 12 characters of text)")
    assert message.content == [TextContent(text="Partial answ")]


async def test_overloaded_529_is_retried() -> None:
    overloaded = Reply(status=529, headers={"content-type": "application/json"}, chunks=[json.dumps(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).encode()])
    server, _, message = await run([overloaded, Reply(chunks=fixture("text.sse"))])
    assert len(server.seen) == 2
    assert message.stop_reason == "stop" and message.content == [TextContent(text="Hello! Ünïcode ✓ works.")]


async def test_overloaded_529_reported_after_the_last_attempt() -> None:
    overloaded = lambda: Reply(status=529, headers={"content-type": "application/json"}, chunks=[json.dumps(  # noqa: E731
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).encode()])
    server, _, message = await run([overloaded(), overloaded()], max_retries=1)
    assert len(server.seen) == 2
    assert message.stop_reason == "error" and message.error_message == "529 Overloaded (after 2 attempts)"


async def test_overloaded_error_event_before_content_is_retried() -> None:
    server, events, message = await run([Reply(chunks=fixture("overloaded.sse")), Reply(chunks=fixture("text.sse"))])
    assert len(server.seen) == 2
    assert sum(isinstance(e, StartEvent) for e in events) == 1
    assert message.stop_reason == "stop" and message.content == [TextContent(text="Hello! Ünïcode ✓ works.")]


async def test_overloaded_error_event_after_content_ends_the_stream() -> None:
    server, events, message = await run([Reply(chunks=fixture("overloaded_mid.sse"))])
    assert len(server.seen) == 1
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Let me "]
    assert message.stop_reason == "error"
    assert message.error_message == "Server error: Overloaded (overloaded_error)"
    assert message.content == [TextContent(text="Let me ")]


async def test_max_tokens_inside_tool_input_is_length_with_repaired_arguments() -> None:
    _, events, message = await run([Reply(chunks=fixture("max_tokens_tool.sse"))])
    assert message.stop_reason == "length"
    [call] = message.tool_calls()
    assert call.id == "toolu_01WriteBig" and call.name == "write"
    assert call.arguments == {"path": "big.txt", "content": "line one\nline tw"}
    assert [e.index for e in events if isinstance(e, ToolCallEnd)] == [0]


async def test_cache_usage_figures() -> None:
    _, _, message = await run([Reply(chunks=fixture("cache_usage.sse"))])
    usage = message.usage
    assert (usage.input, usage.cache_write, usage.cache_read, usage.output) == (21, 188, 1800, 5)
    assert usage.total_tokens == 21 + 188 + 1800 + 5


async def test_rate_limit_429_waits_retry_after() -> None:
    limited = Reply(status=429, headers={"content-type": "application/json", "retry-after": "0"}, chunks=[json.dumps(
        {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}).encode()])
    server, _, message = await run([limited, Reply(chunks=fixture("text.sse"))], backoff_initial_seconds=30, backoff_max_seconds=30)
    assert len(server.seen) == 2 and message.stop_reason == "stop"


async def test_retry_after_longer_than_allowed_fails_at_once() -> None:
    limited = Reply(status=429, headers={"content-type": "application/json", "retry-after": "600"}, chunks=[json.dumps(
        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}).encode()])
    server, _, message = await run([limited], retry_after_max_seconds=5)
    assert len(server.seen) == 1
    assert message.stop_reason == "error" and "retry after 600 s" in (message.error_message or "")


@pytest.mark.parametrize(("status", "kind", "text"), [
    (400, "invalid_request_error", "messages: text content blocks must be non-empty"),
    (401, "authentication_error", "invalid x-api-key"),
])
async def test_client_errors_are_reported_without_retry(status: int, kind: str, text: str) -> None:
    reply = Reply(status=status, headers={"content-type": "application/json"},
                  chunks=[json.dumps({"type": "error", "error": {"type": kind, "message": text}}).encode()])
    server, _, message = await run([reply])
    assert len(server.seen) == 1
    assert message.stop_reason == "error" and message.error_message == f"{status} {text}"


async def test_prompt_too_long_is_a_context_overflow() -> None:
    reply = Reply(status=400, headers={"content-type": "application/json"}, chunks=[json.dumps({
        "type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}}).encode()])
    _, _, message = await run([reply])
    assert is_context_overflow(message.error_message)


async def test_refusal_is_an_error() -> None:
    data = (FIXTURES / "text.sse").read_bytes().replace(b'"end_turn"', b'"refusal"')
    _, _, message = await run([Reply(chunks=[data])])
    assert message.stop_reason == "error" and message.error_message == REFUSAL_TEXT


async def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_ANTHROPIC_KEY", raising=False)
    server, _, message = await run([], api_key_env="NO_SUCH_ANTHROPIC_KEY")
    assert server.seen == []
    assert message.error_message == "No API key: the environment variable NO_SUCH_ANTHROPIC_KEY (apiKeyEnv) is not set"


async def test_max_tokens_not_above_the_thinking_budget_is_refused_before_sending() -> None:
    server, _, message = await run([], max_tokens=2000, thinking_budget=4000)
    assert server.seen == []
    assert message.stop_reason == "error" and "must be larger than the thinking budget" in (message.error_message or "")


async def test_abort_while_streaming() -> None:
    data = fixture("cut.sse")
    async with ScriptedServer([Reply(chunks=data, hang=True)]) as server:
        provider = AnthropicProvider(settings(server.url))
        cancel = asyncio.Event()
        events = []
        async for event in provider.stream(context(), cancel=cancel):
            events.append(event)
            if isinstance(event, TextDelta):
                cancel.set()
        await provider.aclose()
        await server.disconnected.wait()
    message = events[-1].message
    assert message.stop_reason == "aborted" and message.content == [TextContent(text="Partial answ")]


async def test_provider_protocol_and_other_models_thinking_sent_as_text() -> None:
    other = AssistantMessage(
        content=[ThinkingContent(thinking="plan", thinking_signature="reasoning_content"), TextContent(text="ok")],
        api="openai-completions", provider="openai-compatible", model="gpt-x",
    )
    ctx = context(UserMessage(content="a"), other, UserMessage(content="b"))
    server, _, _ = await run([Reply(chunks=fixture("text.sse"))], ctx)
    assert isinstance(AnthropicProvider(settings("http://127.0.0.1:9/v1")), Provider)
    assert server.seen[0].body["messages"][1] == {"role": "assistant", "content": [
        {"type": "text", "text": "plan"}, {"type": "text", "text": "ok"}]}


async def test_x_should_retry_overrides_the_status_rule() -> None:
    body = [json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).encode()]
    refused = Reply(status=529, headers={"content-type": "application/json", "x-should-retry": "false"}, chunks=body)
    server, _, message = await run([refused, Reply(chunks=fixture("text.sse"))])
    assert len(server.seen) == 1 and message.error_message == "529 Overloaded"
    conflict = Reply(status=400, headers={"content-type": "application/json", "x-should-retry": "true"}, chunks=body)
    server, _, message = await run([conflict, Reply(chunks=fixture("text.sse"))])
    assert len(server.seen) == 2 and message.stop_reason == "stop"


def test_request_body_images_merged_results_ids_and_placeholders() -> None:
    from pi_lsp.llm.anthropic_request import build_request_body
    from pi_lsp.llm.types import ImageContent

    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    call = ToolCall(id="call:1/x", name="read", arguments={"path": "a.png"})
    messages = [
        UserMessage(content=[TextContent(text="look"), image, TextContent(text=" \n")]),
        UserMessage(content="   "),
        AssistantMessage(content=[TextContent(text=" "), call], stop_reason="toolUse", api="anthropic-messages",
                         provider="anthropic", model="claude-sonnet-4-5"),
        ToolResultMessage(tool_call_id="call:1/x", tool_name="read", content=[TextContent(text="Read image"), image]),
        UserMessage(content="also check b.png"),  # a steering message right after the results
    ]
    ctx = LlmContext(system_prompt="", messages=messages, tools=[READ_TOOL])
    body = json.loads(build_request_body(ctx, settings("http://x/v1", max_tokens=1000, temperature=0.2)))
    assert "system" not in body and body["temperature"] == 0.2 and body["max_tokens"] == 1000
    source = {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image", "source": source, "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1_x", "name": "read", "input": {"path": "a.png"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1_x",
             "content": [{"type": "text", "text": "Read image"}, {"type": "image", "source": source}]},
            {"type": "text", "text": "also check b.png", "cache_control": {"type": "ephemeral"}}]},
    ]
    blind = json.loads(build_request_body(ctx, settings("http://x/v1", supports_images=False)))
    assert blind["messages"][0]["content"][1]["text"] == "(image omitted: model does not support images)"
    assert blind["messages"][2]["content"][0]["content"][1]["text"] == "(tool image omitted: model does not support images)"

    # with every tool deactivated the API would reject tool blocks: they travel as text
    ctx.tools = []
    bare = json.loads(build_request_body(ctx, settings("http://x/v1")))
    assert "tools" not in bare
    assert bare["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": '[Tool call read {"path":"a.png"}]'}]}
    assert bare["messages"][2]["content"][0] == {"type": "text", "text": "[Tool result read]: Read image"}
    assert bare["messages"][2]["content"][1]["type"] == "image"
    assert not any(b["type"] in ("tool_use", "tool_result") for m in bare["messages"] for b in m["content"])


def test_adaptive_thinking_models_get_no_budget() -> None:
    from pi_lsp.llm.anthropic_request import build_request_body

    ctx = context()
    body = json.loads(build_request_body(ctx, settings("http://x/v1", model="claude-sonnet-4-6", thinking_budget=4096)))
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"} and body["max_tokens"] == 16384
    headers = AnthropicProvider(settings("http://x/v1", model="claude-opus-4-7", thinking_budget=4096)).auth_headers(None)
    assert headers == {"anthropic-version": ANTHROPIC_VERSION}
