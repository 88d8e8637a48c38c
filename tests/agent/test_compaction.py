"""Context compaction in the loop with a small fake context window: when it starts, the summary
request's shape, the history after it, trimming tool results first, the overflow fallback."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_lsp.agent.compaction import (
    SUMMARY_INSTRUCTIONS,
    SUMMARY_PREFIX,
    SUMMARY_SYSTEM_PROMPT,
    CompactionSettings,
    estimate_context_tokens,
    find_cut_point,
    is_summary_message,
    summary_message,
)
from pi_lsp.agent.loop import LoopConfig
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.agent.session import AgentSession
from pi_lsp.llm.http_errors import CONTEXT_OVERFLOW_PREFIX
from pi_lsp.llm.types import AssistantMessage, Message, TextContent, ToolResultMessage, Usage, UserMessage
from tests.agent.scripted_provider import ScriptedProvider, reply, tool_call

SUMMARY = "## Goal\nAdd slugify to textkit and make its tests pass.\n\n## Files that matter\n- textkit/slug.py"


def _result(call_id: str, name: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)])


def _history() -> list[Message]:
    """An earlier conversation: a long first request, one large old tool result (6000 chars), one
    recent one (1200)."""
    return [
        UserMessage(content="Add a slugify function to textkit. Details: " + "z" * 800),
        reply("", tool_call("read", {"path": "textkit/slug.py"}, "r1")),
        _result("r1", "read", "x" * 6000),
        reply("Added slugify in textkit/slug.py."),
        UserMessage(content="Now fix the tests"),
        reply("", tool_call("bash", {"command": "python -m pytest"}, "b1")),
        _result("b1", "bash", "y" * 1200),
        reply("Tests fixed."),
    ]


def _config(provider: ScriptedProvider, compaction: CompactionSettings) -> LoopConfig:
    return LoopConfig(provider=provider, pipeline=ToolPipeline([]), system_prompt=lambda _tools: "You are terse.",
                      session_id="s1", compaction=compaction)


async def _prompt(session: AgentSession, provider: ScriptedProvider, compaction: CompactionSettings, text: str):
    seen: list[dict[str, Any]] = []
    result = await asyncio.wait_for(session.prompt(text, _config(provider, compaction), on_event=seen.append), 5)
    return result, seen


def _of(seen: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in seen if e["type"] == kind]


async def test_a_small_window_summarises_older_turns_and_keeps_recent_ones() -> None:
    settings = CompactionSettings(context_window=900, reserve_tokens=450, keep_recent_tokens=300, tool_result_max_chars=200)
    provider = ScriptedProvider([reply(SUMMARY), reply("Next: publish it.")])
    session = AgentSession("s1", _history())
    result, seen = await _prompt(session, provider, settings, "What next?")
    assert result.stop_reason == "stop" and len(provider.contexts) == 2
    # the summary request: its own system prompt, no tools, the older turns as text
    request = provider.contexts[0]
    assert request.system_prompt == SUMMARY_SYSTEM_PROMPT and request.tools == []
    [ask] = request.messages
    assert isinstance(ask, UserMessage) and isinstance(ask.content, str)
    assert ask.content.startswith("<conversation>\n[User]: Add a slugify function to textkit")
    assert ask.content.endswith(SUMMARY_INSTRUCTIONS)
    assert '[Assistant tool call] read {"path": "textkit/slug.py"}' in ask.content
    assert "[Tool result read]: xxx" in ask.content and "characters of this tool result were trimmed" in ask.content
    assert "x" * 500 not in ask.content  # trimmed before it was summarised
    assert "[User]: Now fix the tests" in ask.content
    assert "Tests fixed." not in ask.content and "What next?" not in ask.content  # kept verbatim instead
    # the next request: the summary, then the recent turns verbatim
    after = provider.contexts[1].messages
    assert is_summary_message(after[0]) and SUMMARY in after[0].content
    assert after[0].content.startswith(SUMMARY_PREFIX)
    assert [m.role for m in after[1:]] == ["assistant", "toolResult", "assistant", "user"]
    assert after[1].tool_calls()[0].id == "b1"
    assert after[2].content[0].text == "y" * 1200
    assert after[-1].content == "What next?"
    # the session goes on from the compacted history; the run added only its own messages
    assert session.messages[0] is after[0] and session.messages[-1].content[0].text == "Next: publish it."
    assert [m.role for m in result.messages] == ["user", "assistant"]
    [start] = _of(seen, "compaction_start")
    [done] = _of(seen, "compaction")
    assert start["reason"] == "threshold" and start["contextWindow"] == 900 and start["tokensBefore"] > 450
    assert done["summarized"] is True and done["keptMessages"] == 4 and done["summary"] == SUMMARY
    assert done["trimmedToolResults"] == 1 and done["tokensAfter"] < done["tokensBefore"]
    # compaction happens before the turn's request, inside the run's event sequence
    kinds = [e["type"] for e in seen if e["type"] != "message_update"]
    assert kinds[:6] == ["agent_start", "turn_start", "message_start", "message_end", "compaction_start", "compaction"]


async def test_trimming_old_tool_results_alone_can_be_enough() -> None:
    settings = CompactionSettings(context_window=2000, reserve_tokens=500, keep_recent_tokens=300, tool_result_max_chars=200)
    provider = ScriptedProvider([reply("fine")])
    session = AgentSession("s1", _history())
    result, seen = await _prompt(session, provider, settings, "What next?")
    assert result.stop_reason == "stop" and len(provider.contexts) == 1  # no summary request
    sent = provider.contexts[0].messages
    assert len(sent) == 9 and not any(is_summary_message(m) for m in sent)
    old = sent[2].content[0].text
    assert len(old) < 300 and old.startswith("x" * 100) and "5800 characters of this tool result were trimmed" in old
    assert sent[6].content[0].text == "y" * 1200  # the recent result is untouched
    [done] = _of(seen, "compaction")
    assert done["summarized"] is False and done["trimmedToolResults"] == 1 and "summary" not in done
    assert done["tokensAfter"] <= 1500 < done["tokensBefore"]


async def test_no_compaction_below_the_limit() -> None:
    settings = CompactionSettings(context_window=100_000)
    provider = ScriptedProvider([reply("fine")])
    result, seen = await _prompt(AgentSession("s1", _history()), provider, settings, "What next?")
    assert result.stop_reason == "stop" and _of(seen, "compaction_start") == []
    assert len(provider.contexts[0].messages) == 9


async def test_a_context_overflow_error_compacts_and_asks_again() -> None:
    settings = CompactionSettings(context_window=100_000, keep_recent_tokens=300)
    overflow = AssistantMessage(stop_reason="error", error_message=f"{CONTEXT_OVERFLOW_PREFIX} (400 prompt is too long)")
    provider = ScriptedProvider([overflow, reply(SUMMARY), reply("answered")])
    session = AgentSession("s1", _history())
    result, seen = await _prompt(session, provider, settings, "What next?")
    assert result.stop_reason == "stop" and len(provider.contexts) == 3
    assert provider.contexts[1].system_prompt == SUMMARY_SYSTEM_PROMPT
    assert is_summary_message(provider.contexts[2].messages[0])
    [done] = _of(seen, "compaction")
    assert done["reason"] == "overflow" and done["summarized"] is True
    kinds = [e["type"] for e in seen if e["type"] not in ("message_update", "message_start", "message_end")]
    assert kinds == ["agent_start", "turn_start", "turn_end", "compaction_start", "compaction",
                     "turn_start", "turn_end", "agent_end"]


async def test_a_failed_summary_ends_the_run_with_an_error() -> None:
    settings = CompactionSettings(context_window=1000, reserve_tokens=500, keep_recent_tokens=300)
    provider = ScriptedProvider([AssistantMessage(stop_reason="error", error_message="529 Overloaded")])
    session = AgentSession("s1", _history())
    result, seen = await _prompt(session, provider, settings, "What next?")
    assert result.stop_reason == "error" and result.error_message == "Compaction failed: 529 Overloaded"
    assert len(session.messages) == 10 and not any(is_summary_message(m) for m in session.messages)
    assert _of(seen, "agent_end")[0]["errorMessage"] == "Compaction failed: 529 Overloaded"


def test_reported_usage_counts_only_when_made_on_the_current_history() -> None:
    big = reply("old answer")
    big.usage = Usage(input=90_000, output=10, total_tokens=90_010)
    big.timestamp = 1_000
    fresh_tail = [UserMessage(content="a" * 400, timestamp=1_001)]
    assert estimate_context_tokens("", [big, *fresh_tail]) == 90_010 + 100
    summary = summary_message("s", timestamp=2_000)
    # after a compaction the kept reply's usage describes the old, longer history: estimate instead
    assert estimate_context_tokens("", [summary, big, *fresh_tail]) < 1_000
    newer = reply("new answer")
    newer.usage = Usage(input=700, output=5, total_tokens=705)
    newer.timestamp = 2_001
    assert estimate_context_tokens("", [summary, big, newer]) == 705


def test_the_cut_never_separates_a_tool_call_from_its_result() -> None:
    history = _history()
    # 250 tokens back from the end lands inside the b1 result: the cut moves to the call before it
    assert find_cut_point(history, 250) == 5
    assert find_cut_point(history, 2) == 7
    assert find_cut_point(history[:1], 10) is None


def test_a_history_too_long_to_summarise_at_once_keeps_the_earlier_summary_and_the_newest_part() -> None:
    from pi_lsp.agent.compaction import summary_request

    history: list[Message] = [summary_message("EARLIER SUMMARY")]
    history += [UserMessage(content=f"request {i} " + "w" * 400) for i in range(40)]
    [ask] = summary_request(history, CompactionSettings(context_window=1000)).messages
    assert isinstance(ask.content, str)
    assert "EARLIER SUMMARY" in ask.content and "[... older messages left out ...]" in ask.content
    assert "request 39 " in ask.content and "request 0 " not in ask.content
    assert len(ask.content) < 4000 + len(SUMMARY_INSTRUCTIONS) + 600


async def test_aborting_during_the_summary_request_ends_the_run_aborted_and_keeps_the_history() -> None:
    settings = CompactionSettings(context_window=900, reserve_tokens=450, keep_recent_tokens=300, tool_result_max_chars=200)
    provider = ScriptedProvider([reply(SUMMARY)], hang_after_start={0})
    session = AgentSession("s1", _history())
    run = asyncio.create_task(session.prompt("What next?", _config(provider, settings)))
    while not provider.contexts:
        await asyncio.sleep(0.01)
    assert provider.contexts[0].system_prompt == SUMMARY_SYSTEM_PROMPT
    session.abort()
    result = await asyncio.wait_for(run, 5)
    assert result.stop_reason == "aborted"
    assert not any(is_summary_message(m) for m in session.messages)
    assert session.messages[2].content[0].text == "x" * 6000  # nothing was trimmed either
