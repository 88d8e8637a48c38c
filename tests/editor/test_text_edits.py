"""Minimal TextEdits (pi_lsp.editor.text_edits): applying them to the old text gives the new one."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import converters, types

from pi_lsp.editor.positions import LineIndex, apply_text_edits
from pi_lsp.editor import text_edits
from pi_lsp.tools.text import common_affix
from pi_lsp.editor.text_edits import edit_spans, minimal_text_edits, trimmed_region

ENCODINGS = ["utf-8", "utf-16", "utf-32"]
PIECES = ["a", "b", "x\n", "\n", "\r", "\r\n", "\f", "\u2028", "é", "😀", "line\r\n", "line\n", " "]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _offsets(text: str, edit: types.TextEdit, encoding: str) -> tuple[int, int]:
    index = LineIndex(text)
    start = index.offset_at(edit.range.start.line, edit.range.start.character, encoding)
    end = index.offset_at(edit.range.end.line, edit.range.end.character, encoding)
    return start, end


@settings(max_examples=300, deadline=None)
@given(texts, texts)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_applying_the_edits_gives_exactly_the_new_text(encoding: str, old: str, new: str) -> None:
    edits = minimal_text_edits(old, new, encoding)
    assert apply_text_edits(old, edits, encoding) == new
    assert (edits == []) == (old == new)
    bounds = [offset for edit in edits for offset in _offsets(old, edit, encoding)]
    assert bounds == sorted(bounds)  # document order, non-overlapping
    for edit in edits:  # each range round-trips: no boundary inside a character or a CRLF
        start, end = _offsets(old, edit, encoding)
        index = LineIndex(old)
        assert index.position_at(start, encoding) == (edit.range.start.line, edit.range.start.character)
        assert index.position_at(end, encoding) == (edit.range.end.line, edit.range.end.character)
        for offset in (start, end):
            assert not (0 < offset < len(old) and old[offset - 1 : offset + 1] == "\r\n")


@settings(max_examples=200, deadline=None)
@given(texts, texts)
def test_spans_describe_the_same_hunks(old: str, new: str) -> None:
    pieces, cursor = [], 0
    for old_start, old_end, new_start, new_end in edit_spans(old, new):
        pieces.append(old[cursor:old_start])
        pieces.append(new[new_start:new_end])
        cursor = old_end
    pieces.append(old[cursor:])
    assert "".join(pieces) == new


def test_crlf_pair_is_never_split() -> None:
    # old "a\rb" -> new "a\r\nb": the common prefix "a\r" would end inside the new CRLF
    prefix, suffix = trimmed_region("a\rb", "a\r\nb")
    assert (prefix, suffix) == (1, 1)
    edits = minimal_text_edits("x\r\ny", "x\ny", "utf-16")
    assert apply_text_edits("x\r\ny", edits, "utf-16") == "x\ny"
    assert edits[0].range.start == types.Position(0, 1)


def test_columns_after_accents_and_emoji_in_each_encoding() -> None:
    old, new = "héllo 😀 world\n", "héllo 😀 there\n"
    columns = {
        enc: (e.range.start.character, e.range.end.character)
        for enc in ENCODINGS
        for e in minimal_text_edits(old, new, enc)
    }
    assert columns == {"utf-8": (12, 17), "utf-16": (9, 14), "utf-32": (8, 13)}


def test_one_line_change_in_a_large_file_is_one_small_edit() -> None:
    lines = [f"line {i} with some text\n" for i in range(60_000)]
    old = "".join(lines)
    lines[31_234] = "line 31234 with CHANGED text\n"
    new = "".join(lines)
    edits = minimal_text_edits(old, new, "utf-16")
    assert len(edits) == 1
    payload = json.dumps(converters.get_converter().unstructure(edits))
    assert len(payload.encode()) < 1024
    assert edits[0].range.start.line == 31_234
    assert apply_text_edits(old, edits, "utf-16") == new


def test_distant_changes_become_separate_edits_with_untouched_lines_between() -> None:
    old = "".join(f"{i}\n" for i in range(100))
    new = old.replace("3\n", "three\n", 1).replace("97\n", "ninety-seven\n")
    edits = minimal_text_edits(old, new, "utf-16")
    assert [e.range.start.line for e in edits] == [3, 97]
    assert [e.new_text for e in edits] == ["three", "ninety-seven"]
    assert [e.range.end.character for e in edits] == [1, 2]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["k\n", "q\n", "z\r\n", "\n", "u1\n", "u2\n", "u3\n", "é\n"]), max_size=40),
       st.lists(st.sampled_from(["k\n", "q\n", "z\r\n", "\n", "u1\n", "u2\n", "u4\n", "😀\n"]), max_size=40))
def test_the_anchor_split_used_for_large_regions_is_exact(old_lines: list[str], new_lines: list[str]) -> None:
    saved = text_edits.SMALL_DIFF_CELLS
    text_edits.SMALL_DIFF_CELLS = 4  # force the unique-line split that large documents take
    try:
        old, new = "".join(old_lines), "".join(new_lines)
        assert apply_text_edits(old, minimal_text_edits(old, new, "utf-16"), "utf-16") == new
    finally:
        text_edits.SMALL_DIFF_CELLS = saved


def test_scattered_changes_in_a_large_file_stay_separate_edits() -> None:
    lines = [f"row {i}\n" for i in range(30_000)]
    new_lines = [line.upper() if i % 1000 == 0 else line for i, line in enumerate(lines)]
    old, new = "".join(lines), "".join(new_lines)
    edits = minimal_text_edits(old, new, "utf-8")
    assert len(edits) == 30
    assert apply_text_edits(old, edits, "utf-8") == new


@given(st.text(alphabet="ab\r\n", max_size=60), st.text(alphabet="ab\r\n", max_size=60))
def test_common_prefix_and_suffix_with_small_chunks(a: str, b: str) -> None:
    saved = common_affix.CHUNK
    common_affix.CHUNK = 4  # exercise the chunk loop and the bisection on short strings
    try:
        prefix = common_affix.common_prefix_length(a, b)
        assert a[:prefix] == b[:prefix] and (prefix == min(len(a), len(b)) or a[prefix] != b[prefix])
        limit = min(len(a), len(b)) - prefix
        suffix = common_affix.common_suffix_length(a, b, limit)
        assert suffix <= limit and a[len(a) - suffix :] == b[len(b) - suffix :]
        assert suffix == limit or a[len(a) - suffix - 1] != b[len(b) - suffix - 1]
    finally:
        common_affix.CHUNK = saved
