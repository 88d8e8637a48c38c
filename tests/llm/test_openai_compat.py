"""The OpenAI-compatible provider against a real HTTP server on 127.0.0.1 (scripted_http)."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import httpx
import pytest
from scripted_http import Reply, ScriptedServer, delta, finish, sse

from pi_lsp.llm.events import DoneEvent, StartEvent, TextDelta, ThinkingDelta, ToolCallDelta, ToolCallEnd, ToolCallStart
from pi_lsp.llm.http_errors import CONTEXT_OVERFLOW_PREFIX, is_context_overflow
from pi_lsp.llm.openai_compat import OpenAICompatProvider
from pi_lsp.llm.provider import LlmContext, Provider, ProviderSettings, ToolSpec
from pi_lsp.llm.types import AssistantMessage, TextContent, ThinkingContent, ToolCall, UserMessage

READ_TOOL = ToolSpec(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def settings(url: str, **overrides: object) -> ProviderSettings:
    base = dict(
        base_url=url, model="test-model", max_retries=2, backoff_initial_seconds=0.01,
        backoff_max_seconds=0.05, connect_timeout_seconds=2, read_timeout_seconds=5,
    )
    base.update(overrides)
    return ProviderSettings(**base)  # type: ignore[arg-type]


def context(text: str = "hello") -> LlmContext:
    return LlmContext(system_prompt="You are terse.", messages=[UserMessage(content=text)], tools=[READ_TOOL])


async def collect(provider: OpenAICompatProvider, ctx: LlmContext, cancel: asyncio.Event | None = None):
    events = []
    async for event in provider.stream(ctx, cancel=cancel):
        events.append(event)
    assert isinstance(events[-1], DoneEvent)
    assert sum(isinstance(e, DoneEvent) for e in events) == 1
    return events, events[-1].message


async def test_plain_text_streams_deltas_and_records_usage() -> None:
    reply = Reply(chunks=sse(
        delta(role="assistant", content=""), delta(content="Hel"), delta(content="lo "),
        delta(content="world"), finish("stop"),
        {"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 3,
                                  "prompt_tokens_details": {"cached_tokens": 5}}},
    ))
    async with ScriptedServer([reply]) as server:
        provider = OpenAICompatProvider(settings(server.url))
        assert isinstance(provider, Provider)
        events, message = await collect(provider, context())
        await provider.aclose()
    assert isinstance(events[0], StartEvent)
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hel", "lo ", "world"]
    assert message.stop_reason == "stop" and message.error_message is None
    assert message.content == [TextContent(text="Hello world")]
    assert (message.usage.input, message.usage.cache_read, message.usage.output, message.usage.total_tokens) == (15, 5, 3, 23)
    assert message.model == "test-model" and message.api == "openai-completions"
    request = server.seen[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.body["stream"] is True and request.body["stream_options"] == {"include_usage": True}
    assert request.body["model"] == "test-model"
    assert request.body["messages"] == [
        {"role": "system", "content": "You are terse."}, {"role": "user", "content": "hello"},
    ]
    assert request.body["tools"] == [{"type": "function", "function": {
        "name": "read", "description": "Read a file", "parameters": READ_TOOL.parameters}}]
    assert "authorization" not in request.headers


async def test_parallel_tool_calls_are_assembled_by_index() -> None:
    reply = Reply(chunks=sse(
        delta(content="Reading both."),
        delta(tool_calls=[{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read", "arguments": ""}}]),
        delta(tool_calls=[{"index": 1, "id": "call_b", "type": "function", "function": {"name": "read", "arguments": "{\"pa"}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": "{\"path\": "}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": "th\": \"b.txt\"}"}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": "\"a.txt\"}"}}]),
        finish("tool_calls"),
    ))
    async with ScriptedServer([reply]) as server:
        events, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.id, s.name) for s in starts] == [(0, "call_a", "read"), (1, "call_b", "read")]
    ends = [e for e in events if isinstance(e, ToolCallEnd)]
    assert [e.index for e in ends] == [0, 1]
    assert "".join(e.delta for e in events if isinstance(e, ToolCallDelta) and e.index == 1) == '{"path": "b.txt"}'
    assert message.stop_reason == "toolUse"
    assert message.tool_calls() == [
        ToolCall(id="call_a", name="read", arguments={"path": "a.txt"}),
        ToolCall(id="call_b", name="read", arguments={"path": "b.txt"}),
    ]
    assert isinstance(message.content[0], TextContent)


async def test_arguments_split_across_many_chunks() -> None:
    arguments = json.dumps({"path": "src/café.py", "edits": [{"oldText": "a\n\tb", "newText": "😀 \"q\""}]})
    pieces = [arguments[i : i + 3] for i in range(0, len(arguments), 3)]
    chunks = [delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "edit", "arguments": ""}}])]
    chunks += [delta(tool_calls=[{"index": 0, "function": {"arguments": p}}]) for p in pieces]
    async with ScriptedServer([Reply(chunks=sse(*chunks, finish("tool_calls")))]) as server:
        events, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    assert len([e for e in events if isinstance(e, ToolCallDelta)]) == len(pieces) > 20
    assert message.tool_calls()[0].arguments == json.loads(arguments)


@pytest.mark.parametrize(("reason", "stop_reason"), [("length", "length"), ("tool_calls", "toolUse"), ("stop", "stop")])
async def test_truncated_arguments_are_never_salvaged_whatever_the_finish_reason(reason: str, stop_reason: str) -> None:
    # issue 12 / Pi 1.x: partial parsing is for progress; a finished call whose arguments do not
    # parse strictly gets {} and an argumentsError naming the problem and the received text
    cut = "{\"path\": \"a.txt\", \"content\": \"partial te"
    reply = Reply(chunks=sse(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "write", "arguments": cut}}]),
        finish(reason),
    ))
    async with ScriptedServer([reply]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    assert message.stop_reason == stop_reason
    [call] = message.tool_calls()
    assert call.arguments == {}
    assert call.arguments_error == (
        f"Unterminated string in JSON at position {len(cut)}\n\nReceived arguments:\n{cut}"
    )


async def test_invalid_json_in_arguments_is_repaired_or_an_arguments_error() -> None:
    reply = Reply(chunks=sse(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "grep", "arguments": '{"pattern": "\\d+\n"}'}}]),
        delta(tool_calls=[{"index": 1, "id": "c2", "function": {"name": "read", "arguments": "not json at all"}}]),
        finish("tool_calls"),
    ))
    async with ScriptedServer([reply]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    assert message.stop_reason == "toolUse"
    first, second = message.tool_calls()
    assert first.arguments == {"pattern": "\\d+\n"} and first.arguments_error is None
    assert second.arguments == {}
    assert second.arguments_error == (
        'Unexpected token \'o\', "not json at all" is not valid JSON\n\nReceived arguments:\nnot json at all'
    )


async def test_reasoning_content_is_thinking_and_goes_back_in_the_next_request() -> None:
    reply = Reply(chunks=sse(
        delta(reasoning_content="Let me "), delta(reasoning_content="think."), delta(content="Done."), finish("stop"),
    ))
    async with ScriptedServer([reply, Reply(chunks=sse(delta(content="ok"), finish("stop")))]) as server:
        provider = OpenAICompatProvider(settings(server.url))
        events, message = await collect(provider, context())
        assert [e.delta for e in events if isinstance(e, ThinkingDelta)] == ["Let me ", "think."]
        assert message.content[0] == ThinkingContent(thinking="Let me think.", thinking_signature="reasoning_content")
        follow_up = LlmContext(system_prompt="", messages=[UserMessage(content="q"), message, UserMessage(content="again")])
        await collect(provider, follow_up)
    sent = server.seen[1].body["messages"][1]
    assert sent == {"role": "assistant", "content": "Done.", "reasoning_content": "Let me think."}


async def test_429_with_retry_after_then_success() -> None:
    limited = Reply(status=429, headers={"content-type": "application/json", "retry-after": "0.2"},
                    chunks=[b'{"error": {"message": "Rate limit reached"}}'])
    async with ScriptedServer([limited, Reply(chunks=sse(delta(content="hi"), finish("stop")))]) as server:
        started = time.monotonic()
        _, message = await collect(OpenAICompatProvider(settings(server.url, backoff_initial_seconds=0.0)), context())
        elapsed = time.monotonic() - started
    assert message.stop_reason == "stop" and message.content == [TextContent(text="hi")]
    assert len(server.seen) == 2
    assert elapsed >= 0.2  # the Retry-After was honoured (backoff alone would be 0 s)


async def test_retry_after_longer_than_the_limit_fails_at_once() -> None:
    limited = Reply(status=429, headers={"retry-after": "3600"}, chunks=[b"slow down"])
    async with ScriptedServer([limited]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url, retry_after_max_seconds=5)), context())
    assert message.stop_reason == "error"
    assert "retry after 3600 s" in message.error_message
    assert len(server.seen) == 1


async def test_500_until_retries_run_out() -> None:
    failing = [Reply(status=500, headers={"content-type": "application/json"},
                     chunks=[b'{"error": {"message": "upstream exploded"}}']) for _ in range(3)]
    async with ScriptedServer(failing) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url, max_retries=2)), context())
    assert len(server.seen) == 3
    assert message.stop_reason == "error"
    assert message.error_message == "500 upstream exploded (after 3 attempts)"


async def test_stream_cut_mid_message_reports_what_was_received() -> None:
    reply = Reply(chunks=sse(delta(content="Half an ans"), done=False), cut=True)
    async with ScriptedServer([reply]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    assert len(server.seen) == 1  # a started stream is never retried
    assert message.stop_reason == "error"
    assert "received 11 characters of text" in message.error_message
    assert message.content == [TextContent(text="Half an ans")]


async def test_close_delimited_stream_ending_without_finish_is_an_error() -> None:
    reply = Reply(chunks=sse(delta(content="abc"), done=False), framing="close")
    async with ScriptedServer([reply]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    assert message.stop_reason == "error"
    assert message.error_message == "The stream ended before the response was complete (received 3 characters of text)"


async def test_html_error_page_gives_a_short_clear_error() -> None:
    page = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>" + b"x" * 5000 + b"</body></html>"
    async with ScriptedServer([Reply(status=502, headers={"content-type": "text/html"}, chunks=[page])]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url, max_retries=0)), context())
    assert message.stop_reason == "error"
    assert "HTML page" in message.error_message and "502 Bad Gateway" in message.error_message
    assert "<" not in message.error_message and len(message.error_message) < 300


async def test_context_overflow_is_a_clear_error_and_not_retried() -> None:
    body = b'{"error": {"message": "This model\'s maximum context length is 8192 tokens. However, you requested 9000 tokens", "code": "context_length_exceeded"}}'
    async with ScriptedServer([Reply(status=400, headers={"content-type": "application/json"}, chunks=[body])]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    assert len(server.seen) == 1
    assert message.error_message.startswith(CONTEXT_OVERFLOW_PREFIX)
    assert "maximum context length is 8192 tokens" in message.error_message
    assert is_context_overflow(message.error_message)


async def test_abort_mid_stream_ends_promptly_with_aborted() -> None:
    reply = Reply(chunks=sse(delta(content="Working"), done=False), hang=True)
    cancel = asyncio.Event()
    async with ScriptedServer([reply]) as server:
        provider = OpenAICompatProvider(settings(server.url, read_timeout_seconds=60))
        events = []

        async def consume() -> None:
            async for event in provider.stream(context(), cancel=cancel):
                events.append(event)
                if isinstance(event, TextDelta):
                    cancel.set()

        await asyncio.wait_for(consume(), timeout=5)
        await asyncio.wait_for(server.disconnected.wait(), timeout=5)
        await provider.aclose()
    message = events[-1].message
    assert message.stop_reason == "aborted" and message.error_message == "Request was aborted"
    assert message.content == [TextContent(text="Working")]
    assert not any(isinstance(e, ToolCallEnd) for e in events)


async def test_abort_during_backoff_does_not_wait_for_it() -> None:
    failing = Reply(status=503, chunks=[b"busy"], headers={"retry-after": "30"})
    cancel = asyncio.Event()
    async with ScriptedServer([failing]) as server:
        provider = OpenAICompatProvider(settings(server.url))
        asyncio.get_running_loop().call_later(0.2, cancel.set)
        _, message = await asyncio.wait_for(collect(provider, context(), cancel), timeout=5)
    assert message.stop_reason == "aborted"


async def test_cancel_already_set_never_sends() -> None:
    cancel = asyncio.Event()
    cancel.set()
    async with ScriptedServer([]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url)), context(), cancel)
    assert message.stop_reason == "aborted"
    assert server.seen == []


async def test_endpoint_down_is_a_connection_error_after_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _, message = await collect(OpenAICompatProvider(settings(f"http://127.0.0.1:{port}/v1", max_retries=1)), context())
    assert message.stop_reason == "error"
    assert message.error_message.startswith(f"Connection error: could not connect to http://127.0.0.1:{port}/v1/chat/completions")
    assert message.error_message.endswith("(after 2 attempts)")


async def test_silent_server_hits_the_read_timeout() -> None:
    async with ScriptedServer([Reply(chunks=[], hang=True)]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url, read_timeout_seconds=0.3)), context())
    assert message.stop_reason == "error"
    assert message.error_message.startswith("Timeout: no data from") and "0.3 s" in message.error_message


@pytest.mark.parametrize("first", [[], [delta(content="Hel")]])
async def test_keep_alives_without_progress_end_the_stream(first: list) -> None:
    # issue 12: comments every 20 ms kept the read timeout from ever firing; the stream never ended
    reply = Reply(chunks=sse(*first, done=False), keepalive_every=0.02)
    async with ScriptedServer([reply]) as server:
        provider = OpenAICompatProvider(settings(server.url, read_timeout_seconds=30, progress_timeout_seconds=0.3))
        events, message = await collect(provider, context())
        await asyncio.wait_for(server.disconnected.wait(), 30)  # the connection was closed
    assert message.stop_reason == "error"
    assert message.error_message.startswith(f"Timeout: no progress from {server.url}/chat/completions for")
    assert "for 0.3 s (the server sent only keep-alives or empty chunks;" in message.error_message
    if first:
        assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hel"]
        assert message.content[0] == TextContent(text="Hel")


async def test_api_key_comes_only_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-secret-123"
    monkeypatch.setenv("PI_LSP_TEST_KEY", secret)
    async with ScriptedServer([Reply(status=401, headers={"content-type": "application/json"},
                                     chunks=[b'{"error": {"message": "bad key"}}'])]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url, api_key_env="PI_LSP_TEST_KEY")), context())
    assert server.seen[0].headers["authorization"] == f"Bearer {secret}"
    assert message.error_message == "401 bad key" and secret not in message.model_dump_json()
    monkeypatch.delenv("PI_LSP_TEST_KEY")
    _, missing = await collect(OpenAICompatProvider(settings("http://127.0.0.1:9/v1", api_key_env="PI_LSP_TEST_KEY")), context())
    assert missing.error_message == "No API key: the environment variable PI_LSP_TEST_KEY (apiKeyEnv) is not set"


async def test_server_error_inside_the_stream_and_content_filter() -> None:
    in_stream = Reply(chunks=sse(delta(content="a"), {"error": {"message": "model crashed"}}))
    filtered = Reply(chunks=sse(delta(content="b"), finish("content_filter")))
    async with ScriptedServer([in_stream, filtered]) as server:
        provider = OpenAICompatProvider(settings(server.url))
        _, crashed = await collect(provider, context())
        _, blocked = await collect(provider, context())
    assert (crashed.stop_reason, crashed.error_message) == ("error", "Server error: model crashed")
    assert (blocked.stop_reason, blocked.error_message) == ("error", "Provider finish_reason: content_filter")


async def test_a_non_streaming_json_reply_is_accepted() -> None:
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 2, "completion_tokens": 1}}).encode()
    async with ScriptedServer([Reply(headers={"content-type": "application/json"}, chunks=[body])]) as server:
        _, message = await collect(OpenAICompatProvider(settings(server.url)), context())
    assert message.content == [TextContent(text="whole")] and message.usage.total_tokens == 3


async def test_a_shared_client_is_not_closed_by_the_provider() -> None:
    async with ScriptedServer([Reply(chunks=sse(delta(content="x"), finish("stop")))]) as server:
        async with httpx.AsyncClient() as client:
            provider = OpenAICompatProvider(settings(server.url), client)
            _, message = await collect(provider, context())
            await provider.aclose()
            assert not client.is_closed
    assert message.stop_reason == "stop"
    assert isinstance(message, AssistantMessage)


async def test_cancelling_the_consuming_task_still_propagates_and_closes_the_connection() -> None:
    reply = Reply(chunks=sse(delta(content="x"), done=False), hang=True)
    async with ScriptedServer([reply]) as server:
        provider = OpenAICompatProvider(settings(server.url, read_timeout_seconds=60))
        first_delta = asyncio.Event()

        async def consume() -> None:
            async for event in provider.stream(context(), cancel=asyncio.Event()):
                if isinstance(event, TextDelta):
                    first_delta.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(first_delta.wait(), timeout=5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.disconnected.wait(), timeout=5)
        await provider.aclose()
