"""The recording format and ``pi-lsp replay``: in process and as a real subprocess."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pi_lsp.llm.events import ToolCallDelta, ToolCallEnd
from pi_lsp.llm.openai_compat import OpenAICompatProvider
from pi_lsp.llm.provider import LlmContext, ProviderSettings, ToolSpec
from pi_lsp.llm.recording import RecordingError, dump_turn, parse_recording, turn_from_message
from pi_lsp.llm.replay import ReplayServer
from pi_lsp.llm.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage

REPO = Path(__file__).resolve().parents[2]

RECORDING = "\n".join([
    "// a two-turn session",
    json.dumps({"reply": {"thinking": "Look first.", "text": "I will read it.",
                          "toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "notes/ünï.txt"}},
                                        {"id": "call_2", "name": "grep", "arguments": {"pattern": "TODO", "path": "."}}]},
                "expect": {"userContains": "summarise", "toolsInclude": ["read"]}}),
    "",
    json.dumps({"reply": {"text": "The file says hello."},
                "expect": {"toolResultIds": ["call_1", "call_2"], "toolResultContains": ["hello"]}}),
])

TOOLS = [ToolSpec("read", "Read a file", {"type": "object"}), ToolSpec("grep", "Search", {"type": "object"})]


async def _run(provider: OpenAICompatProvider, ctx: LlmContext) -> tuple[list, AssistantMessage]:
    events = [e async for e in provider.stream(ctx)]
    return events, events[-1].message


async def test_replay_round_trip_through_the_provider() -> None:
    log = io.StringIO()
    with ReplayServer(parse_recording(RECORDING), log=log, arg_chunk_chars=5) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        provider = OpenAICompatProvider(ProviderSettings(base_url=server.url, model="m"))
        user = UserMessage(content="Please summarise notes")
        events, first = await _run(provider, LlmContext("sys", [user], TOOLS))
        assert first.stop_reason == "toolUse"
        assert first.tool_calls() == [
            ToolCall(id="call_1", name="read", arguments={"path": "notes/ünï.txt"}),
            ToolCall(id="call_2", name="grep", arguments={"pattern": "TODO", "path": "."}),
        ]
        assert len([e for e in events if isinstance(e, ToolCallDelta) and e.index == 0]) > 3
        assert [e.index for e in events if isinstance(e, ToolCallEnd)] == [0, 1]
        assert first.content[0].thinking == "Look first."
        results = [
            ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="hello")]),
            ToolResultMessage(tool_call_id="call_2", tool_name="grep", content=[TextContent(text="No matches")]),
        ]
        _, second = await _run(provider, LlmContext("sys", [user, first, *results], TOOLS))
        assert second.stop_reason == "stop" and second.content == [TextContent(text="The file says hello.")]
        _, third = await _run(provider, LlmContext("sys", [user], TOOLS))
        await provider.aclose()
    assert third.stop_reason == "error" and "turns were all served" in third.error_message
    assert server.divergences == ["turn 3: request after the last recorded turn"]
    assert server.served == 2


async def test_divergence_is_logged_and_the_turn_still_served() -> None:
    log = io.StringIO()
    with ReplayServer(parse_recording(RECORDING), log=log) as server:
        provider = OpenAICompatProvider(ProviderSettings(base_url=server.url))
        _, message = await _run(provider, LlmContext("", [UserMessage(content="something else")], []))
        await provider.aclose()
    assert message.stop_reason == "toolUse"
    assert server.divergences == [
        "turn 1: expected the last user message to contain 'summarise'",
        "turn 1: expected tools ['read'] to be offered",
    ]
    assert log.getvalue().splitlines()[0] == "replay: turn 1: expected the last user message to contain 'summarise'"


def test_models_endpoint_and_unknown_routes() -> None:
    with ReplayServer(parse_recording(RECORDING)) as server:
        models = httpx.get(server.url + "/models")
        missing = httpx.post(server.url + "/completions", json={})
    assert models.json()["data"][0]["id"] == "replay"
    assert missing.status_code == 404


def test_bad_recordings_name_the_line() -> None:
    with pytest.raises(RecordingError, match=r"^s.jsonl:2: reply: Field required"):
        parse_recording('{"reply": {"text": "ok"}}\n{"expect": {}}', source="s.jsonl")
    with pytest.raises(RecordingError, match="no turns"):
        parse_recording("\n// nothing\n")
    with pytest.raises(RecordingError, match=r"^<recording>:1: Invalid JSON: "):  # no empty field name before it
        parse_recording("{not json")


def test_recording_a_message_round_trips() -> None:
    message = AssistantMessage(content=[TextContent(text="hi"), ToolCall(id="c", name="ls", arguments={"path": "."})],
                               stop_reason="toolUse")
    line = dump_turn(turn_from_message(message))
    assert "\n" not in line
    again = parse_recording(line)[0]
    assert again.reply.text == "hi" and again.reply.tool_calls[0].arguments == {"path": "."}
    with pytest.raises(ValueError):
        turn_from_message(AssistantMessage(stop_reason="error", error_message="x"))


def _start_cli(tmp_path: Path, stdin: int) -> tuple[subprocess.Popen[str], str]:
    session = tmp_path / "s.jsonl"
    session.write_text(RECORDING, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pi_lsp", "replay", "--session", str(session), "--port", "0"],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    url = proc.stdout.readline().strip()
    return proc, url


def test_cli_prints_its_url_serves_and_exits_on_sigterm(tmp_path: Path) -> None:
    proc, url = _start_cli(tmp_path, subprocess.DEVNULL)
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        with httpx.stream("POST", url + "/chat/completions", json={"model": "x", "messages": []}) as response:
            body = response.read().decode()
        assert body.rstrip().endswith("data: [DONE]") and '"tool_calls"' in body
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert "turn 1: expected the last user message" in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


def test_cli_exits_when_stdin_closes(tmp_path: Path) -> None:
    proc, url = _start_cli(tmp_path, subprocess.PIPE)
    try:
        assert url.endswith("/v1")
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()


def test_cli_rejects_a_bad_recording(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[]\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pi_lsp", "replay", "--session", str(bad)],
                          capture_output=True, text=True, cwd=REPO, timeout=30)
    assert done.returncode == 2 and "bad.jsonl:1:" in done.stderr and done.stdout == ""


async def test_anthropic_format_round_trip_through_the_anthropic_provider() -> None:
    from pi_lsp.llm.anthropic import AnthropicProvider

    with ReplayServer(parse_recording(RECORDING), log=io.StringIO(), arg_chunk_chars=5, api_format="anthropic") as server:
        provider = AnthropicProvider(ProviderSettings(base_url=server.url, model="claude-x", thinking_budget=1024))
        user = UserMessage(content="Please summarise notes")
        events, first = await _run(provider, LlmContext("sys", [user], TOOLS))
        assert first.stop_reason == "toolUse" and first.api == "anthropic-messages"
        assert first.tool_calls() == [
            ToolCall(id="call_1", name="read", arguments={"path": "notes/ünï.txt"}),
            ToolCall(id="call_2", name="grep", arguments={"pattern": "TODO", "path": "."}),
        ]
        assert len([e for e in events if isinstance(e, ToolCallDelta) and e.index == 0]) > 3
        assert first.content[0].thinking == "Look first." and first.content[0].thinking_signature == "replay-signature-1"
        assert first.content[1] == TextContent(text="I will read it.")
        results = [
            ToolResultMessage(tool_call_id="call_1", tool_name="read", content=[TextContent(text="hello")]),
            ToolResultMessage(tool_call_id="call_2", tool_name="grep", content=[TextContent(text="No matches")]),
        ]
        _, second = await _run(provider, LlmContext("sys", [user, first, *results], TOOLS))
        assert second.stop_reason == "stop" and second.content == [TextContent(text="The file says hello.")]
        _, third = await _run(provider, LlmContext("sys", [user], TOOLS))
        await provider.aclose()
    # the expectations (user text, tools, tool result ids and text) were checked on the Messages shape
    assert server.divergences == ["turn 3: request after the last recorded turn"]
    assert third.stop_reason == "error" and "turns were all served" in (third.error_message or "")


def test_cli_anthropic_format_streams_message_events(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_text(RECORDING, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pi_lsp", "replay", "--session", str(session), "--port", "0", "--format", "anthropic"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        url = proc.stdout.readline().strip()
        missing = httpx.post(url + "/chat/completions", json={})
        assert missing.status_code == 404 and missing.json()["type"] == "error"
        with httpx.stream("POST", url + "/messages", json={"model": "x", "max_tokens": 9, "messages": []}) as response:
            assert response.headers["content-type"] == "text/event-stream"
            body = response.read().decode()
        assert body.startswith("event: message_start\ndata: {")
        assert body.endswith('event: message_stop\ndata: {"type": "message_stop"}\n\n')
        assert "event: content_block_delta" in body and '"input_json_delta"' in body and "event: ping" in body
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()
