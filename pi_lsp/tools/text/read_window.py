"""``read``'s line window: the selected lines of a file, head-truncated, with Pi's hints.

Pi's algorithm (pi-behaviour.md 2.1): the text is split on ``\\n`` (a trailing newline makes one
more, empty, line: that count is the "of N"), ``offset`` is 1-based, ``limit`` caps the lines, and
the selection is cut by :func:`~pi_lsp.tools.text.truncate.truncate_head` (2000 lines / 50 KiB).

Two ways to compute it, with the same answer:

- :func:`text_window` works on decoded text (used for transcoded UTF-16/32 and for invalid UTF-8,
  whose U+FFFD replacements change byte counts);
- :func:`utf8_window` works on the bytes of valid UTF-8 (issue 21): lines are counted and found on
  the bytes, and only the bytes that end up in the answer are decoded, so a 50 MB file costs one
  pass of ``bytes.count`` and about 50 KB of decoding instead of a split and re-join of its text.
  For valid UTF-8 a line's UTF-8 size is its byte length, so every count agrees with
  :func:`text_window` on the decoded text.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.agent.js_values import js_number_to_string
from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.text.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_head,
    utf8_len,
)

_COARSE_BLOCK = 1 << 20
_FINE_BLOCK = 1 << 12


def _start_index(offset: float | None, total: int) -> int:
    """0-based first line; raises the peer's error when ``offset`` is past the last line."""
    start = int(max(0, offset - 1)) if offset else 0
    if start >= total:
        raise ToolError(
            f"Offset {js_number_to_string(offset or 0)} is beyond end of file ({total} lines total)"
        )
    return start


def _window_text(
    truncation: TruncationResult,
    first_line_bytes: int,
    start: int,
    total: int,
    user_limited: int | None,
    raw_path: str,
) -> tuple[str, Any]:
    """The model-facing text and ``details`` for a truncated selection (Pi's hints)."""
    first = start + 1
    if truncation.first_line_exceeds_limit:
        size = format_size(first_line_bytes)
        limit_text = format_size(DEFAULT_MAX_BYTES)
        return (
            f"[Line {first} is {size}, exceeds {limit_text} limit. Use bash: sed -n '{first}p' "
            f"{raw_path} | head -c {DEFAULT_MAX_BYTES}]",
            {"truncation": truncation.to_details()},
        )
    if truncation.truncated:
        last = first + truncation.output_lines - 1
        by_bytes = "" if truncation.truncated_by == "lines" else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
        hint = f"[Showing lines {first}-{last} of {total}{by_bytes}. Use offset={last + 1} to continue.]"
        return f"{truncation.content}\n\n{hint}", {"truncation": truncation.to_details()}
    if user_limited is not None and start + user_limited < total:
        remaining = total - (start + user_limited)
        hint = f"[{remaining} more lines in file. Use offset={start + user_limited + 1} to continue.]"
        return f"{truncation.content}\n\n{hint}", None
    return truncation.content, None


