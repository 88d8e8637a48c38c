"""Locating an edit's ``oldText`` blocks in a file: Pi's exact-then-fuzzy matching rules.

Everything here works in **LF space** (the file's text with the BOM removed and every line break
made ``\\n``, see :mod:`pi_lsp.tools.file_io.line_endings`); offsets are ``str`` indices (code points),
0-based. The output is a list of *splices* ``(lf_start, lf_end, lf_text)`` that the caller maps
back to the original text.

Rules kept from Pi (pi-behaviour.md 2.3, steps 5-9, and the peer 0.73.1):

- every edit is matched against the same original, never incrementally;
- an exact substring search first; if any edit is only found in fuzzy form, the whole batch
  switches to "fuzzy space" (the fuzzy-normalised file) and every edit is located there;
- uniqueness is always counted in fuzzy space, occurrences found advancing one character, so
  overlapping occurrences (``aXa`` twice in ``aXaXa``) are ambiguous like any duplicate (issue 12;
  Pi 0.73.1 counted non-overlapping ones and applied the first as if it were unique);
- errors are checked edit by edit in order (not found, then duplicate), then overlaps;
- a result equal to the original is an error.

Adopted from Pi 0.83 (design.md section 7): in fuzzy space a replacement is widened to the whole
lines it touches and only those lines are rebuilt from the fuzzy text; every other line keeps its
original characters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.file_io.line_endings import to_lf

Splice = tuple[int, int, str]
"""``(lf_start, lf_end, lf_text)``: replace ``lf[lf_start:lf_end]`` by ``lf_text``."""

# JavaScript's String.prototype.trimEnd set (WhiteSpace + LineTerminator), minus "\n" which
# separates lines and "\r" which LF space no longer has.
_TRAILING_SPACE = "\t\v\f \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _has_trailing_space(text: str) -> bool:
    """True when some line of ``text`` ends in a :data:`_TRAILING_SPACE` character.

    Tuned for big files: one-character searches first (``memchr`` speed), and the frequent space
    searched as bytes, which CPython scans faster than a two-character ``str`` needle.
    """
    if text.endswith(tuple(_TRAILING_SPACE)):
        return True
    if text.isascii():
        if b" \n" in text.encode("ascii"):
            return True
        candidates: str = "\t\v\f"
    else:
        candidates = _TRAILING_SPACE
    return any(c in text and f"{c}\n" in text for c in candidates)
_FUZZY_CHARS = str.maketrans(
    {
        **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b"), "'"),
        **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f"), '"'),
        **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-"),
        **dict.fromkeys(
            map(ord, "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"),
            " ",
        ),
    }
)


def fuzzy_normalize(text: str) -> str:
    """Pi's ``normalizeForFuzzyMatch`` of an LF text.

    Unicode NFKC; trailing whitespace removed from every line (JavaScript ``trimEnd``'s set);
    curly single quotes U+2018-U+201B to ``'``; curly double quotes U+201C-U+201F to ``"``;
    U+2010-U+2015 and U+2212 to ``-``; U+00A0, U+2002-U+200A, U+202F, U+205F, U+3000 to a
    space. It keeps the number of lines (no step adds or removes a ``\\n``), so line ``i`` of the
    result is the normalised line ``i`` of the input, and it is idempotent.
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    if _has_trailing_space(text):
        text = "\n".join(line.rstrip(_TRAILING_SPACE) for line in text.split("\n"))
    if not text.isascii():
        text = text.translate(_FUZZY_CHARS)
    return text


@dataclass(frozen=True)
class EditSpec:
    """One requested replacement, as the model sent it (any line endings)."""

    old_text: str
    new_text: str


@dataclass(frozen=True)
class _Match:
    index: int  # position of the edit in the request
    start: int  # offset in the base (LF or fuzzy) text
    end: int
    new_text: str  # LF-normalised


def _not_found(path: str, i: int, total: int) -> ToolError:
    if total == 1:
        return ToolError(
            f"Could not find the exact text in {path}. The old text must match exactly including all "
            "whitespace and newlines."
        )
    return ToolError(
        f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace "
        "and newlines."
    )


def _duplicate(path: str, i: int, total: int, count: int) -> ToolError:
    if total == 1:
        return ToolError(
            f"Found {count} occurrences of the text in {path}. The text must be unique. Please provide more "
            "context to make it unique."
        )
    return ToolError(
        f"Found {count} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide "
        "more context to make it unique."
    )


def _no_change(path: str, total: int) -> ToolError:
    if total == 1:
        return ToolError(
            f"No changes made to {path}. The replacement produced identical content. This might indicate an "
            "issue with special characters or the text not existing as expected."
        )
    return ToolError(f"No changes made to {path}. The replacements produced identical content.")


def plan_edits(lf: str, edits: list[EditSpec], path: str) -> list[Splice]:
    """Match ``edits`` against the LF text ``lf`` and return the splices that apply them.

    Splices are sorted by ``lf_start`` and disjoint; applying them to ``lf`` gives the new LF
    text. ``path`` is the path as the model gave it (used in messages only).

    Raises :class:`ToolError` with the peer's exact texts (single- and multi-edit variants):
    empty ``oldText``, not found, not unique, overlapping edits, or no change.
    """
    total = len(edits)
    olds = [to_lf(e.old_text) for e in edits]
    news = [to_lf(e.new_text) for e in edits]
    for i, old in enumerate(olds):
        if not old:
            if total == 1:
                raise ToolError(f"oldText must not be empty in {path}.")
            raise ToolError(f"edits[{i}].oldText must not be empty in {path}.")

    fuzzy_lf: str | None = None

    def fuzzy_of_lf() -> str:
        nonlocal fuzzy_lf
        if fuzzy_lf is None:
            fuzzy_lf = fuzzy_normalize(lf)
        return fuzzy_lf

    exact_starts = [lf.find(old) for old in olds]
    fuzzy_olds = [fuzzy_normalize(old) for old in olds]
    # first pass: does any edit need fuzzy matching?
    fuzzy_mode = False
    for start, fuzzy_old in zip(exact_starts, fuzzy_olds):
        if start < 0 and fuzzy_old in fuzzy_of_lf():
            fuzzy_mode = True
            break
    base = fuzzy_of_lf() if fuzzy_mode else lf

    matches: list[_Match] = []
    for i, old in enumerate(olds):
        start = base.find(old) if fuzzy_mode else exact_starts[i]
        length = len(old)
        fuzzy_old = fuzzy_olds[i]
        if start < 0:
            start = fuzzy_of_lf().find(fuzzy_old)
            length = len(fuzzy_old)
            if start < 0:
                raise _not_found(path, i, total)
        count = _fuzzy_count(lf, fuzzy_old, fuzzy_of_lf, fuzzy_mode)
        if count > 1:
            raise _duplicate(path, i, total, count)
        matches.append(_Match(i, start, start + length, news[i]))

    matches.sort(key=lambda m: m.start)
    for prev, cur in zip(matches, matches[1:]):
        if prev.end > cur.start:
            raise ToolError(
                f"edits[{prev.index}] and edits[{cur.index}] overlap in {path}. Merge them into one edit or "
                "target disjoint regions."
            )

    if fuzzy_mode:
        splices = _line_splices(lf, base, matches)
    else:
        splices = [(m.start, m.end, m.new_text) for m in matches]
    if all(lf[s:e] == text for s, e, text in splices):
        raise _no_change(path, total)
    return splices


def _fuzzy_count(lf: str, fuzzy_old: str, fuzzy_of_lf: Callable[[], str], fuzzy_mode: bool) -> int:
    """Occurrences of ``fuzzy_old`` in the fuzzy form of ``lf``, overlapping ones included (each
    search starts one character after the previous occurrence's start; :func:`count_occurrences`).

    Fast path without normalising the whole file: for ASCII ``lf`` the fuzzy form only drops
    trailing whitespace from lines, and a one-line needle that is itself normalised ends in a
    non-space character, so each of its occurrences lies in the kept part of one line: the count
    in ``lf`` is the count in the fuzzy form.
    """
    if not fuzzy_mode and fuzzy_old and lf.isascii() and "\n" not in fuzzy_old:
        return count_occurrences(lf, fuzzy_old)
    return count_occurrences(fuzzy_of_lf(), fuzzy_old)


def count_occurrences(text: str, needle: str) -> int:
    """How many times ``needle`` occurs in ``text``, overlapping occurrences included
    (``count_occurrences("aaa", "aa") == 2``). An empty needle gives ``len(text) - 1``, as
    JavaScript's ``text.split("").length - 1`` (Pi's count) does."""
    if not needle:
        return len(text) - 1
    first = text.find(needle)
    if first < 0:
        return 0
    if text.find(needle, first + 1) < 0:
        return 1
    return len(re.findall(f"(?={re.escape(needle)})", text))


def _line_splices(lf: str, fuzzy: str, matches: list[_Match]) -> list[Splice]:
    """Fuzzy mode: widen each match to whole lines, group overlapping ones, rebuild those lines.

    ``fuzzy`` has the same lines as ``lf`` (see :func:`fuzzy_normalize`), so a line range found in
    ``fuzzy`` names the same lines of ``lf``. A match ending with ``\\n`` does not touch the next
    line. The rebuilt lines are the fuzzy lines with the replacements applied (Pi 0.83).
    """
    groups: list[tuple[int, int, list[_Match]]] = []
    for m in matches:
        line_start = fuzzy.rfind("\n", 0, m.start) + 1
        if m.end > m.start and fuzzy[m.end - 1] == "\n":
            line_end = m.end
        else:
            nl = fuzzy.find("\n", m.end)
            line_end = len(fuzzy) if nl < 0 else nl
        if groups and line_start <= groups[-1][1]:
            g_start, g_end, members = groups[-1]
            groups[-1] = (g_start, max(g_end, line_end), [*members, m])
        else:
            groups.append((line_start, line_end, [m]))

    lf_line_starts = [0] + [match.end() for match in re.finditer("\n", lf)]
    splices: list[Splice] = []
    for g_start, g_end, members in groups:
        pieces: list[str] = []
        cursor = g_start
        for m in members:
            pieces.append(fuzzy[cursor : m.start])
            pieces.append(m.new_text)
            cursor = m.end
        pieces.append(fuzzy[cursor:g_end])
        first_line = fuzzy.count("\n", 0, g_start)
        breaks = fuzzy.count("\n", g_start, g_end)
        lf_start = lf_line_starts[first_line]
        if g_end > g_start and fuzzy[g_end - 1] == "\n":
            lf_end = lf_line_starts[first_line + breaks]
        else:
            last_line = first_line + breaks
            lf_end = lf_line_starts[last_line + 1] - 1 if last_line + 1 < len(lf_line_starts) else len(lf)
        splices.append((lf_start, lf_end, "".join(pieces)))
    return splices


def apply_splices(text: str, splices: list[Splice]) -> str:
    """Apply sorted, disjoint splices to ``text`` (LF space) and return the new text."""
    pieces: list[str] = []
    cursor = 0
    for start, end, new in splices:
        pieces.append(text[cursor:start])
        pieces.append(new)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
