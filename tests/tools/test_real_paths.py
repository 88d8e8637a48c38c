"""The tools' fast ``realpath`` (and the policy's ``real_path`` built on it) give exactly
``os.path.realpath``'s answer.

The fast walk (issue 21) must agree on every shape of path the policy meets: plain files, links
at the start, middle and end, relative and absolute link targets, chains, loops, dangling links,
missing parts, a file used as a folder, ``.``/``..``/doubled slashes; and it must see a link that
replaced a folder after an earlier answer (nothing is cached).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_lsp.policy.workspace_scope import real_path
from pi_lsp.tools.file_io.real_paths import realpath


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("a")
    (root / "file.txt").write_text("f")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "abs_link").symlink_to(outside)
    (root / "rel_link").symlink_to("src/pkg")
    (root / "src" / "up").symlink_to("..")
    (root / "chain1").symlink_to("chain2")
    (root / "chain2").symlink_to("file.txt")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    (root / "dangling").symlink_to("nowhere/at/all")
    (root / "file_link").symlink_to(root / "src" / "pkg" / "a.py")
    return root


NAMES = [
    "", "file.txt", "src", "src/pkg/a.py", "src/pkg/missing.py", "missing/deeper/x", "file.txt/inside",
    "abs_link", "abs_link/secret", "abs_link/missing", "rel_link/a.py", "src/up/file.txt", "src/up/src/up/rel_link",
    "chain1", "loop1", "loop1/x", "dangling", "dangling/more", "file_link", "src/./pkg", "src/../file.txt",
    "src//pkg", "src/pkg/", "src/pkg/.", "src/pkg/..", "é/ü.txt",
]


@pytest.mark.parametrize("name", NAMES)
def test_the_same_answer_as_os_path_realpath(tree: Path, name: str) -> None:
    path = f"{tree}/{name}" if name else str(tree)
    for resolve in (realpath, real_path):
        assert resolve(path) == os.path.realpath(path)
        assert resolve(Path(path)) == os.path.realpath(path)


def test_root_relative_and_odd_inputs(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    for path in ["/", "//", "///tmp", "rel_link/a.py", ".", "..", "/..", "/."]:
        assert realpath(path) == real_path(path) == os.path.realpath(path), path
    assert realpath(b"/tmp/../tmp") == os.path.realpath(b"/tmp/../tmp")
    with pytest.raises(ValueError):  # a NUL byte: os.path.realpath's error ...
        realpath(f"{tree}/a\x00b")
    assert real_path(f"{tree}/a\x00b") == f"{tree}/a\x00b"  # ... which the policy turns into the path


def test_a_folder_replaced_by_a_link_is_seen_at_once(tree: Path, tmp_path: Path) -> None:
    path = f"{tree}/src/pkg/a.py"
    assert real_path(path) == path
    os.rename(tree / "src" / "pkg", tmp_path / "moved")
    (tree / "src" / "pkg").symlink_to(tmp_path / "moved")
    assert realpath(path) == real_path(path) == str(tmp_path / "moved" / "a.py") == os.path.realpath(path)
