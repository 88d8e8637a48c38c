"""Hooks registered for some tools only (``tools=``): they see exactly those tools' calls, in the
order of registration among all hooks, and hooks registered later are seen by calls afterwards."""

from __future__ import annotations

from typing import Any

from pi_lsp.agent.hooks import AfterToolCallResult
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.llm.types import TextContent
from tests.pipeline_tools import FakeTool, call, echo


def _recorder(seen: list[str], label: str):
    async def hook(ctx: Any, signal: Any) -> None:
        seen.append(f"{label}:{ctx.tool_call.name}")
        return None

    return hook


async def test_a_hook_sees_only_the_tools_it_was_registered_for() -> None:
    seen: list[str] = []
    pipeline = ToolPipeline([FakeTool("a", echo), FakeTool("b", echo), FakeTool("c", echo)])
    pipeline.add_before_hook(_recorder(seen, "all"))
    pipeline.add_before_hook(_recorder(seen, "b-only"), tools={"b"})
    pipeline.add_before_hook(_recorder(seen, "policy"), first=True)
    pipeline.add_before_hook(_recorder(seen, "first-ac"), first=True, tools=["a", "c"])
    pipeline.add_after_hook(_recorder(seen, "after-c"), tools=("c",))
    pipeline.add_after_hook(_recorder(seen, "after-all"))
    for name in ("a", "b", "c", "a"):
        result = await pipeline.execute(call(name, {"text": "x"}))
        assert not result.is_error
    assert seen == [
        "policy:a", "first-ac:a", "all:a", "after-all:a",
        "policy:b", "all:b", "b-only:b", "after-all:b",
        "policy:c", "first-ac:c", "all:c", "after-c:c", "after-all:c",
        "policy:a", "first-ac:a", "all:a", "after-all:a",
    ]


async def test_a_hook_added_later_applies_to_the_next_calls() -> None:
    pipeline = ToolPipeline([FakeTool("a", echo), FakeTool("b", echo)])
    assert [b.text for b in (await pipeline.execute(call("a", {"text": "x"}))).content] == ["x"]

    async def shout(ctx: Any, signal: Any) -> AfterToolCallResult:
        return AfterToolCallResult(content=[TextContent(text=ctx.result.content[0].text.upper())])

    pipeline.add_after_hook(shout, tools={"a"})
    assert [b.text for b in (await pipeline.execute(call("a", {"text": "x"}))).content] == ["X"]
    assert [b.text for b in (await pipeline.execute(call("b", {"text": "x"}))).content] == ["x"]
