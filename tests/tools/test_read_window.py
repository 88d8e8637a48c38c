"""read's window on bytes (issue 21) answers exactly as the text algorithm, on any valid UTF-8.

``utf8_window`` finds lines on the bytes and decodes only what it returns; ``text_window`` is
Pi's algorithm on the decoded text (the reference, also used for transcoded and invalid text).
Small truncation limits make every branch (untouched, cut by lines, cut by bytes, first line too
long, user limit, negative limit, offset past the end) reachable with small inputs.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.file_io.file_content import is_valid_utf8
from pi_lsp.tools.text.read_window import text_window, utf8_window

_PIECES = st.sampled_from(["a", "bc", "\n", "\n", "\r\n", "é", "€", "𝄞", "\ufeff", " ", "xyz"])
_TEXTS = st.lists(_PIECES, max_size=60).map("".join)
_NUMBERS = st.one_of(st.none(), st.integers(-3, 40), st.floats(-2.0, 40.0, allow_nan=False))


def _both(text: str, offset: float | None, limit: float | None, max_lines: int, max_bytes: int):
    answers = []
    for window, subject in ((text_window, text), (utf8_window, text.encode("utf-8"))):
        try:
            answers.append(window(subject, offset, limit, "f.txt", max_lines=max_lines, max_bytes=max_bytes))
        except ToolError as exc:
            answers.append(("error", exc.message))
    return answers


@settings(max_examples=250, deadline=None)
@given(_TEXTS, _NUMBERS, _NUMBERS, st.integers(1, 6), st.integers(1, 24))
def test_bytes_window_equals_text_window(
    text: str, offset: float | None, limit: float | None, max_lines: int, max_bytes: int
) -> None:
    reference, fast = _both(text, offset, limit, max_lines, max_bytes)
    assert fast == reference


@pytest.mark.parametrize(
    ("offset", "limit"), [(None, None), (3, None), (5000, None), (2999, 4), (1, 0), (7, -2), (30001, None)]
)
def test_bytes_window_on_a_long_file_with_the_real_limits(offset: int | None, limit: int | None) -> None:
    # lines of varied length and multi-byte text across the coarse and fine skipping blocks
    text = "\n".join(f"{i} {'ü' * (i % 7)} {'x' * (i % 300)}" for i in range(30000)) + "\n"
    reference, fast = (
        text_window(text, offset, limit, "f.txt"),
        utf8_window(text.encode("utf-8"), offset, limit, "f.txt"),
    )
    assert fast == reference


@pytest.mark.parametrize("text", ["a\nb\nc", "a\nb\n", "a\nb\nc\n", "abcdef", "abcdefg", "", "\n\n\n"])
def test_a_whole_file_at_and_over_the_limits(text: str) -> None:
    # 3 lines and 6 bytes are the limits: at them the whole text is the answer, over them a hint
    assert _both(text, None, None, 3, 6)[1] == _both(text, None, None, 3, 6)[0]


def test_bytes_window_on_one_huge_line() -> None:
    data = b"q" * 200_000 + b"\nend"
    assert utf8_window(data, None, None, "f.txt") == text_window(data.decode(), None, None, "f.txt")
    assert "[Line 1 is 195.3KB, exceeds 50.0KB limit" in utf8_window(data, None, None, "f.txt")[0]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40) | _TEXTS.map(lambda text: text.encode("utf-8")))
def test_is_valid_utf8_agrees_with_the_codec(data: bytes) -> None:
    try:
        data.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert is_valid_utf8(data) is valid


def test_is_valid_utf8_across_its_pieces() -> None:
    # a four-byte character split by the 64 KiB piece boundary is still valid; a cut one is not,
    # even when the next piece is plain ASCII (which is otherwise not decoded)
    piece = 1 << 16
    data = b"a" * (piece - 2) + "𝄞".encode("utf-8") + b"b" * piece
    assert is_valid_utf8(data)
    clef = "𝄞".encode("utf-8")
    assert not is_valid_utf8(b"a" * (piece - 3) + clef[:3] + b"b" * piece)
    assert not is_valid_utf8(b"a" * (piece - 3) + clef[:3] + b"b" * piece + clef[3:] + b"c")
    assert not is_valid_utf8(data[: piece + 1])
    assert not is_valid_utf8(b"ok \xed\xa0\x80 surrogate")
    assert not is_valid_utf8(b"a" * piece * 3 + b"\xff")
