"""ls: the peer's behaviour exactly (pi-behaviour.md 2.7 and section 9), checked against the
real peer on the same trees, plus bad input and a directory of 100,000 entries."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from tests.peer import run_peer
from tests.tools.search_support import big_dir, call, write

__all__ = ["big_dir"]

TRICKY_NAMES = [
    "_x", ".git", "a", "ä", "b", "B", "Z", "a.b", "ab", "a-b", "a_b", "a b", "a1", "a10", "a2",
    "é", "e", "f", "ß", "ss", "st", "ñ", "n", "o", "Ω", "中", "😀", "A.txt", "a.TXT", "#x", "~y",
    "$z", "(p)", "+q", "x=y", "it's", "README", "readme", "Readme.md", "[b]", "{c}", "@d", "%e",
]


def tricky_tree(root: Path) -> None:
    for name in TRICKY_NAMES:
        (root / name).touch()
    (root / ".hidden-dir").mkdir()
    (root / ".hidden-file").touch()
    (root / "dd").mkdir()
    os.symlink("nowhere", root / "dangling")
    os.symlink("dd", root / "linkdir")


async def test_hidden_entries_are_listed(tmp_path: Path) -> None:
    (tmp_path / ".hidden-dir").mkdir()
    (tmp_path / ".hidden-file").touch()
    assert await call("ls", tmp_path, {}) == (False, ".hidden-dir/\n.hidden-file", None)


async def test_limits_empty_and_errors(tmp_path: Path) -> None:
    write(tmp_path, {"src/main.py": "", "src/util.py": "", "a.txt": ""})
    (tmp_path / "empty").mkdir()
    assert await call("ls", tmp_path, {"path": "src", "limit": 1}) == (
        False, "main.py\n\n[1 entries limit reached. Use limit=2 for more]", {"entryLimitReached": 1},
    )
    assert await call("ls", tmp_path, {"path": "src", "limit": 2}) == (False, "main.py\nutil.py", None)
    assert await call("ls", tmp_path, {"path": "empty"}) == (False, "(empty directory)", None)
    assert await call("ls", tmp_path, {"path": "src", "limit": 0}) == (False, "(empty directory)", None)
    assert await call("ls", tmp_path, {"path": "nope"}) == (True, f"Path not found: {tmp_path / 'nope'}", None)
    assert await call("ls", tmp_path, {"path": "a.txt"}) == (True, f"Not a directory: {tmp_path / 'a.txt'}", None)


async def test_symlinks_followed_and_dangling_skipped(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    os.symlink("missing", tmp_path / "broken")
    assert await call("ls", tmp_path, {}) == (False, "link/\nreal/", None)


async def test_non_utf8_names_do_not_crash(tmp_path: Path) -> None:
    (tmp_path / os.fsdecode(b"bad\xff.txt")).touch()
    assert await call("ls", tmp_path, {}) == (False, "bad\ufffd.txt", None)


async def test_hundred_thousand_entries_give_a_bounded_answer(big_dir: Path) -> None:
    started = time.monotonic()
    error, text, details = await call("ls", big_dir, {})
    assert not error and details == {"entryLimitReached": 500}
    listed = text.split("\n\n")[0].split("\n")
    assert listed == [f"f{i:06d}.txt" for i in range(500)]
    assert text.endswith("[500 entries limit reached. Use limit=1000 for more]")
    assert time.monotonic() - started < 20


def test_same_answers_as_the_peer(peer: Path, tmp_path: Path) -> None:
    """Exactly the peer's text (order included) for the same calls on the same tree."""
    tricky_tree(tmp_path)
    write(tmp_path, {"src/main.py": "", "src/sub/util.py": ""})
    cases = [{}, {"path": "src"}, {"limit": 3}, {"path": "src", "limit": 1}, {"path": "nope"},
             {"path": "src/main.py"}, {"path": "dd"}]
    answers = run_peer(peer, [
        {"cwd": str(tmp_path), "toolCall": {"id": str(i), "name": "ls", "arguments": args}}
        for i, args in enumerate(cases)
    ])
    for args, answer in zip(cases, answers):
        error, text, details = asyncio.run(call("ls", tmp_path, args))
        assert (error, text) == (answer["isError"], answer["content"][0]["text"]), args
        if not error:
            assert details == answer["details"], args
