"""Edits through the editor over real stdio (design.md section 4), with the VS Code-like and the
Neovim-like FakeEditor: what the client received (ranges, versions), the buffer after applying it,
and the bytes on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp

from pi_lsp.demo.fake_editor import FakeEditor

PROFILES = ["vscode", "neovim"]
FAST = {"pi": {"edit": {"applyTimeoutSeconds": 1, "verifyTimeoutSeconds": 2}}}


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"path": path, "edits": [{"oldText": old, "newText": new}]}


def _only_text_edit(editor: FakeEditor) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the TextDocumentEdit's textDocument, its single edit) of the last applyEdit, in either form."""
    edit = editor.apply_edits[-1]["edit"]
    if "documentChanges" in edit:
        (change,) = edit["documentChanges"]
        (text_edit,) = change["edits"]
        return change["textDocument"], text_edit
    ((uri, edits),) = edit["changes"].items()
    (text_edit,) = edits
    return {"uri": uri, "version": None}, text_edit


@pytest.mark.parametrize("profile", PROFILES)
async def test_open_clean_document_is_edited_in_the_buffer_and_saved(make_editor, tmp_path: Path, profile: str) -> None:
    path = tmp_path / "app.py"
    path.write_text("def f():\n    return 1\n", encoding="utf-8")
    editor: FakeEditor = await make_editor(profile=profile, initialization_options=FAST)
    editor.open("app.py", version=7)
    result = await editor.call("edit", _edit("app.py", "return 1", "return 2"))
    assert result["isError"] is False, editor.result_text(result)
    document, text_edit = _only_text_edit(editor)
    assert "documentChanges" in editor.apply_edits[-1]["edit"]  # versioned, Neovim included
    assert document == {"uri": path.as_uri(), "version": 7}
    assert text_edit == {
        "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 12}},
        "newText": "2",
    }
    assert editor.apply_edits[-1]["label"] == "pi: edit app.py"
    assert editor.text("app.py") == "def f():\n    return 2\n"
    assert editor.save_requests == [{"documents": [{"uri": path.as_uri(), "version": editor.buffer("app.py").version}]}]
    assert path.read_bytes() == b"def f():\n    return 2\n"


@pytest.mark.parametrize("profile", PROFILES)
async def test_open_dirty_document_is_matched_against_the_buffer_and_left_unsaved(
    make_editor, tmp_path: Path, profile: str
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"alpha\nbeta\n")
    editor: FakeEditor = await make_editor(profile=profile, initialization_options=FAST)
    editor.open("notes.txt")
    editor.type("notes.txt", 0, 0, "USER ")  # unsaved typing
    result = await editor.call("edit", _edit("notes.txt", "beta", "gamma"))
    assert result["isError"] is False, editor.result_text(result)
    assert editor.text("notes.txt") == "USER alpha\ngamma\n"  # the user's text kept
    assert editor.save_requests == []  # a buffer the user left dirty is never saved by the agent
    assert path.read_bytes() == b"alpha\nbeta\n"
    assert "not saved" in editor.result_text(result).lower()


@pytest.mark.parametrize("profile", PROFILES)
async def test_closed_file_on_the_editor_route_is_loaded_edited_and_saved(
    make_editor, tmp_path: Path, profile: str
) -> None:
    path = tmp_path / "closed.txt"
    path.write_bytes(b"one\ntwo\n")
    editor: FakeEditor = await make_editor(profile=profile, initialization_options=FAST)
    result = await editor.call("edit", _edit("closed.txt", "two", "TWO"))
    assert result["isError"] is False, editor.result_text(result)
    document, _ = _only_text_edit(editor)
    assert document == {"uri": path.as_uri(), "version": None}
    assert editor.save_requests == [{"documents": [{"uri": path.as_uri(), "version": None}]}]
    assert path.read_bytes() == b"one\nTWO\n"


