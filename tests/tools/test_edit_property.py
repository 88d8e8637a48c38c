"""Property: random texts with mixed line endings and random valid edits keep every byte outside the
replaced spans, and the result means what the edit asked for in LF space (design.md section 7)."""

from __future__ import annotations

import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.text.edit_match import EditSpec, apply_splices, plan_edits
from pi_lsp.tools.file_io.line_endings import LineEndingView, decode_text, encode_text, to_lf

PIECES = ["a", "b", "c", " ", "  ", "\t", "é", "\u201c", "\u00a0", "\n", "\r\n", "\r", "xy", "é"]
NEW_PIECES = ["N", "\n", "\r\n", "\r", " ", "q"]

texts = st.lists(st.sampled_from(PIECES), min_size=1, max_size=40).map("".join)


@st.composite
def edit_requests(draw: st.DrawFn) -> tuple[bool, str, list[EditSpec]]:
    has_bom = draw(st.booleans())
    text = draw(texts)
    lf = to_lf(text)
    specs = []
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(lf) - 1))
        end = draw(st.integers(start + 1, min(len(lf), start + 12)))
        old = lf[start:end]
        if draw(st.booleans()):  # models send CRLF sometimes; it is normalised like the file
            old = old.replace("\n", "\r\n")
        new = "".join(draw(st.lists(st.sampled_from(NEW_PIECES), max_size=5)))
        specs.append(EditSpec(old, new))
    return has_bom, text, specs


@settings(deadline=None, max_examples=400)
@given(edit_requests())
def test_bytes_outside_replaced_spans_are_kept(request: tuple[bool, str, list[EditSpec]]) -> None:
    has_bom, text, specs = request
    data = encode_text(has_bom, text)
    bom, decoded = decode_text(data)
    assert (bom, decoded) == (has_bom, text)
    view = LineEndingView(decoded)
    try:
        splices = plan_edits(view.lf, specs, "p")
    except ToolError:
        assume(False)
        return
    new_text = view.splice(splices)
    new_data = encode_text(bom, new_text)

    # the BOM is kept
    assert new_data.startswith(b"\xef\xbb\xbf") == has_bom
    # the result means what the edit asked for
    assert to_lf(new_text) == apply_splices(view.lf, splices)
    # every byte outside the replaced spans is the original's, in order
    spans = [(view.to_original(s), view.to_original(e)) for s, e, _ in splices]
    gaps, cursor = [], 0
    for start, end in spans:
        assert cursor <= start <= end
        gaps.append(text[cursor:start])
        cursor = end
    gaps.append(text[cursor:])
    pattern = "(.*?)".join(re.escape(gap) for gap in gaps)
    assert re.fullmatch(pattern, new_text, re.DOTALL), (text, new_text, spans)
    # a span never splits a CRLF pair
    for start, end in spans:
        for cut in (start, end):
            assert not (0 < cut < len(text) and text[cut - 1] == "\r" and text[cut] == "\n")


@settings(deadline=None, max_examples=200)
@given(texts)
def test_offsets_map_back_to_the_same_characters(text: str) -> None:
    view = LineEndingView(text)
    for i, ch in enumerate(view.lf):
        mapped = view.to_original(i)
        assert text[mapped] == ch or (ch == "\n" and text[mapped] == "\r")
    assert view.to_original(len(view.lf)) == len(text)
