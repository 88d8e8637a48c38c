"""Minimal ``TextEdit``\\ s that turn one text into another (design.md section 4 step 2).

The edit path never replaces a whole buffer: that would move the user's cursor, fold state and
marks, and bloat the undo step. :func:`minimal_text_edits` trims the common prefix and suffix
first (C-speed chunked comparison, so one changed line in a 60,000-line document costs a few
milliseconds), then diffs the remaining middle line by line with :class:`difflib.SequenceMatcher`
(``autojunk=False``, so frequent lines such as blank ones are not ignored), after splitting large
middles at lines that occur once on each side (the patience-diff idea), so scattered changes in a
large file stay fast.

Why not the edit tool's line diff (:mod:`pi_lsp.tools.text.line_diff`): that one must reproduce Pi's
display diff exactly, Myers capped at a few hundred line edits and then one removal plus one
insertion; sent as TextEdits, a formatter-like change replaces the whole document
(``bench/bench_text_edits.py`` prints 814x the bytes for 600 scattered changes in 60,000 lines).
Both share the common prefix/suffix cut (:mod:`pi_lsp.tools.text.common_affix`).

Guarantees (checked by a hypothesis property test): ranges are in the *old* text's coordinates,
non-overlapping, in document order, with columns in the requested position encoding; no boundary
falls between the ``\\r`` and ``\\n`` of a pair in either text, nor inside a character (so never
inside a UTF-16 surrogate pair or a UTF-8 sequence); applying the edits to the old text with LSP
rules (:func:`pi_lsp.editor.positions.apply_text_edits`) gives exactly the new text.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from difflib import SequenceMatcher
from typing import Any

from lsprotocol.types import Position, Range, TextEdit

from pi_lsp.editor.positions import positions_at
from pi_lsp.tools.text.common_affix import common_prefix_length, common_suffix_length

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
SMALL_DIFF_CELLS = 250_000
"""Regions up to this many line pairs (lines on one side times the other) go to ``SequenceMatcher``
(quadratic in the worst case); larger ones are split at unique lines first."""


def _splits_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


def trimmed_region(old: str, new: str) -> tuple[int, int]:
    """``(prefix, suffix)``: common lengths to keep, never splitting a ``\\r\\n`` in either text.

    The changed region is ``old[prefix:len(old)-suffix]`` -> ``new[prefix:len(new)-suffix]``.
    """
    prefix = common_prefix_length(old, new)
    if _splits_crlf(old, prefix) or _splits_crlf(new, prefix):
        prefix -= 1
    suffix = common_suffix_length(old, new, min(len(old), len(new)) - prefix)
    if _splits_crlf(old, len(old) - suffix) or _splits_crlf(new, len(new) - suffix):
        suffix -= 1
    return prefix, suffix


def _line_pieces(text: str) -> list[str]:
    return _LINE.findall(text)


def _unique_anchors(a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """Lines occurring exactly once on each side, as ``(i, j)`` pairs forming the longest chain
    increasing on both sides (patience diff anchors)."""
    a_part, b_part = a[alo:ahi], b[blo:bhi]
    a_count, b_count = Counter(a_part), Counter(b_part)
    unique = {line for line, n in a_count.items() if n == 1 and b_count.get(line) == 1}
    b_at = {line: blo + j for j, line in enumerate(b_part) if line in unique}
    pairs = [(alo + i, b_at[line]) for i, line in enumerate(a_part) if line in unique]
    # longest increasing subsequence on j (patience sorting with back-links)
    tails: list[int] = []
    tail_index: list[int] = []
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pos = bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_index.append(k)
        else:
            tails[pos] = j
            tail_index[pos] = k
        back[k] = tail_index[pos - 1] if pos else -1
    chain, k = [], tail_index[-1] if tail_index else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    return chain[::-1]


def _line_opcodes(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]]:
    """Non-equal regions ``(i1, i2, j1, j2)`` of two line lists, in order.

    Patience-style: equal ends are trimmed, lines unique on both sides anchor the split, and
    small leftovers are diffed by ``SequenceMatcher(autojunk=False)``; a large region without
    anchors becomes one replacement. Near-linear for the usual "few lines changed" case.
    """
    regions: list[tuple[int, int, int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
        if alo == ahi or blo == bhi:
            if alo != ahi or blo != bhi:
                regions.append((alo, ahi, blo, bhi))
            continue
        if (ahi - alo) * (bhi - blo) <= SMALL_DIFF_CELLS:
            matcher = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag != "equal":
                    regions.append((alo + i1, alo + i2, blo + j1, blo + j2))
            continue
        anchors = _unique_anchors(a, b, alo, ahi, blo, bhi)
        if not anchors:
            regions.append((alo, ahi, blo, bhi))
            continue
        prev_i, prev_j = alo, blo
        for i, j in anchors:
            stack.append((prev_i, i, prev_j, j))
            prev_i, prev_j = i + 1, j + 1
        stack.append((prev_i, ahi, prev_j, bhi))
    regions.sort()
    return regions


def _hunks(old_mid: str, new_mid: str) -> list[tuple[int, int, str]]:
    """``(start, end, new_text)`` replacements in ``old_mid`` offsets, by a line-level diff."""
    a, b = _line_pieces(old_mid), _line_pieces(new_mid)
    if len(a) <= 1 or len(b) <= 1:
        return [(0, len(old_mid), new_mid)]
    starts = [0]
    for piece in a:
        starts.append(starts[-1] + len(piece))
    hunks = []
    for i1, i2, j1, j2 in _line_opcodes(a, b):
        start, end, text = starts[i1], starts[i2], "".join(b[j1:j2])
        # shrink the hunk to what differs inside it ("3\n" -> "three\n" becomes "3" -> "three")
        keep_front, keep_back = trimmed_region(old_mid[start:end], text)
        hunks.append((start + keep_front, end - keep_back, text[keep_front : len(text) - keep_back]))
    return hunks


def minimal_text_edits(old: str, new: str, encoding: Any) -> list[TextEdit]:
    """The ``TextEdit``\\ s that turn ``old`` into ``new``; ``[]`` when they are equal.

    ``encoding`` is the negotiated position encoding (``"utf-8"``, ``"utf-16"``, ``"utf-32"`` or
    a ``PositionEncodingKind``); lines are 0-based under LSP line rules. Raises ``ValueError``
    for an unknown encoding. See the module docstring for the guarantees.
    """
    if old == new:
        return []
    prefix, suffix = trimmed_region(old, new)
    old_mid = old[prefix : len(old) - suffix]
    new_mid = new[prefix : len(new) - suffix]
    hunks = _hunks(old_mid, new_mid)
    offsets = [prefix + bound for start, end, _ in hunks for bound in (start, end)]
    points = positions_at(old, offsets, encoding)
    return [
        TextEdit(Range(Position(*points[2 * i]), Position(*points[2 * i + 1])), text)
        for i, (_, _, text) in enumerate(hunks)
    ]


def edit_spans(old: str, new: str) -> list[tuple[int, int, int, int]]:
    """The same hunks as :func:`minimal_text_edits`, as offsets.

    Each item is ``(old_start, old_end, new_start, new_end)`` (code points), in document order;
    used to check that a buffer contains the agent's change (design.md section 4 step 5).
    """
    if old == new:
        return []
    prefix, suffix = trimmed_region(old, new)
    old_mid = old[prefix : len(old) - suffix]
    new_mid = new[prefix : len(new) - suffix]
    spans, delta = [], prefix
    for start, end, text in _hunks(old_mid, new_mid):
        new_start = start + delta
        spans.append((prefix + start, prefix + end, new_start, new_start + len(text)))
        delta += len(text) - (end - start)
    return spans
