"""Diagnostics as the model reads them: which problems a change introduced, and how they are shown.

A problem is identified by ``(severity, source, code, message)``, not by its line: text inserted
above it moves it without changing it (KNOWLEDGE_SPEC). What a change **introduced** is the
multiset difference *after minus before* of those keys; when a key occurs more often after than
before, the extra ones are taken first among the problems whose line no problem of that key had
before (they are the likelier new ones), then in document order.

Shown one per line as ``path:line: severity: message (source)`` (1-based line; the message on one
line), errors first, capped by count and by characters with a notice saying how many were left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pi_lsp.tools.language.knowledge import Problem

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
"""LSP ``DiagnosticSeverity`` values as shown."""


def introduced(before: Sequence[Problem], after: Sequence[Problem]) -> list[Problem]:
    """The problems of ``after`` that ``before`` did not have (see the module docstring), in
    ``after``'s order."""
    remaining = Counter(p.key for p in before)
    before_lines: dict[tuple[int, str, str, str], set[int]] = {}
    for problem in before:
        before_lines.setdefault(problem.key, set()).add(problem.line)
    by_key: dict[tuple[int, str, str, str], list[int]] = {}
    for index, problem in enumerate(after):
        by_key.setdefault(problem.key, []).append(index)
    new: set[int] = set()
    for key, indexes in by_key.items():
        extra = len(indexes) - remaining.get(key, 0)
        if extra <= 0:
            continue
        known = before_lines.get(key, set())
        ranked = sorted(indexes, key=lambda i: (after[i].line in known, i))
        new.update(ranked[:extra])
    return [after[i] for i in sorted(new)]


def one_line(text: str) -> str:
    """``text`` with its line breaks and runs of blanks collapsed to single spaces."""
    return " ".join(text.split())


def format_problem(shown_path: str, problem: Problem) -> str:
    """``path:line: severity: message (source)``; ``(source)`` only when there is one, the code
    after the source as ``(source code)``."""
    severity = SEVERITY_NAMES.get(problem.severity, "error")
    origin = " ".join(part for part in (problem.source, problem.code) if part)
    suffix = f" ({origin})" if origin else ""
    return f"{shown_path}:{problem.line + 1}: {severity}: {one_line(problem.message)}{suffix}"


def ordered(items: Iterable[tuple[str, Problem]]) -> list[tuple[str, Problem]]:
    """Errors first, then warnings, information, hints; within a severity, by path and line."""
    return sorted(items, key=lambda item: (item[1].severity, item[0], item[1].line))


def format_capped(
    items: Sequence[tuple[str, Problem]], max_items: int, max_chars: int, noun: str = "problem"
) -> tuple[list[str], int]:
    """``items`` (already ordered) as lines, at most ``max_items`` of them and ``max_chars``
    characters (line breaks included; a single line longer than that is cut with ``...``).

    Returns the lines and how many items were left out (the caller adds the notice, see
    :func:`left_out_notice`)."""
    lines: list[str] = []
    used = 0
    for shown_path, problem in items:
        if len(lines) >= max_items:
            break
        line = format_problem(shown_path, problem)
        if used + len(line) + 1 > max_chars:
            if lines:
                break
            line = line[: max(0, max_chars - 3)] + "..."
        lines.append(line)
        used += len(line) + 1
    return lines, len(items) - len(lines)


def left_out_notice(count: int, noun: str = "problem") -> str:
    """``[N more problems not shown]`` (singular for one)."""
    return f"[{count} more {noun}{'s' if count != 1 else ''} not shown]"


def counted(count: int, noun: str) -> str:
    """``1 problem``, ``2 problems``."""
    return f"{count} {noun}{'s' if count != 1 else ''}"
