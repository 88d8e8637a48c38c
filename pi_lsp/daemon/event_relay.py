"""Bounded, coalesced forwarding of tool events to the editor as ``pi/event`` (design.md 5, 6).

The pipeline emits plain event dicts (``pi_lsp.agent.events``) through a synchronous sink.
:class:`EventRelay` is that sink for one session id: it sends ``{sessionId, event}`` with

- ``tool_execution_update`` reduced to ``{type, toolCallId, toolName, output}`` where ``output`` is
  the text that is **new** since the previous update of that call (at most ``max_update_chars``
  code points, the tail kept), and at most one update per ``min_interval_seconds`` per call
  (later ones coalesced: the latest wins and is flushed when the interval has passed);
- every other event bounded: strings longer than ``max_string_chars`` cut with a marker, image
  data replaced by a placeholder, so no whole-file payload travels in an event;
- a pending update of a call flushed before that call's ``tool_execution_end``.

Defaults: 4 updates per second, 8 KB of new text. Sending never raises into the pipeline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from pi_lsp.llm.types import to_wire

logger = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], None]
"""Receives ``{sessionId, event}`` params of one ``pi/event`` notification."""


class EventRelay:
    """The event sink of one session; call it with each event dict (``type`` key required)."""

    def __init__(
        self,
        send: Send,
        session_id: str,
        *,
        min_interval_seconds: float = 0.25,
        max_update_chars: int = 8192,
        max_string_chars: int = 8192,
    ) -> None:
        self._send = send
        self._session_id = session_id
        self._interval = min_interval_seconds
        self._max_update = max_update_chars
        self._max_string = max_string_chars
        self._last_sent: dict[str, float] = {}
        self._last_text: dict[str, str] = {}
        self._pending: dict[str, dict[str, Any]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def __call__(self, event: dict[str, Any]) -> None:
        """Forward ``event`` (see the module docstring); never raises."""
        try:
            kind = event.get("type")
            call_id = str(event.get("toolCallId", ""))
            if kind == "tool_execution_update":
                self._update(call_id, event)
                return
            if kind == "tool_execution_end":
                self._flush(call_id)
                self._forget(call_id)
            self._emit(bounded(event, self._max_string))
        except Exception:  # a UI notification must never break a tool call
            logger.exception("could not forward event %r", event.get("type"))

    def close(self) -> None:
        """Cancel pending flushes (session end)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._pending.clear()

    def _update(self, call_id: str, event: dict[str, Any]) -> None:
        text = _result_text(event.get("partialResult"))
        self._pending[call_id] = {
            "type": "tool_execution_update",
            "toolCallId": event.get("toolCallId"),
            "toolName": event.get("toolName"),
            "_text": text,
        }
        wait = self._last_sent.get(call_id, float("-inf")) + self._interval - time.monotonic()
        if wait <= 0:
            self._flush(call_id)
        elif call_id not in self._timers:
            loop = asyncio.get_running_loop()
            self._timers[call_id] = loop.call_later(wait, self._flush, call_id)

    def _flush(self, call_id: str) -> None:
        timer = self._timers.pop(call_id, None)
        if timer is not None:
            timer.cancel()
        pending = self._pending.pop(call_id, None)
        if pending is None:
            return
        text = pending.pop("_text")
        previous = self._last_text.get(call_id, "")
        new = text[len(previous):] if text.startswith(previous) else text
        self._last_text[call_id] = text
        if not new:
            return
        if len(new) > self._max_update:
            new = new[-self._max_update:]
        pending["output"] = new
        self._last_sent[call_id] = time.monotonic()
        self._emit(pending)

    def _forget(self, call_id: str) -> None:
        self._last_sent.pop(call_id, None)
        self._last_text.pop(call_id, None)

    def _emit(self, event: dict[str, Any]) -> None:
        self._send({"sessionId": self._session_id, "event": event})


def _result_text(result: Any) -> str:
    if not isinstance(result, dict):
        return ""
    blocks = result.get("content") or []
    return "".join(
        block.get("text", "") for block in blocks if isinstance(block, dict) and block.get("type") == "text"
    )


def bounded(value: Any, max_chars: int) -> Any:
    """A copy of a JSON value with long strings cut and image data replaced.

    Strings longer than ``max_chars`` code points keep their first ``max_chars`` and get
    ``…[N more characters]``; ``{type: "image", data}`` blocks get ``data`` = ``"[image omitted]"``;
    pydantic models are serialised with :func:`~pi_lsp.llm.types.to_wire` first.
    """
    if isinstance(value, BaseModel):
        value = to_wire(value)
    if isinstance(value, str):
        if len(value) <= max_chars:
            return value
        return value[:max_chars] + f"…[{len(value) - max_chars} more characters]"
    if isinstance(value, list):
        return [bounded(item, max_chars) for item in value]
    if isinstance(value, dict):
        if value.get("type") == "image" and "data" in value:
            return {**value, "data": "[image omitted]"}
        return {key: bounded(item, max_chars) for key, item in value.items()}
    return value
