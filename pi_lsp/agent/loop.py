"""Pi's agent loop: stream a reply, run its tool calls, repeat (pi-behaviour.md 4.2, design.md 6).

One run (:func:`run_agent`) emits, through a synchronous sink, Pi's event sequence:

``agent_start``, ``turn_start``, ``message_start``/``message_end`` for each prompt message, then per
turn: the assistant reply (``message_start``, ``message_update``* with deltas only,
``message_end``), the tool batch (the pipeline's ``tool_execution_*`` events, then
``message_start``/``message_end`` per result in source order), ``turn_end {message,
toolResults}``; the next turn starts with ``turn_start``. The run ends with ``agent_end
{stopReason, errorMessage?}`` when:

- a reply has no tool calls (its stop reason: ``stop``, or ``length`` without tool calls);
- a reply ended with ``error`` or ``aborted``: ``turn_end`` with no results, and its tool calls
  are never executed (the transcript repair drops that message before the next request);
- ``max_turns`` replies were made and the last one still asked for tools (or steering was
  waiting): ``stopReason`` ``error`` with :data:`MAX_TURNS_MESSAGE`.

Compaction (:mod:`pi_lsp.agent.compaction`, when :attr:`LoopConfig.compaction` is set): before
each request whose estimated context exceeds the window minus the reserve, and once per run after
a reply that failed with a context overflow (the request is then made again), the transcript is
compacted in place: ``compaction_start``, possibly a summary request to the same provider (no
events of its own), then ``compaction``. A failed summary ends the run with an ``error`` reply
``Compaction failed: ...``.

Steering and follow-up (Pi's ``getSteeringMessages``/``getFollowUpMessages``): after each turn's
tool batch ends (or after a reply without tool calls), :attr:`LoopConfig.steering` is drained; its
messages are appended (``message_start``/``message_end``) at the start of the next turn, so they go
with the next request, and a reply without tool calls does not end the run while steering waits.
When the run would end, :attr:`LoopConfig.follow_up` is drained the same way and the run goes on
with those messages. Neither is drained once the run is aborted or after a failed reply.

Tool calls run through :meth:`ToolPipeline.execute_batch` with the reply's stop reason, so the
pipeline applies the ``length`` rule (nothing runs, the model is asked again). Aborting the
:class:`AbortSignal` stops the provider stream (it ends ``aborted``) and the running tools (they
return ``Operation aborted`` results); after an aborted batch the next request ends ``aborted`` at
once, as in Pi. Before each request the transcript is repaired
(:func:`pi_lsp.llm.transcript.repair_transcript`): failed replies dropped, orphaned tool calls
answered ``No result provided``.

The loop never raises for provider or tool failures: a provider that breaks its contract (raises)
becomes a synthetic assistant message with ``stopReason`` ``error`` (``aborted`` when the signal
was set), as Pi's Agent does. Only the cancellation of the task running the loop propagates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.agent import events
from pi_lsp.agent.compaction import CompactionSettings
from pi_lsp.agent.compaction_run import compact_transcript
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.agent.tool import AbortSignal, Tool
from pi_lsp.llm.http_errors import is_context_overflow
from pi_lsp.llm.provider import LlmContext, Provider, ToolSpec
from pi_lsp.llm.transcript import repair_transcript
from pi_lsp.llm.types import AssistantMessage, Message, StopReason, ToolResultMessage

logger = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 50
"""``pi.maxTurns`` default: model calls per run (design.md 6)."""

MAX_TURNS_MESSAGE = (
    "Stopped after {turns} turns: the model was still calling tools when the limit was reached "
    "(pi.maxTurns is {turns}). Send another prompt to let it continue."
)
"""``errorMessage`` of a run ended by ``max_turns``."""

SystemPromptFn = Callable[[Sequence[Tool]], str]
"""Builds the system prompt for the active tools of a turn (called once per turn, so changes to the
active set made during a run apply to the next request, as Pi's ``prepareNextTurn`` does)."""


@dataclass
class LoopConfig:
    """What one run needs.

    ``provider`` streams replies; ``pipeline`` holds the tools (its **active** ones are offered and
    callable, read afresh each turn); ``system_prompt`` builds the prompt from them;
    ``max_turns`` >= 1 bounds the model calls of one run; ``session_id`` is handed to tools and
    hooks. ``steering`` and ``follow_up`` return (and forget) the messages queued for the next
    request and for when the run would end (module docstring); ``None`` queues nothing.
    ``compaction``: when and how to compact the transcript; ``None`` never compacts.
    """

    provider: Provider
    pipeline: ToolPipeline
    system_prompt: SystemPromptFn
    max_turns: int = DEFAULT_MAX_TURNS
    session_id: str = "agent"
    steering: Callable[[], list[Message]] | None = None
    follow_up: Callable[[], list[Message]] | None = None
    compaction: CompactionSettings | None = None


@dataclass
class RunResult:
    """How a run ended: ``stop_reason`` (that of ``agent_end``), ``error_message`` when it failed,
    ``turns`` (model calls made), the ``messages`` the run appended, in order, and the steering or
    follow-up messages it took but never sent (``undelivered``: the turn limit was reached)."""

    stop_reason: StopReason
    error_message: str | None = None
    turns: int = 0
    messages: list[Message] = field(default_factory=list)
    undelivered: list[Message] = field(default_factory=list)


class _Run:
    """One run in progress: the transcript it appends to and the sink it emits into."""

    def __init__(
        self, config: LoopConfig, transcript: list[Message], signal: AbortSignal, emit: events.EventSink
    ) -> None:
        self.config = config
        self.transcript = transcript
        self.signal = signal
        self._sink = emit
        self.added: list[Message] = []

    def emit(self, event: dict[str, Any]) -> None:
        try:
            self._sink(event)
        except Exception:  # a listener must never break the run
            logger.exception("event sink failed on %s", event.get("type"))

    def append(self, message: Message) -> None:
        self.emit(events.message_start(message))
        self.emit(events.message_end(message))
        self.transcript.append(message)
        self.added.append(message)

    def end(self, stop_reason: StopReason, error_message: str | None, turns: int) -> RunResult:
        self.emit(events.agent_end(stop_reason, error_message))
        return RunResult(stop_reason, error_message, turns, self.added)

    def context(self) -> LlmContext:
        pipeline = self.config.pipeline
        active = [pipeline.tools[name] for name in pipeline.active_names]
        return LlmContext(
            system_prompt=self.config.system_prompt(active),
            messages=repair_transcript(self.transcript),
            tools=[ToolSpec(t.name, t.description, t.parameters) for t in active],
        )

    async def stream_reply(self) -> AssistantMessage:
        """Stream one assistant message, emitting its start, deltas and end; never raises
        (except for the cancellation of this task)."""
        cancel = asyncio.Event()
        if self.signal.aborted:
            cancel.set()
        watcher = asyncio.ensure_future(_set_on_abort(self.signal, cancel))
        started = False
        final: AssistantMessage | None = None
        stream = None
        try:
            stream = self.config.provider.stream(self.context(), cancel=cancel)
            async for event in stream:
                kind = event.type
                if kind == "done":
                    final = event.message
                    continue
                if not started:
                    self.emit(events.message_start(AssistantMessage()))
                    started = True
                delta = _delta(event)
                if delta is not None:
                    self.emit(events.message_update(delta))
        except Exception as exc:  # the provider broke its never-raise contract
            logger.exception("the provider stream raised")
            reason: StopReason = "aborted" if self.signal.aborted else "error"
            final = AssistantMessage(stop_reason=reason, error_message=f"{type(exc).__name__}: {exc}")
        finally:
            watcher.cancel()
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                try:
                    await closer()
                except Exception:
                    logger.exception("closing the provider stream failed")
        if final is None:
            final = AssistantMessage(
                stop_reason="aborted" if self.signal.aborted else "error",
                error_message="The provider stream ended without a final message",
            )
        if not started:
            self.emit(events.message_start(final))
        self.emit(events.message_end(final))
        self.transcript.append(final)
        self.added.append(final)
        return final

    async def compact(self, *, overflow: bool = False) -> tuple[bool, AssistantMessage | None]:
        """Compact the transcript when needed (:func:`~pi_lsp.agent.compaction_run.compact_transcript`)."""
        settings = self.config.compaction
        if settings is None or not settings.enabled:
            return False, None
        return await compact_transcript(
            self.transcript, settings, context=self.context, provider=self.config.provider,
            signal=self.signal, emit=self.emit, overflow=overflow,
        )

    async def fail_turn(self, reply: AssistantMessage, turns: int) -> RunResult:
        """End the run with a synthetic failed reply (a failed compaction)."""
        self.emit(events.message_start(reply))
        self.emit(events.message_end(reply))
        self.transcript.append(reply)
        self.added.append(reply)
        self.emit(events.turn_end(reply, []))
        return self.end(reply.stop_reason, reply.error_message, turns)

    async def run(self, prompt: Sequence[Message]) -> RunResult:
        self.emit(events.agent_start())
        self.emit(events.turn_start())
        for message in prompt:
            self.append(message)
        turns = 0
        pending: list[Message] = []
        overflow_retried = False
        while True:
            if turns > 0:
                self.emit(events.turn_start())
            for message in pending:
                self.append(message)
            pending = []
            turns += 1
            _, failed = await self.compact()
            if failed is not None:
                return await self.fail_turn(failed, turns)
            reply = await self.stream_reply()
            if (
                reply.stop_reason == "error" and is_context_overflow(reply.error_message)
                and not overflow_retried and not self.signal.aborted
            ):
                overflow_retried = True
                self.emit(events.turn_end(reply, []))
                changed, failed = await self.compact(overflow=True)
                if failed is not None:
                    self.emit(events.turn_start())
                    return await self.fail_turn(failed, turns)
                if changed and turns < self.config.max_turns:
                    continue
                return self.end(reply.stop_reason, reply.error_message, turns)
            if reply.stop_reason in ("error", "aborted"):
                self.emit(events.turn_end(reply, []))
                return self.end(reply.stop_reason, reply.error_message, turns)
            calls = reply.tool_calls()
            results: list[ToolResultMessage] = []
            if calls:
                results = await self.config.pipeline.execute_batch(
                    calls,
                    stop_reason=reply.stop_reason,
                    signal=self.signal,
                    session_id=self.config.session_id,
                    emit=self.emit,
                )
                for result in results:
                    self.append(result)
            self.emit(events.turn_end(reply, results))
            pending = self._drain(self.config.steering)
            if not calls and not pending:
                pending = self._drain(self.config.follow_up)
                if not pending:
                    return self.end(reply.stop_reason, None, turns)
            if turns >= self.config.max_turns:
                result = self.end("error", MAX_TURNS_MESSAGE.format(turns=turns), turns)
                result.undelivered = pending
                return result

    def _drain(self, source: Callable[[], list[Message]] | None) -> list[Message]:
        """The queued messages of ``source`` (none once the run was aborted)."""
        if source is None or self.signal.aborted:
            return []
        try:
            return list(source())
        except Exception:  # a queue must never break the run
            logger.exception("reading the queued messages failed")
            return []


async def run_agent(
    config: LoopConfig,
    transcript: list[Message],
    prompt: Sequence[Message],
    *,
    signal: AbortSignal | None = None,
    emit: events.EventSink | None = None,
) -> RunResult:
    """Run the loop once (see the module docstring).

    ``transcript`` is the session's conversation so far (oldest first); the prompt messages, every
    reply and every tool result are appended to it in place, and a compaction replaces its older
    part with a summary in place (``config.compaction``). ``prompt`` is usually one
    :class:`~pi_lsp.llm.types.UserMessage`. ``signal`` aborts the run; ``emit`` receives every event
    (synchronous, must not block; an exception it raises is logged and ignored).
    """
    if config.max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    run = _Run(config, transcript, signal or AbortSignal(), emit or (lambda _event: None))
    return await run.run(prompt)


async def _set_on_abort(signal: AbortSignal, cancel: asyncio.Event) -> None:
    await signal.wait()
    cancel.set()


def _delta(event: Any) -> dict[str, Any] | None:
    """The ``message_update`` delta of a provider stream event (``None`` for ``start`` and
    ``toolcall_end``: the finished call arrives with ``message_end``)."""
    kind = event.type
    if kind == "text_delta":
        return {"type": "text", "text": event.delta}
    if kind == "thinking_delta":
        return {"type": "thinking", "thinking": event.delta}
    if kind == "toolcall_start":
        return {"type": "toolCall", "index": event.index, "id": event.id, "name": event.name}
    if kind == "toolcall_delta":
        return {"type": "toolCall", "index": event.index, "arguments": event.delta}
    return None
