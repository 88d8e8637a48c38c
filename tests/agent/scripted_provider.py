"""A real in-process :class:`~pi_lsp.llm.provider.Provider` that streams scripted replies.

Each request takes the next script; a script is an assistant message (streamed as ``start``, text
deltas, tool-call start/delta/end, ``done``) or a callable that gets the request context and
returns one. ``hang_after_start`` makes a reply stream its first deltas and then wait until the
cancel event is set (abort mid-stream). Every received :class:`LlmContext` is recorded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Union

from pi_lsp.llm.events import (
    DoneEvent,
    StartEvent,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from pi_lsp.llm.provider import LlmContext
from pi_lsp.llm.types import AssistantMessage, TextContent, ToolCall

Script = Union[AssistantMessage, Callable[[LlmContext], AssistantMessage]]


def reply(text: str = "", *calls: ToolCall, stop_reason: str | None = None) -> AssistantMessage:
    """An assistant message with ``text`` then ``calls``; stop reason toolUse/stop by default."""
    content: list = [TextContent(text=text)] if text else []
    content.extend(calls)
    return AssistantMessage(
        content=content, stop_reason=stop_reason or ("toolUse" if calls else "stop"), model="scripted"
    )


def tool_call(name: str, arguments: object, call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


@dataclass
class ScriptedProvider:
    scripts: list[Script]
    hang_after_start: set[int] = field(default_factory=set)  # request numbers (0-based)
    contexts: list[LlmContext] = field(default_factory=list)

    def stream(self, context: LlmContext, *, cancel: asyncio.Event | None = None) -> AsyncIterator[StreamEvent]:
        return self._stream(context, cancel or asyncio.Event())

    async def _stream(self, context: LlmContext, cancel: asyncio.Event) -> AsyncIterator[StreamEvent]:
        number = len(self.contexts)
        self.contexts.append(context)
        if cancel.is_set():
            yield DoneEvent(AssistantMessage(stop_reason="aborted", error_message="Request was aborted"))
            return
        if number >= len(self.scripts):
            yield DoneEvent(AssistantMessage(stop_reason="error", error_message="script exhausted"))
            return
        script = self.scripts[number]
        message = script(context) if callable(script) else script
        yield StartEvent()
        for block in message.content:
            if isinstance(block, TextContent):
                for i in range(0, len(block.text), 5):
                    yield TextDelta(block.text[i : i + 5])
                    await asyncio.sleep(0)
        if number in self.hang_after_start:
            await cancel.wait()
            partial = AssistantMessage(content=[b for b in message.content if isinstance(b, TextContent)],
                                       stop_reason="aborted", error_message="Request was aborted")
            yield DoneEvent(partial)
            return
        for index, call in enumerate(message.tool_calls()):
            yield ToolCallStart(index, call.id, call.name)
            yield ToolCallDelta(index, json.dumps(call.arguments))
            yield ToolCallEnd(index, call)
        yield DoneEvent(message)
