"""The bash snapshot from inotify (issue 18, :mod:`pi_lsp.changes.dir_watch`): after a full walk,
a snapshot is the last one plus what changed since, equal to a full walk of the same tree; it
walks everything again whenever the watch may have missed something."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.dir_watch import DirWatch
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.workspace_scan import DEFAULT_EXCLUDES, WorkspaceScanner, stat_walk

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def _tree(root: Path) -> None:
    for name in ("a/one.txt", "a/two.txt", "b/c/three.txt", "node_modules/x.js"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name + "\n")


def _scanner(tmp_path: Path, root: Path) -> WorkspaceScanner:
    journal = ChangeJournal(tmp_path / "journal", BlobStore(tmp_path / "blobs"))
    return WorkspaceScanner(journal, lambda: [root])


def _full(root: Path) -> dict:
    return stat_walk([root], frozenset(DEFAULT_EXCLUDES))


def test_a_snapshot_after_changes_equals_a_full_walk_without_walking(tmp_path: Path) -> None:
    assert DirWatch.create() is not None
    root = tmp_path / "ws"
    _tree(root)
    scanner = _scanner(tmp_path, root)
    assert scanner.snapshot() == _full(root) and scanner.full_walks == 1
    assert scanner.snapshot() == _full(root) and scanner.full_walks == 1  # nothing changed
    (root / "a/one.txt").write_text("changed by the user\n")
    (root / "a/two.txt").unlink()
    (root / "b/c/new").mkdir()
    (root / "b/c/new/four.txt").write_text("4\n")
    (root / "node_modules/y.js").write_text("excluded\n")
    os.symlink(root / "a/one.txt", root / "b/link.txt")  # not a regular file: not listed
    state = scanner.snapshot()
    assert state == _full(root) and scanner.full_walks == 1
    assert str(root / "b/c/new/four.txt") in state and str(root / "a/two.txt") not in state
    (root / "b/c/new/five.txt").write_text("5\n")  # in the folder that appeared: watched too
    assert scanner.snapshot() == _full(root) and scanner.full_walks == 1
    # what a command changed is found by a full walk, and the next snapshot starts from it
    before = scanner.snapshot()
    (root / "a/one.txt").write_text("changed by the command\n")
    [(path, old, new)] = scanner.differences(before)
    assert path == str(root / "a/one.txt") and old != new and scanner.full_walks == 2
    assert scanner.journal.blobs.get(old) == b"changed by the user\n"
    assert scanner.snapshot() == _full(root) and scanner.full_walks == 2


def test_a_moved_or_removed_folder_means_a_full_walk(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _tree(root)
    scanner = _scanner(tmp_path, root)
    scanner.snapshot()
    (root / "b").rename(root / "moved")
    assert scanner.snapshot() == _full(root) and scanner.full_walks == 2
    (root / "moved/c/three.txt").unlink()
    (root / "moved/c").rmdir()
    assert scanner.snapshot() == _full(root) and scanner.full_walks == 3
    (root / "a/one.txt").write_text("x\n")
    assert scanner.snapshot() == _full(root) and scanner.full_walks == 3


def test_without_the_watch_every_snapshot_walks(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _tree(root)
    journal = ChangeJournal(tmp_path / "journal", BlobStore(tmp_path / "blobs"))
    scanner = WorkspaceScanner(journal, lambda: [root], watch=False)
    scanner.snapshot()
    scanner.snapshot()
    assert scanner.full_walks == 2
