"""``pi_lsp.tools.file_io.real_paths.realpath`` (the kernel step first, the walk after) gives ``os.path.realpath``'s answer for every kind of path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_lsp.tools.file_io.real_paths import realpath as real_path


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x", encoding="utf-8")
    os.symlink(tmp_path / "a", tmp_path / "link")
    os.symlink("f.txt", tmp_path / "a" / "rel")
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    os.symlink(tmp_path / "missing" / "deeper", tmp_path / "dangling")
    os.mkfifo(tmp_path / "fifo")  # must not block: opened with O_PATH, or not at all
    return tmp_path


CASES = [
    "a/f.txt", "link/f.txt", "link/rel", "link/..", "link/../a/./f.txt", "a//f.txt", "a/f.txt/",
    "link/f.txt/..", "a/nope/../f.txt", "missing", "dangling", "loop1", "loop1/x", "fifo", "", ".", "..",
]


@pytest.mark.parametrize("name", CASES)
def test_the_same_answer_as_os_path_realpath(tree: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    for path in (name, str(tree / name) if name else str(tree), Path(tree / name)):
        assert real_path(path) == os.path.realpath(path), path


def test_a_removed_file_is_resolved_as_realpath_does(tree: Path) -> None:
    target = tree / "a" / "gone.txt"
    target.write_text("x", encoding="utf-8")
    resolved = real_path(tree / "link" / "gone.txt")
    target.unlink()
    assert resolved == str(target)
    assert real_path(tree / "link" / "gone.txt") == os.path.realpath(tree / "link" / "gone.txt")
