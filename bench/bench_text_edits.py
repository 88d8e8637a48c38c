"""Bench: minimal TextEdits for a one-line edit of a 60,000-line document (issue 4, Speed).

Target: computing the edits takes well under 20 ms and the JSON payload is < 1 KB. Also times a
worst-ish case (every 100th line changed) for information. Run: ``python3 bench/bench_text_edits.py``.
Prints medians; never asserts (speed targets live here, not in unit tests).
"""

from __future__ import annotations

import json
import statistics
import time

from lsprotocol import converters

from pi_lsp.editor.text_edits import minimal_text_edits

LINES = 60_000
RUNS = 21
TARGET_MS = 20.0


def _median_ms(old: str, new: str, encoding: str) -> tuple[float, list]:
    times, edits = [], []
    for _ in range(RUNS):
        start = time.perf_counter()
        edits = minimal_text_edits(old, new, encoding)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), edits


def main() -> None:
    lines = [f"    value_{i} = compute(é, 😀, {i})  # line {i}\n" for i in range(LINES)]
    old = "".join(lines)
    one = list(lines)
    one[LINES // 2] = one[LINES // 2].replace("compute", "recompute")
    many = [line.replace("compute", "fold") if i % 100 == 0 else line for i, line in enumerate(lines)]
    converter = converters.get_converter()
    print(f"document: {LINES} lines, {len(old.encode()) / 1e6:.1f} MB")
    for encoding in ("utf-8", "utf-16", "utf-32"):
        ms, edits = _median_ms(old, "".join(one), encoding)
        payload = len(json.dumps(converter.unstructure(edits)).encode())
        print(
            f"one-line edit  {encoding:6}: {ms:6.2f} ms median ({ms / TARGET_MS:.2f}x of the {TARGET_MS:.0f} ms"
            f" target), {len(edits)} edit(s), payload {payload} bytes (target < 1024)"
        )
    ms, edits = _median_ms(old, "".join(many), "utf-16")
    print(f"600 scattered line edits utf-16: {ms:6.2f} ms median, {len(edits)} edit(s)")




def why_two_line_diffs() -> None:
    """Issue 14 asks for one line-diff engine unless a measurement shows a reason for two.

    The edit tool's display diff must reproduce Pi's jsdiff output exactly (Myers, capped at
    ``MAX_EDIT_DISTANCE`` line edits, then one removal plus one insertion); minimal TextEdits must stay
    small for any change so the editor keeps cursors, folds and marks. This prints what each engine
    sends the editor for a formatter-like change (every 100th of 60,000 lines): the Myers runs as
    TextEdits replace almost the whole document.
    """
    from pi_lsp.tools.text.line_diff import diff_lines

    lines = [f"    value_{i} = compute({i})\n" for i in range(LINES)]
    old = "".join(lines)
    new = "".join(line.replace("compute", "fold") if i % 100 == 0 else line for i, line in enumerate(lines))
    edits = minimal_text_edits(old, new, "utf-16")
    minimal_bytes = sum(len(e.new_text.encode()) for e in edits)
    parts = diff_lines(old, new)
    myers_bytes = sum(len(p.text.encode()) for p in parts if p.kind == "+")
    print(
        f"600 scattered changes: minimal TextEdits {len(edits)} edits, {minimal_bytes} bytes of new text; "
        f"display-diff engine {sum(p.kind == '+' for p in parts)} insertion run(s), {myers_bytes} bytes "
        f"({myers_bytes / max(minimal_bytes, 1):.0f}x): the reason for two engines"
    )


if __name__ == "__main__":
    main()
    why_two_line_diffs()
