"""find: the peer's checklist (pi-behaviour.md section 9), its path-pattern and glob rules,
design.md section 7 (sorted, .gitignore everywhere, hierarchical), bad input, and a
differential run against the real peer."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from pi_lsp.tools.search.glob_pattern import GlobError, compile_find_pattern
from tests.peer import run_peer
from tests.tools.search_support import big_dir, call, git_init, write

__all__ = ["big_dir"]


async def lines(root: Path, args: dict) -> list[str]:
    error, text, _ = await call("find", root, args)
    assert not error, text
    return text.split("\n")


async def test_hidden_files_are_found(tmp_path: Path) -> None:
    write(tmp_path, {".secret/hidden.txt": "", "visible.txt": ""})
    assert await lines(tmp_path, {"pattern": "**/*.txt"}) == [".secret/hidden.txt", "visible.txt"]


@pytest.mark.parametrize("repository", [False, True])
async def test_gitignore_inside_and_outside_repositories(tmp_path: Path, repository: bool) -> None:
    if repository:
        git_init(tmp_path)
    write(tmp_path, {".gitignore": "ignored.txt\n", "ignored.txt": "", "kept.txt": ""})
    assert await lines(tmp_path, {"pattern": "*.txt"}) == ["kept.txt"]


async def test_nested_gitignore_affects_only_its_subtree(tmp_path: Path) -> None:
    write(tmp_path, {
        "a/.gitignore": "ignored.txt\n",
        "a/ignored.txt": "", "a/kept.txt": "",
        "a/deep/.gitignore": "secret.txt\n", "a/deep/secret.txt": "", "a/deep/ok.txt": "",
        "b/ignored.txt": "", "b/kept.txt": "", "b/secret.txt": "",
        "root.txt": "",
    })
    assert await lines(tmp_path, {"pattern": "*.txt"}) == [
        "a/deep/ok.txt", "a/kept.txt", "b/ignored.txt", "b/kept.txt", "b/secret.txt", "root.txt",
    ]


async def test_path_patterns(tmp_path: Path) -> None:
    write(tmp_path, {
        "src/foo/bar/example.spec.ts": "", "src/other.spec.ts": "", "src/a.ts": "",
        "some/parent/child/f.txt": "", "some/parent/child/x/g.txt": "",
        "lib/src/deep.ts": "",
    })
    assert await lines(tmp_path, {"pattern": "*.spec.ts"}) == [
        "src/foo/bar/example.spec.ts", "src/other.spec.ts",
    ]
    assert await lines(tmp_path, {"pattern": "some/parent/child/**"}) == [
        "some/parent/child/f.txt", "some/parent/child/x/", "some/parent/child/x/g.txt",
    ]
    assert await lines(tmp_path, {"pattern": "**/parent/child/*"}) == [
        "some/parent/child/f.txt", "some/parent/child/x/",
    ]
    assert await lines(tmp_path, {"pattern": "src/**/*.spec.ts"}) == [
        "src/foo/bar/example.spec.ts", "src/other.spec.ts",
    ]
    assert await lines(tmp_path, {"pattern": "src/*"}) == ["lib/src/deep.ts", "src/a.ts", "src/foo/", "src/other.spec.ts"]
    assert await lines(tmp_path, {"pattern": f"{tmp_path}/src/*.ts"}) == ["src/a.ts", "src/other.spec.ts"]


async def test_directories_sorted_with_slash_and_no_git(tmp_path: Path) -> None:
    git_init(tmp_path)
    write(tmp_path, {"b/x.txt": "", "a.txt": "", "a/y.txt": "", "A/z.txt": ""})
    assert await lines(tmp_path, {"pattern": "*"}) == [
        "A/", "A/z.txt", "a/", "a/y.txt", "a.txt", "b/", "b/x.txt",
    ]


async def test_smart_case_braces_classes(tmp_path: Path) -> None:
    write(tmp_path, {"UP.TXT": "", "low.txt": "", "a.ts": "", "b.js": "", "c.rs": ""})
    assert await lines(tmp_path, {"pattern": "*.txt"}) == ["UP.TXT", "low.txt"]
    assert await lines(tmp_path, {"pattern": "*.TXT"}) == ["UP.TXT"]
    assert await lines(tmp_path, {"pattern": "*.{ts,js}"}) == ["a.ts", "b.js"]
    assert await lines(tmp_path, {"pattern": "[!ab]*"}) == ["UP.TXT", "c.rs", "low.txt"]


async def test_bad_patterns_and_paths(tmp_path: Path) -> None:
    write(tmp_path, {"f.txt": ""})
    for pattern, reason in [
        ("[", "unclosed character class; missing ']'"),
        ("{a,b", "unclosed alternate group; missing '}'"),
        ("{a,{b}}", "nested alternate groups are not allowed"),
    ]:
        assert await call("find", tmp_path, {"pattern": pattern}) == (
            True, f"Invalid glob pattern '{pattern}': {reason}", None,
        )
    assert await call("find", tmp_path, {"pattern": "--help"}) == (
        False, "No files found matching pattern", None,
    )
    assert await call("find", tmp_path, {"pattern": "*", "path": "nope"}) == (
        True, f"Path not found: {tmp_path / 'nope'}", None,
    )
    assert await call("find", tmp_path, {"pattern": "*", "path": "f.txt"}) == (
        True, f"Not a directory: {tmp_path / 'f.txt'}", None,
    )
    error, text, _ = await call("find", tmp_path, {"pattern": "*", "limit": 0})
    assert error and text.startswith("Invalid limit: 0")


async def test_limit_notice(tmp_path: Path) -> None:
    write(tmp_path, {".hidden/h.txt": "", ".hidden/i.txt": ""})
    assert await call("find", tmp_path, {"pattern": "*.txt", "path": ".hidden", "limit": 1}) == (
        False,
        "h.txt\n\n[1 results limit reached. Use limit=2 for more, or refine pattern]",
        {"resultLimitReached": 1},
    )
    # issue 12 (Pi 1.6.0): exactly `limit` results are all there is, so no notice
    assert await call("find", tmp_path, {"pattern": "*.txt", "path": ".hidden", "limit": 2}) == (
        False, "h.txt\ni.txt", None,
    )


async def test_a_leading_dot_slash_in_the_pattern_is_dropped(tmp_path: Path) -> None:
    # issue 12 (Pi 1.6.0): "./src/*.py" found nothing, since no relative path starts with "./"
    write(tmp_path, {"src/a.py": "", "src/b.txt": "", "other/src/c.py": ""})
    assert await call("find", tmp_path, {"pattern": "./src/*.py"}) == await call("find", tmp_path, {"pattern": "src/*.py"})
    assert (await call("find", tmp_path, {"pattern": "././src/*.py"}))[1].split("\n")[0] == "other/src/c.py"


async def test_hundred_thousand_files_give_a_bounded_answer(big_dir: Path) -> None:
    started = time.monotonic()
    error, text, details = await call("find", big_dir, {"pattern": "*.txt"})
    assert not error and details == {"resultLimitReached": 1000}
    assert text.split("\n")[:2] == ["f000000.txt", "f000001.txt"]
    error, text, details = await call("find", big_dir, {"pattern": "f09999?.txt"})
    assert text.split("\n") == [f"f09999{i}.txt" for i in range(10)]
    assert time.monotonic() - started < 30


def test_glob_translation() -> None:
    def match(pattern: str, path: str) -> bool:
        name = path.rsplit("/", 1)[-1]
        return compile_find_pattern(pattern).matches(name, path, "/root/" + path)

    assert match("a\\*b", "a*b") and not match("a\\*b", "axb")
    assert match("s**", "src") and not match("src/**.ts", "src/a/b.ts")
    assert match("a]", "a]") and match("x}", "x}") and match("a,b", "a,b")
    assert match("[a-c]x", "bx") and not match("[a-c]x", "dx")
    assert not match("a?b", "a/b") and not match("a/*", "a/b/c")
    with pytest.raises(GlobError):
        compile_find_pattern("x\\")


def test_same_answers_as_the_peer(peer: Path, tmp_path: Path) -> None:
    """Same sets of entries as the peer on a git repository without empty directories; the
    peer lists .git's contents (pi-lsp never does), so those lines are left out."""
    git_init(tmp_path)
    write(tmp_path, {
        ".gitignore": "build/\n", "build/o.txt": "",
        "src/foo/bar/example.spec.ts": "", "src/a.ts": "", "src/main.py": "", "src/sub/util.py": "",
        "some/parent/child/f.txt": "", "some/parent/child/x/g.txt": "",
        ".secret/hidden.txt": "", "visible.txt": "", "UP.TXT": "", "we ird.txt": "",
    })
    cases = [
        {"pattern": "*"}, {"pattern": "*.py"}, {"pattern": "src/**/*.py"}, {"pattern": "src/*"},
        {"pattern": "some/parent/child/**"}, {"pattern": "**/parent/child/*"}, {"pattern": "*.txt"},
        {"pattern": "*.TXT"}, {"pattern": "{a,visible}.*"}, {"pattern": "[!a-s]*"},
        {"pattern": "*.txt", "path": ".secret", "limit": 1}, {"pattern": "*.none"}, {"pattern": "src"},
        {"pattern": "./src/*.py"},
    ]
    answers = run_peer(peer, [
        {"cwd": str(tmp_path), "toolCall": {"id": str(i), "name": "find", "arguments": args}}
        for i, args in enumerate(cases)
    ])
    for args, answer in zip(cases, answers):
        error, text, _ = asyncio.run(call("find", tmp_path, args))
        peer_lines = [line for line in answer["content"][0]["text"].split("\n") if not line.startswith(".git/")]
        # decided differences (docs/differences.md, issue 12, as Pi 1.6.0): exactly `limit`
        # results print no "limit reached" notice, and a leading "./" in the pattern is dropped
        if args.get("limit") == 1:
            assert peer_lines[-2:] == ["", "[1 results limit reached. Use limit=2 for more, or refine pattern]"]
            peer_lines = peer_lines[:-2]
        if args["pattern"] == "./src/*.py":
            assert peer_lines == ["No files found matching pattern"]
            peer_lines = ["src/main.py"]
        assert error == answer["isError"], args
        assert sorted(text.split("\n")) == sorted(peer_lines), args
