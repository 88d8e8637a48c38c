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

from collections.abc import Iterator


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
        """Bytes received but not yet part of a dispatched event (0 after a clean end)."""
        return len(self._buffer) + sum(len(d) for d in self._data)

    def feed(self, chunk: bytes) -> list[str]:
        """Consume ``chunk``; return the data strings of the events it completed, in order."""
        buffer = self._buffer + chunk if self._buffer else chunk
        if not buffer:
            return []
        lines = buffer.splitlines(keepends=True)
        last = lines[-1]
        # keep an unterminated last line, and a last line ending in CR (its LF may follow)
        if not last.endswith(b"\n"):
            self._buffer = lines.pop()
        else:
            self._buffer = b""
        return self._lines(lines)

    def close(self, *, dispatch_incomplete: bool = False) -> list[str]:
        """End of body: process a held trailing line; see the class docstring."""
        events: list[str] = []
        if self._buffer:
            held, self._buffer = self._buffer, b""
            if held.endswith(b"\r"):
                events = self._lines([held])
            elif dispatch_incomplete:
                events = self._lines([held + b"\n"])
            else:
                self._buffer = held
        if dispatch_incomplete and self._has_data:
            events.append("\n".join(self._data))
            self._data, self._has_data = [], False
        return events

    def _lines(self, lines: list[bytes]) -> list[str]:
        events: list[str] = []
        data = self._data
        for raw in lines:
            line = raw.rstrip(b"\r\n")
            if not line:
                if self._has_data:
                    events.append("\n".join(data) if len(data) > 1 else data[0])
                    data = []
                    self._has_data = False
                continue
            if line.startswith(b"data:"):
                value = line[6:] if line[5:6] == b" " else line[5:]
                data.append(value.decode("utf-8", "replace"))
                self._has_data = True
            elif line == b"data":
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
