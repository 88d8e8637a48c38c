"""grep's two plans give one answer (issue 21).

A directory is searched by rg's parallel walk and sorted here, unless its output passes
``PARALLEL_OUTPUT_BUDGET``, when a sorted rg streams instead (the plan used before issue 21).
With the budget at 0 every search takes the streamed plan, so comparing the two on one tree
(names whose order differs between plain byte order and rg's component order, context blocks,
limits, the byte limit, long lines, a protected file, a binary file, an invalid regex) checks that
the parallel plan changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_lsp.tools import find as find_module
from pi_lsp.tools import grep as grep_module
from tests.tools.search_support import call, write

_NAMES = [
    "a.b", "a/b.txt", "a-b/c.txt", "a/b/c.txt", "A/x.txt", "a b/y.txt", "ä/z.txt", "z.txt",
    "deep/er/and/deeper.txt", "deep/er.txt", ".hidden/h.txt", "sub/.env", "ignored/i.txt",
]


def _tree(root: Path) -> None:
    files: dict[str, str | bytes] = {".gitignore": "ignored/\n"}
    for index, name in enumerate(_NAMES):
        lines = [f"line {n} of {name}" + (" needle" if (n + index) % 3 == 0 else "") for n in range(40)]
        files[name] = "\n".join(lines) + "\n"
    files["long/line.txt"] = "needle " + "w" * 3000 + "\n"
    files["bin/blob.dat"] = b"needle\0binary\n"
    files["new\nline.txt"] = "needle in a file whose name holds a newline\n"
    for index in range(120):  # enough output for the byte limit with a wide context
        files[f"many/f{index:03d}.txt"] = ("needle filler text " * 8 + "\n") * 6
    write(root, files)


_CASES: list[dict[str, Any]] = [
    {"pattern": "needle"},
    {"pattern": "needle", "limit": 5},
    {"pattern": "needle", "limit": 7, "context": 2},
    {"pattern": "needle", "limit": 1000},
    {"pattern": "needle", "context": 30, "limit": 1000},
    {"pattern": "line 3\\d", "glob": "*.txt"},
    {"pattern": "LINE 1", "ignoreCase": True, "limit": 12, "context": 1},
    {"pattern": "of a", "literal": True},
    {"pattern": "nothing matches this"},
    {"pattern": "needle", "path": "deep"},
    {"pattern": "needle(", "limit": 3},
    {"pattern": "line 7 of|holds a newline", "limit": 1000},
]


@pytest.mark.parametrize("args", _CASES, ids=[str(case) for case in _CASES])
async def test_parallel_and_streamed_plans_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: dict[str, Any]
) -> None:
    _tree(tmp_path)

    def guard(path: str) -> str | None:
        return "protected" if path.endswith(".env") else None

    parallel = await call("grep", tmp_path, args, content_guard=guard)
    monkeypatch.setattr(grep_module, "PARALLEL_OUTPUT_BUDGET", 0)
    streamed = await call("grep", tmp_path, args, content_guard=guard)
    assert parallel == streamed


def _find_tree(root: Path, *, odd_name: bool) -> None:
    files: dict[str, str | bytes] = {".gitignore": "ignored/\n*.log\n"}
    for name in [
        "src/app.py", "src/app_test.py", "src/Makefile", "src/tests/t_one.py", "tests/x.PY",
        "a.b/c.py", "a/b.py", "a-b/c.py", "A/d.py", "ä/e.py", "Ä/f.txt", "deep/tests/more/tests/g.py",
        ".hidden/h.py", "ignored/i.py", "kept.log", "notes.md", "data.json", "x.py/inner.txt",
        "target/tests.json", "{braces}/k.py",
    ]:
        files[name] = ""
    for index in range(60):  # long names for the byte limit
        files[f"wide/{'w' * 200}{index:03d}.py"] = ""
    write(root, files)
    (root / "linked").symlink_to(root / "src")  # a search path through a symlink
    if odd_name:
        (root / "src").joinpath(b"bad\xff.py".decode("utf-8", "surrogateescape")).write_text("")


_FIND_CASES: list[dict[str, Any]] = [
    {"pattern": "*.py"},
    {"pattern": "*.py", "limit": 3},
    {"pattern": "*.py", "limit": 80},
    {"pattern": "tests"},
    {"pattern": "*test*"},
    {"pattern": "Makefile*"},
    {"pattern": "*.PY"},
    {"pattern": "[a-c]*"},
    {"pattern": "{app,notes}.*"},
    {"pattern": "*.{json,md}"},
    {"pattern": "\\{braces}"},
    {"pattern": "*"},
    {"pattern": "*", "limit": 5},
    {"pattern": "?.py"},
    {"pattern": "*.log"},
    {"pattern": "x.py"},
    {"pattern": "src/*.py"},
    {"pattern": "*.py", "path": "src"},
    {"pattern": "*.py", "path": "linked"},
    {"pattern": "nothing*here"},
]


@pytest.mark.parametrize("odd_name", [False, True])
async def test_find_name_plan_and_sorted_plan_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd_name: bool
) -> None:
    _find_tree(tmp_path, odd_name=odd_name)
    sorted_walks: list[str] = []
    list_sorted = find_module.FindTool._list_sorted

    async def spy(self: Any, search_path: Path, pattern: Any, found: Any) -> Any:
        sorted_walks.append(pattern)
        return await list_sorted(self, search_path, pattern, found)

    monkeypatch.setattr(find_module.FindTool, "_list_sorted", spy)
    monkeypatch.setattr(find_module, "SORT_BUDGET", 1)  # so a small limit makes a dense pattern
    by_name = [await call("find", tmp_path, args) for args in _FIND_CASES]
    # the name plan answered all but the path pattern and the two dense ones with a small limit
    # (and nothing when a name is not UTF-8)
    assert len(sorted_walks) == (len(_FIND_CASES) if odd_name else 3)
    monkeypatch.setattr(find_module, "LISTING_BUDGET", 0)
    sorted_plan = [await call("find", tmp_path, args) for args in _FIND_CASES]
    for args, fast, reference in zip(_FIND_CASES, by_name, sorted_plan):
        assert fast == reference, args
