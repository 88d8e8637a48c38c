"""Truncation utilities (pi-behaviour.md 1.4 and the checklist's truncation items).

Line counting is the peer's (Pi 0.73.1): a trailing newline adds one empty line. The checklist
item "3 lines + trailing newline, maxLines 3 -> not truncated" is Pi 0.83's rule; here the peer's
answer is pinned instead (see ``test_trailing_newline_counts_as_a_line_like_the_peer``).
"""

from __future__ import annotations

import random
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.tools.text.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    GREP_MAX_LINE_LENGTH,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)


def test_constants() -> None:
    assert (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH) == (2000, 51200, 500)


def test_multibyte_bytes_counted() -> None:
    result = truncate_head("aé🙂\nb")
    assert (result.total_bytes, result.truncated, result.total_lines) == (9, False, 2)
    assert result.to_details()["truncatedBy"] is None


def test_trailing_newline_counts_as_a_line_like_the_peer_in_head_truncation() -> None:
    assert truncate_head("a\nb\nc").truncated is False
    result = truncate_head("a\nb\nc\n", max_lines=3)
    assert result.total_lines == 4 and result.truncated and result.truncated_by == "lines"
    assert truncate_head("a\nb\nc\n", max_lines=3).content == "a\nb\nc"
    assert truncate_head("").total_lines == 1


def test_tail_truncation_counts_lines_like_pi_1_6() -> None:
    # issue 12 (Pi 1.6.0 splitLinesForCounting): a final newline ends the last line and starts no
    # phantom one; 0.73.1 counted "a\nb\nc\n" as 4 lines and kept the empty piece in the tail
    assert truncate_tail("a\nb\nc").truncated is False
    assert truncate_tail("a\nb\nc\n", max_lines=3).truncated is False
    result = truncate_tail("a\nb\nc\nd\n", max_lines=3)
    assert (result.total_lines, result.truncated_by, result.content) == (4, "lines", "b\nc\nd")
    assert truncate_tail("").total_lines == 0


def test_head_bytes_whole_lines_only() -> None:
    result = truncate_head("éé\nabc", max_bytes=4)
    assert (result.content, result.truncated_by, result.output_bytes) == ("éé", "bytes", 4)
    result = truncate_head("éé\nabc", max_bytes=3)
    assert result.content == "" and result.first_line_exceeds_limit and result.truncated_by == "bytes"
    assert result.output_lines == 0


def test_head_lines_limit_and_details() -> None:
    text = "\n".join(f"Line {i}" for i in range(1, 2501))
    result = truncate_head(text)
    details = result.to_details()
    assert details["truncated"] and details["truncatedBy"] == "lines"
    assert (details["totalLines"], details["outputLines"]) == (2500, 2000)
    assert result.content.endswith("Line 2000")
    assert set(details) == {
        "content", "truncated", "truncatedBy", "totalLines", "totalBytes", "outputLines",
        "outputBytes", "lastLinePartial", "firstLineExceedsLimit", "maxLines", "maxBytes",
    }


def test_head_joining_newline_counts_one_byte() -> None:
    # "aa\nbb" is 5 bytes: with max 4 only "aa" fits (2 + 1 + 2 > 4)
    assert truncate_head("aa\nbb\ncc", max_bytes=5).content == "aa\nbb"
    assert truncate_head("aa\nbb\ncc", max_bytes=4).content == "aa"


def test_tail_partial_last_line() -> None:
    result = truncate_tail("aé🙂b", max_bytes=5)
    assert (result.content, result.last_line_partial, result.output_bytes) == ("🙂b", True, 5)
    result = truncate_tail("X" * 300_000 + "\n", max_bytes=1024)
    # the final newline starts no line (Pi 1.6.0): the last line's end is kept, not an empty line
    assert result.content == "X" * 1024 and result.output_lines == 1 and result.last_line_partial
    result = truncate_tail("X" * 300_000, max_bytes=1024)
    assert result.content == "X" * 1024 and result.output_lines == 1 and result.last_line_partial
    result = truncate_tail("abc🙂", max_bytes=3)
    assert (result.content, result.last_line_partial, result.output_bytes) == ("", True, 0)


def test_tail_lines() -> None:
    text = "".join(f"line-{i}\n" for i in range(1, 4001))
    result = truncate_tail(text)
    assert result.total_lines == 4000 and result.output_lines == 2000
    assert result.content.startswith("line-2001\n") and result.content.endswith("\nline-4000")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "🙂", "\u200d", "\n", "👩\u200d💻"]), max_size=30).map("".join),
       st.integers(min_value=0, max_value=40))
def test_tail_equals_byte_level_truncation(text: str, max_bytes: int) -> None:
    result = truncate_tail(text, max_lines=10_000, max_bytes=max_bytes)
    if not result.last_line_partial:
        return
    data = text.removesuffix("\n").split("\n")[-1].encode()
    expected = data[len(data) - max_bytes:].decode("utf-8", "ignore")
    assert result.content == expected
    assert result.output_bytes == len(result.content.encode()) <= max_bytes


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "é", "🙂", "\n"]), max_size=80),
       st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=30))
def test_head_invariants(text: str, max_lines: int, max_bytes: int) -> None:
    result = truncate_head(text, max_lines=max_lines, max_bytes=max_bytes)
    assert text.startswith(result.content)
    assert result.output_bytes == len(result.content.encode())
    if result.truncated:
        assert result.output_lines <= max_lines and result.output_bytes <= max_bytes
        if result.output_lines:
            assert result.content.count("\n") == result.output_lines - 1
    else:
        assert result.content == text


def test_format_size() -> None:
    assert format_size(0) == "0B"
    assert format_size(1023) == "1023B"
    assert format_size(1024) == "1.0KB"
    assert format_size(51200) == "50.0KB"
    assert format_size(60000) == "58.6KB"
    assert format_size(1024 * 1024) == "1.0MB"


def test_truncate_line() -> None:
    assert truncate_line("x" * 500) == ("x" * 500, False)
    text, cut = truncate_line("y" * 501)
    assert cut and text == "y" * 500 + "... [truncated]"


def test_linear_on_multi_megabyte_input() -> None:
    rng = random.Random(1)
    big = "\n".join("é" * rng.randint(0, 80) for _ in range(200_000))  # ~16 MB of UTF-8
    start = time.perf_counter()
    truncate_head(big)
    truncate_tail(big)
    truncate_head("z" * 20_000_000)
    assert time.perf_counter() - start < 20  # generous bound: quadratic code would take minutes
