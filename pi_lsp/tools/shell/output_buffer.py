"""Bounded accumulation of a command's output (Pi's ``OutputAccumulator``, pi-behaviour.md 2.2).

:class:`OutputBuffer` takes raw chunks from stdout and stderr in arrival order and keeps, in bounded
memory:

- the *model's view*: each stream decoded by its own incremental UTF-8 decoder (invalid bytes become
  U+FFFD; a character split across chunks arrives whole), ANSI/OSC escape sequences removed
  (design.md section 7; a sequence split across chunks is held back until complete), merged in
  arrival order. Only a rolling tail of it is kept (about ``4 * max_bytes`` UTF-8 bytes at most);
- totals for the whole stream: lines (the peer's count: 1 + number of ``\\n``, so a trailing newline
  adds an empty last line), UTF-8 bytes of the model's view, raw bytes;
- a *spill file* ``{temp_dir}/pi-bash-{16 hex}.log`` holding the raw bytes (both streams,
  arrival order, undecoded), created as soon as the output passes ``max_lines`` lines or
  ``max_bytes`` bytes: it exists exactly when the output is truncated. It holds **all** bytes up to
  ``max_spill_bytes``; a runaway command (``yes``) would otherwise fill the temp folder, so
  after that many bytes it stops growing (:attr:`OutputBuffer.spill_capped`) while the totals and
  the in-memory tail go on.
"""

from __future__ import annotations

import codecs
import logging
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from pi_lsp.tools.text.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    truncate_tail,
)

log = logging.getLogger(__name__)

_ESCAPE = re.compile(
    r"\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)"  # OSC ... BEL | ST (titles, hyperlinks)
    r"|\x1b[PX^_][^\x1b\n]*\x1b\\"  # DCS, SOS, PM, APC ... ST
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI (colours, cursor movement)
    r"|\x1b[ -/]*[0-OQ-WYZ\\`-~]"  # two-character and nF escapes (not the introducers above)
)
_PARTIAL_ESCAPE = re.compile(
    r"\x1b(?:\][^\x07\x1b\n]*\x1b?|[PX^_][^\x1b\n]*\x1b?|\[[0-?]*[ -/]*|[ -/]*)"
    r"|\x9b[0-?]*[ -/]*"
)
_ESCAPE_START = re.compile("[\x1b\x9b]")
_MAX_HELD_ESCAPE = 4096
"""An unfinished escape sequence is held back only within the last this many characters."""


def strip_escapes(text: str) -> str:
    """Remove complete ANSI escape sequences (CSI, OSC, DCS/SOS/PM/APC, two-character ESC).

    Never removes a newline. Text without ESC (U+001B) or CSI (U+009B) is returned as is.
    """
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return _ESCAPE.sub("", text)


class EscapeStripper:
    """Incremental :func:`strip_escapes` for one stream: holds back an unfinished sequence at the
    end of a chunk until the rest arrives (or :meth:`flush`)."""

    def __init__(self) -> None:
        self._held = ""

    @property
    def holding(self) -> bool:
        """True while part of an unfinished escape sequence is held back."""
        return bool(self._held)

    def feed(self, text: str) -> str:
        """Return ``text`` (after anything held) without escapes, minus an unfinished tail."""
        if self._held:
            text = self._held + text
            self._held = ""
        if "\x1b" not in text and "\x9b" not in text:
            return text
        # the earliest sequence start whose rest could still become a complete sequence
        for found in _ESCAPE_START.finditer(text, max(0, len(text) - _MAX_HELD_ESCAPE)):
            if _PARTIAL_ESCAPE.fullmatch(text, found.start()) is not None:
                self._held = text[found.start() :]
                text = text[: found.start()]
                break
        return _ESCAPE.sub("", text)

    def flush(self) -> str:
        """Whatever is held back (an escape that never finished), stripped where possible."""
        held, self._held = self._held, ""
        return strip_escapes(held)


@dataclass(frozen=True)
class OutputSnapshot:
    """The model's view at one moment.

    ``content`` is the tail-truncated text; ``truncation`` its record with the *whole stream's*
    totals (``truncated`` says whether the whole output exceeded a limit); ``full_output_path`` is
    the spill file, or ``None`` when there is none.
    """

    content: str
    truncation: TruncationResult
    full_output_path: Path | None


