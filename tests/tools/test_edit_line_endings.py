"""The BOM/EOL view used by edit (pi_lsp.tools.file_io.line_endings): decoding, offset map, ending rule, fusion guard."""

from __future__ import annotations

import pytest

from pi_lsp.tools.file_io.line_endings import LineEndingView, NotUtf8Error, decode_text, encode_text, to_lf


def test_decode_strips_and_encode_restores_the_bom() -> None:
    assert decode_text(b"\xef\xbb\xbfhi") == (True, "hi")
    assert decode_text(b"hi\xef\xbb\xbf") == (False, "hi\ufeff")
    assert encode_text(True, "hi") == b"\xef\xbb\xbfhi"
    with pytest.raises(NotUtf8Error) as bad:
        decode_text(b"ok\xff")
    assert bad.value.offset == 2


def test_lf_view_maps_offsets_back() -> None:
    assert to_lf("a\r\nb\rc\n") == "a\nb\nc\n"
    view = LineEndingView("a\r\nb\r\nc")
    assert view.lf == "a\nb\nc"
    assert [view.to_original(i) for i in range(len(view.lf) + 1)] == [0, 1, 3, 4, 6, 7]


@pytest.mark.parametrize(
    ("text", "span", "ending"),
    [
        ("a\r\nb\nc", (0, 4), "\r\n"),  # first break inside the span
        ("a\r\nb\nc", (3, 4), "\n"),  # none inside: the one ending the span's line
        ("a\r\nb\rc", (5, 6), "\r"),  # none after: the last one before
        ("abc", (1, 2), "\n"),  # no break at all
    ],
)
def test_ending_rule(text: str, span: tuple[int, int], ending: str) -> None:
    assert LineEndingView(text).ending_for(*span) == ending


def test_splice_never_fuses_a_lone_cr_with_an_lf() -> None:
    view = LineEndingView("a\rX\nb")  # LF view "a\nX\nb": three lines
    emptied = view.splice([(2, 3, "")])
    assert to_lf(emptied) == "a\n\nb" and emptied.startswith("a\r") and emptied.endswith("\nb")
    view = LineEndingView("a\rX")
    assert to_lf(view.splice([(2, 3, "\nY")])) == "a\n\nY"
    view = LineEndingView("a\rX\nb")  # the span holds a CR, so its breaks are CR, right before an LF
    spliced = view.splice([(0, 3, "Z\n")])
    assert to_lf(spliced) == "Z\n\nb" and spliced.endswith("\nb")
