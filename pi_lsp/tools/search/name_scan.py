"""``find``'s name patterns matched against a whole ``rg --files`` listing at once (issue 21).

A pattern without ``/`` is matched against each entry's base name (glob_pattern.py). Over a
listing of 30,000 paths of which 40 match, testing the paths one by one in Python costs more than
rg's walk, so the listing is searched as one string instead: rg's NUL-terminated paths, each
path component bounded by NUL or ``/``. A component followed by NUL is a file's name, one followed
by ``/`` a directory's (every directory that holds a listed file). Python touches only the hits:

- when the pattern starts or ends with plain text (``*.py``, ``*_test.go``, ``Makefile*``), that
  text is found with ``str.find`` and each component holding it is tested with the full pattern;
- otherwise one compiled pattern (wildcards never crossing ``/`` or NUL) finds the components.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pi_lsp.tools.search.glob_pattern import glob_to_regex

_STOPS = "/\0"
_SPECIAL = frozenset("*?[]{}\\,")
_COMPONENT_END = re.compile("[^/\0]*")
_MIN_LITERAL = 3


class TooManyMatches(Exception):
    """More entries (or candidate hits) than the caller allowed."""


@dataclass(frozen=True)
class NameScan:
    """A name pattern ready to search listings (see :func:`name_scan`)."""

    component: re.Pattern[str]  # fullmatch of one component
    scanner: re.Pattern[str]  # finds ``[sep](component)(?=[sep])`` in a listing
    literal: str  # plain text every matching name holds ("" when none is long enough)
    ignore_case: bool

    def entries(self, listing: str, prefix_length: int, max_entries: int) -> dict[str, bool]:
        """``{path relative to the searched directory: is_directory}`` of the matching entries.

        ``listing`` is ``"\\0"`` followed by rg's output: each path the searched directory's path
        (``prefix_length`` characters, with its ``/``) plus the relative path, then NUL. A
        directory is reported once, however many files it holds. Raises
        :class:`TooManyMatches` past ``max_entries`` entries (or ``8 * max_entries`` hits of the
        literal), when sorting them would cost more than a sorted walk that stops early.
        """
        found: dict[str, bool] = {}
        for start, end in self._components(listing, max_entries * 8):
            record = listing.rfind("\0", 0, start) + 1
            if start < record + prefix_length:
                continue  # a component of the searched directory's own path
            path = listing[record + prefix_length : end]
            if path not in found:
                found[path] = listing[end] == "/"
                if len(found) > max_entries:
                    raise TooManyMatches
        return found

    def _components(self, listing: str, max_hits: int):  # -> Iterator[tuple[int, int]]
        if not self.literal:
            for match in self.scanner.finditer(listing):
                yield match.start(1), match.end(1)
            return
        haystack = listing.lower() if self.ignore_case else listing
        find, rfind = haystack.find, listing.rfind
        fullmatch, component_end = self.component.fullmatch, _COMPONENT_END.match
        hits = 0
        last_start = -1
        position = find(self.literal)
        while position >= 0:
            hits += 1
            if hits > max_hits:
                raise TooManyMatches
            start = max(rfind("/", 0, position), rfind("\0", 0, position)) + 1
            end = component_end(listing, position).end()  # type: ignore[union-attr]
            if start != last_start and fullmatch(listing, start, end):
                last_start = start
                yield start, end
            position = find(self.literal, end)


def _plain_edge(pattern: str) -> str:
    """The longer of the pattern's plain start and plain end (text before its first and after
    its last special character), which every matching name contains."""
    specials = [index for index, char in enumerate(pattern) if char in _SPECIAL]
    if not specials:
        return pattern
    head, tail = pattern[: specials[0]], pattern[specials[-1] + 1 :]
    return head if len(head) >= len(tail) else tail


def name_scan(pattern: str, listing_is_ascii: bool) -> NameScan | None:
    """Prepare a name pattern (no ``/``; already checked by
    :func:`~pi_lsp.tools.search.glob_pattern.compile_find_pattern`) with the same smart case.

    ``None`` for a pattern holding ``/`` or a NUL character (the caller tests those entry by
    entry). ``listing_is_ascii`` allows the literal search of a case-insensitive pattern on the
    lower-cased listing (exact for ASCII text).
    """
    if "\0" in pattern or "/" in pattern:
        return None
    ignore_case = not any(char.isupper() for char in pattern)
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    name = glob_to_regex(pattern, stop=_STOPS)
    literal = _plain_edge(pattern)
    if len(literal) < _MIN_LITERAL or (ignore_case and not (listing_is_ascii and literal.isascii())):
        literal = ""
    return NameScan(
        component=re.compile(name, flags),
        scanner=re.compile(f"[\\0/]({name})(?=[\\0/])", flags),
        literal=literal.lower() if ignore_case else literal,
        ignore_case=ignore_case,
    )
