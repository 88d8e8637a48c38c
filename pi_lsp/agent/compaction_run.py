"""Carrying out a compaction inside a run (the policy is :mod:`pi_lsp.agent.compaction`).

:func:`compact_transcript` is what the loop calls before each request (and once after a context
overflow): it estimates the request, plans the compaction, emits ``compaction_start``, asks the
model for a summary when trimming is not enough (:func:`complete_silently`: no events of its own),
rewrites the transcript in place and emits ``compaction``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pi_lsp.agent import events
from pi_lsp.agent.compaction import (
    CompactionSettings,
    estimate_context_tokens,
    plan_compaction,
    summary_message,
    summary_request,
    summary_text,
    trim_tool_result,
)
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.llm.provider import LlmContext, Provider
from pi_lsp.llm.types import AssistantMessage, Message, ToolResultMessage, now_ms

logger = logging.getLogger(__name__)


async def complete_silently(provider: Provider, context: LlmContext, signal: AbortSignal) -> AssistantMessage:
    """One request whose events are not forwarded: its final message (``aborted`` when ``signal``
    fired). Never raises, except for the cancellation of the calling task."""
    cancel = asyncio.Event()
    if signal.aborted:
        cancel.set()

    async def watch() -> None:
        await signal.wait()
        cancel.set()

    watcher = asyncio.ensure_future(watch())
    final: AssistantMessage | None = None
    try:
        async for event in provider.stream(context, cancel=cancel):
            if event.type == "done":
                final = event.message
    except Exception as exc:  # the provider broke its never-raise contract
        logger.exception("the provider stream raised")
        final = AssistantMessage(stop_reason="error", error_message=f"{type(exc).__name__}: {exc}")
    finally:
        watcher.cancel()
    if final is None:
        final = AssistantMessage(stop_reason="error", error_message="The provider stream ended without a final message")
    if signal.aborted and final.stop_reason != "aborted":
        final.stop_reason, final.error_message = "aborted", "Request was aborted"
    return final


def _estimate(context: Callable[[], LlmContext]) -> int:
    request = context()
    return estimate_context_tokens(request.system_prompt, request.messages, request.tools)


async def compact_transcript(
    transcript: list[Message],
    settings: CompactionSettings,
    *,
    context: Callable[[], LlmContext],
    provider: Provider,
    signal: AbortSignal,
    emit: events.EventSink,
    overflow: bool = False,
) -> tuple[bool, AssistantMessage | None]:
    """Compact ``transcript`` in place when the next request (``context()``) is too large, or
    always when ``overflow`` (the provider reported a context overflow).

    Returns whether the transcript changed and, when the summary request failed or was aborted,
    the reply that ends the run (``Compaction failed: ...``). Nothing is emitted when there is
    nothing to trim or summarise. After a summary, when the kept recent turns alone still exceed
    the limit, their tool results are trimmed too.
    """
    tokens = _estimate(context)
    if not overflow and tokens <= settings.limit:
        return False, None
    plan = plan_compaction(transcript, tokens, settings, force=overflow)
    if plan.cut is None and not plan.trimmed:
        return False, None
    reason = "overflow" if overflow else "threshold"
    emit(events.compaction_start(reason, tokens, settings.context_window))
    if plan.cut is None:
        transcript[:] = plan.messages
        emit(events.compaction(
            reason, tokens, plan.tokens_after_trim, summarized=False,
            trimmed_tool_results=plan.trimmed, kept_messages=len(transcript)))
        return True, None
    reply = await complete_silently(provider, summary_request(plan.to_summarise, settings), signal)
    summary = summary_text(reply)
    if reply.stop_reason in ("error", "aborted") or not summary:
        why = reply.error_message or "the model returned an empty summary"
        if reply.stop_reason == "aborted":
            return False, AssistantMessage(stop_reason="aborted", error_message=why)
        return False, AssistantMessage(stop_reason="error", error_message=f"Compaction failed: {why}")
    kept = plan.messages[plan.cut :]
    trimmed = plan.trimmed
    stamp = max([now_ms()] + [m.timestamp + 1 for m in kept])
    transcript[:] = [summary_message(summary, stamp), *kept]
    after = _estimate(context)
    if after > settings.limit:
        for index, message in enumerate(transcript):
            if isinstance(message, ToolResultMessage):
                transcript[index], removed = trim_tool_result(message, settings.tool_result_max_chars)
                trimmed += bool(removed)
        after = _estimate(context)
    emit(events.compaction(
        reason, tokens, after, summarized=True, trimmed_tool_results=trimmed,
        kept_messages=len(kept), summary=summary, timestamp=stamp))
    return True, None
