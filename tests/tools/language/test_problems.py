"""Introduced problems (multiset after minus before, line-shift safe) and how they are shown and
capped (issue 17, KNOWLEDGE_SPEC)."""

from __future__ import annotations

from pi_lsp.tools.language.knowledge import Problem
from pi_lsp.tools.language.problems import format_capped, format_problem, introduced, left_out_notice, ordered


def p(line: int, message: str, severity: int = 1, source: str | None = "pyflakes", code: str | None = None) -> Problem:
    return Problem(line=line, severity=severity, message=message, source=source, code=code)


def test_a_problem_that_only_moved_is_not_introduced() -> None:
    before = [p(2, "undefined name 'x'"), p(7, "unused import", 2)]
    after = [p(3, "undefined name 'x'"), p(8, "unused import", 2), p(9, "undefined name 'y'")]
    assert introduced(before, after) == [p(9, "undefined name 'y'")]


def test_the_same_message_twice_counts_as_a_multiset_and_prefers_new_lines() -> None:
    before = [p(4, "undefined name 'x'")]
    after = [p(4, "undefined name 'x'"), p(10, "undefined name 'x'")]
    assert introduced(before, after) == [p(10, "undefined name 'x'")]
    after_shifted = [p(1, "undefined name 'x'"), p(4, "undefined name 'x'")]
    assert introduced(before, after_shifted) == [p(1, "undefined name 'x'")]
    assert introduced(after, before) == []  # a fix introduces nothing


def test_severity_source_and_code_are_part_of_the_identity() -> None:
    before = [p(1, "m", 2)]
    assert introduced(before, [p(1, "m", 1)]) == [p(1, "m", 1)]
    assert introduced([p(1, "m", code="E1")], [p(1, "m", code="E2")]) == [p(1, "m", code="E2")]
    assert introduced([p(1, "m", source="a")], [p(1, "m", source="b")]) == [p(1, "m", source="b")]


def test_format_is_path_line_severity_message_source() -> None:
    assert format_problem("a.py", p(0, "undefined\n  name 'x'")) == "a.py:1: error: undefined name 'x' (pyflakes)"
    assert format_problem("a.py", p(4, "w", 2, None)) == "a.py:5: warning: w"
    assert format_problem("a.py", p(4, "w", 4, "ruff", "F401")) == "a.py:5: hint: w (ruff F401)"


def test_errors_first_and_caps_by_count_and_characters() -> None:
    items = ordered([("b.py", p(1, "warn", 2)), ("a.py", p(9, "err")), ("a.py", p(2, "err"))])
    assert [f"{path}:{problem.line}" for path, problem in items] == ["a.py:2", "a.py:9", "b.py:1"]
    lines, left_out = format_capped(items, max_items=2, max_chars=1000)
    assert lines == ["a.py:3: error: err (pyflakes)", "a.py:10: error: err (pyflakes)"] and left_out == 1
    lines, left_out = format_capped(items, max_items=20, max_chars=40)
    assert lines == ["a.py:3: error: err (pyflakes)"] and left_out == 2
    lines, left_out = format_capped([("a.py", p(0, "x" * 100))], max_items=20, max_chars=30)
    assert lines == ["a.py:1: error: " + "x" * 12 + "..."] and left_out == 0
    assert left_out_notice(1) == "[1 more problem not shown]"
    assert left_out_notice(3) == "[3 more problems not shown]"
