"""Steering and follow-up messages (Pi's steer / followUp) through AgentSession and the loop, with
a scripted provider and a real ToolPipeline."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_lsp.agent.loop import LoopConfig
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.agent.session import AgentSession, SessionIdle
from pi_lsp.agent.system_prompt import build_system_prompt, prompt_tool
from pi_lsp.agent.tool import ToolContext, ToolResult
from pi_lsp.llm.types import AssistantMessage, ToolResultMessage, UserMessage
from tests.agent.scripted_provider import ScriptedProvider, reply, tool_call
from tests.pipeline_tools import FakeTool


def _config(provider: ScriptedProvider, *tools: FakeTool, max_turns: int = 50) -> LoopConfig:
    return LoopConfig(
        provider=provider,
        pipeline=ToolPipeline(list(tools)),
        system_prompt=lambda active: build_system_prompt([prompt_tool(t) for t in active], cwd="/w"),
        max_turns=max_turns,
        session_id="s1",
    )


def _gate() -> tuple[FakeTool, asyncio.Event, asyncio.Event]:
    """A tool that signals it started and waits until released (a long bash call)."""
    started, release = asyncio.Event(), asyncio.Event()

    async def wait(args: Any, ctx: ToolContext) -> ToolResult:
        started.set()
        await release.wait()
        return ToolResult.text("slow job done")

    return FakeTool("slow", wait), started, release


def _roles(messages: list[Any]) -> list[str]:
    return [f"{m.role}:{m.content}" if isinstance(m, UserMessage) else m.role for m in messages]


async def test_steer_during_a_tool_call_goes_with_the_next_request() -> None:
    tool, started, release = _gate()
    provider = ScriptedProvider([reply("", tool_call("slow", {"text": "x"}, "s1")), reply("adjusted")])
    session = AgentSession()
    seen: list[dict[str, Any]] = []
    run = asyncio.create_task(session.prompt("do the job", _config(provider, tool), on_event=seen.append))
    await started.wait()
    assert session.steer("use the staging database instead") == 1
    assert session.steer("and be quick") == 2
    release.set()
    result = await asyncio.wait_for(run, 5)
    assert result.stop_reason == "stop" and result.undelivered == []
    # the second request carries the tool result, then both steering messages, in order
    second = provider.contexts[1].messages
    assert _roles(second) == ["user:do the job", "assistant", "toolResult",
                              "user:use the staging database instead", "user:and be quick"]
    assert isinstance(second[2], ToolResultMessage) and second[2].tool_call_id == "s1"
    # they are announced like any message, at the start of the turn that sends them
    kinds = [(e["type"], e.get("message", {}).get("role")) for e in seen if e["type"] != "message_update"]
    starts = [i for i, kind in enumerate(kinds) if kind == ("turn_start", None)]
    second_turn = kinds[starts[1]:]
    assert second_turn[:5] == [("turn_start", None), ("message_start", "user"), ("message_end", "user"),
                               ("message_start", "user"), ("message_end", "user")]
    assert _roles(session.messages)[-1] == "assistant"


async def test_steer_after_a_final_reply_keeps_the_run_going() -> None:
    session = AgentSession()

    def first(ctx: Any) -> AssistantMessage:
        session.steer("one more thing")  # arrives while the reply streams
        return reply("done")

    provider = ScriptedProvider([first, reply("did the one more thing")])
    result = await asyncio.wait_for(session.prompt("go", _config(provider)), 5)
    assert result.stop_reason == "stop" and result.turns == 2
    assert _roles(provider.contexts[1].messages) == ["user:go", "assistant", "user:one more thing"]


async def test_follow_up_starts_when_the_run_would_end() -> None:
    tool, started, release = _gate()
    provider = ScriptedProvider([reply("", tool_call("slow", {"text": "x"}, "s1")), reply("job done"), reply("tests pass")])
    session = AgentSession()
    run = asyncio.create_task(session.prompt("do the job", _config(provider, tool)))
    await started.wait()
    assert session.follow_up("now run the tests") == 1
    release.set()
    result = await asyncio.wait_for(run, 5)
    assert result.stop_reason == "stop" and result.turns == 3
    # not with the request after the tool batch, only once the model had finished
    assert _roles(provider.contexts[1].messages) == ["user:do the job", "assistant", "toolResult"]
    assert _roles(provider.contexts[2].messages)[-2:] == ["assistant", "user:now run the tests"]


async def test_steer_and_follow_up_need_an_active_run() -> None:
    session = AgentSession("idle")
    with pytest.raises(SessionIdle, match="pi/prompt"):
        session.steer("hello")
    with pytest.raises(SessionIdle):
        session.follow_up("hello")


async def test_queued_messages_of_an_aborted_run_are_reported_undelivered() -> None:
    tool, started, release = _gate()
    provider = ScriptedProvider([reply("", tool_call("slow", {"text": "x"}, "s1")), reply("unreached")])
    session = AgentSession()
    run = asyncio.create_task(session.prompt("go", _config(provider, tool)))
    await started.wait()
    session.steer("steer me")
    session.follow_up("follow me")
    session.abort()
    result = await asyncio.wait_for(run, 5)
    assert result.stop_reason == "aborted"
    assert [m.content for m in result.undelivered] == ["steer me", "follow me"]
    assert not any(isinstance(m, UserMessage) and m.content == "steer me" for m in session.messages)
    # the queues are empty for the next run
    provider.scripts.append(reply("fresh"))
    again = await asyncio.wait_for(session.prompt("again", _config(provider, tool)), 5)
    assert again.undelivered == [] and _roles(provider.contexts[-1].messages)[-1] == "user:again"


async def test_steering_taken_when_the_turn_limit_ends_the_run_is_undelivered() -> None:
    tool, started, release = _gate()
    provider = ScriptedProvider([reply("", tool_call("slow", {"text": "x"}, "s1"))])
    session = AgentSession()
    run = asyncio.create_task(session.prompt("go", _config(provider, tool, max_turns=1)))
    await started.wait()
    session.steer("too late")
    release.set()
    result = await asyncio.wait_for(run, 5)
    assert result.stop_reason == "error" and [m.content for m in result.undelivered] == ["too late"]
