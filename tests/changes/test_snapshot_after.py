"""The bash snapshot after a command from inotify, confirmed by a full walk (issue 18).

Real files, real ``bash`` commands, real inotify. A write through a shared ``mmap`` sends no inotify
event when the file was opened by a name outside the watched folders (here: a hard link elsewhere,
as a database or a build daemon holding the map would be); only the confirmation walk finds it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_lsp.changes.blobs import BlobStore
from pi_lsp.changes.journal import ChangeJournal
from pi_lsp.changes.workspace_scan import DEFAULT_EXCLUDES, WorkspaceScanner, stat_walk

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

MMAP_WRITE = textwrap.dedent("""\
    import mmap, sys
    with open(sys.argv[1], "r+b") as handle, mmap.mmap(handle.fileno(), 0) as shared:
        shared[0:6] = sys.argv[2].encode()
""")


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace and, outside it, a hard link to its ``data.bin`` (the mmap's way in)."""
    root = tmp_path / "ws"
    for name, text in {"a.txt": "a\n", "gone.txt": "bye\n", "data.bin": "000000\n", "user.txt": "u\n",
                       "sub/b.txt": "bbbbbb\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.link(root / "data.bin", outside / "alias.bin")
    (tmp_path / "mmap_write.py").write_text(MMAP_WRITE)
    return root, outside / "alias.bin"


def _scanner(tmp_path: Path, root: Path) -> WorkspaceScanner:
    return WorkspaceScanner(ChangeJournal(tmp_path / "journal", BlobStore(tmp_path / "blobs")), lambda: [root])


def _bash(root: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=root, check=True)


def _mmap(tmp_path: Path, target: Path, text: str) -> str:
    return f"{sys.executable} {tmp_path / 'mmap_write.py'} {target} {text}"


def _named(scanner: WorkspaceScanner, changes: list) -> dict[str, tuple[bytes | None, bytes | None]]:
    blobs = scanner.journal.blobs
    return {os.path.relpath(path, scanner.folders()[0]): (old and blobs.get(old), new and blobs.get(new))
            for path, old, new in changes}


def test_a_command_s_changes_come_from_inotify_without_a_full_walk(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path)
    scanner = _scanner(tmp_path, root)
    command = scanner.begin_command()
    _bash(root, "echo A > a.txt && rm gone.txt && mkdir -p new/deep && echo n > new/deep/n.txt"
                " && echo c > created.txt && mkdir node_modules && echo x > node_modules/x.js"
                f" && {_mmap(tmp_path, root / 'sub/b.txt', 'plain!')}")  # an mmap by its own name: reported
    changes, owed = scanner.after_command(command)
    assert owed and scanner.full_walks == 1  # only the first snapshot walked
    assert _named(scanner, changes) == {
        "a.txt": (b"a\n", b"A\n"), "gone.txt": (b"bye\n", None), "new/deep/n.txt": (None, b"n\n"),
        "created.txt": (None, b"c\n"), "sub/b.txt": (b"bbbbbb\n", b"plain!\n"),
    }
    assert scanner.confirm(command) == []  # inotify saw all of it
    assert scanner.snapshot() == stat_walk([root], frozenset(DEFAULT_EXCLUDES)) and scanner.full_walks == 1


def test_a_shared_mmap_write_is_found_by_the_confirmation_and_later_writes_are_not_the_command_s(tmp_path: Path) -> None:
    root, alias = _workspace(tmp_path)
    scanner = _scanner(tmp_path, root)
    command = scanner.begin_command()
    _bash(root, f"echo A > a.txt && {_mmap(tmp_path, alias, 'MAPPED')}")
    changes, owed = scanner.after_command(command)
    assert owed and _named(scanner, changes) == {"a.txt": (b"a\n", b"A\n")}  # inotify never named data.bin
    # an edit tool (or the user) writes right after the command, before the confirmation walk
    (root / "user.txt").write_text("by the edit tool\n")
    (root / "a.txt").write_text("edited after\n")
    assert _named(scanner, scanner.confirm(command)) == {"data.bin": (b"000000\n", b"MAPPED\n")}
    # the next snapshot holds all of it: the mmap write, and the later writes from their events
    assert scanner.snapshot() == stat_walk([root], frozenset(DEFAULT_EXCLUDES)) and scanner.full_walks == 1
    assert scanner.differences(scanner.snapshot()) == []


def test_a_lost_watch_during_the_command_means_a_full_walk_then_nothing_is_owed(tmp_path: Path) -> None:
    root, alias = _workspace(tmp_path)
    scanner = _scanner(tmp_path, root)
    command = scanner.begin_command()
    _bash(root, f"mv sub moved && echo A > a.txt && {_mmap(tmp_path, alias, 'MAPPED')}")  # a moved folder: lost
    changes, owed = scanner.after_command(command)
    assert not owed and scanner.full_walks == 2
    assert _named(scanner, changes) == {
        "a.txt": (b"a\n", b"A\n"), "data.bin": (b"000000\n", b"MAPPED\n"),
        "sub/b.txt": (b"bbbbbb\n", None), "moved/b.txt": (None, b"bbbbbb\n"),
    }


def test_a_watch_lost_after_the_command_attributes_nothing_more(tmp_path: Path) -> None:
    root, alias = _workspace(tmp_path)
    scanner = _scanner(tmp_path, root)
    command = scanner.begin_command()
    _bash(root, f"echo A > a.txt && {_mmap(tmp_path, alias, 'MAPPED')}")
    changes, owed = scanner.after_command(command)
    assert owed and _named(scanner, changes) == {"a.txt": (b"a\n", b"A\n")}
    (root / "sub").rename(root / "moved")  # the user moves a folder: later changes can't be told apart
    (root / "user.txt").write_text("user\n")
    assert scanner.confirm(command) == []  # never the user's changes; the mmap write goes unattributed
    assert scanner.snapshot() == stat_walk([root], frozenset(DEFAULT_EXCLUDES)) and scanner.full_walks == 2


def test_without_a_watch_the_after_snapshot_is_a_full_walk_and_nothing_is_owed(tmp_path: Path) -> None:
    root, alias = _workspace(tmp_path)
    scanner = WorkspaceScanner(ChangeJournal(tmp_path / "journal", BlobStore(tmp_path / "blobs")), lambda: [root],
                               watch=False)  # as where inotify cannot be had
    command = scanner.begin_command()
    _bash(root, f"echo A > a.txt && {_mmap(tmp_path, alias, 'MAPPED')}")
    changes, owed = scanner.after_command(command)
    assert not owed and scanner.full_walks == 2
    assert _named(scanner, changes) == {"a.txt": (b"a\n", b"A\n"), "data.bin": (b"000000\n", b"MAPPED\n")}
