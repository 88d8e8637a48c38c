"""ToolPipeline, one call: lookup, prepare, validation, hooks, execution, errors (design.md section 2)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from pi_lsp.agent.hooks import AfterToolCallResult, BeforeToolCallResult
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.agent.tool import AbortSignal, ToolContext, ToolError, ToolResult
from pi_lsp.llm.types import ImageContent, TextContent, to_wire
from tests.pipeline_tools import ClosedArgs, FakeTool, call, echo


def text_of(message: Any) -> str:
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


async def test_unknown_and_inactive_tools_are_not_found() -> None:
    hidden = FakeTool("hidden", echo)
    pipeline = ToolPipeline([FakeTool("echo", echo), hidden], active=["echo"])
    for name in ("frobnicate", "hidden", "Echo"):
        result = await pipeline.execute(call(name, {"text": "x"}))
        assert result.is_error and text_of(result) == f"Tool {name} not found"
        assert result.details == {} and result.tool_name == name and result.tool_call_id == "c1"
    assert hidden.received == []
    pipeline.inactive_hint = lambda name, active: f"(activate {name} beside {active})"
    hinted = await pipeline.execute(call("hidden", {"text": "x"}))
    assert text_of(hinted) == "Tool hidden not found (activate hidden beside ['echo'])"
    assert text_of(await pipeline.execute(call("frobnicate", {}))) == "Tool frobnicate not found"  # not registered: Pi's text


async def test_success_result_is_correlated_and_serialises_camel_case() -> None:
    pipeline = ToolPipeline([FakeTool("echo", echo)])
    result = await pipeline.execute(call("echo", {"text": "ab", "times": "2"}, call_id="id-9"))
    wire = to_wire(result)
    assert wire["role"] == "toolResult" and wire["toolCallId"] == "id-9" and wire["toolName"] == "echo"
    assert wire["isError"] is False and wire["content"] == [{"type": "text", "text": "abab"}]
    assert wire["details"] == {"count": 2} and isinstance(wire["timestamp"], int)


def test_active_set_rejects_unknown_names_and_keeps_the_old_set() -> None:
    pipeline = ToolPipeline([FakeTool("a", echo), FakeTool("b", echo)], active=["a"])
    assert pipeline.active_names == ["a"]
    with pytest.raises(ValueError, match="Unknown tools: x, y"):
        pipeline.set_active(["b", "x", "y"])
    assert pipeline.active_names == ["a"]
    assert pipeline.set_active(["b", "a", "b"]) == ["b", "a"]
    assert ToolPipeline([FakeTool("a", echo), FakeTool("b", echo)]).active_names == ["a", "b"]
    with pytest.raises(ValueError):
        ToolPipeline([FakeTool("a", echo)], active=["nope"])
    with pytest.raises(ValueError, match="two tools"):
        ToolPipeline([FakeTool("a", echo), FakeTool("a", echo)])


async def test_prepare_arguments_feeds_validation_and_its_errors_are_results() -> None:
    def legacy(raw: Any) -> Any:
        if isinstance(raw, dict) and "legacy" in raw:
            return {"text": raw["legacy"]}
        if raw == "explode":
            raise ToolError("cannot prepare")
        return raw

    tool = FakeTool("echo", echo, prepare=legacy)
    pipeline = ToolPipeline([tool])
    assert text_of(await pipeline.execute(call("echo", {"legacy": "hi"}))) == "hi"
    failed = await pipeline.execute(call("echo", "explode"))
    assert failed.is_error and text_of(failed) == "cannot prepare" and failed.details == {}


async def test_validation_failure_is_pis_text_and_the_tool_does_not_run() -> None:
    tool = FakeTool("closed", echo, args_model=ClosedArgs)
    result = await ToolPipeline([tool]).execute(call("closed", {"value": "v", "x": 1}))
    assert result.is_error and result.details == {} and tool.received == []
    assert text_of(result) == (
        'Validation failed for tool "closed":\n  - x: schema is false\n'
        "  - root: must not have additional properties\n\n"
        'Received arguments:\n{\n  "value": "v",\n  "x": 1\n}'
    )


async def test_coerced_values_reach_the_tool() -> None:
    tool = FakeTool("echo", echo)
    await ToolPipeline([tool]).execute(call("echo", {"text": 12, "times": "3", "junk": None}))
    [args] = tool.received
    assert args.text == "12" and args.times == 3


async def test_before_hooks_order_block_and_mutation() -> None:
    seen: list[str] = []
    tool = FakeTool("echo", echo)
    pipeline = ToolPipeline([tool])

    def recorder(label: str, verdict: BeforeToolCallResult | None = None):
        async def hook(ctx, signal):
            seen.append(label)
            return verdict

        return hook

    async def mutate(ctx, signal):
        seen.append("mutate")
        ctx.args.text = "changed"
        ctx.args.times = "2"  # no re-validation (Pi): the tool receives the string as set

    pipeline.add_before_hook(recorder("ext1"))
    pipeline.add_before_hook(mutate)
    pipeline.add_before_hook(recorder("policy1"), first=True)
    pipeline.add_before_hook(recorder("policy2"), first=True)
    result = await pipeline.execute(call("echo", {"text": "a"}))
    assert seen == ["policy1", "policy2", "ext1", "mutate"]
    assert tool.received[-1].times == "2" and text_of(result) == "changedchanged"

    blocker = ToolPipeline([tool])
    blocker.add_before_hook(recorder("b1", BeforeToolCallResult(block=True, reason="Denied by user")))
    blocker.add_before_hook(recorder("never"))
    seen.clear()
    result = await blocker.execute(call("echo", {"text": "a"}))
    assert seen == ["b1"] and result.is_error and text_of(result) == "Denied by user"
    assert result.details == {}

    silent = ToolPipeline([tool])
    silent.add_before_hook(recorder("b", BeforeToolCallResult(block=True)))
    assert text_of(await silent.execute(call("echo", {"text": "a"}))) == "Tool execution was blocked"


async def test_a_raising_before_hook_blocks_with_its_message() -> None:
    tool = FakeTool("echo", echo)
    pipeline = ToolPipeline([tool])

    async def broken(ctx, signal):
        raise PermissionError("protected path: .env")

    pipeline.add_before_hook(broken)
    result = await pipeline.execute(call("echo", {"text": "a"}))
    assert result.is_error and text_of(result) == "protected path: .env" and tool.received == []


async def test_already_aborted_signal_runs_nothing() -> None:
    tool = FakeTool("echo", echo)
    signal = AbortSignal()
    signal.abort()
    result = await ToolPipeline([tool]).execute(call("echo", {"text": "a"}), signal=signal)
    assert result.is_error and text_of(result) == "Operation aborted" and tool.received == []


async def test_tool_errors_keep_details_and_bugs_are_named_and_logged(caplog) -> None:
    async def fails(args, ctx):
        raise ToolError("ENOENT: no such file", details={"path": "x"})

    async def buggy(args, ctx):
        raise ValueError("boom")

    async def wrong(args, ctx):
        return "not a result"

    pipeline = ToolPipeline([FakeTool("f", fails), FakeTool("b", buggy), FakeTool("w", wrong)])
    failed = await pipeline.execute(call("f", {"text": "a"}))
    assert (failed.is_error, text_of(failed), failed.details) == (True, "ENOENT: no such file", {"path": "x"})
    with caplog.at_level(logging.ERROR, logger="pi_lsp.agent.pipeline"):
        bug = await pipeline.execute(call("b", {"text": "a"}))
    assert bug.is_error and text_of(bug) == "ValueError: boom" and bug.details == {}
    assert any(record.exc_info and "boom" in str(record.exc_info[1]) for record in caplog.records)
    odd = await pipeline.execute(call("w", {"text": "a"}))
    assert odd.is_error and text_of(odd).startswith("TypeError: tool returned str")


async def test_abort_while_running_cancels_the_tool() -> None:
    started = asyncio.Event()
    cleaned: list[str] = []

    async def waits(args, ctx):
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.append("cleaned")
        return ToolResult.text("never")

    async def reports(args, ctx):
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise ToolError("partial output\n\nCommand aborted") from None
        return ToolResult.text("never")

    for run, expected in ((waits, "Operation aborted"), (reports, "partial output\n\nCommand aborted")):
        started.clear()
        signal = AbortSignal()
        pipeline = ToolPipeline([FakeTool("t", run)])
        pending = asyncio.ensure_future(pipeline.execute(call("t", {"text": "a"}), signal=signal))
        await asyncio.wait_for(started.wait(), 5)
        signal.abort()
        result = await asyncio.wait_for(pending, 5)
        assert result.is_error and text_of(result) == expected and result.details == {}
    assert cleaned == ["cleaned"]


async def test_cancelling_the_awaiting_task_still_yields_a_result() -> None:
    started = asyncio.Event()
    seen_signal: list[AbortSignal] = []

    async def waits(args, ctx: ToolContext):
        seen_signal.append(ctx.signal)
        started.set()
        await asyncio.sleep(60)
        return ToolResult.text("never")

    pipeline = ToolPipeline([FakeTool("t", waits)])
    request = asyncio.ensure_future(pipeline.execute(call("t", {"text": "a"})))
    await asyncio.wait_for(started.wait(), 5)
    request.cancel()  # what pygls does on $/cancelRequest
    result = await asyncio.wait_for(request, 5)
    assert not request.cancelled()
    assert result.is_error and text_of(result) == "Operation aborted"
    assert seen_signal[0].aborted


async def test_a_hanging_before_hook_is_cut_short_by_abort() -> None:
    entered = asyncio.Event()

    async def asks_forever(ctx, signal):
        entered.set()
        await asyncio.sleep(60)

    tool = FakeTool("echo", echo)
    pipeline = ToolPipeline([tool])
    pipeline.add_before_hook(asks_forever)
    signal = AbortSignal()
    pending = asyncio.ensure_future(pipeline.execute(call("echo", {"text": "a"}), signal=signal))
    await asyncio.wait_for(entered.wait(), 5)
    signal.abort()
    result = await asyncio.wait_for(pending, 5)
    assert text_of(result) == "Operation aborted" and tool.received == []


async def test_after_hooks_chain_and_patch_wholesale() -> None:
    seen: list[tuple[str, bool]] = []

    async def first(ctx, signal):
        seen.append((ctx.result.content[0].text, ctx.is_error))
        return AfterToolCallResult(content=[TextContent(text="patched")], details=None)

    async def second(ctx, signal):
        seen.append((ctx.result.content[0].text, ctx.is_error))
        image = ImageContent(data="AAAA", mime_type="image/png")
        return AfterToolCallResult(content=[*ctx.result.content, image], is_error=True)

    async def keeps(ctx, signal):
        return None

    pipeline = ToolPipeline([FakeTool("echo", echo)])
    for hook in (first, second, keeps):
        pipeline.add_after_hook(hook)
    result = await pipeline.execute(call("echo", {"text": "orig"}))
    assert seen == [("orig", False), ("patched", False)]
    assert result.is_error and result.details is None
    assert [block.type for block in result.content] == ["text", "image"]


async def test_after_hooks_see_errors_and_a_raising_one_replaces_the_result() -> None:
    seen: list[bool] = []

    async def watch(ctx, signal):
        seen.append(ctx.is_error)

    async def broken(ctx, signal):
        raise RuntimeError("notice failed")

    async def never(ctx, signal):
        seen.append("never")  # type: ignore[arg-type]

    async def fails(args, ctx):
        raise ToolError("bad")

    pipeline = ToolPipeline([FakeTool("echo", echo), FakeTool("f", fails)])
    pipeline.add_after_hook(watch)
    await pipeline.execute(call("f", {"text": "a"}))
    assert seen == [True]
    await pipeline.execute(call("nope"))  # immediate outcome: after hooks not called
    assert seen == [True]
    pipeline.add_after_hook(broken)
    pipeline.add_after_hook(never)
    result = await pipeline.execute(call("echo", {"text": "a"}))
    assert result.is_error and text_of(result) == "notice failed" and result.details == {}
    assert seen == [True, False]


async def test_events_of_one_call_and_late_updates_are_ignored() -> None:
    events: list[dict[str, Any]] = []
    keep: list[ToolContext] = []

    async def streams(args, ctx: ToolContext):
        keep.append(ctx)
        ctx.update(ToolResult.text("partial"))
        return ToolResult.text("done", details={"n": 1})

    pipeline = ToolPipeline([FakeTool("s", streams)])
    await pipeline.execute(call("s", {"text": "a"}, call_id="k"), emit=events.append)
    keep[0].update(ToolResult.text("too late"))
    assert [e["type"] for e in events] == ["tool_execution_start", "tool_execution_update", "tool_execution_end"]
    assert events[0] == {"type": "tool_execution_start", "toolCallId": "k", "toolName": "s", "args": {"text": "a"}}
    assert events[1]["partialResult"] == {"content": [{"type": "text", "text": "partial"}]}
    assert events[1]["args"] == {"text": "a"}
    assert events[2] == {
        "type": "tool_execution_end",
        "toolCallId": "k",
        "toolName": "s",
        "result": {"content": [{"type": "text", "text": "done"}], "details": {"n": 1}},
        "isError": False,
    }
    assert list(events[2])[0] == "type"


async def test_a_failing_event_sink_does_not_break_the_call() -> None:
    def sink(event: dict[str, Any]) -> None:
        raise RuntimeError("sink down")

    result = await ToolPipeline([FakeTool("echo", echo)]).execute(call("echo", {"text": "a"}), emit=sink)
    assert not result.is_error and text_of(result) == "a"


def test_abort_signal_callbacks_run_once_and_can_be_removed() -> None:
    signal = AbortSignal()
    calls: list[str] = []
    signal.on_abort(lambda: calls.append("a"))
    remove = signal.on_abort(lambda: calls.append("removed"))
    signal.on_abort(lambda: calls.append("b"))
    remove()
    remove()  # harmless twice
    signal.abort("first")
    signal.abort("second")
    assert calls == ["a", "b"] and signal.reason == "first"
    signal.on_abort(lambda: calls.append("late"))  # already aborted: runs at once
    assert calls == ["a", "b", "late"]


class _PlainExecute(FakeTool):
    """A tool whose ``execute`` is a plain method: it raises at once or returns a future."""

    def execute(self, args: Any, ctx: ToolContext) -> Any:  # type: ignore[override]
        self.received.append(args)
        if args.text == "raise":
            raise ToolError("refused before any await")
        if args.text == "crash":
            raise RuntimeError("a bug before any await")
        if args.text == "none":
            return None
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        future.get_loop().call_soon(future.set_result, ToolResult.text("from a future"))
        return future


async def test_an_execute_that_is_not_a_coroutine_function_is_run_like_one() -> None:
    """The pipeline runs a coroutine as it is and awaits anything else in one of its own; what a
    plain execute raises at once is its result, as if it had raised after an await."""
    pipeline = ToolPipeline([_PlainExecute("plain", echo)])
    refused = await pipeline.execute(call("plain", {"text": "raise"}))
    assert refused.is_error and text_of(refused) == "refused before any await"
    crashed = await pipeline.execute(call("plain", {"text": "crash"}))
    assert crashed.is_error and "a bug before any await" in text_of(crashed)
    wrong = await pipeline.execute(call("plain", {"text": "none"}))
    assert wrong.is_error and "NoneType" in text_of(wrong)
    later = await pipeline.execute(call("plain", {"text": "future"}))
    assert not later.is_error and text_of(later) == "from a future"
