"""The BOM and line-ending view of a file's text, for byte-faithful edits (design.md section 7).

Pi's edit (pi-behaviour.md 2.3, steps 3-5 and 10) strips a UTF-8 byte-order mark, matches in a copy
of the text where every ``\\r\\n`` and lone ``\\r`` became ``\\n`` ("LF space"), and writes the
whole file back with one line ending. pi-lsp keeps the matching in LF space but maps every LF
offset back to the **original** text, so a replacement is spliced into the original and every
untouched byte (each line's own ending, a lone CR, the BOM) stays as it was.

Units: every offset here is a Python ``str`` index, i.e. a Unicode code point, never a byte and
never a UTF-16 unit. Offsets are 0-based.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field

BOM = "\ufeff"
"""The byte-order mark as a decoded character (UTF-8 bytes ``EF BB BF``)."""

_BREAK = re.compile(r"\r\n?|\n")


class NotUtf8Error(ValueError):
    """The bytes are not valid UTF-8; ``offset`` is the 0-based byte offset of the first bad byte."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"invalid UTF-8 at byte {offset}")
        self.offset = offset


def decode_text(data: bytes) -> tuple[bool, str]:
    """Decode file bytes as strict UTF-8 and split off a leading BOM.

    Returns ``(has_bom, text)`` with the BOM removed from ``text``. Raises :class:`NotUtf8Error`
    for bytes that are not valid UTF-8 (pi-lsp refuses to edit such files rather than rewrite
    them with U+FFFD, design.md section 7).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(exc.start) from None
    if text.startswith(BOM):
        return True, text[1:]
    return False, text


def encode_text(has_bom: bool, text: str) -> bytes:
    """Inverse of :func:`decode_text`: UTF-8 bytes with the BOM put back when there was one."""
    return ((BOM + text) if has_bom else text).encode("utf-8")


def to_lf(text: str) -> str:
    """Pi's ``normalizeToLF``: ``\\r\\n`` to ``\\n``, then every lone ``\\r`` to ``\\n``."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class LineEndingView:
    """A text (BOM already removed) and its LF-normalised copy, with the offset map between them.

    Only a ``\\r\\n`` pair shortens the text (a lone ``\\r`` becomes one ``\\n``), so the map is
    the sorted list of LF-space indices of the ``\\n`` that each ``\\r\\n`` became.

    Attributes:
        original: the text as in the file (mixed endings allowed).
        lf: :func:`to_lf` of ``original``.
    """

    original: str
    lf: str = field(init=False)
    _crlf_at: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.lf = to_lf(self.original)
        crlf_at: list[int] = []
        if "\r" in self.original:
            # the k-th CRLF (0-based) at original index i becomes "\n" at LF index i - k
            for k, match in enumerate(re.finditer("\r\n", self.original)):
                crlf_at.append(match.start() - k)
        self._crlf_at = crlf_at

    def to_original(self, lf_offset: int) -> int:
        """Map an LF-space offset (0..len(lf)) to the original text.

        An offset at an LF-space ``\\n`` that was ``\\r\\n`` maps to the ``\\r`` (so a span never
        splits a CRLF pair); an offset just after it maps after the ``\\n``.
        """
        return lf_offset + bisect_left(self._crlf_at, lf_offset)

    def ending_for(self, start: int, end: int) -> str:
        """The line ending a replacement of ``original[start:end]`` writes for each of its ``\\n``.

        Rule (pi-lsp's, design.md section 7): the first line break inside the span; else the
        first after it (the ending of the line the span sits on); else the last before it; else
        the file has no line break and ``"\\n"`` is used. Offsets are original-text offsets.
        """
        text = self.original
        inside = _BREAK.search(text, start, end)
        if inside:
            return inside.group()
        after = _BREAK.search(text, end)
        if after:
            return after.group()
        before = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start))
        if before >= 0:
            if text[before] == "\n":
                return "\r\n" if before > 0 and text[before - 1] == "\r" else "\n"
            return "\r"
        return "\n"

    def splice(self, replacements: list[tuple[int, int, str]]) -> str:
        """Apply LF-space replacements to the original text, touching nothing outside them.

        ``replacements`` are ``(lf_start, lf_end, lf_text)``, sorted and non-overlapping, with
        ``lf_text`` using ``\\n`` only. Each span is mapped to the original, each ``\\n`` of its
        text is written with :meth:`ending_for` of the span. A written break never fuses with a
        neighbouring one into a different break count: a replacement that would put ``\\r``
        right before an original ``\\n`` (or ``\\n`` right after an original lone ``\\r``) writes
        that break as ``\\r\\n`` instead, and an empty replacement between a lone ``\\r`` and a
        ``\\n`` writes ``\\r`` so the emptied line keeps its break. So ``to_lf`` of the result is
        always the LF text with the replacements applied, and bytes outside the spans are kept.
        Replacements that touch (one ends where the next starts) are written as one, so the
        neighbour each of them sees is a character of the result, not one the other replaces.
        """
        text = self.original
        pieces: list[str] = []
        cursor = 0
        for lf_start, lf_end, lf_text in _merge_touching(replacements):
            start = self.to_original(lf_start)
            end = self.to_original(lf_end)
            ending = self.ending_for(start, end)
            new = lf_text if ending == "\n" else lf_text.replace("\n", ending)
            prev_cr = start > 0 and text[start - 1] == "\r"
            next_lf = end < len(text) and text[end] == "\n"
            if not new:
                if prev_cr and next_lf:
                    new = "\r"
            else:
                if prev_cr and new[0] == "\n":
                    new = "\r\n" + new[1:]
                if next_lf and new[-1] == "\r":
                    new = new + "\n"
            pieces.append(text[cursor:start])
            pieces.append(new)
            cursor = end
        pieces.append(text[cursor:])
        return "".join(pieces)


def _merge_touching(replacements: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Sorted disjoint replacements with each run of touching ones joined into one (same result)."""
    merged: list[tuple[int, int, str]] = []
    for start, end, new in replacements:
        if merged and merged[-1][1] == start:
            prev_start, _, prev_new = merged[-1]
            merged[-1] = (prev_start, end, prev_new + new)
        else:
            merged.append((start, end, new))
    return merged
