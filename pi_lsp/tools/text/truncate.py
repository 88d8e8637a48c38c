"""Line and byte limits for tool output (Pi's ``truncate.ts``, pi-behaviour.md 1.4).

Two independent limits, whichever is hit first wins: :data:`DEFAULT_MAX_LINES` lines and
:data:`DEFAULT_MAX_BYTES` UTF-8 bytes. :func:`truncate_head` keeps the beginning (read, grep, find,
ls) and never emits a partial line; :func:`truncate_tail` keeps the end (bash) and may keep only the
end of an over-long last line.

Line counting follows the peer (Pi 0.73.1): the text is split on ``\\n``, so a trailing newline
yields one more, empty, line (``"a\\nb\\n"`` is 3 lines; ``""`` is 1). Pi 0.83 changed this; the
peer is normative (design.md), which is also what read's "of N" and bash's "Showing lines" print.

Byte counts are UTF-8 bytes of the text (lone surrogates count 3, as in Node). Everything is linear
in the input size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

DEFAULT_MAX_LINES = 2000
"""Default line limit of tool output."""
DEFAULT_MAX_BYTES = 50 * 1024
"""Default byte limit of tool output (51200 UTF-8 bytes, printed as ``50.0KB``)."""
GREP_MAX_LINE_LENGTH = 500
"""grep cuts each output line to this many characters (code points here; JS counts UTF-16 units)."""

TRUNCATED_LINE_SUFFIX = "... [truncated]"


@dataclass(frozen=True)
class TruncationResult:
    """The outcome of a truncation; ``to_details()`` is what tools put in ``details.truncation``.

    Attributes:
        content: the kept text.
        truncated: whether anything was cut.
        truncated_by: ``"lines"`` or ``"bytes"`` (the limit that stopped it) or ``None``.
        total_lines / total_bytes: size of the input (lines as in the module docstring).
        output_lines / output_bytes: size of ``content``.
        last_line_partial: tail only: ``content`` is the end of one over-long line.
        first_line_exceeds_limit: head only: the first line alone is over ``max_bytes`` so
            ``content`` is empty.
        max_lines / max_bytes: the limits used.
    """

    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_details(self) -> dict[str, Any]:
        """The camelCase dict Pi puts in ``details.truncation`` (all eleven keys)."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def utf8_len(text: str) -> int:
    """UTF-8 byte length of ``text`` (lone surrogates count 3 bytes, like Node's ``byteLength``)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def format_size(n: int) -> str:
    """Pi's ``formatSize``: ``{n}B`` below 1024, ``{n/1024:.1f}KB`` below 1 MiB, else ``{:.1f}MB``.

    ``n`` is a byte count; 51200 prints ``50.0KB``.
    """
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / (1024 * 1024):.1f}MB"


def _untouched(text: str, lines: int, size: int, max_lines: int, max_bytes: int) -> TruncationResult:
    return TruncationResult(text, False, None, lines, size, lines, size, False, False, max_lines, max_bytes)


def truncate_head(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the start while under ``max_lines`` lines and ``max_bytes`` bytes.

    Each kept line costs its UTF-8 bytes plus 1 for the joining ``\\n`` (not the first). If the
    first line alone is over ``max_bytes``: empty content, ``first_line_exceeds_limit``,
    ``truncated_by == "bytes"``. ``truncated_by`` is ``"lines"`` when the line limit stopped it.
    """
    total_bytes = utf8_len(text)
    lines = text.split("\n")
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(text, total_lines, total_bytes, max_lines, max_bytes)
    if utf8_len(lines[0]) > max_bytes:
        return TruncationResult(
            "", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes
        )
    used = 0
    count = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for index in range(min(total_lines, max_lines)):
        cost = utf8_len(lines[index]) + (1 if index > 0 else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        used += cost
        count += 1
    if count >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    content = "\n".join(lines[:count])
    return TruncationResult(
        content, True, truncated_by, total_lines, total_bytes, count, used, False, False,
        max_lines, max_bytes,
    )


def _utf8_suffix(line: str, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``line``, moved forward to a character boundary."""
    data = line.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return line
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "surrogatepass")


def _lines_for_counting(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def truncate_tail(
    text: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the end while under ``max_lines`` lines and ``max_bytes`` bytes.

    If even the last line does not fit, its last ``max_bytes`` bytes are kept, moved forward to a
    UTF-8 character boundary (``last_line_partial``; may be ``""`` when one multi-byte character
    cannot fit).

    Lines are counted as Pi 1.6.0 counts them (``splitLinesForCounting``): a final ``\n`` ends the
    last line and starts no empty one, so 200,000 lines are ``of 200000`` (0.73.1 said ``of
    200001``) and the kept tail starts with a real line, not the empty piece after the last
    ``\n``. Empty text has no lines.
    """
    total_bytes = utf8_len(text)
    lines = _lines_for_counting(text)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untouched(text, total_lines, total_bytes, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    index = total_lines - 1
    while index >= 0 and len(kept) < max_lines:
        line = lines[index]
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            if not kept:
                piece = _utf8_suffix(line, max_bytes)
                kept.append(piece)
                used = utf8_len(piece)
                partial = True
            break
        kept.append(line)
        used += cost
        index -= 1
    if len(kept) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    kept.reverse()
    content = "\n".join(kept)
    return TruncationResult(
        content, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(content),
        partial, False, max_lines, max_bytes,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut ``line`` to ``max_chars`` characters and append ``... [truncated]``.

    Returns ``(text, was_truncated)``. Characters are code points (Pi counts UTF-16 units, so
    lines with astral characters may be cut a little later here).
    """
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + TRUNCATED_LINE_SUFFIX, True
