"""LSP positions: lines split by the protocol's rules, columns in the negotiated encoding.

Units used throughout the editor bridge:

* an **offset** is a code-point index into a Python ``str`` (``text[offset]``), 0-based;
* a **line** is 0-based; lines end at ``\\n``, ``\\r\\n`` or ``\\r`` and nowhere else (LSP 3.17,
  "Text Documents": *"the protocol supports \\n, \\r\\n and \\r as end of line sequences"*). Form feed,
  vertical tab, U+0085, U+2028 and U+2029 are ordinary characters here, unlike ``str.splitlines``
  and pygls's text documents;
* a **character** is a column in the units of the negotiated ``PositionEncodingKind``: ``"utf-8"``
  counts UTF-8 bytes, ``"utf-16"`` UTF-16 code units (an astral character counts 2), ``"utf-32"``
  code points.

Clamping follows LSP 3.17 ("Position"): a character past the end of its line means the end of the
line (before its line break); a line past the last line means the end of the text. A column that
falls inside one character (half a surrogate pair, the middle of a UTF-8 sequence) is rounded
down to the start of that character.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Any

ENCODINGS = ("utf-8", "utf-16", "utf-32")
"""The position encodings of LSP 3.17 (lsprotocol's ``PositionEncodingKind`` values)."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CODEC = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def _encoding_name(encoding: Any) -> str:
    """Accept ``"utf-16"`` or a ``PositionEncodingKind`` member; raise ``ValueError`` otherwise."""
    name = getattr(encoding, "value", encoding)
    if name not in _CODEC:
        raise ValueError(f"unknown position encoding {encoding!r}; expected one of {ENCODINGS}")
    return name


def units_of(text: str, encoding: Any) -> int:
    """Length of ``text`` in ``encoding`` units (bytes, UTF-16 code units or code points).

    Lone surrogates (possible in a ``str`` built from JSON escapes) count as one UTF-16 unit and
    three UTF-8 bytes. Raises ``ValueError`` for an unknown encoding.
    """
    name = _encoding_name(encoding)
    if name == "utf-32" or text.isascii():
        return len(text)
    codec, width = _CODEC[name]
    return len(text.encode(codec, "surrogatepass")) // width


def code_points_for_units(text: str, units: int, encoding: Any) -> int:
    """How many leading code points of ``text`` fit in ``units`` units of ``encoding``.

    Clamped to ``[0, len(text)]``; a unit count inside a character rounds down.
    """
    name = _encoding_name(encoding)
    if units <= 0:
        return 0
    if name == "utf-32" or text.isascii():
        return min(units, len(text))
    codec, width = _CODEC[name]
    data = text.encode(codec, "surrogatepass")
    cut = min(units * width, len(data))
    while cut > 0:
        try:
            prefix = data[:cut].decode(codec, "surrogatepass")
        except UnicodeDecodeError:
            prefix = None
        # a cut inside a surrogate pair decodes (surrogatepass) to a lone surrogate: not a prefix
        if prefix is not None and text.startswith(prefix):
            return len(prefix)
        cut -= width  # inside a multi-unit character: round down
    return 0


_SCAN_CHUNK = 16384


def _breaks(text: str, start: int, end: int) -> int:
    """Line breaks in ``text[start:end]`` (a CRLF counts once; the range must not split one)."""
    lf = text.count("\n", start, end)
    if text.find("\r", start, end) < 0:
        return lf
    return lf + text.count("\r", start, end) - text.count("\r\n", start, end)


def line_start(text: str, line: int) -> int | None:
    """Offset where 0-based ``line`` starts, ``None`` past the last line.

    Counts breaks chunk by chunk at C speed, so finding line 1,000,000 of a 50 MB text takes
    milliseconds without building a :class:`LineIndex`.
    """
    if line <= 0:
        return 0
    pos, remaining, size = 0, line, len(text)
    while pos < size:
        end = min(pos + _SCAN_CHUNK, size)
        if 0 < end < size and text[end - 1] == "\r" and text[end] == "\n":
            end += 1
        found = _breaks(text, pos, end)
        if found >= remaining:
            break
        remaining -= found
        pos = end
    for _ in range(remaining):
        match = _LINE_BREAK.search(text, pos)
        if match is None:
            return None
        pos = match.end()
    return pos


def offset_of(text: str, line: int, character: int, encoding: Any) -> int:
    """Offset of the LSP position ``(line, character)`` in ``text`` without a :class:`LineIndex`.

    Same clamping as :meth:`LineIndex.offset_at`; cost proportional to the text before the line
    at C speed plus the line itself.
    """
    if line < 0:
        return 0
    start = line_start(text, line)
    if start is None:
        return len(text)
    match = _LINE_BREAK.search(text, start)
    end = match.start() if match else len(text)
    return start + code_points_for_units(text[start:end], character, encoding)


def _line_starts(text: str) -> list[int]:
    if "\r" not in text:
        return [0, *accumulate(len(part) + 1 for part in text.split("\n")[:-1])]
    return [0, *(match.end() for match in _LINE_BREAK.finditer(text))]


class LineIndex:
    """Line starts of one text under LSP line rules, for offset/position conversion.

    ``LineIndex(text)`` costs one pass over the text. ``line_count`` is the number of lines (a text
    ending with a line break has an empty last line, as in LSP). Methods raise ``ValueError`` for
    an unknown encoding and never for out-of-range positions (they clamp).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = _line_starts(text)

    @property
    def line_count(self) -> int:
        """Number of lines (at least 1)."""
        return len(self.starts)

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line``'s content (before its line break)."""
        if line + 1 >= len(self.starts):
            return len(self.text)
        end = self.starts[line + 1]
        if self.text[end - 1] == "\n" and end >= 2 and self.text[end - 2] == "\r":
            return end - 2
        return end - 1

    def offset_at(self, line: int, character: int, encoding: Any) -> int:
        """Offset of the LSP position ``(line, character)``, clamped as the LSP spec says."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start, end = self.starts[line], self.line_end(line)
        return start + code_points_for_units(self.text[start:end], character, encoding)

    def position_at(self, offset: int, encoding: Any) -> tuple[int, int]:
        """LSP ``(line, character)`` of ``offset`` (clamped to ``[0, len(text)]``).

        An offset inside a ``\\r\\n`` pair maps to the end of that line's content.
        """
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        end = min(offset, self.line_end(line))
        return line, units_of(self.text[start:end], encoding)


def position_at(text: str, offset: int, encoding: Any) -> tuple[int, int]:
    """LSP ``(line, character)`` of ``offset`` in ``text`` without building a :class:`LineIndex`.

    Costs C-speed counting over ``text[:offset]``; used for the few positions of minimal edits in a
    large document. Same clamping as :meth:`LineIndex.position_at`.
    """
    offset = max(0, min(offset, len(text)))
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        offset -= 1
    line = text.count("\n", 0, offset) + text.count("\r", 0, offset) - text.count("\r\n", 0, offset)
    start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    return line, units_of(text[start:offset], encoding)


def positions_at(text: str, offsets: Sequence[int], encoding: Any) -> list[tuple[int, int]]:
    """:func:`position_at` for many ascending ``offsets``, counting each stretch of text once.

    Offsets must be non-decreasing (``ValueError`` otherwise); cost is one pass up to the last one.
    """
    result: list[tuple[int, int]] = []
    cursor, line, line_start = 0, 0, 0
    has_cr = "\r" in text
    for raw in offsets:
        offset = max(0, min(raw, len(text)))
        if has_cr and 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
            offset -= 1
        if offset < cursor:
            raise ValueError("offsets must be in ascending order")
        breaks = text.count("\n", cursor, offset)
        if has_cr:
            breaks += text.count("\r", cursor, offset) - text.count("\r\n", cursor, offset)
        if breaks:
            line += breaks
            last = text.rfind("\n", cursor, offset)
            if has_cr:
                last = max(last, text.rfind("\r", cursor, offset))
            line_start = last + 1
        cursor = offset
        result.append((line, units_of(text[line_start:offset], encoding)))
    return result


def _field(change: Any, name: str) -> Any:
    if isinstance(change, dict):
        return change.get(name)
    return getattr(change, name, None)


def _range_offsets(index: LineIndex | str, range_: Any, encoding: Any) -> tuple[int, int]:
    ends = []
    for key in ("start", "end"):
        pos = _field(range_, key)
        line, character = _field(pos, "line"), _field(pos, "character")
        if not isinstance(line, int) or not isinstance(character, int):
            raise ValueError(f"content change range {key} is not a position: {pos!r}")
        if isinstance(index, str):
            ends.append(offset_of(index, line, character, encoding))
        else:
            ends.append(index.offset_at(line, character, encoding))
    start, end = ends
    return (start, end) if start <= end else (end, start)


def apply_content_changes(text: str, changes: Iterable[Any], encoding: Any) -> str:
    """Apply ``textDocument/didChange`` content changes to ``text`` and return the new text.

    ``changes`` are ``TextDocumentContentChangeEvent``\\ s as dicts or lsprotocol objects, applied
    in order, each against the text left by the previous one (LSP 3.17). A change without
    ``range`` replaces the whole text; ``rangeLength`` is ignored (deprecated). A range whose end
    is before its start is swapped (as vscode-languageserver-textdocument does). Raises
    ``ValueError`` for a change without a string ``text`` or with a malformed range; ``text`` is
    not modified then (strings are immutable; the caller keeps its old text).
    """
    for change in changes:
        new_text = _field(change, "text")
        if not isinstance(new_text, str):
            raise ValueError(f"content change without text: {change!r}")
        range_ = _field(change, "range")
        if range_ is None:
            text = new_text
            continue
        start, end = _range_offsets(text, range_, encoding)
        text = text[:start] + new_text + text[end:]
    return text


def apply_text_edits(text: str, edits: Sequence[Any], encoding: Any) -> str:
    """Apply non-overlapping ``TextEdit``\\ s (ranges in ``text``'s coordinates) all at once.

    The way a client applies a ``workspace/applyEdit`` (LSP 3.17 "TextEdit": all ranges refer to
    the original document). Edits may come in any order; ties keep their given order. Raises
    ``ValueError`` for overlapping edits.
    """
    index = LineIndex(text)
    spans = []
    for order, edit in enumerate(edits):
        start, end = _range_offsets(index, _field(edit, "range"), encoding)
        spans.append((start, end, order, _field(edit, "new_text") or _field(edit, "newText") or ""))
    spans.sort()
    pieces, cursor = [], 0
    for start, end, _, new_text in spans:
        if start < cursor:
            raise ValueError("overlapping text edits")
        pieces.append(text[cursor:start])
        pieces.append(new_text)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
