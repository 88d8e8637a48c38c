"""grep's error text for a pattern ripgrep cannot parse, naming the model's own pattern.

ripgrep 14 and later (pi-lsp bundles 15) parse a pattern ``P`` as ``(?:P)`` (ripgrep issue 2480),
so their error shows ``(?:P)`` with carets counted in it, and an error at the end of ``P`` meets
ripgrep's added ``)``: ``foo\\`` becomes ``(?:foo\\)`` and is reported as an ``unclosed group``
at the wrapper. Pi 0.73.1 passes rg's stderr on as is, and the peer's ripgrep (13) does not wrap,
so Pi says (pi-behaviour.md 2.5)::

    regex parse error:
        (unclosed
        ^
    error: unclosed group

:func:`describe_regex_error` gives that text for the model's pattern: the wrapper taken off and
the carets moved back onto the pattern (columns count code points, as ripgrep counts them).
Where the wrapper moves or changes the error:

- ``unclosed group`` / ``unopened group``: the wrapper's ``)`` closed one of the pattern's open
  groups (or its ``(?:`` was closed by the pattern's stray ``)``), so ripgrep points elsewhere.
  A second parse (``probe``) of the pattern with a neutral text around it (:data:`PROBES`) points
  where ripgrep 13 points for the pattern alone;
- a pattern ending in an unfinished ``\\`` gets ripgrep 13's words for it
  (:data:`INCOMPLETE_ESCAPE`), the caret under that backslash;
- any other caret on the wrapper: ripgrep's reason, said to be at the end of the pattern (where
  it met the added ``)``), without carets. Known cases: ``(?i``, ``(?P<n``, ``a{`` (ripgrep 13
  names the unfinished flag, name or repetition) and ``(?x)`` comments, whose ``#`` swallows the
  ``)`` (ripgrep issue 2677: such a pattern fails in ripgrep 14 and later);
- a pattern of several lines (ripgrep numbers them): the pattern and the reason, no carets.

Texts that are not a regex parse error (``the literal "\\n" is not allowed``, size limits) keep
ripgrep's words with its ``rg: `` prefix dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

HEADER = "regex parse error:"
INDENT = "    "
REASON_PREFIX = "error: "
WRAP_OPEN = "(?:"
WRAP_CLOSE = ")"
UNCLOSED_GROUP = "unclosed group"
INCOMPLETE_ESCAPE = "incomplete escape sequence, reached end of pattern prematurely"
"""regex-syntax's reason for a pattern that ends in a lone ``\\`` (what ripgrep 13 says)."""

AT_END = frozenset({UNCLOSED_GROUP, "unclosed character class"})
"""Reasons ripgrep finds only when the pattern has ended (an open group or class is left)."""

PROBES = {
    # P( : the empty () takes ripgrep's ")", so P's innermost open group is reported, as ripgrep 13
    UNCLOSED_GROUP: (WRAP_OPEN, "()"),
    # )P(?: : shown (?:)P(?:), so P stands alone and its first unmatched ")" is reported
    "unopened group": (WRAP_OPEN + ")", "(?:)"),
}
"""For a reason whose place ripgrep's wrapper moves: what is parsed around the pattern in a
second run (``(?:`` and ``)`` included) so that ripgrep reports the place ripgrep 13 reports."""

Probe = Callable[[str], Awaitable[str]]
"""Runs ripgrep's parser on a pattern; returns its stderr (``""`` when the pattern parsed)."""


def _format(pattern: str, carets: list[int] | None, reason: str) -> str:
    """ripgrep 13's layout: header, the pattern indented, carets under the columns, reason."""
    lines = [HEADER, *(INDENT + line for line in pattern.split("\n"))]
    if carets:
        row = [" "] * (max(carets) + 1)
        for column in carets:
            row[column] = "^"
        lines.append(INDENT + "".join(row))
    lines.append(REASON_PREFIX + reason)
    return "\n".join(lines)


def _parse(
    message: str, pattern: str, before: str = WRAP_OPEN, after: str = WRAP_CLOSE
) -> tuple[list[int] | None, str] | None:
    """``(carets, reason)`` of ripgrep's one-line parse error about ``before + pattern + after``
    (what ripgrep parsed): carets as columns of ``pattern``, ``None`` when one stands outside it;
    ``None`` for another text."""
    lines = message.removeprefix("rg: ").split("\n")
    if len(lines) != 4 or lines[0] != HEADER or not lines[3].startswith(REASON_PREFIX):
        return None
    reason = lines[3][len(REASON_PREFIX) :]
    if lines[1] != INDENT + before + pattern + after:
        return None
    columns = [i - len(INDENT) - len(before) for i, char in enumerate(lines[2]) if char == "^"]
    if columns and all(0 <= column < len(pattern) for column in columns):
        return columns, reason
    return None, reason


def _ends_in_escape(pattern: str) -> bool:
    run = len(pattern) - len(pattern.rstrip("\\"))
    return run % 2 == 1


def _numbered_reason(message: str, pattern: str) -> str | None:
    """The reason of ripgrep's parse error about a multi-line ``(?:pattern)`` (it numbers the
    lines: ``1: (?:first line``); ``None`` for another text."""
    lines = message.split("\n")
    first = "1: " + WRAP_OPEN + pattern.split("\n", 1)[0]
    if lines[0] == HEADER and first in lines and lines[-1].startswith(REASON_PREFIX):
        return lines[-1][len(REASON_PREFIX) :]
    return None


async def describe_regex_error(stderr: str, pattern: str, probe: Probe) -> str:
    """The error text for ``pattern`` from ripgrep's ``stderr`` (module docstring).

    ``pattern`` is the model's pattern exactly as sent to rg; ``probe`` is awaited at most once,
    only for an ``unclosed group`` or ``unopened group``, whose place the wrapper moves.
    """
    message = stderr.removeprefix("rg: ")
    parsed = _parse(message, pattern)
    if parsed is None:
        reason = _numbered_reason(message, pattern)
        # not a parse error, or a ripgrep that does not wrap: its own words
        return message if reason is None else _format(pattern, None, reason)
    carets, reason = parsed
    if _ends_in_escape(pattern) and (carets is None or reason in AT_END):
        return _format(pattern, [len(pattern) - 1], INCOMPLETE_ESCAPE)
    if reason in PROBES:
        before, after = PROBES[reason]
        # ripgrep parses (?:before + pattern + after): the pattern stands as ripgrep 13 parses it
        probed = await probe(before[len(WRAP_OPEN) :] + pattern + after[: -len(WRAP_CLOSE)])
        inner = _parse(probed, pattern, before, after)
        if inner is not None and inner[0] is not None and inner[1] == reason:
            return _format(pattern, inner[0], reason)
    if carets is not None:
        return _format(pattern, carets, reason)
    return _format(pattern, None, f"{reason} at the end of the pattern")
