"""LSP line rules and column units (pi_lsp.editor.positions)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from pi_lsp.editor.positions import (
    LineIndex,
    apply_content_changes,
    apply_text_edits,
    position_at,
    units_of,
)

ENCODINGS = ["utf-8", "utf-16", "utf-32"]

# characters that stress the rules: line breaks, non-breaks that other splitters treat as breaks,
# accented (2 UTF-8 bytes), CJK (3 bytes), astral emoji (4 bytes, 2 UTF-16 units)
ALPHABET = ["a", "b", " ", "\n", "\r", "\r\n", "\f", "\v", "\u2028", "\u0085", "é", "中", "😀", "\t"]
texts = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)


def test_only_lsp_line_breaks_split_lines() -> None:
    text = "a\fb\vc\u2028d\u0085e\u2029f\ng\r\nh\ri"
    index = LineIndex(text)
    assert index.line_count == 4
    assert index.position_at(text.index("g"), "utf-16") == (1, 0)
    assert index.position_at(text.index("h"), "utf-16") == (2, 0)
    assert index.position_at(text.index("i"), "utf-16") == (3, 0)
    assert index.position_at(text.index("f"), "utf-16") == (0, 10)


def test_trailing_line_break_makes_an_empty_last_line() -> None:
    assert LineIndex("a\n").line_count == 2
    assert LineIndex("").line_count == 1
    assert LineIndex("a\r\n").position_at(3, "utf-8") == (1, 0)


@pytest.mark.parametrize(
    ("encoding", "column"), [("utf-8", 11), ("utf-16", 8), ("utf-32", 7)]
)
def test_columns_after_accent_and_astral_emoji(encoding: str, column: int) -> None:
    text = "x\nhé😀ab Z"
    index = LineIndex(text)
    # h(1) é(2 / 1 / 1) 😀(4 / 2 / 1) a b " " -> Z
    expected = {"utf-8": 10, "utf-16": 7, "utf-32": 6}[encoding]
    assert index.position_at(text.index("Z"), encoding) == (1, expected)
    assert index.offset_at(1, expected, encoding) == text.index("Z")
    assert units_of("hé😀ab Z", encoding) == column


def test_clamping_follows_the_spec() -> None:
    text = "ab\r\ncd"
    index = LineIndex(text)
    assert index.offset_at(0, 99, "utf-16") == 2  # past line end -> before the CRLF
    assert index.offset_at(7, 0, "utf-16") == len(text)  # past last line -> end of text
    assert index.offset_at(-1, 3, "utf-16") == 0
    assert index.position_at(3, "utf-16") == (0, 2)  # inside the CRLF pair -> line end
    assert index.position_at(99, "utf-16") == (1, 2)


def test_column_inside_a_character_rounds_down() -> None:
    index = LineIndex("😀x")
    assert index.offset_at(0, 1, "utf-16") == 0  # half of the surrogate pair
    assert index.offset_at(0, 3, "utf-8") == 0
    assert index.offset_at(0, 4, "utf-8") == 1


def test_unknown_encoding_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="position encoding"):
        LineIndex("a").offset_at(0, 0, "latin-1")


@given(texts, st.data())
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_offset_position_round_trip(encoding: str, text: str, data: st.DataObject) -> None:
    index = LineIndex(text)
    offset = data.draw(st.integers(0, len(text)))
    line, character = index.position_at(offset, encoding)
    assert position_at(text, offset, encoding) == (line, character)
    back = index.offset_at(line, character, encoding)
    inside_crlf = 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n"
    assert back == (offset - 1 if inside_crlf else offset)


def test_incremental_and_full_changes_as_dicts_and_objects() -> None:
    text = "héllo 😀 world\nsecond\n"
    changes = [
        {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}},
         "text": "there"},
        types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(1, 0), types.Position(1, 6)), text="2nd"
        ),
    ]
    assert apply_content_changes(text, changes, "utf-16") == "héllo 😀 there\n2nd\n"
    whole = [types.TextDocumentContentChangeWholeDocument(text="new")]
    assert apply_content_changes(text, whole, "utf-8") == "new"


def test_malformed_change_raises_value_error() -> None:
    with pytest.raises(ValueError, match="without text"):
        apply_content_changes("a", [{"range": None}], "utf-16")
    with pytest.raises(ValueError, match="not a position"):
        apply_content_changes("a", [{"range": {"start": {}, "end": {}}, "text": ""}], "utf-16")


def test_reversed_range_is_swapped() -> None:
    change = {"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 1}},
              "text": "X"}
    assert apply_content_changes("abcd", [change], "utf-32") == "aXd"


def test_text_edits_refer_to_the_original_text() -> None:
    edits = [
        types.TextEdit(types.Range(types.Position(1, 0), types.Position(1, 1)), "B"),
        types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 1)), "AA\n"),
    ]
    assert apply_text_edits("a\nb\n", edits, "utf-16") == "AA\n\nB\n"
    overlapping = [edits[1], types.TextEdit(types.Range(types.Position(0, 0), types.Position(1, 0)), "")]
    with pytest.raises(ValueError, match="overlapping"):
        apply_text_edits("a\nb\n", overlapping, "utf-16")


@given(texts, st.integers(-1, 12), st.integers(0, 6))
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_direct_offset_lookup_matches_the_index(encoding: str, text: str, line: int, character: int) -> None:
    from pi_lsp.editor import positions

    saved = positions._SCAN_CHUNK
    positions._SCAN_CHUNK = 3  # small chunks: exercise CRLF pairs on chunk boundaries
    try:
        assert positions.offset_of(text, line, character, encoding) == LineIndex(text).offset_at(line, character, encoding)
    finally:
        positions._SCAN_CHUNK = saved
