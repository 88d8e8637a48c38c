"""JSON-RPC 2.0 messages over an asyncio stream with LSP's ``Content-Length`` framing.

The private socket speaks the same framing as the daemon's stdio, so one reader serves both sides.
Bodies are UTF-8 JSON; everything sent is strict RFC 8259 JSON (``NaN`` and ``Infinity`` are
refused at serialisation). A frame over :data:`MAX_FRAME_BYTES`, a header without a valid
``Content-Length`` or a body that is not a JSON object is a :class:`FrameError`: the connection
cannot be resynchronised and is closed by the caller.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

MAX_FRAME_BYTES = 64 << 20
"""Largest body accepted (64 MiB): a tool result is bounded well below it."""

MAX_HEADER_BYTES = 8192


class FrameError(Exception):
    """A frame that cannot be read (the connection is unusable after it)."""


def encode(message: dict[str, Any]) -> bytes:
    """One framed message: header plus UTF-8 body. Raises ``ValueError`` for NaN/Infinity."""
    body = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message, or ``None`` at a clean end of stream (EOF between frames).

    Raises :class:`FrameError` for a broken frame (see the module docstring).
    """
    try:
        header = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise FrameError("the stream ended inside a header") from exc
    except asyncio.LimitOverrunError as exc:
        raise FrameError("header too long") from exc
    if len(header) > MAX_HEADER_BYTES:
        raise FrameError("header too long")
    length = None
    for line in header.decode("ascii", "replace").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            value = value.strip()
            if not value.isdigit():
                raise FrameError(f"invalid Content-Length {value!r}")
            length = int(value)
    if length is None:
        raise FrameError("a frame without Content-Length")
    if length > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {length} bytes is over the {MAX_FRAME_BYTES}-byte limit")
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FrameError("the stream ended inside a body") from exc
    try:
        message = json.loads(body, parse_constant=_reject)
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"the body is not JSON: {exc}") from exc
    if not isinstance(message, dict):
        raise FrameError("the body is not a JSON object")
    return message


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
