"""``find``'s glob patterns, compiled to Python regular expressions with fd's rules.

The peer's find runs ``fd --glob`` (Rust ``globset`` with ``literal_separator``), so this module
follows that dialect (pi-behaviour.md 2.6, checked against the peer):

- ``*`` matches within one path component, ``?`` one character other than ``/``;
- ``**`` as a whole component matches any number of components (``a/**/b``, ``**/x``, ``a/**``);
  ``**`` inside a component acts as ``*``;
- ``[abc]``, ``[a-z]``, ``[!a-z]`` / ``[^a-z]`` classes (never matching ``/``); ``[`` left open is
  an error;
- ``{a,b}`` alternatives; nested or unclosed groups are errors; a lone ``}`` or ``,`` is literal;
- ``\\`` escapes the next character;
- smart case: a pattern without upper-case letters matches case-insensitively.

:func:`compile_find_pattern` also applies the peer's path rule: a pattern without ``/`` is
matched against each entry's base name, one with ``/`` against its path relative to the search
directory (with ``**/`` in front unless it starts with ``**/`` or is ``**``), and one starting with
``/`` against the absolute path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal


class GlobError(ValueError):
    """A pattern fd would refuse; ``str()`` is the reason (``unclosed character class; ...``)."""


def _char_class(pattern: str, start: int, stop: str = "/") -> tuple[str, int]:
    """Translate the class opening at ``pattern[start] == "["``; return (regex, index after).
    The class never matches a character of ``stop``."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while i < len(pattern) and (pattern[i] != "]" or first):
        first = False
        char = pattern[i]
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            low, high = char, pattern[i + 2]
            if low > high:
                raise GlobError(f"invalid range; '{low}' > '{high}'")
            items.append(f"{re.escape(low)}-{re.escape(high)}")
            i += 3
            continue
        items.append(re.escape(char))
        i += 1
    if i >= len(pattern):
        raise GlobError("unclosed character class; missing ']'")
    body = "".join(items)
    if stop == "/":
        return (f"[^{body}/]" if negate else f"(?:(?!/)[{body}])"), i + 1
    stops = re.escape(stop)
    return (f"[^{body}{stops}]" if negate else f"(?:(?![{stops}])[{body}])"), i + 1


def glob_to_regex(pattern: str, stop: str = "/") -> str:
    """The regex source (unanchored) for a globset pattern; raises :class:`GlobError`.

    With the default ``stop`` (``/``) no wildcard or class matches ``/`` except a whole-component
    ``**``. Any other ``stop`` (``"/\\0"``: a pattern without ``/`` searched for inside a
    NUL-separated listing) is never crossed, not even by ``**``, so a match stays inside one
    path component of one entry.
    """
    wild = "[^/]" if stop == "/" else f"[^{re.escape(stop)}]"
    any_run = ".*" if stop == "/" else wild + "*"
    out: list[str] = []
    in_group = False
    i = 0
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            if i + 1 >= n:
                raise GlobError("dangling '\\'")
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif char == "*":
            if i + 1 < n and pattern[i + 1] == "*":
                whole_start = i == 0 or pattern[i - 1] == "/"
                end = i + 2
                if whole_start and end == n:
                    out.append(any_run)
                elif whole_start and pattern[end] == "/":
                    out.append(f"(?:{any_run}/)?")
                    end += 1
                else:
                    out.append(wild + "*")
                i = end
            else:
                out.append(wild + "*")
                i += 1
        elif char == "?":
            out.append(wild)
            i += 1
        elif char == "[":
            regex, i = _char_class(pattern, i, stop)
            out.append(regex)
        elif char == "{":
            if in_group:
                raise GlobError("nested alternate groups are not allowed")
            in_group = True
            out.append("(?:")
            i += 1
        elif char == "}" and in_group:
            in_group = False
            out.append(")")
            i += 1
        elif char == "," and in_group:
            out.append("|")
            i += 1
        else:
            out.append(re.escape(char))
            i += 1
    if in_group:
        raise GlobError("unclosed alternate group; missing '}'")
    return "".join(out)


@dataclass(frozen=True)
class FindPattern:
    """A compiled ``find`` pattern.

    ``target`` says what it is matched against: ``"name"`` (base name), ``"relative"`` (path
    relative to the search directory, ``/`` separators, no trailing ``/``) or ``"absolute"``.
    """

    regex: re.Pattern[str]
    target: Literal["name", "relative", "absolute"]

    def matches(self, name: str, relative: str, absolute: str) -> bool:
        """True when the entry (given in all three forms) matches."""
        subject = {"name": name, "relative": relative, "absolute": absolute}[self.target]
        return self.regex.fullmatch(subject) is not None


def compile_find_pattern(pattern: str) -> FindPattern:
    """Compile ``pattern`` with the peer's path rule (module docstring); raises :class:`GlobError`."""
    flags = re.DOTALL
    if not any(char.isupper() for char in pattern):
        flags |= re.IGNORECASE
    if "/" not in pattern:
        return FindPattern(re.compile(glob_to_regex(pattern), flags), "name")
    if pattern.startswith("/"):
        return FindPattern(re.compile(glob_to_regex(pattern), flags), "absolute")
    if not (pattern.startswith("**/") or pattern == "**"):
        pattern = "**/" + pattern
    return FindPattern(re.compile(glob_to_regex(pattern), flags), "relative")
