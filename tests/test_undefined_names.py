"""No module of pi-lsp, its tests or its benchmarks uses a name that is not defined.

A merge that renames a helper on one side and keeps a caller of the old name on the other
(``_peek`` after issue 17 met issue 18) imports fine and fails only when the path runs; pyflakes
sees it statically. Only undefined names fail here: unused imports and the like are style.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pyflakes import checker, messages

ROOT = Path(__file__).resolve().parent.parent
UNDEFINED = (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)


def undefined_names(source: str, filename: str) -> list[str]:
    """``file:line: message`` for every undefined name pyflakes finds in ``source``."""
    tree = ast.parse(source, filename=filename)
    found = checker.Checker(tree, filename=filename).messages
    return [f"{filename}:{m.lineno}: {m.message % m.message_args}" for m in found if isinstance(m, UNDEFINED)]


def test_the_check_sees_an_undefined_name() -> None:
    assert undefined_names("def f():\n    return _peek(1)\n", "planted.py") == [
        "planted.py:2: undefined name '_peek'"
    ]
    assert undefined_names("import os\n\ndef f():\n    return os.sep\n", "fine.py") == []


@pytest.mark.parametrize("folder", ["pi_lsp", "tests", "bench"])
def test_no_undefined_names(folder: str) -> None:
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files, f"no Python files under {folder}"
    problems: list[str] = []
    for path in files:
        problems += undefined_names(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)
