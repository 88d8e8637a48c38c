"""The daemon's private socket: other local agents' tool calls, through this editor (issue 20).

``pi-lsp mcp`` connects here to run MCP clients' tool calls as ``pi/executeToolCall`` of the session
``external``: edits go through the editor's buffers, approvals appear in the editor, events reach the
editor's transcript, and ``pi/abort {sessionId: "external"}`` stops them.

Endpoint: a Unix domain socket in the private runtime directory (:mod:`pi_lsp.ipc.runtime_dir`,
mode 0700; the socket 0600), announced by a registry entry (:mod:`pi_lsp.ipc.registry`) with a
random 256-bit token. A connection is served only when its peer credentials (``SO_PEERCRED``) name
this user and its first request is ``pi/authenticate {token}`` with the right token (compared in
constant time); anything else gets an error and the connection is closed. Never TCP.

Methods after authentication (JSON-RPC 2.0, ``Content-Length`` framing):

- ``pi/listTools {}`` -> ``{tools: [{name, label, description, parameters, active}]}``;
- ``pi/executeToolCall {toolCall: {id, name, arguments}, progress?: bool}`` -> ``ToolResultMessage``;
  with ``progress``, ``pi/toolUpdate {requestId, output}`` notifications carry the new output of a
  running call (coalesced like ``pi/event`` updates);
- ``$/cancelRequest {id}``: the call ends with ``Operation aborted``.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import secrets
import socket
import struct
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from pi_lsp.agent.events import EventSink
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.daemon import rpc
from pi_lsp.daemon.event_relay import EventRelay
from pi_lsp.ipc import registry
from pi_lsp.ipc.framing import FrameError, encode, read_message
from pi_lsp.llm.types import ToolCall, ToolResultMessage

logger = logging.getLogger(__name__)

AUTHENTICATE = "pi/authenticate"
TOOL_UPDATE = "pi/toolUpdate"
ACTIVITY_INTERVAL_SECONDS = 1.0
"""At most one registry touch per this many seconds (editor activity marks the daemon recent)."""

_METHOD_NOT_FOUND = -32601
_REQUEST_FAILED = -32803
_UNAUTHORIZED = -32001


class ExternalHandlers:
    """What a socket connection may ask of the daemon (the daemon's objects, injected)."""

    def __init__(
        self,
        list_tools: Callable[[], dict[str, Any]],
        execute: Callable[[ToolCall, AbortSignal, EventSink | None], Awaitable[ToolResultMessage]],
    ) -> None:
        """``list_tools()`` answers ``pi/listTools``; ``execute(call, signal, progress_sink)`` runs one
        call as the session ``external`` (``progress_sink`` also receives its events, or is None)."""
        self.list_tools = list_tools
        self.execute = execute


def peer_uid(sock: socket.socket) -> int | None:
    """The connecting process's uid from ``SO_PEERCRED`` (Linux), ``getpeereid`` where available;
    ``None`` when the OS tells neither (the connection is then refused)."""
    if hasattr(socket, "SO_PEERCRED"):
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    getpeereid = getattr(sock, "getpeereid", None)  # pragma: no cover - BSD/macOS
    return getpeereid()[0] if getpeereid else None


class ExternalSocket:
    """One daemon's private endpoint: start it after ``initialize``, :meth:`close` at session end."""

    def __init__(self, handlers: ExternalHandlers) -> None:
        self._handlers = handlers
        self._server: asyncio.AbstractServer | None = None
        self._name = registry.new_name()
        self._token = secrets.token_hex(32)
        self.socket_path: Path | None = None
        self.entry_path: Path | None = None
        self._last_touch = 0.0
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self, folders: list[Path], client: str) -> None:
        """Listen and announce; logs and stays off when the runtime directory is unusable. A second
        call (a second ``initialize``) only rewrites the announcement."""
        if self._server is not None:
            self.update(folders, client)
            return
        try:
            path = registry.socket_path(self._name)
            self._server = await asyncio.start_unix_server(self._serve, path=str(path))
            os.chmod(path, 0o600)
            self.socket_path = path
            self.entry_path = registry.write_entry(
                self._name, socket=path, token=self._token, folders=folders, client=client
            )
        except (OSError, RuntimeError) as exc:
            logger.warning("no private socket for other agents (pi-lsp mcp): %s", exc)
            await self.close()
            return
        logger.info("serving other agents' tool calls on %s", path)

    def update(self, folders: list[Path], client: str) -> None:
        """Rewrite the registry entry (workspace folders changed)."""
        if self.socket_path is not None:
            self.entry_path = registry.write_entry(
                self._name, socket=self.socket_path, token=self._token, folders=folders, client=client
            )

    def touch(self) -> None:
        """The editor was active: mark this daemon the most recent for its folders (throttled)."""
        now = time.monotonic()
        if self.entry_path is not None and now - self._last_touch >= ACTIVITY_INTERVAL_SECONDS:
            self._last_touch = now
            registry.touch(self.entry_path)

    async def close(self) -> None:
        """Stop listening, drop connections, remove the entry and the socket. Idempotent."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        if self.entry_path is not None or self.socket_path is not None:
            registry.remove(self.entry_path or Path("/nonexistent"), self.socket_path)
        self.entry_path = None
        self.socket_path = None

    # One connection.

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            await _Connection(self._handlers, self._token, reader, writer).run()
        except asyncio.CancelledError:
            pass
        except Exception:  # one connection's failure never reaches the daemon
            logger.exception("external connection failed")
        finally:
            self._connections.discard(task)
            writer.close()


class _Connection:
    def __init__(
        self, handlers: ExternalHandlers, token: str,
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
    ) -> None:
        self._handlers = handlers
        self._token = token
        self._reader = reader
        self._writer = writer
        self._running: dict[Any, tuple[asyncio.Task[None], AbortSignal]] = {}

    def _send(self, message: dict[str, Any]) -> None:
        if not self._writer.is_closing():
            self._writer.write(encode({"jsonrpc": "2.0", **message}))

    def _error(self, msg_id: Any, code: int, text: str) -> None:
        self._send({"id": msg_id, "error": {"code": code, "message": text}})

    async def run(self) -> None:
        sock = self._writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid != os.getuid():
            logger.warning("refused a connection from uid %s (only uid %s may connect)", uid, os.getuid())
            self._error(None, _UNAUTHORIZED, "refused: not the same user")
            await self._writer.drain()
            return
        if not await self._authenticate():
            return
        try:
            while (message := await read_message(self._reader)) is not None:
                self._dispatch(message)
        except FrameError as exc:
            logger.warning("external connection: %s; closing it", exc)
            self._error(None, -32700, str(exc))
        finally:
            for task, signal in list(self._running.values()):
                signal.abort("the connection closed")
            if self._running:
                await asyncio.gather(*(t for t, _ in self._running.values()), return_exceptions=True)

    async def _authenticate(self) -> bool:
        try:
            first = await asyncio.wait_for(read_message(self._reader), timeout=10)
        except (FrameError, asyncio.TimeoutError) as exc:
            self._error(None, _UNAUTHORIZED, f"refused: {exc or 'no authentication in time'}")
            return False
        if first is None:
            return False
        params = first.get("params")
        token = params.get("token") if isinstance(params, dict) else None
        if first.get("method") != AUTHENTICATE or not isinstance(token, str) or not hmac.compare_digest(
            token.encode(), self._token.encode()
        ):
            logger.warning("refused an external connection: wrong or missing token")
            self._error(first.get("id"), _UNAUTHORIZED, "refused: authenticate with the daemon's token first")
            await self._writer.drain()
            return False
        self._send({"id": first.get("id"), "result": {"server": "pi-lsp"}})
        return True

    def _dispatch(self, message: dict[str, Any]) -> None:
        method, msg_id, params = message.get("method"), message.get("id"), message.get("params")
        if method == "$/cancelRequest":
            target = params.get("id") if isinstance(params, dict) else None
            if target in self._running:
                self._running[target][1].abort("cancelled by the client ($/cancelRequest)")
            return
        if msg_id is None or not isinstance(method, str):
            return  # other notifications: nothing to do
        if method == rpc.LIST_TOOLS:
            self._send({"id": msg_id, "result": self._handlers.list_tools()})
        elif method == rpc.EXECUTE_TOOL_CALL:
            signal = AbortSignal()
            task = asyncio.ensure_future(self._execute(msg_id, params, signal))
            self._running[msg_id] = (task, signal)
        else:
            self._error(msg_id, _METHOD_NOT_FOUND, f"{method} is not served on this socket")

    async def _execute(self, msg_id: Any, params: Any, signal: AbortSignal) -> None:
        relay = None
        try:
            call = rpc.parse_execute_tool_call(params)
            if isinstance(params, dict) and params.get("progress") is True:
                relay = EventRelay(
                    lambda p: self._send({"method": TOOL_UPDATE, "params": {
                        "requestId": msg_id, "output": p["event"].get("output", ""),
                    }}) if p["event"].get("type") == "tool_execution_update" else None,
                    rpc.EXTERNAL_SESSION,
                )
            result = await self._handlers.execute(call, signal, relay)
            self._send({"id": msg_id, "result": rpc.wire(result)})
        except JsonRpcException as exc:
            self._error(msg_id, exc.code, exc.message)
        except Exception as exc:
            logger.exception("external tool call failed")
            self._error(msg_id, _REQUEST_FAILED, f"{type(exc).__name__}: {exc}")
        finally:
            if relay is not None:
                relay.close()
            self._running.pop(msg_id, None)
            try:
                await self._writer.drain()
            except ConnectionError:
                pass

