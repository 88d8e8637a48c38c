"""grep's error for a pattern ripgrep cannot parse names the model's pattern, not the ``(?:P)``
ripgrep 14+ parses, with ripgrep's reason (pi_lsp/tools/search/regex_error.py); where ripgrep 13
would say the same, the text is Pi's (checked against the real peer, whose ripgrep is 13)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.peer import run_peer
from tests.tools.search_support import call, write

AS_PI = {
    "(unclosed": "    (unclosed\n    ^\nerror: unclosed group",
    "foo(": "    foo(\n       ^\nerror: unclosed group",
    "(a(b": "    (a(b\n      ^\nerror: unclosed group",
    "x(a)(b": "    x(a)(b\n        ^\nerror: unclosed group",
    "a)": "    a)\n     ^\nerror: unopened group",
    "foo\\": "    foo\\\n       ^\nerror: incomplete escape sequence, reached end of pattern prematurely",
    "[a\\": "    [a\\\n      ^\nerror: incomplete escape sequence, reached end of pattern prematurely",
    "a{2": "    a{2\n     ^^\nerror: unclosed counted repetition",
    "[z-a]": "    [z-a]\n     ^^^\nerror: invalid character class range, the start must be <= the end",
    "(?P<x>a)(?P<x>b)": "    (?P<x>a)(?P<x>b)\n        ^       ^\nerror: duplicate capture group name",
    "日本(": "    日本(\n      ^\nerror: unclosed group",
}
"""Pattern -> Pi's text after ``regex parse error:\\n`` (ripgrep 13's carets and reasons)."""


@pytest.mark.parametrize("pattern", sorted(AS_PI))
async def test_the_error_shows_the_models_pattern_as_pi_does(tmp_path: Path, pattern: str) -> None:
    write(tmp_path, {"a.txt": "x\n"})
    assert await call("grep", tmp_path, {"pattern": pattern}) == (
        True, "regex parse error:\n" + AS_PI[pattern], None,
    )


async def test_an_error_where_the_pattern_ends_says_so_without_rg_wrapper(tmp_path: Path) -> None:
    # ripgrep 15 meets its own ")" there (`(?:(?i)`), so it has no place in the pattern to show
    write(tmp_path, {"a.txt": "x\n"})
    assert await call("grep", tmp_path, {"pattern": "(?i"}) == (
        True, "regex parse error:\n    (?i\nerror: unclosed group at the end of the pattern", None,
    )
    error, text, _ = await call("grep", tmp_path, {"pattern": "ab\nc("})
    assert (error, text) == (True, "regex parse error:\n    ab\n    c(\nerror: unclosed group")


async def test_other_rg_errors_keep_rgs_words(tmp_path: Path) -> None:
    error, text, _ = await call("grep", tmp_path, {"pattern": "a\nb"})
    assert error and text.startswith('the literal "\\n" is not allowed in a regex\n')


def test_the_texts_are_the_peers(tmp_path: Path, peer: Path) -> None:
    write(tmp_path, {"a.txt": "x\n"})
    patterns = sorted(AS_PI)
    answers = run_peer(peer, [
        {"cwd": str(tmp_path), "toolCall": {"id": str(i), "name": "grep", "arguments": {"pattern": p}}}
        for i, p in enumerate(patterns)
    ])
    for pattern, answer in zip(patterns, answers):
        assert answer["isError"], pattern
        assert answer["content"][0]["text"] == asyncio.run(call("grep", tmp_path, {"pattern": pattern}))[1]
