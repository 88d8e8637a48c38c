"""A real HTTP/1.1 server on 127.0.0.1 that answers each request with the next scripted reply.

Used by the provider tests: it records every request (method, path, headers, JSON body) and can
stream chunks with pauses, cut the connection mid-body, or hang until the client goes away.
Replies are written with chunked transfer encoding (as real streaming servers do) unless
``framing="close"`` (body ends when the connection closes).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    """One scripted response."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    chunks: list[bytes] = field(default_factory=list)
    pause: float = 0.0
    cut: bool = False
    hang: bool = False
    keepalive_every: float = 0.0  # after the chunks: an SSE comment this often until the client leaves
    framing: str = "chunked"


@dataclass
class Seen:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def sse(*payloads: Any, done: bool = True) -> list[bytes]:
    """``data: {json}`` events (one chunk each), plus ``data: [DONE]`` when ``done``."""
    chunks = [b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads]
    if done:
        chunks.append(b"data: [DONE]\n\n")
    return chunks


def delta(**fields: Any) -> dict[str, Any]:
    """A chunk whose first choice carries ``delta`` = fields."""
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": fields}]}


def finish(reason: str, usage: dict[str, int] | None = None) -> dict[str, Any]:
    """A chunk with ``finish_reason`` (and optional usage)."""
    chunk: dict[str, Any] = {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}
    if usage:
        chunk["usage"] = usage
    return chunk


class ScriptedServer:
    """``async with ScriptedServer(replies) as server``: ``server.url`` is ``http://127.0.0.1:P/v1``.

    When the script runs out, the server answers 599 so a test that asks too often fails loudly.
    """

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.seen: list[Seen] = []
        self._server: asyncio.base_events.Server | None = None
        self.port = 0
        self.disconnected = asyncio.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> "ScriptedServer":
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        body = json.loads(raw) if raw else None
        self.seen.append(Seen(method, path, headers, body))
        reply = self.replies.pop(0) if self.replies else Reply(status=599, chunks=[b"script exhausted"], headers={})
        chunked = reply.framing == "chunked"
        status_line = f"HTTP/1.1 {reply.status} X\r\n"
        out_headers = dict(reply.headers)
        if chunked:
            out_headers["transfer-encoding"] = "chunked"
        else:
            out_headers["connection"] = "close"
        writer.write((status_line + "".join(f"{k}: {v}\r\n" for k, v in out_headers.items()) + "\r\n").encode())
        for chunk in reply.chunks:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            await writer.drain()
            if reply.pause:
                await asyncio.sleep(reply.pause)
        while reply.keepalive_every:
            writer.write(b"%x\r\n%s\r\n" % (len(b": keep-alive\n\n"), b": keep-alive\n\n"))
            await writer.drain()
            try:
                if not await asyncio.wait_for(reader.read(1), reply.keepalive_every):
                    self.disconnected.set()
                    return False
            except asyncio.TimeoutError:
                continue
        if reply.hang:
            # wait for the client to give up (abort tests); the read returns b"" on disconnect
            await reader.read(1)
            self.disconnected.set()
            return False
        if reply.cut or not chunked:
            await writer.drain()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
