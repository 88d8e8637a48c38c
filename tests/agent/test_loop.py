"""The agent loop with a scripted provider and real tools in a real ToolPipeline."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_lsp.agent.loop import MAX_TURNS_MESSAGE, LoopConfig, run_agent
from pi_lsp.agent.pipeline import LENGTH_MESSAGE, ToolPipeline
from pi_lsp.agent.session import AgentSession, SessionBusy
from pi_lsp.agent.system_prompt import build_system_prompt, prompt_tool
from pi_lsp.agent.tool import AbortSignal, ToolContext, ToolResult
from pi_lsp.llm.types import AssistantMessage, Message, ToolResultMessage, UserMessage
from tests.agent.scripted_provider import ScriptedProvider, reply, tool_call
from tests.pipeline_tools import FakeTool, echo, sleeper


def _config(provider: ScriptedProvider, *tools: FakeTool, max_turns: int = 50) -> LoopConfig:
    pipeline = ToolPipeline(list(tools))
    return LoopConfig(
        provider=provider,
        pipeline=pipeline,
        system_prompt=lambda active: build_system_prompt([prompt_tool(t) for t in active], cwd="/w"),
        max_turns=max_turns,
        session_id="s1",
    )


async def _run(config: LoopConfig, text: str = "go", signal: AbortSignal | None = None):
    seen: list[dict[str, Any]] = []
    transcript: list[Message] = []
    result = await run_agent(config, transcript, [UserMessage(content=text)], signal=signal, emit=seen.append)
    return result, seen, transcript


def _types(seen: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in seen if e["type"] != "message_update"]


def _text(message: ToolResultMessage) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


async def test_one_tool_turn_has_pis_exact_event_sequence() -> None:
    provider = ScriptedProvider([reply("", tool_call("echo", {"text": "hi"}, "c1")), reply("done")])
    result, seen, transcript = await _run(_config(provider, FakeTool("echo", echo)))
    assert _types(seen) == [
        "agent_start", "turn_start", "message_start", "message_end",  # user
        "message_start", "message_end",  # assistant with the tool call
        "tool_execution_start", "tool_execution_end",
        "message_start", "message_end",  # toolResult
        "turn_end",
        "turn_start", "message_start", "message_end", "turn_end",  # final answer
        "agent_end",
    ]
    assert result.stop_reason == "stop" and result.turns == 2 and result.error_message is None
    assert [m.role for m in transcript] == ["user", "assistant", "toolResult", "assistant"]
    assert seen[-1] == {"type": "agent_end", "stopReason": "stop"}
    first_end = next(e for e in seen if e["type"] == "turn_end")
    assert first_end["message"]["content"][0]["name"] == "echo"
    assert [r["toolCallId"] for r in first_end["toolResults"]] == ["c1"]
    # the second request carries the tool result, and the tools offered
    second = provider.contexts[1]
    assert [m.role for m in second.messages] == ["user", "assistant", "toolResult"]
    assert [t.name for t in second.tools] == ["echo"]


async def test_message_updates_are_deltas_only() -> None:
    provider = ScriptedProvider([reply("Hello there, world", tool_call("echo", {"text": "x"}, "c1")), reply("ok")])
    _, seen, _ = await _run(_config(provider, FakeTool("echo", echo)))
    updates = [e["delta"] for e in seen if e["type"] == "message_update"]
    texts = [d["text"] for d in updates if d["type"] == "text"]
    assert "".join(texts[:4]) == "Hello there, world" and all(len(t) <= 5 for t in texts)
    calls = [d for d in updates if d["type"] == "toolCall"]
    assert calls[0] == {"type": "toolCall", "index": 0, "id": "c1", "name": "echo"}
    assert calls[1] == {"type": "toolCall", "index": 0, "arguments": '{"text": "x"}'}
    assert all(set(e) == {"type", "delta"} for e in seen if e["type"] == "message_update")
    # the first message_update of a reply follows its message_start
    index = next(i for i, e in enumerate(seen) if e["type"] == "message_update")
    assert seen[index - 1]["type"] == "message_start" and seen[index - 1]["message"]["role"] == "assistant"


async def test_parallel_results_come_in_source_order_ends_in_completion_order() -> None:
    log: list[str] = []
    slow, fast = FakeTool("slow", sleeper(0.2, log, "slow")), FakeTool("fast", sleeper(0.0, log, "fast"))
    provider = ScriptedProvider([
        reply("", tool_call("slow", {"text": "a"}, "s"), tool_call("fast", {"text": "b"}, "f")),
        reply("done"),
    ])
    _, seen, transcript = await _run(_config(provider, slow, fast))
    ends = [e["toolCallId"] for e in seen if e["type"] == "tool_execution_end"]
    assert ends == ["f", "s"]
    results = [e["message"]["toolCallId"] for e in seen if e["type"] == "message_end" and e["message"]["role"] == "toolResult"]
    assert results == ["s", "f"]
    assert log[:2] == ["start slow", "start fast"]  # both ran concurrently
    assert [m.tool_call_id for m in transcript if isinstance(m, ToolResultMessage)] == ["s", "f"]


async def test_length_stop_runs_nothing_and_asks_the_model_again() -> None:
    tool = FakeTool("echo", echo)
    provider = ScriptedProvider([
        reply("", tool_call("echo", {"text": "cut"}, "c1"), stop_reason="length"),
        reply("re-issued nothing"),
    ])
    result, seen, transcript = await _run(_config(provider, tool))
    assert tool.received == []
    end = next(e for e in seen if e["type"] == "tool_execution_end")
    assert end["isError"] is True
    assert end["result"]["content"][0]["text"] == LENGTH_MESSAGE.format(name="echo")
    assert len(provider.contexts) == 2 and result.stop_reason == "stop"


async def test_length_stop_without_tool_calls_ends_the_run() -> None:
    provider = ScriptedProvider([reply("a long answer that was cut", stop_reason="length")])
    result, _, _ = await _run(_config(provider))
    assert result.stop_reason == "length" and len(provider.contexts) == 1


async def test_abort_mid_stream_ends_the_run_and_its_tool_calls_never_run() -> None:
    tool = FakeTool("echo", echo)
    provider = ScriptedProvider([reply("partial text", tool_call("echo", {"text": "x"}, "c1"))], hang_after_start={0})
    signal = AbortSignal()

    async def abort_soon() -> None:
        while len(provider.contexts) < 1:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        signal.abort("user")

    aborter = asyncio.create_task(abort_soon())
    result, seen, transcript = await asyncio.wait_for(_run(_config(provider, tool), signal=signal), 5)
    await aborter
    assert result.stop_reason == "aborted"
    assert tool.received == []
    assert _types(seen)[-4:] == ["message_start", "message_end", "turn_end", "agent_end"] or _types(seen)[-3:] == [
        "message_end", "turn_end", "agent_end"]
    assert seen[-2]["type"] == "turn_end" and seen[-2]["toolResults"] == []
    assert transcript[-1].stop_reason == "aborted"


async def test_abort_mid_tool_gives_aborted_results_then_the_run_ends_aborted() -> None:
    started = asyncio.Event()

    async def forever(args: Any, ctx: ToolContext) -> ToolResult:
        started.set()
        await asyncio.Event().wait()
        return ToolResult.text("never")

    provider = ScriptedProvider([reply("", tool_call("hang", {"text": "x"}, "h1")), reply("unreached")])
    signal = AbortSignal()

    async def abort_when_started() -> None:
        await started.wait()
        signal.abort("user")

    aborter = asyncio.create_task(abort_when_started())
    result, seen, transcript = await asyncio.wait_for(_run(_config(provider, FakeTool("hang", forever)), signal=signal), 5)
    await aborter
    results = [m for m in transcript if isinstance(m, ToolResultMessage)]
    assert len(results) == 1 and results[0].is_error and _text(results[0]) == "Operation aborted"
    assert result.stop_reason == "aborted"
    assert isinstance(transcript[-1], AssistantMessage) and transcript[-1].stop_reason == "aborted"


async def test_max_turns_ends_a_model_that_never_stops_calling_tools() -> None:
    provider = ScriptedProvider([lambda ctx: reply("", tool_call("echo", {"text": "again"}, f"c{len(ctx.messages)}"))] * 10)
    result, seen, _ = await _run(_config(provider, FakeTool("echo", echo), max_turns=3))
    assert len(provider.contexts) == 3
    assert result.stop_reason == "error" and result.error_message == MAX_TURNS_MESSAGE.format(turns=3)
    assert seen[-1] == {"type": "agent_end", "stopReason": "error", "errorMessage": result.error_message}
    assert _types(seen).count("turn_end") == 3


async def test_provider_error_ends_the_run_with_its_message() -> None:
    failing = AssistantMessage(stop_reason="error", error_message="Connection error: refused")
    provider = ScriptedProvider([failing])
    result, seen, _ = await _run(_config(provider))
    assert result.stop_reason == "error" and result.error_message == "Connection error: refused"
    assert _types(seen) == ["agent_start", "turn_start", "message_start", "message_end",
                            "message_start", "message_end", "turn_end", "agent_end"]


async def test_a_provider_that_raises_becomes_an_error_message() -> None:
    class Broken:
        def stream(self, context, *, cancel=None):
            async def gen():
                raise RuntimeError("bug in provider")
                yield  # pragma: no cover

            return gen()

    pipeline = ToolPipeline([])
    config = LoopConfig(provider=Broken(), pipeline=pipeline, system_prompt=lambda tools: "sys")
    result, seen, transcript = await _run(config)
    assert result.stop_reason == "error" and "bug in provider" in (result.error_message or "")
    assert seen[-3]["type"] == "message_end" and seen[-3]["message"]["stopReason"] == "error"


async def test_unknown_tools_bad_arguments_and_duplicate_ids_get_error_results_in_order() -> None:
    tool = FakeTool("echo", echo)
    provider = ScriptedProvider([
        reply(
            "",
            tool_call("teleport", {}, "dup"),
            tool_call("echo", ["not", "an", "object"], "dup"),
            tool_call("echo", {"text": "fine"}, "dup"),
        ),
        reply("done"),
    ])
    result, _, transcript = await _run(_config(provider, tool))
    results = [m for m in transcript if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["dup", "dup", "dup"]
    assert _text(results[0]) == "Tool teleport not found" and results[0].is_error
    assert _text(results[1]).startswith('Validation failed for tool "echo":') and results[1].is_error
    assert _text(results[2]) == "fine" and not results[2].is_error
    assert result.stop_reason == "stop"


async def test_failed_replies_are_dropped_and_orphans_answered_before_the_next_request() -> None:
    provider = ScriptedProvider([
        reply("", tool_call("echo", {"text": "x"}, "c1")),
        AssistantMessage(stop_reason="error", error_message="boom"),
        reply("second prompt answered"),
    ])
    session = AgentSession("s")
    config = _config(provider, FakeTool("echo", echo))
    first = await session.prompt("one", config)
    assert first.stop_reason == "error"
    second = await session.prompt("two", config)
    assert second.stop_reason == "stop"
    sent = provider.contexts[2].messages
    assert [m.role for m in sent] == ["user", "assistant", "toolResult", "user"]  # the error reply dropped


async def test_orphaned_tool_calls_get_synthetic_results() -> None:
    orphan = AssistantMessage(content=[tool_call("echo", {"text": "x"}, "lost")], stop_reason="toolUse")
    provider = ScriptedProvider([reply("ok")])
    transcript: list[Message] = [UserMessage(content="earlier"), orphan]
    await run_agent(_config(provider), transcript, [UserMessage(content="now")])
    sent = provider.contexts[0].messages
    assert [m.role for m in sent] == ["user", "assistant", "toolResult", "user"]
    assert sent[2].tool_call_id == "lost" and sent[2].is_error


async def test_a_second_prompt_while_running_is_refused() -> None:
    provider = ScriptedProvider([reply("slow", tool_call("hang", {"text": "x"}, "h"))], hang_after_start={0})
    session = AgentSession()
    config = _config(provider)
    first = asyncio.create_task(session.prompt("one", config))
    while not session.running:
        await asyncio.sleep(0.01)
    with pytest.raises(SessionBusy, match="already processing"):
        await session.prompt("two", config)
    assert session.abort() is True
    result = await asyncio.wait_for(first, 5)
    assert result.stop_reason == "aborted" and not session.running
    assert session.abort() is False  # harmless when idle
    assert [m.role for m in session.messages] == ["user", "assistant"]


async def test_active_tool_changes_apply_to_the_next_request() -> None:
    pipeline_tools = [FakeTool("echo", echo), FakeTool("grep", echo)]
    provider = ScriptedProvider([reply("", tool_call("echo", {"text": "x"}, "c1")), reply("ok")])
    config = _config(provider, *pipeline_tools)
    config.pipeline.set_active(["echo"])

    def sink(event: dict[str, Any]) -> None:
        if event["type"] == "tool_execution_end":
            config.pipeline.set_active(["echo", "grep"])

    await run_agent(config, [], [UserMessage(content="go")], emit=sink)
    assert [t.name for t in provider.contexts[0].tools] == ["echo"]
    assert [t.name for t in provider.contexts[1].tools] == ["echo", "grep"]
    assert "- grep:" not in provider.contexts[0].system_prompt


def test_system_prompt_lists_active_tools_and_project_context() -> None:
    from pi_lsp.agent.system_prompt import ContextFile, PromptTool

    tools = [PromptTool("read", "Read a file"), PromptTool("custom"), PromptTool("bash", "Run")]
    prompt = build_system_prompt(tools, cwd="C:\\w", context_files=[ContextFile("AGENTS.md", "Use tabs.")])
    assert "Available tools:\n- read: Read a file\n- bash: Run\n\n" in prompt
    assert "- custom" not in prompt
    assert "Use bash for file operations" in prompt
    assert "# Project Context" in prompt and "## AGENTS.md\n\nUse tabs." in prompt
    assert prompt.endswith("Current working directory: C:/w")
    assert "Available tools:\n(none)" in build_system_prompt([], cwd="/w")
