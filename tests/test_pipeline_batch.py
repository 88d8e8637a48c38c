"""ToolPipeline batches: ordering, concurrency, sequential mode, the length rule, abort (pi-behaviour.md 4.6-4.8)."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_lsp.agent.hooks import BeforeToolCallResult
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.agent.tool import AbortSignal, ToolResult
from pi_lsp.llm.types import TextContent
from tests.pipeline_tools import FakeTool, call, echo, sleeper


def texts(results: list[Any]) -> list[str]:
    return ["".join(b.text for b in r.content if isinstance(b, TextContent)) for r in results]


def ends(events: list[dict[str, Any]]) -> list[str]:
    return [e["toolCallId"] for e in events if e["type"] == "tool_execution_end"]


async def test_parallel_calls_overlap_end_in_completion_order_and_return_in_source_order() -> None:
    second_done = asyncio.Event()

    async def slow(args, ctx):
        # finishes only after the second call: impossible unless both run at once
        await asyncio.wait_for(second_done.wait(), 5)
        return ToolResult.text("slow")

    async def fast(args, ctx):
        second_done.set()
        return ToolResult.text("fast")

    events: list[dict[str, Any]] = []
    pipeline = ToolPipeline([FakeTool("slow", slow), FakeTool("fast", fast)])
    results = await pipeline.execute_batch(
        [call("slow", {"text": "a"}, "tool-1"), call("fast", {"text": "b"}, "tool-2")], emit=events.append
    )
    assert [r.tool_call_id for r in results] == ["tool-1", "tool-2"]
    assert texts(results) == ["slow", "fast"]
    assert ends(events) == ["tool-2", "tool-1"]
    starts = [e["toolCallId"] for e in events if e["type"] == "tool_execution_start"]
    assert starts == ["tool-1", "tool-2"] and events[0]["type"] == events[1]["type"] == "tool_execution_start"


async def test_one_sequential_tool_makes_the_whole_batch_sequential() -> None:
    log: list[str] = []
    tools = [
        FakeTool("seq", sleeper(0.05, log, "seq"), execution_mode="sequential"),
        FakeTool("par", sleeper(0.0, log, "par")),
    ]
    results = await ToolPipeline(tools).execute_batch(
        [call("seq", {"text": "a"}, "1"), call("par", {"text": "b"}, "2"), call("seq", {"text": "c"}, "3")]
    )
    assert log == ["start seq", "end seq", "start par", "end par", "start seq", "end seq"]
    assert texts(results) == ["seq", "par", "seq"]


async def test_immediate_outcomes_end_during_preflight_and_keep_their_place() -> None:
    events: list[dict[str, Any]] = []
    pipeline = ToolPipeline([FakeTool("echo", echo)])
    results = await pipeline.execute_batch(
        [call("echo", {"text": "x"}, "a"), call("ghost", {}, "b"), call("echo", {}, "c")], emit=events.append
    )
    assert [r.is_error for r in results] == [False, True, True]
    assert texts(results)[1] == "Tool ghost not found"
    assert texts(results)[2].startswith('Validation failed for tool "echo":\n  - text: must have required')
    kinds = [(e["type"], e["toolCallId"]) for e in events]
    # preflight in source order; immediate outcomes end at once; the prepared call ends after preflight
    assert kinds == [
        ("tool_execution_start", "a"),
        ("tool_execution_start", "b"),
        ("tool_execution_end", "b"),
        ("tool_execution_start", "c"),
        ("tool_execution_end", "c"),
        ("tool_execution_end", "a"),
    ]


async def test_length_stop_runs_nothing_and_explains() -> None:
    tool = FakeTool("echo", echo)
    pipeline = ToolPipeline([tool])
    hooked: list[str] = []

    async def hook(ctx, signal):
        hooked.append("x")

    pipeline.add_before_hook(hook)
    events: list[dict[str, Any]] = []
    results = await pipeline.execute_batch(
        [call("echo", {"text": "a"}, "1"), call("nope", "garbage", "2")], stop_reason="length", emit=events.append
    )
    assert tool.received == [] and hooked == []
    assert texts(results) == [
        'Tool call "echo" was not executed: the response hit the output token limit, so its arguments may be '
        "truncated. Re-issue the tool call with complete arguments.",
        'Tool call "nope" was not executed: the response hit the output token limit, so its arguments may be '
        "truncated. Re-issue the tool call with complete arguments.",
    ]
    assert all(r.is_error and r.details == {} for r in results)
    assert [e["type"] for e in events] == ["tool_execution_start", "tool_execution_end"] * 2


async def test_duplicate_ids_still_run_and_correlate_by_position() -> None:
    results = await ToolPipeline([FakeTool("echo", echo)]).execute_batch(
        [call("echo", {"text": "one"}, "same"), call("echo", {"text": "two"}, "same")]
    )
    assert texts(results) == ["one", "two"] and [r.tool_call_id for r in results] == ["same", "same"]


async def test_abort_mid_batch_gives_every_call_a_result() -> None:
    signal = AbortSignal()
    started = asyncio.Event()

    async def long(args, ctx):
        started.set()
        await asyncio.sleep(60)
        return ToolResult.text("never")

    done = FakeTool("echo", echo)
    pipeline = ToolPipeline([FakeTool("long", long), done])
    pending = asyncio.ensure_future(
        pipeline.execute_batch([call("long", {"text": "a"}, "1"), call("echo", {"text": "b"}, "2")], signal=signal)
    )
    await asyncio.wait_for(started.wait(), 5)
    signal.abort()
    results = await asyncio.wait_for(pending, 5)
    assert texts(results) == ["Operation aborted", "b"]


async def test_abort_during_sequential_batch_aborts_the_rest_without_running_them() -> None:
    signal = AbortSignal()

    async def aborts(args, ctx):
        signal.abort()
        return ToolResult.text("first finished")

    later = FakeTool("later", echo, execution_mode="sequential")
    pipeline = ToolPipeline([FakeTool("first", aborts), later])
    events: list[dict[str, Any]] = []
    results = await pipeline.execute_batch(
        [call("first", {"text": "a"}, "1"), call("later", {"text": "b"}, "2")], signal=signal, emit=events.append
    )
    assert texts(results) == ["first finished", "Operation aborted"] and later.received == []
    assert ends(events) == ["1", "2"]


async def test_cancelling_a_batch_request_returns_all_results() -> None:
    started = asyncio.Event()

    async def long(args, ctx):
        started.set()
        await asyncio.sleep(60)
        return ToolResult.text("never")

    pipeline = ToolPipeline([FakeTool("long", long), FakeTool("echo", echo)])
    request = asyncio.ensure_future(
        pipeline.execute_batch([call("long", {"text": "a"}, "1"), call("echo", {"text": "b"}, "2")])
    )
    await asyncio.wait_for(started.wait(), 5)
    request.cancel()
    request.cancel()  # twice: still no lost result
    results = await asyncio.wait_for(request, 5)
    assert texts(results) == ["Operation aborted", "b"]


async def test_a_blocking_policy_hook_blocks_only_its_call() -> None:
    pipeline = ToolPipeline([FakeTool("echo", echo)])

    async def policy(ctx, signal):
        if ctx.args.text == "rm -rf /":
            return BeforeToolCallResult(block=True, reason="Denied")
        return None

    pipeline.add_before_hook(policy, first=True)
    results = await pipeline.execute_batch(
        [call("echo", {"text": "ok"}, "1"), call("echo", {"text": "rm -rf /"}, "2")]
    )
    assert texts(results) == ["ok", "Denied"] and [r.is_error for r in results] == [False, True]


async def test_empty_batch() -> None:
    assert await ToolPipeline([]).execute_batch([]) == []