class OutputBuffer:
    """Bounded, incremental accumulator of a command's stdout and stderr.

    Args:
        temp_dir: where the spill file goes (created when needed).
        max_lines / max_bytes: the truncation limits (Pi: 2000 lines, 51200 bytes).
        prefix: spill file name prefix (``pi-bash`` gives ``pi-bash-{16 hex}.log``).
        max_spill_bytes: the spill file holds at most the first this many raw bytes; ``None``
            means no cap (bash passes ``ToolSettings.bash_max_spill_bytes``).

    Not thread-safe; feed it from one event loop. Memory stays under a few hundred KB whatever
    the output size.
    """

    def __init__(
        self,
        temp_dir: Path,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        prefix: str = "pi-bash",
        max_spill_bytes: int | None = None,
    ) -> None:
        self.temp_dir = Path(temp_dir)
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.prefix = prefix
        self.max_spill_bytes = max_spill_bytes
        self.spill_bytes = 0  # raw bytes written to the spill file
        self.spill_capped = False  # True once bytes were left out of the spill file (the cap)
        self._rolling = max(2 * max_bytes, 1)
        self._decoders = {
            1: codecs.getincrementaldecoder("utf-8")("replace"),
            2: codecs.getincrementaldecoder("utf-8")("replace"),
        }
        self._strippers = {1: EscapeStripper(), 2: EscapeStripper()}
        self._tail = bytearray()  # UTF-8 of the model's view, last bytes only
        self._tail_at_line_start = True
        self._pending_raw: list[bytes] = []  # raw chunks before the spill file exists
        self._spill: BinaryIO | None = None
        self._spill_started = False  # opened once (or failed); never reopened
        self.full_output_path: Path | None = None
        self.total_raw_bytes = 0
        self.total_bytes = 0
        self._newlines = 0
        self._open_line_bytes = 0  # bytes after the last newline
        self._closed_line_bytes = 0  # bytes of the line the last newline ended
        self.finished = False

    # -- input ----------------------------------------------------------------------------------

    def feed(self, stream: int, data: bytes) -> None:
        """Add a raw chunk from ``stream`` (1 = stdout, 2 = stderr). Ignored after :meth:`finish`."""
        if self.finished or not data:
            return
        self.total_raw_bytes += len(data)
        decoder = self._decoders[stream]
        stripper = self._strippers[stream]
        if data.isascii() and b"\x1b" not in data and not stripper.holding and not decoder.getstate()[0]:
            self._add_encoded(data)  # fast path: plain ASCII decodes to itself, nothing to strip
        else:
            self._add_text(stripper.feed(decoder.decode(data)))
        if self._spill_started:
            self._write_spill(data)
            return
        self._pending_raw.append(data)
        if self._over_limits():
            self._open_spill()

    def finish(self) -> None:
        """Flush both decoders and escape strippers (stdout first); later feeds are ignored."""
        if self.finished:
            return
        for stream in (1, 2):
            text = self._decoders[stream].decode(b"", final=True)
            self._add_text(self._strippers[stream].feed(text) + self._strippers[stream].flush())
        self.finished = True
        if not self._spill_started and self._over_limits():
            self._open_spill()

    def close(self) -> None:
        """Close the spill file (it stays on disk; the session removes its temp folder)."""
        if self._spill is not None:
            try:
                self._spill.close()
            except OSError as exc:  # pragma: no cover - disk full at close
                log.warning("closing %s failed: %s", self.full_output_path, exc)
            self._spill = None

    # -- output ---------------------------------------------------------------------------------

    @property
    def total_lines(self) -> int:
        """Lines of the whole output as Pi 1.6.0 counts them: a final ``\n`` ends the last line
        and starts no new one, and empty output has none (0.73.1 counted one more)."""
        return self._newlines + (1 if self._open_line_bytes else 0)

    @property
    def last_line_bytes(self) -> int:
        """UTF-8 bytes of the output's last line (the one a final newline ended, if any)."""
        return self._open_line_bytes or self._closed_line_bytes

    @property
    def truncated(self) -> bool:
        """True when the whole output exceeds a limit (then the spill file exists)."""
        return self.total_lines > self.max_lines or self.total_bytes > self.max_bytes

    def snapshot(self) -> OutputSnapshot:
        """The tail-truncated model's view with whole-stream totals (the peer's ``snapshot``).

        Only the last ``max_bytes`` bytes of the tail can be shown, so only they are decoded and
        truncated (the result equals truncating the whole tail, the peer's way, at a fraction of
        the cost: updates take a snapshot up to ten times a second).
        """
        text, trimmed = self._visible_tail()
        result = truncate_tail(text, self.max_lines, self.max_bytes)
        truncated = self.truncated
        if truncated and not result.truncated and text.endswith("\n"):
            # the whole output was cut, so its kept lines are joined without the final newline
            # (the visible tail alone fitted, and truncate_tail returned it as it was)
            content = text[:-1]
            result = replace(result, content=content, output_bytes=result.output_bytes - 1)
        truncated_by = None
        if truncated:
            truncated_by = result.truncated_by
            if truncated_by is None and trimmed:  # the line before the kept ones did not fit
                truncated_by = "lines" if result.output_lines >= self.max_lines else "bytes"
            if truncated_by is None:
                truncated_by = "bytes" if self.total_bytes > self.max_bytes else "lines"
        result = replace(
            result,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self.total_lines,
            total_bytes=self.total_bytes,
        )
        if truncated and not self._spill_started:
            self._open_spill()
        return OutputSnapshot(result.content, result, self.full_output_path)

    # -- internals ------------------------------------------------------------------------------

    def _visible_tail(self) -> tuple[str, bool]:
        """The decoded tail that truncation needs, and whether older whole lines were left out."""
        data = self._tail
        limit = self.max_bytes + 1  # a kept line plus the newline before it fits in this
        end = len(data) - 1 if data.endswith(b"\n") else len(data)  # a final newline starts no line
        if end > limit:
            cut = data.find(b"\n", end - limit, end)
            if cut != -1:
                return data[cut + 1 :].decode("utf-8", "replace"), True
            start = max(0, end - limit - 8)  # one over-long last line: keep more than max_bytes
            while start < len(data) and (data[start] & 0xC0) == 0x80:
                start += 1
            return data[start:].decode("utf-8", "replace"), True
        text = data.decode("utf-8", "replace")
        if not self._tail_at_line_start:
            cut = text.find("\n")
            text = text if cut == -1 else text[cut + 1 :]
        return text, False

    def _over_limits(self) -> bool:
        return (
            self.total_raw_bytes > self.max_bytes
            or self.total_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def _add_text(self, text: str) -> None:
        if text:
            self._add_encoded(text.encode("utf-8", "surrogatepass") if not text.isascii() else text.encode())

    def _add_encoded(self, encoded: bytes) -> None:
        """Account for ``encoded`` (UTF-8 of the model's view) and append it to the tail."""
        size = len(encoded)
        self.total_bytes += size
        newlines = encoded.count(b"\n")
        if newlines:
            self._newlines += newlines
            last = encoded.rfind(b"\n")
            if newlines == 1:
                self._closed_line_bytes = self._open_line_bytes + last
            else:
                self._closed_line_bytes = last - encoded.rfind(b"\n", 0, last) - 1
            self._open_line_bytes = size - last - 1
        else:
            self._open_line_bytes += size
        if size > 2 * self._rolling:  # a big chunk alone: keep its end, never copy the rest
            start = size - self._rolling
            while start < size and (encoded[start] & 0xC0) == 0x80:
                start += 1
            self._tail_at_line_start = encoded[start - 1] == 0x0A
            self._tail = bytearray(memoryview(encoded)[start:])
            return
        self._tail += encoded
        if len(self._tail) > 2 * self._rolling:
            self._trim_tail()

    def _trim_tail(self) -> None:
        start = len(self._tail) - self._rolling
        while start < len(self._tail) and (self._tail[start] & 0xC0) == 0x80:
            start += 1
        self._tail_at_line_start = self._tail[start - 1] == 0x0A
        del self._tail[:start]

    def _open_spill(self) -> None:
        self._spill_started = True
        self.full_output_path = self.temp_dir / f"{self.prefix}-{secrets.token_hex(8)}.log"
        try:
            self.temp_dir.mkdir(parents=True, exist_ok=True)
            self._spill = open(self.full_output_path, "wb")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            log.warning("cannot create %s: %s", self.full_output_path, exc)
            self._pending_raw.clear()
            return
        pending, self._pending_raw = self._pending_raw, []
        for chunk in pending:
            self._write_spill(chunk)

    def _write_spill(self, data: bytes) -> None:
        if self._spill is None or self.spill_capped:
            return
        if self.max_spill_bytes is not None:
            room = max(self.max_spill_bytes - self.spill_bytes, 0)
            if len(data) > room:
                data = data[:room]
                self.spill_capped = True
        if not data:
            return
        try:
            self._spill.write(data)
            self.spill_bytes += len(data)
        except OSError as exc:
            log.warning("writing %s failed: %s", self.full_output_path, exc)
            self.close()


__all__ = ["EscapeStripper", "OutputBuffer", "OutputSnapshot", "strip_escapes"]