def text_window(
    text: str,
    offset: float | None,
    limit: float | None,
    raw_path: str,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[str, Any]:
    """Pi's text algorithm on decoded ``text``: the selected lines with their hint, and
    ``details`` (or ``None``).

    ``offset``/``limit`` are JS numbers; fractional values are cut toward zero as JS ``slice``
    does. Raises :class:`ToolError` when ``offset`` is past the last line. ``max_lines`` and
    ``max_bytes`` are the truncation limits (tests make them small).
    """
    all_lines = text.split("\n")
    total = len(all_lines)
    start = _start_index(offset, total)
    user_limited: int | None = None
    if limit is not None:
        end = min(start + int(limit), total)
        selected = "\n".join(all_lines[start:max(start, end)])
        user_limited = end - start  # the peer's count (negative for a negative limit)
    else:
        selected = "\n".join(all_lines[start:])
    truncation = truncate_head(selected, max_lines, max_bytes)
    return _window_text(truncation, utf8_len(all_lines[start]), start, total, user_limited, raw_path)


def _skip_lines(data: bytes, position: int, count: int) -> int:
    """Byte index just after the ``count``-th ``\\n`` at or after ``position`` (``count >= 1``;
    the caller knows that many exist). Blocks that cannot hold it are skipped with
    ``bytes.count``, in blocks growing from 4 KiB to 1 MiB, so a near target costs little."""
    block = _FINE_BLOCK
    while True:
        in_block = data.count(b"\n", position, position + block)
        if in_block >= count:
            break
        count -= in_block
        position += block
        block = min(2 * block, _COARSE_BLOCK)
    while True:  # the target is in [position, position + block): narrow it to a fine block
        in_block = data.count(b"\n", position, position + _FINE_BLOCK)
        if in_block >= count:
            break
        count -= in_block
        position += _FINE_BLOCK
    for _ in range(count):
        position = data.index(b"\n", position) + 1
    return position


def _line_end(data: bytes, position: int) -> int:
    """Byte index of the ``\\n`` ending the line that starts at ``position`` (else ``len(data)``)."""
    end = data.find(b"\n", position)
    return len(data) if end < 0 else end


def utf8_window(
    data: bytes,
    offset: float | None,
    limit: float | None,
    raw_path: str,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[str, Any]:
    """:func:`text_window` of ``data.decode("utf-8")``, computed on the bytes.

    ``data`` must be valid UTF-8 (the caller checks; a UTF-8 BOM stays as U+FEFF in line 1, as
    in :func:`text_window`). Same arguments, result and errors as :func:`text_window`; time is
    one ``bytes.count`` over ``data`` plus the skipped lines' blocks, and only the returned lines
    are decoded.
    """
    if offset is None and limit is None and len(data) <= max_bytes and (
        len(data) < max_lines or data.count(b"\n") < max_lines  # fewer bytes than lines: no count
    ):
        return data.decode("utf-8"), None  # the common case: a whole file within both limits
    total = data.count(b"\n") + 1
    start = _start_index(offset, total)
    begin = _skip_lines(data, 0, start) if start else 0
    user_limited: int | None = None
    stop = total  # 0-based line index after the selection
    if limit is not None:
        end = min(start + int(limit), total)
        user_limited = end - start
        stop = max(start, end)
    if stop == start:  # an empty selection is the empty text: one empty line
        selection_end, selection_lines = begin, 1
    elif stop == total:
        selection_end, selection_lines = len(data), stop - start
    else:  # the "\n" after line stop-1
        selection_end, selection_lines = _skip_lines(data, begin, stop - start) - 1, stop - start
    total_bytes = selection_end - begin
    first_line_bytes = _line_end(data, begin) - begin
    if selection_lines <= max_lines and total_bytes <= max_bytes:
        content = data[begin:selection_end].decode("utf-8")
        truncation = TruncationResult(
            content, False, None, selection_lines, total_bytes, selection_lines, total_bytes,
            False, False, max_lines, max_bytes,
        )
    elif min(first_line_bytes, total_bytes) > max_bytes:
        truncation = TruncationResult(
            "", True, "bytes", selection_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes
        )
    else:
        truncation = _truncated_head(data, begin, selection_end, selection_lines, max_lines, max_bytes)
    return _window_text(truncation, first_line_bytes, start, total, user_limited, raw_path)


def _truncated_head(
    data: bytes, begin: int, selection_end: int, selection_lines: int, max_lines: int, max_bytes: int
) -> TruncationResult:
    """:func:`truncate_head` of a selection known to be over a limit, whose first line fits.

    truncate_head keeps line after line while the kept bytes (lines plus the ``\\n`` between
    them) stay within ``max_bytes``: a line is kept exactly when it ends within the first
    ``max_bytes`` bytes of the selection, up to ``max_lines`` lines. Those ends are counted with
    ``bytes.count`` on that stretch, never line by line.
    """
    length = selection_end - begin
    newline_ends = data.count(b"\n", begin, begin + min(length, max_bytes + 1))
    fitting = newline_ends + (1 if length <= max_bytes else 0)  # the last line ends the selection
    count = min(max_lines, fitting)
    used = _skip_lines(data, begin, count) - 1 - begin if count <= newline_ends else length
    truncated_by = "lines" if count >= max_lines else "bytes"
    content = data[begin : begin + used].decode("utf-8")
    return TruncationResult(
        content, True, truncated_by, selection_lines, length, count, used,  # type: ignore[arg-type]
        False, False, max_lines, max_bytes,
    )
