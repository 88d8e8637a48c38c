"""LineEndingView.splice with replacements that touch (one ends where the next starts).

A line break written by one replacement must not fuse with a neighbour that the next replacement
removes or changes (found by the hypothesis property in test_edit_property.py).
"""

from __future__ import annotations

import random

from pi_lsp.tools.text.edit_match import EditSpec, apply_splices, plan_edits
from pi_lsp.tools.file_io.line_endings import LineEndingView, to_lf


def test_break_written_before_an_emptied_span_keeps_its_count() -> None:
    # "xaa", not "aaa": in "aaaa" the latter occurs twice (overlapping), which is ambiguous (issue 12)
    view = LineEndingView("xaaa    \ra\n")
    splices = plan_edits(view.lf, [EditSpec("xaa", "\n"), EditSpec("a    \na", "")], "p")
    assert splices == [(0, 3, "\n"), (3, 10, "")]
    out = view.splice(splices)
    assert to_lf(out) == apply_splices(view.lf, splices) == "\n\n"
    assert out == "\r\n\n"  # the written break (the span's CR ending) made CRLF, apart from the file's LF


def test_touching_replacements_in_mixed_endings_mean_what_they_say() -> None:
    rng = random.Random(20261129)
    for _ in range(20_000):
        text = "".join(rng.choice(["a", "\r", "\n", "\r\n", " "]) for _ in range(rng.randint(0, 12)))
        view = LineEndingView(text)
        cuts = sorted(rng.randint(0, len(view.lf)) for _ in range(2 * rng.randint(1, 3)))
        splices = [(a, b, rng.choice(["", "\n", "x", "\nx", "x\n", "\n\n"])) for a, b in zip(cuts[::2], cuts[1::2])]
        out = view.splice(splices)
        assert to_lf(out) == apply_splices(view.lf, splices), (text, splices, out)
        first, last = view.to_original(splices[0][0]), view.to_original(splices[-1][1])
        assert out.startswith(text[:first]) and out.endswith(text[last:]), (text, splices, out)
