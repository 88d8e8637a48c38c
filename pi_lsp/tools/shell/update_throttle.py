"""Throttled partial results of a running bash command (pi-behaviour.md 2.2, "Streaming updates")."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pi_lsp.agent.tool import ToolContext, ToolResult
from pi_lsp.tools.shell.output_buffer import OutputBuffer, OutputSnapshot


class UpdateThrottle:
    """Partial results of a running command through ``ctx.update``, at most one per ``interval``.

    The peer's ``scheduleOutputUpdate``: the first data after a quiet period is sent at once,
    later data within ``interval`` seconds is coalesced into one update sent when the interval
    ends. Each update is a :meth:`OutputBuffer.snapshot` as one text block, with ``details``
    ``{truncation?, fullOutputPath?}`` (camelCase, only the keys that apply). Use from the event
    loop thread only.
    """

    def __init__(self, ctx: ToolContext, buffer: OutputBuffer, interval: float) -> None:
        self.ctx = ctx
        self.buffer = buffer
        self.interval = interval
        self.last = 0.0
        self.dirty = False
        self.handle: asyncio.TimerHandle | None = None
        self.closed = False

    def data_arrived(self) -> None:
        """New output is in the buffer: send it now or schedule it (no-op without a listener)."""
        if self.ctx.on_update is None or self.closed:
            return
        self.dirty = True
        delay = self.interval - (time.monotonic() - self.last)
        if delay <= 0:
            self._emit()
        elif self.handle is None:
            self.handle = asyncio.get_running_loop().call_later(delay, self._emit)

    def _emit(self, snapshot: OutputSnapshot | None = None) -> None:
        self.handle = None
        if not self.dirty or self.closed and snapshot is None:
            return
        self.dirty = False
        self.last = time.monotonic()
        snapshot = snapshot or self.buffer.snapshot()
        details: dict[str, Any] = {}
        if snapshot.truncation.truncated:
            details["truncation"] = snapshot.truncation.to_details()
        if snapshot.full_output_path is not None:
            details["fullOutputPath"] = str(snapshot.full_output_path)
        self.ctx.update(ToolResult.text(snapshot.content, details))

    def close(self) -> None:
        """Stop timed updates (the final flush comes from :meth:`final`)."""
        self.closed = True
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def final(self, snapshot: OutputSnapshot) -> None:
        """Flush the last pending update, if any (the peer's final ``emitOutputUpdate``)."""
        if self.ctx.on_update is not None and self.dirty:
            self._emit(snapshot)
