"""Symbol -> LSP position (issue 17): the column in each negotiated encoding, with non-ASCII text
before the symbol; whole-word occurrences; the model-facing errors."""

from __future__ import annotations

import pytest

from pi_lsp.tools.language.symbol_position import SymbolNotFound, SymbolPosition, occurrences, resolve_symbol

# "é" is 1 code point, 2 UTF-8 bytes, 1 UTF-16 unit; "😀" is 1 code point, 4 bytes, 2 UTF-16 units
TEXT = "first line\r\nname = '😀é' + width + id(id)\nlast\n"


@pytest.mark.parametrize(
    ("encoding", "character"),
    [("utf-8", 26), ("utf-16", 23), ("utf-32", 22)],
)
def test_the_column_counts_the_units_of_the_negotiated_encoding(encoding: str, character: int) -> None:
    # 22 code points precede it: "😀" is 4 UTF-8 bytes and 2 UTF-16 units, "é" 2 bytes and 1 unit
    assert resolve_symbol(TEXT, 2, "id", 1, encoding, "a.py") == SymbolPosition(1, character)


def test_occurrence_picks_among_several_and_words_are_whole() -> None:
    line = "id = width + id(id)"
    assert occurrences(line, "id") == [0, 13, 16]  # never inside "width"
    assert resolve_symbol(line, 1, "id", 3, "utf-16", "a.py") == SymbolPosition(0, 16)
    assert occurrences("self.__init__()", "__init__") == [5]
    assert occurrences("a.b.c", "b.c") == [2]
    assert occurrences("xid", "id") == [1]  # no whole-word match: plain substrings count


def test_crlf_and_cr_end_lines_as_lsp_says() -> None:
    text = "a\rb\r\nc\nd"
    assert resolve_symbol(text, 2, "b", 1, "utf-16", "f") == SymbolPosition(1, 0)
    assert resolve_symbol(text, 4, "d", 1, "utf-16", "f") == SymbolPosition(3, 0)


def test_a_symbol_not_on_the_line_shows_the_line() -> None:
    with pytest.raises(SymbolNotFound) as caught:
        resolve_symbol(TEXT, 3, "width", 1, "utf-16", "src/a.py")
    assert caught.value.message == (
        "`width` is not on line 3 of src/a.py. Line 3 is:\n3: last\n"
        "Give the symbol's exact text as it appears on that line, or read the file to find the right line."
    )


def test_a_missing_occurrence_and_a_line_outside_the_file() -> None:
    with pytest.raises(SymbolNotFound) as caught:
        resolve_symbol(TEXT, 2, "width", 2, "utf-16", "a.py")
    assert caught.value.message.startswith("`width` occurs 1 time on line 2 of a.py; occurrence 2 does not exist.")
    with pytest.raises(SymbolNotFound) as caught:
        resolve_symbol(TEXT, 4, "x", 1, "utf-16", "a.py")
    assert caught.value.message == "Line 4 is outside a.py, which has 3 lines. Read the file to find the line of the symbol."
    with pytest.raises(SymbolNotFound):
        resolve_symbol(TEXT, 1, " ", 1, "utf-16", "a.py")