async def test_closed_file_on_the_open_documents_route_is_edited_on_disk(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "closed.txt"
    path.write_bytes(b"one\ntwo\n")
    options = {"pi": {"edit": {"route": "openDocuments", "applyTimeoutSeconds": 1}}}
    editor: FakeEditor = await make_editor(initialization_options=options)
    result = await editor.call("edit", _edit("closed.txt", "one", "ONE"))
    assert result["isError"] is False, editor.result_text(result)
    assert editor.apply_edits == [] and editor.save_requests == []
    assert path.read_bytes() == b"ONE\ntwo\n"


@pytest.mark.parametrize("profile", PROFILES)
async def test_crlf_document_without_final_newline(make_editor, tmp_path: Path, profile: str) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\nthird")
    editor: FakeEditor = await make_editor(profile=profile, initialization_options=FAST)
    editor.open("win.txt")
    result = await editor.call("edit", _edit("win.txt", "second", "2nd"))
    assert result["isError"] is False, editor.result_text(result)
    _, text_edit = _only_text_edit(editor)
    assert text_edit["range"]["start"]["line"] == 1 and text_edit["range"]["end"]["line"] == 1
    assert editor.text("win.txt") == "first\r\n2nd\r\nthird"
    assert path.read_bytes() == b"first\r\n2nd\r\nthird"


@pytest.mark.parametrize(("encoding", "column"), [("utf-8", 12), ("utf-16", 9), ("utf-32", 8)])
async def test_columns_after_accents_and_an_astral_emoji(make_editor, tmp_path: Path, encoding: str, column: int) -> None:
    path = tmp_path / "intl.txt"
    path.write_text("héllo 😀 wörld\n", encoding="utf-8")
    editor: FakeEditor = await make_editor(position_encodings=[encoding], initialization_options=FAST)
    assert editor.initialize_result.capabilities.position_encoding == encoding
    editor.open("intl.txt")
    result = await editor.call("edit", _edit("intl.txt", "wörld", "world"))
    assert result["isError"] is False, editor.result_text(result)
    _, text_edit = _only_text_edit(editor)
    start = text_edit["range"]["start"]
    assert start["line"] == 0
    # the minimal edit replaces "ö" (the common prefix "w" is trimmed): one unit further right
    assert start["character"] == column + 1
    assert editor.text("intl.txt") == "héllo 😀 world\n"
    assert path.read_text(encoding="utf-8") == "héllo 😀 world\n"


async def test_form_feed_and_line_separator_are_not_line_breaks(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "odd.txt"
    path.write_text("a\fb\u2028c\u0085d\nsecond line\n", encoding="utf-8")
    editor: FakeEditor = await make_editor(initialization_options=FAST)
    editor.open("odd.txt")
    result = await editor.call("edit", _edit("odd.txt", "second", "2nd"))
    assert result["isError"] is False, editor.result_text(result)
    _, text_edit = _only_text_edit(editor)
    assert text_edit["range"]["start"] == {"line": 1, "character": 0}
    assert path.read_text(encoding="utf-8") == "a\fb\u2028c\u0085d\n2nd line\n"


@pytest.mark.parametrize(
    ("mode", "fragment"),
    [("reject", "did not apply"), ("error", "refused"), ("ignore", "did not answer")],
)
async def test_refused_failed_or_unanswered_edits_write_nothing(
    make_editor, tmp_path: Path, mode: str, fragment: str
) -> None:
    path = tmp_path / "keep.txt"
    path.write_bytes(b"stay\n")
    options = {"pi": {"edit": {"applyTimeoutSeconds": 0.5}}}
    editor: FakeEditor = await make_editor(apply_mode=mode, initialization_options=options)
    editor.open("keep.txt")
    result = await editor.call("edit", _edit("keep.txt", "stay", "go"))
    assert result["isError"] is True
    text = editor.result_text(result)
    assert fragment in text
    if mode == "ignore":
        assert "read the file again" in text
    assert editor.text("keep.txt") == "stay\n"
    assert path.read_bytes() == b"stay\n"
    assert editor.save_requests == []
    assert (await editor.request("pi/listTools", {}))["tools"]  # still serving


async def test_a_keystroke_racing_the_edit_makes_the_editor_refuse_it(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "race.txt"
    path.write_bytes(b"x = 1\n")

    def user_types_first(editor: FakeEditor, _params: Any) -> None:
        editor.type("race.txt", 0, 0, "#")

    editor: FakeEditor = await make_editor(before_apply=user_types_first, initialization_options=FAST)
    editor.open("race.txt")
    result = await editor.call("edit", _edit("race.txt", "x = 1", "x = 2"))
    assert result["isError"] is True and "version" in editor.result_text(result)
    assert editor.text("race.txt") == "#x = 1\n"  # the keystroke survives, the stale edit does not land
    assert path.read_bytes() == b"x = 1\n"


async def test_two_parallel_edits_of_one_file_both_land(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "two.txt"
    path.write_bytes(b"top\nmiddle\nbottom\n")
    editor: FakeEditor = await make_editor(initialization_options=FAST)
    editor.open("two.txt")
    reply = await editor.request("pi/executeToolCalls", {"toolCalls": [
        {"id": "a", "name": "edit", "arguments": _edit("two.txt", "top", "TOP")},
        {"id": "b", "name": "edit", "arguments": _edit("two.txt", "bottom", "BOTTOM")},
    ]})
    assert [r["isError"] for r in reply["results"]] == [False, False], reply
    assert len(editor.apply_edits) == 2
    versions = [e["edit"]["documentChanges"][0]["textDocument"]["version"] for e in editor.apply_edits]
    assert versions[1] > versions[0]  # the second edit was computed on the first one's result
    assert editor.text("two.txt") == "TOP\nmiddle\nBOTTOM\n"
    assert path.read_bytes() == b"TOP\nmiddle\nBOTTOM\n"


async def test_a_skipped_save_is_a_notice_not_an_error(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "skip.txt"
    path.write_bytes(b"before\n")
    editor: FakeEditor = await make_editor(save_mode="skip", initialization_options=FAST)
    editor.open("skip.txt")
    result = await editor.call("edit", _edit("skip.txt", "before", "after"))
    assert result["isError"] is False
    assert "the user declined the save" in editor.result_text(result)
    assert editor.text("skip.txt") == "after\n"
    assert path.read_bytes() == b"before\n"


async def test_write_to_an_open_clean_buffer_goes_through_the_editor(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "w.txt"
    path.write_bytes(b"old line\nsame\n")
    editor: FakeEditor = await make_editor(initialization_options=FAST)
    editor.open("w.txt")
    result = await editor.call("write", {"path": "w.txt", "content": "new line\nsame\n"})
    assert result["isError"] is False, editor.result_text(result)
    assert editor.apply_edits[-1]["label"] == "pi: write w.txt"
    _, text_edit = _only_text_edit(editor)
    assert text_edit["range"]["start"]["line"] == 0 and text_edit["range"]["end"]["line"] == 0
    assert path.read_bytes() == b"new line\nsame\n"


async def test_saving_waits_for_the_post_edit_version_neovim_jumps(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "nv.txt"
    path.write_bytes(b"a\nb\n")
    editor: FakeEditor = await make_editor(profile="neovim", initialization_options=FAST)
    editor.open("nv.txt", version=0)
    result = await editor.call("edit", _edit("nv.txt", "b", "B"))
    assert result["isError"] is False, editor.result_text(result)
    assert editor.buffer("nv.txt").version == 4  # changedtick-like jump, sent after the reply
    assert editor.save_requests[-1]["documents"][0]["version"] == 4
    assert path.read_bytes() == b"a\nB\n"


@pytest.mark.parametrize(
    ("snapshot", "client_name", "encoding", "column"),
    [("visual_studio_code", "Visual Studio Code", "utf-16", 7), ("neovim", "Neovim", "utf-8", 10)],
)
async def test_real_client_capability_snapshots(
    make_editor, tmp_path: Path, snapshot: str, client_name: str, encoding: str, column: int
) -> None:
    """pytest-lsp's recorded capabilities of VS Code 1.65 and Neovim 0.11 (no documentChanges,
    UTF-8 first): both get a versioned edit in their encoding."""
    path = tmp_path / "snap.txt"
    path.write_text("añ😀 = 1\n", encoding="utf-8")
    editor: FakeEditor = await make_editor(
        capabilities=pytest_lsp.client_capabilities(snapshot), client_name=client_name,
        profile="neovim" if snapshot == "neovim" else "vscode", initialization_options=FAST,
    )
    assert editor.initialize_result.capabilities.position_encoding == encoding
    editor.open("snap.txt", version=3)
    result = await editor.call("edit", _edit("snap.txt", "= 1", "= 2"))
    assert result["isError"] is False, editor.result_text(result)
    document, text_edit = _only_text_edit(editor)
    assert document == {"uri": path.as_uri(), "version": 3}
    assert text_edit["range"]["start"] == {"line": 0, "character": column}  # after "añ😀 = "
    assert path.read_text(encoding="utf-8") == "añ😀 = 2\n"
