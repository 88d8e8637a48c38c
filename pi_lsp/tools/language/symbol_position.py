"""Where a symbol is: from the model's 1-based line and the symbol's text to an LSP position.

Models address symbols by line plus the text on that line (optionally which occurrence), never by
columns (issue 17): pi-lsp finds the column itself, in the negotiated position encoding.

Lines follow LSP's rules (``\\n``, ``\\r\\n`` and ``\\r`` end a line; nothing else does). An
occurrence is first looked for as a whole word (not inside a longer identifier: ``id`` is not
found inside ``width``); when the symbol has no whole-word occurrence on the line, plain substring
occurrences count instead (a symbol such as ``__init__`` or ``a.b`` may touch other characters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


class SymbolNotFound(ValueError):
    """The symbol is not where the model said; ``message`` is the model-facing explanation."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class SymbolPosition:
    """An LSP position: 0-based ``line``, ``character`` in the encoding's units (the symbol's start)."""

    line: int
    character: int


def split_lines(text: str) -> list[str]:
    """``text``'s lines by LSP's rules, without their line breaks (a final break ends no extra line
    with text: ``"a\\n"`` gives ``["a", ""]``)."""
    return _LINE_BREAK.split(text)


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in ``encoding``'s units: UTF-8 bytes, UTF-16 code units or code points.

    Raises ``ValueError`` for another encoding."""
    if encoding not in _CODECS:
        raise ValueError(f"unknown position encoding {encoding!r}")
    if encoding == "utf-32" or text.isascii():
        return len(text)
    codec, width = _CODECS[encoding]
    return len(text.encode(codec, "surrogatepass")) // width


def occurrences(line_text: str, symbol: str) -> list[int]:
    """Code-point offsets in ``line_text`` where ``symbol`` starts (see the module docstring)."""
    if not symbol:
        return []
    plain = [m.start() for m in re.finditer(f"(?={re.escape(symbol)})", line_text)]
    if not plain:
        return []
    def whole(start: int) -> bool:
        before = line_text[start - 1] if start > 0 else ""
        after = line_text[start + len(symbol)] if start + len(symbol) < len(line_text) else ""
        left_ok = not (symbol[0].isalnum() or symbol[0] == "_") or not (before.isalnum() or before == "_")
        right_ok = not (symbol[-1].isalnum() or symbol[-1] == "_") or not (after.isalnum() or after == "_")
        return left_ok and right_ok
    words = [start for start in plain if whole(start)]
    return words or plain


def resolve_symbol(
    text: str, line: int, symbol: str, occurrence: int, encoding: str, shown_path: str
) -> SymbolPosition:
    """The position of the ``occurrence``-th ``symbol`` on 1-based ``line`` of ``text``.

    Raises :class:`SymbolNotFound` with a message naming ``shown_path``, the line as it is, and
    what to try (read the file for the right line, or pick another occurrence).
    """
    lines = split_lines(text)
    count = len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)
    if line < 1 or line > count:
        raise SymbolNotFound(
            f"Line {line} is outside {shown_path}, which has {count} line{'s' if count != 1 else ''}. "
            "Read the file to find the line of the symbol."
        )
    if not symbol.strip():
        raise SymbolNotFound("The symbol must not be empty: give the symbol's text as it appears on the line.")
    line_text = lines[line - 1]
    starts = occurrences(line_text, symbol)
    shown_line = line_text if len(line_text) <= 300 else line_text[:300] + "..."
    if not starts:
        raise SymbolNotFound(
            f"`{symbol}` is not on line {line} of {shown_path}. Line {line} is:\n{line}: {shown_line}\n"
            "Give the symbol's exact text as it appears on that line, or read the file to find the right line."
        )
    if occurrence < 1 or occurrence > len(starts):
        raise SymbolNotFound(
            f"`{symbol}` occurs {len(starts)} time{'s' if len(starts) != 1 else ''} on line {line} of {shown_path}; "
            f"occurrence {occurrence} does not exist. Line {line} is:\n{line}: {shown_line}"
        )
    start = starts[occurrence - 1]
    return SymbolPosition(line - 1, units(line_text[:start], encoding))
