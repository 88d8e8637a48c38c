"""Server-sent events: an incremental decoder from raw body bytes to ``data`` payloads.

Follows the WHATWG HTML "server-sent events" parsing rules as far as chat completions need them:
lines end with LF, CRLF or a lone CR (a CRLF split across two reads counts once); a line starting
with ``:`` is a comment; ``field: value`` strips one space after the colon; ``data`` lines of one
event are joined with LF; a blank line dispatches the event; an event with no ``data`` is not
dispatched. ``event``, ``id`` and ``retry`` are accepted and ignored (OpenAI-compatible servers
put everything in ``data``). Bytes are decoded as UTF-8 per line (invalid bytes become U+FFFD),
so a multi-byte character split across reads is decoded correctly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_LINE_BREAK = re.compile("\r\n|\r|\n")


class SseDecoder:
    """Feed body bytes with :meth:`feed`; it returns the ``data`` of every completed event.

    Call :meth:`close` at end of body: it returns an event left unterminated by a final blank
    line only if ``dispatch_incomplete`` is true (the HTML standard discards it; the provider
    keeps it off and treats a cut stream as an error). ``pending_bytes`` tells whether anything
    was left unparsed.
    """

    __slots__ = ("_buffer", "_data", "_has_data")

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._has_data = False

    @property
    def pending_bytes(self) -> int:
        """How much input is held back, not yet part of a dispatched event (bytes of an
        unterminated line plus characters of undispatched data lines; 0 after a clean end)."""
        return len(self._buffer) + sum(len(d) for d in self._data)

    def feed(self, chunk: bytes) -> list[str]:
        """Consume ``chunk``; return the data strings of the events it completed, in order."""
        buffer = self._buffer + chunk if self._buffer else chunk
        if not buffer:
            return []
        if not self._has_data and b"\r" not in buffer:
            # fast path (LF-only streams): split at the last blank line, one decode per read
            cut = buffer.rfind(b"\n\n")
            if cut < 0:
                self._buffer = buffer
                return []
            self._buffer = buffer[cut + 2 :]
            events: list[str] = []
            for block in buffer[:cut].decode("utf-8", "replace").split("\n\n"):
                if block.startswith("data: ") and "\n" not in block:
                    events.append(block[6:])
                elif block:
                    events.extend(self._lines(block.split("\n") + [""]))
            return events
        # hold a final CR back: the LF of a CRLF may arrive with the next read
        limit = len(buffer) - 1 if buffer.endswith(b"\r") else len(buffer)
        end = max(buffer.rfind(b"\n", 0, limit), buffer.rfind(b"\r", 0, limit))
        if end < 0:
            self._buffer = buffer
            return []
        self._buffer = buffer[end + 1 :]
        text = buffer[: end + 1].decode("utf-8", "replace")
        return self._lines(_LINE_BREAK.split(text)[:-1])

    def close(self, *, dispatch_incomplete: bool = False) -> list[str]:
        """End of body: process a held trailing line; see the class docstring."""
        events: list[str] = []
        if self._buffer:
            held, self._buffer = self._buffer, b""
            text = held.decode("utf-8", "replace")
            lines = _LINE_BREAK.split(text)
            if text.endswith(("\r", "\n")):
                events = self._lines(lines[:-1])
            elif dispatch_incomplete:
                events = self._lines(lines)
            else:
                events = self._lines(lines[:-1])
                self._buffer = lines[-1].encode("utf-8")
        if dispatch_incomplete and self._has_data:
            events.append("\n".join(self._data))
            self._data, self._has_data = [], False
        return events

    def _lines(self, lines: list[str]) -> list[str]:
        """Apply complete lines (without their line breaks); ``""`` is a blank line."""
        events: list[str] = []
        data = self._data
        for line in lines:
            if not line:
                if self._has_data:
                    events.append("\n".join(data))
                    data = []
                    self._has_data = False
                continue
            if line.startswith("data:"):
                data.append(line[6:] if line[5:6] == " " else line[5:])
                self._has_data = True
            elif line == "data":
                data.append("")
                self._has_data = True
            # comments (":..."), event/id/retry and unknown fields are ignored
        self._data = data
        return events


def iter_events(body: bytes) -> Iterator[str]:
    """Decode a complete body (tests, replays): the data of each dispatched event."""
    decoder = SseDecoder()
    yield from decoder.feed(body)
    yield from decoder.close()
