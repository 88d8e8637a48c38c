"""The edit tool against pi-behaviour.md section 9's edit checklist (real files, real EditTool)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pi_lsp.tools.edit import prepare_edit_arguments
from tests.tools.edit_support import apply_patch, edit, edit_tool, run_edit


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


async def test_single_replacement_reports_diff_and_patch(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "Hello, world!")
    out = await edit(tmp_path, "a.txt", ("world", "testing"))
    assert out.text == "Successfully replaced 1 block(s) in a.txt."
    assert (tmp_path / "a.txt").read_text() == "Hello, testing!"
    details = out.details
    assert set(details) == {"diff", "patch", "firstChangedLine"}
    assert "testing" in details["diff"]
    patch = details["patch"]
    for piece in ("--- a.txt\n", "+++ a.txt\n", "@@", "-Hello, world!", "+Hello, testing!"):
        assert piece in patch
    assert apply_patch(tmp_path, "Hello, world!", patch) == "Hello, testing!"
    assert details["firstChangedLine"] == 1


async def test_not_found_missing_file_and_duplicates(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "foo foo foo")
    missing = await edit(tmp_path, "a.txt", ("bar", "x"))
    assert missing.is_error and missing.text.startswith("Could not find the exact text in a.txt.")
    dup = await edit(tmp_path, "a.txt", ("foo", "x"))
    assert dup.is_error
    assert dup.text == (
        "Found 3 occurrences of the text in a.txt. The text must be unique. Please provide more context to make it unique."
    )
    gone = await edit(tmp_path, "nope.txt", ("a", "b"))
    assert gone.is_error and gone.text == "Could not edit file: nope.txt. Error code: ENOENT."
    assert (tmp_path / "a.txt").read_text() == "foo foo foo"


async def test_two_disjoint_edits(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "alpha\nbeta\ngamma\n")
    out = await edit(tmp_path, "a.txt", ("alpha", "ALPHA"), ("gamma", "GAMMA"))
    assert out.text == "Successfully replaced 2 block(s) in a.txt."
    assert (tmp_path / "a.txt").read_text() == "ALPHA\nbeta\nGAMMA\n"
    assert "+1 ALPHA" in out.details["diff"] and "+3 GAMMA" in out.details["diff"]


async def test_far_apart_edits_collapse_unchanged_regions(tmp_path: Path) -> None:
    original = "".join(f"line {i}\n" for i in range(1, 601))
    _write(tmp_path / "big.txt", original)
    out = await edit(tmp_path, "big.txt", ("line 100\n", "L100\n"), ("line 300\n", "L300\n"), ("line 500\n", "L500\n"))
    diff = out.details["diff"]
    for n in (100, 300, 500):
        assert f"L{n}" in diff
    assert "..." in diff and "line 250" not in diff
    assert len(diff.split("\n")) < 50
    assert apply_patch(tmp_path, original, out.details["patch"]) == (tmp_path / "big.txt").read_text()


async def test_edits_match_the_original_not_incrementally(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "foo\nbar\nbaz\n")
    out = await edit(tmp_path, "a.txt", ("foo\n", "foo bar\n"), ("bar\n", "BAR\n"))
    assert not out.is_error
    assert (tmp_path / "a.txt").read_text() == "foo bar\nBAR\nbaz\n"


async def test_empty_edits_overlap_and_partial_failure_change_nothing(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "one\ntwo\nthree\n")
    empty = await run_edit(tmp_path, {"path": "a.txt", "edits": []})
    assert empty.text == "Edit tool input is invalid. edits must contain at least one replacement."
    overlap = await edit(tmp_path, "a.txt", ("one\ntwo\n", "x"), ("two\nthree\n", "y"))
    assert overlap.text == (
        "edits[0] and edits[1] overlap in a.txt. Merge them into one edit or target disjoint regions."
    )
    partial = await edit(tmp_path, "a.txt", ("one", "1"), ("four", "4"))
    assert partial.text.startswith("Could not find edits[1] in a.txt.")
    blank = await edit(tmp_path, "a.txt", ("one", "1"), ("", "4"))
    assert blank.text == "edits[1].oldText must not be empty in a.txt."
    same = await edit(tmp_path, "a.txt", ("one", "one"))
    assert same.text.startswith("No changes made to a.txt. The replacement produced identical content.")
    same_many = await edit(tmp_path, "a.txt", ("one", "one"), ("two", "two"))
    assert same_many.text == "No changes made to a.txt. The replacements produced identical content."
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\nthree\n"


async def test_fuzzy_trailing_spaces_only_touched_lines_change(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "line one   \nline two  \nline three\n")
    out = await edit(tmp_path, "a.txt", ("line one\nline two\n", "replaced\n"))
    assert not out.is_error
    assert (tmp_path / "a.txt").read_text() == "replaced\nline three\n"
    _write(tmp_path / "b.txt", "replace me   \nafter   \n")
    out = await edit(tmp_path, "b.txt", ("replace me\n", "after\n"))
    assert (tmp_path / "b.txt").read_text() == "after\nafter   \n"
    assert apply_patch(tmp_path, "replace me   \nafter   \n", out.details["patch"]) == "after\nafter   \n"


async def test_fuzzy_unicode_forms(tmp_path: Path) -> None:
    _write(tmp_path / "cjk.txt", "你好，世界\n你好（世界）\n")
    await edit(tmp_path, "cjk.txt", ("你好,世界\n你好(世界)\n", "ok, (done)\n"))
    assert (tmp_path / "cjk.txt").read_text() == "ok, (done)\n"
    _write(tmp_path / "wide.txt", "ＡＢＣ１２３\ncafe\u0301\n")
    await edit(tmp_path, "wide.txt", ("ABC123\ncafé\n", "XYZ789\ncoffee\n"))
    assert (tmp_path / "wide.txt").read_text() == "XYZ789\ncoffee\n"
    text = "say \u2018hi\u2019\nquote \u201cx\u201d\na \u2013 b \u2014 c\nnb\u00a0sp\n"
    for old, new, expected in [
        ("say 'hi'", "S", "S\n"),
        ('quote "x"', "Q", "Q\n"),
        ("a - b - c", "D", "D\n"),
        ("nb sp", "N", "N\n"),
    ]:
        _write(tmp_path / "q.txt", text)
        out = await edit(tmp_path, "q.txt", (old, new))
        assert not out.is_error, out.text
        lines = text.split("\n")
        changed = [i for i, line in enumerate((tmp_path / "q.txt").read_text().split("\n")) if line != lines[i]]
        assert len(changed) == 1 and (tmp_path / "q.txt").read_text().split("\n")[changed[0]] + "\n" == expected


async def test_exact_match_leaves_other_lines_and_fuzzy_misses_fail(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "keep \u201cthis\u201d   \nplain line\n")
    await edit(tmp_path, "a.txt", ("plain line", "PLAIN"))
    assert (tmp_path / "a.txt").read_text() == "keep \u201cthis\u201d   \nPLAIN\n"
    miss = await edit(tmp_path, "a.txt", ("not there at all", "x"))
    assert miss.text.startswith("Could not find the exact text")


async def test_uniqueness_is_counted_in_fuzzy_space(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "hello world   \nhello world\n")
    out = await edit(tmp_path, "a.txt", ("hello world", "x"))
    assert out.text.startswith("Found 2 occurrences")
    _write(tmp_path / "b.txt", "hello\r\nworld\r\n---\r\nhello\nworld\n")
    out = await edit(tmp_path, "b.txt", ("hello\nworld\n", "x"))
    assert out.text.startswith("Found 2 occurrences")


async def test_multi_edit_fuzzy(tmp_path: Path) -> None:
    _write(tmp_path / "a.txt", "top   \nsay \u201chi\u201d\nmid   \nnb\u00a0sp\nend   \n")
    out = await edit(tmp_path, "a.txt", ('say "hi"', "SAY"), ("nb sp", "NB"))
    assert out.text == "Successfully replaced 2 block(s) in a.txt."
    assert (tmp_path / "a.txt").read_text() == "top   \nSAY\nmid   \nNB\nend   \n"
    original = "top   \nsay \u201chi\u201d\nmid   \nnb\u00a0sp\nend   \n"
    assert apply_patch(tmp_path, original, out.details["patch"]) == (tmp_path / "a.txt").read_text()


async def test_crlf_and_bom_are_kept(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(b"first\r\nsecond\r\nthird\r\n")
    await edit(tmp_path, "c.txt", ("second\n", "REPLACED\n"))
    assert (tmp_path / "c.txt").read_bytes() == b"first\r\nREPLACED\r\nthird\r\n"
    (tmp_path / "l.txt").write_bytes(b"first\nsecond\nthird\n")
    await edit(tmp_path, "l.txt", ("second", "two\nlines"))
    assert (tmp_path / "l.txt").read_bytes() == b"first\ntwo\nlines\nthird\n"
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\nc\r\n")
    await edit(tmp_path, "b.txt", ("b", "B"))
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfa\r\nB\r\nc\r\n"
    await edit(tmp_path, "b.txt", ("a\n", "A\nA2\n"), ("c", "C"))
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfA\r\nA2\r\nB\r\nC\r\n"


async def test_symlink_edits_the_target_and_parallel_edits_both_land(tmp_path: Path) -> None:
    target = _write(tmp_path / "real.txt", "one\ntwo\nthree\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await edit(tmp_path, "link.txt", ("one", "ONE"))
    assert (tmp_path / "link.txt").is_symlink()
    assert target.read_text() == "ONE\ntwo\nthree\n"
    tool = edit_tool(tmp_path)
    results = await asyncio.gather(
        run_edit(tmp_path, {"path": "link.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}, tool=tool),
        run_edit(tmp_path, {"path": "real.txt", "edits": [{"oldText": "three", "newText": "THREE"}]}, tool=tool),
        run_edit(tmp_path, {"path": str(target), "edits": [{"oldText": "ONE", "newText": "1"}]}, tool=tool),
    )
    assert [r.is_error for r in results] == [False, False, False]
    assert target.read_text() == "1\nTWO\nTHREE\n"


def test_prepare_arguments_is_pis_shim() -> None:
    valid = {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}
    assert prepare_edit_arguments(valid) is valid
    for odd in (None, "garbage", 3, ["a"]):
        assert prepare_edit_arguments(odd) is odd
    legacy = prepare_edit_arguments({"path": "a", "oldText": "x", "newText": "y"})
    assert legacy == {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}
    both = prepare_edit_arguments({"path": "a", "edits": [{"oldText": "1", "newText": "2"}], "oldText": "x", "newText": "y"})
    assert both["edits"] == [{"oldText": "1", "newText": "2"}, {"oldText": "x", "newText": "y"}]
    half = {"path": "a", "oldText": "x"}
    assert prepare_edit_arguments(half) is half
    raw = {"path": "a", "edits": json.dumps([{"oldText": "x", "newText": "y"}])}
    assert prepare_edit_arguments(raw) is raw and raw["edits"] == [{"oldText": "x", "newText": "y"}]
    bad = {"path": "a", "edits": "[not json"}
    assert prepare_edit_arguments(bad)["edits"] == "[not json"


async def test_legacy_and_string_edits_execute(tmp_path: Path) -> None:
    _write(tmp_path / "legacy.txt", "old\n")
    out = await run_edit(tmp_path, {"path": "legacy.txt", "oldText": "old", "newText": "new"})
    assert out.text == "Successfully replaced 1 block(s) in legacy.txt."
    assert (tmp_path / "legacy.txt").read_text() == "new\n"
    out = await run_edit(tmp_path, {"path": "legacy.txt", "edits": '[{"oldText":"new","newText":"newer"}]'})
    assert not out.is_error and (tmp_path / "legacy.txt").read_text() == "newer\n"
    closed = await run_edit(tmp_path, {"path": "legacy.txt", "edits": [{"oldText": "a", "newText": "b", "extra": 1}]})
    assert closed.is_error and closed.text.startswith('Validation failed for tool "edit":')


@pytest.mark.parametrize(
    ("content", "old", "count"),
    [
        ("aXaXa\n", "aXa", 2),  # the second occurrence starts inside the first
        ("x = [0, 0, 0]\n", "0, 0", 2),
        ("aaaa\n", "aa", 3),
        ("ab\n  ab  \n", "b\n  a", 1),  # a single occurrence is still unique
    ],
)
async def test_overlapping_occurrences_are_ambiguous(tmp_path: Path, content: str, old: str, count: int) -> None:
    # issue 12: counting advanced by the match length called "aXa" unique in "aXaXa" and edited the first
    _write(tmp_path / "a.txt", content)
    out = await edit(tmp_path, "a.txt", (old, "Z"))
    if count == 1:
        assert not out.is_error
        return
    assert out.text.startswith(f"Found {count} occurrences of the text in a.txt. The text must be unique.")
    assert (tmp_path / "a.txt").read_text() == content
