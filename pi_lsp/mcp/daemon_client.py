"""A connection to a running daemon's private socket (the client side of :mod:`pi_lsp.ipc`).

:meth:`DaemonClient.connect` opens the socket named by a registry entry and authenticates with its
token; :meth:`DaemonClient.execute` runs one tool call as the daemon's session ``external`` and
returns the ``ToolResultMessage`` as a wire dict (``{role, toolCallId, toolName, content, details?,
isError, timestamp}``). Cancelling the awaiting task sends ``$/cancelRequest`` and still waits for
the daemon's ``Operation aborted`` result (bounded by ``cancel_grace_seconds``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from pi_lsp.ipc.framing import FrameError, encode, read_message
from pi_lsp.ipc.registry import DaemonEntry

AUTHENTICATE = "pi/authenticate"
TOOL_UPDATE = "pi/toolUpdate"


class DaemonError(Exception):
    """The daemon refused or failed a request, or the connection broke (the message says which)."""


class DaemonClient:
    """One authenticated connection; requests may run concurrently."""

    def __init__(self, entry: DaemonEntry, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 *, cancel_grace_seconds: float = 10.0) -> None:
        self.entry = entry
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._progress: dict[int, Callable[[str], None]] = {}
        self._grace = cancel_grace_seconds
        self._pump: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()

    @classmethod
    async def connect(cls, entry: DaemonEntry, *, timeout_seconds: float = 5.0,
                      cancel_grace_seconds: float = 10.0) -> "DaemonClient":
        """Connect and authenticate; raises :class:`DaemonError` (refused, timed out, broken)."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(entry.socket)), timeout_seconds
            )
        except (OSError, asyncio.TimeoutError) as exc:
            raise DaemonError(f"cannot connect to {entry.socket}: {exc or 'timed out'}") from exc
        client = cls(entry, reader, writer, cancel_grace_seconds=cancel_grace_seconds)
        client._pump = asyncio.ensure_future(client._read_loop())
        try:
            await asyncio.wait_for(client.request(AUTHENTICATE, {"token": entry.token}), timeout_seconds)
        except (DaemonError, asyncio.TimeoutError) as exc:
            await client.close()
            raise DaemonError(f"the daemon refused the connection: {exc or 'timed out'}") from exc
        return client

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send one request and wait for its result; raises :class:`DaemonError` for an error reply."""
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            self._write({"id": msg_id, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(msg_id, None)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The daemon's tools: ``[{name, label, description, parameters, active}]``."""
        result = await self.request("pi/listTools", {})
        return list(result.get("tools", [])) if isinstance(result, dict) else []

    async def execute(self, call: dict[str, Any], on_output: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Run ``call`` (``{id, name, arguments}``); ``on_output`` receives new output of a running call."""
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        if on_output is not None:
            self._progress[msg_id] = on_output
        try:
            self._write({"id": msg_id, "method": "pi/executeToolCall",
                         "params": {"toolCall": call, "progress": on_output is not None}})
            try:
                return await asyncio.shield(future)
            except asyncio.CancelledError:
                if not future.done() and not self.closed.is_set():
                    self._write({"method": "$/cancelRequest", "params": {"id": msg_id}})
                    try:
                        await asyncio.wait_for(asyncio.shield(future), self._grace)
                    except (asyncio.TimeoutError, DaemonError):
                        pass
                raise
        finally:
            self._pending.pop(msg_id, None)
            self._progress.pop(msg_id, None)

    def _write(self, message: dict[str, Any]) -> None:
        if self.closed.is_set():
            raise DaemonError("the connection to the daemon is closed")
        self._writer.write(encode({"jsonrpc": "2.0", **message}))

    async def _read_loop(self) -> None:
        reason = "the daemon closed the connection"
        try:
            while (message := await read_message(self._reader)) is not None:
                if message.get("method") == TOOL_UPDATE:
                    params = message.get("params") or {}
                    callback = self._progress.get(params.get("requestId"))
                    if callback is not None and isinstance(params.get("output"), str):
                        callback(params["output"])
                    continue
                future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
                if future is None:
                    if "error" in message and message.get("id") is None:
                        reason = str(message["error"].get("message", reason))
                    continue
                if future.done():
                    continue
                if "error" in message:
                    future.set_exception(DaemonError(str(message["error"].get("message", "error"))))
                else:
                    future.set_result(message.get("result"))
        except (FrameError, OSError) as exc:
            reason = f"the connection to the daemon broke: {exc}"
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(DaemonError(reason))

    async def close(self) -> None:
        """Close the connection (pending requests fail with :class:`DaemonError`)."""
        self._writer.close()
        if self._pump is not None:
            self._pump.cancel()
            try:
                await self._pump
            except (asyncio.CancelledError, Exception):
                pass
        self.closed.set()
