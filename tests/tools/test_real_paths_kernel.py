"""``pi_lsp.tools.file_io.real_paths.realpath`` (the kernel step first, the walk after) gives ``os.path.realpath``'s answer for every kind of path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_lsp.tools.file_io.real_paths import existing_real_path, realpath as real_path


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


@pytest.mark.parametrize("name", CASES)
def test_existence_and_real_path_in_one_look_up(tree: Path, name: str) -> None:
    path = str(tree / name) if name else str(tree)
    found, real = existing_real_path(path)
    assert found == os.path.exists(path), path
    assert real == (os.path.realpath(path) if found else None), path


def test_existence_of_names_no_file_can_have(tree: Path) -> None:
    assert existing_real_path(str(tree / "a\0b")) == (False, None)
    assert existing_real_path(str(tree / ("x" * 300))) == (False, None)  # ENAMETOOLONG


def test_existence_without_a_file_descriptor_left(tree: Path) -> None:
    # the O_PATH open fails with EMFILE: os.path.exists answers, the real path is left to realpath
    child = f"""
import os, resource
from pi_lsp.tools.file_io.real_paths import existing_real_path
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
try:
    while True:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
print(existing_real_path({str(tree / "a" / "f.txt")!r}), existing_real_path({str(tree / "missing")!r}))
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "(True, None) (False, None)", done.stderr
