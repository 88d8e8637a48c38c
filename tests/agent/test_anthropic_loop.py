"""The agent loop over the Anthropic provider against a real loopback server streaming the
documentation-shaped fixtures: max_tokens in the middle of a tool's input runs nothing and the
model is asked again with error tool_result blocks (the length rule)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_lsp.agent.loop import LoopConfig, run_agent
from pi_lsp.agent.pipeline import LENGTH_MESSAGE, ToolPipeline
from pi_lsp.agent.tool import ToolContext, ToolResult
from pi_lsp.llm.anthropic import AnthropicProvider
from pi_lsp.llm.provider import ProviderSettings
from pi_lsp.llm.types import Message, UserMessage
from tests.llm.scripted_http import Reply, ScriptedServer
from tests.pipeline_tools import FakeTool

FIXTURES = Path(__file__).resolve().parents[1] / "llm" / "fixtures" / "anthropic"


async def test_max_tokens_inside_tool_input_runs_nothing_and_asks_again() -> None:
    ran: list[Any] = []

    async def write(args: Any, ctx: ToolContext) -> ToolResult:
        ran.append(args)
        return ToolResult.text("written")

    replies = [Reply(chunks=[(FIXTURES / name).read_bytes()]) for name in ("max_tokens_tool.sse", "cache_usage.sse")]
    async with ScriptedServer(replies) as server:
        provider = AnthropicProvider(ProviderSettings(base_url=server.url, model="claude-sonnet-4-5", max_retries=0))
        config = LoopConfig(provider=provider, pipeline=ToolPipeline([FakeTool("write", write)]),
                            system_prompt=lambda _tools: "sys", session_id="s")
        transcript: list[Message] = []
        seen: list[dict[str, Any]] = []
        result = await asyncio.wait_for(run_agent(config, transcript, [UserMessage(content="write big.txt")], emit=seen.append), 10)
        await provider.aclose()
    assert result.stop_reason == "stop" and ran == []
    second = server.seen[1].body["messages"]
    assert second[1]["content"][0]["type"] == "tool_use" and second[1]["content"][0]["id"] == "toolu_01WriteBig"
    [block] = second[2]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_01WriteBig" and block["is_error"] is True
    assert block["content"] == [{"type": "text", "text": LENGTH_MESSAGE.format(name="write")}]
    # the usage of each reply, cache figures included, is on its message_end
    ends = [e["message"] for e in seen if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert ends[0]["stopReason"] == "length"
    assert ends[1]["usage"] == {"input": 21, "output": 5, "cacheRead": 1800, "cacheWrite": 188, "totalTokens": 2014}
