"""Files that change on disk under the editor's buffers, over real stdio (design.md section 3, the
"disk newer" rows; section 4 steps 6 and 7): bash rewriting an open file, another program changing
it, a dirty buffer whose file changed, writes to open clean and dirty buffers, a formatter on save,
and the unsaved-files notice on bash, grep and find results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_lsp.demo.fake_editor import FakeEditor

FAST = {"pi": {"edit": {"applyTimeoutSeconds": 2, "verifyTimeoutSeconds": 2}}}
ALLOW = "Allow once"  # the approval answer for bash commands that are not read-only
NO_RELOAD = {"saveDocuments": True, "editClosedFiles": True, "documentState": True}


def _edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"path": path, "edits": [{"oldText": old, "newText": new}]}


def _text_edits(editor: FakeEditor) -> list[dict[str, Any]]:
    edit = editor.apply_edits[-1]["edit"]
    if "documentChanges" in edit:
        return [e for change in edit["documentChanges"] for e in change["edits"]]
    return [e for edits in edit["changes"].values() for e in edits]


async def _start(make_editor, **options: Any) -> FakeEditor:
    return await make_editor(initialization_options=FAST, message_answer=ALLOW, **options)


async def _synced(editor: FakeEditor) -> None:
    """A round trip: the server has handled every notification sent before (didOpen records the
    disk state; changing the file before that would make the buffer look modified)."""
    await editor.request("pi/listTools", {})


@pytest.mark.parametrize("profile", ["vscode", "neovim"])
async def test_bash_changing_an_open_clean_file_reloads_it_then_read_and_edit_use_the_buffer(
    make_editor, tmp_path: Path, profile: str
) -> None:
    path = tmp_path / "conf.txt"
    path.write_bytes(b"mode = old\n")
    editor = await _start(make_editor, profile=profile)
    editor.open("conf.txt")
    result = await editor.call("bash", {"command": "printf 'mode = new\\nlevel = 2\\n' > conf.txt"})
    assert result["isError"] is False, editor.result_text(result)
    assert editor.reload_requests == [{"uris": [path.as_uri()]}]
    assert editor.text("conf.txt") == "mode = new\nlevel = 2\n"  # the editor reloaded it
    assert "Unsaved" not in editor.result_text(result)  # reloaded buffers are clean

    read = await editor.call("read", {"path": "conf.txt"}, "c2")
    assert editor.result_text(read) == "mode = new\nlevel = 2\n"

    edited = await editor.call("edit", _edit("conf.txt", "level = 2", "level = 3"), "c3")
    assert edited["isError"] is False, editor.result_text(edited)
    assert len(editor.apply_edits) == 1 and editor.text("conf.txt") == "mode = new\nlevel = 3\n"
    assert path.read_bytes() == b"mode = new\nlevel = 3\n"  # saved: the buffer was clean


async def test_a_file_changed_by_another_program_is_read_from_disk_and_reloaded_before_the_edit(
    make_editor, tmp_path: Path
) -> None:
    path = tmp_path / "app.py"
    path.write_bytes(b"x = 1\ny = 2\n")
    seen_at_apply: list[str] = []
    editor = await _start(make_editor, before_apply=lambda ed, params: seen_at_apply.append(ed.text("app.py")))
    editor.open("app.py")
    await _synced(editor)
    path.write_bytes(b"x = 10\ny = 2\n")  # behind the editor's back; no bash, so no reload yet

    read = await editor.call("read", {"path": "app.py"})
    assert editor.result_text(read) == "x = 10\ny = 2\n"  # disk newer: the disk
    assert editor.text("app.py") == "x = 1\ny = 2\n" and editor.reload_requests == []

    edited = await editor.call("edit", _edit("app.py", "y = 2", "y = 20"), "c2")
    assert edited["isError"] is False, editor.result_text(edited)
    assert editor.reload_requests == [{"uris": [path.as_uri()]}]
    assert seen_at_apply == ["x = 10\ny = 2\n"]  # reloaded before the edit was sent
    assert _text_edits(editor) == [
        {"range": {"start": {"line": 1, "character": 5}, "end": {"line": 1, "character": 5}}, "newText": "0"}
    ]
    assert editor.text("app.py") == "x = 10\ny = 20\n" and path.read_bytes() == b"x = 10\ny = 20\n"


async def test_without_reload_support_an_outdated_buffer_is_edited_on_disk_and_the_result_says_so(
    make_editor, tmp_path: Path
) -> None:
    path = tmp_path / "app.py"
    path.write_bytes(b"x = 1\n")
    editor = await _start(make_editor, experimental_pi=NO_RELOAD)
    editor.open("app.py")
    await _synced(editor)
    path.write_bytes(b"x = 10\n")
    edited = await editor.call("edit", _edit("app.py", "x = 10", "x = 11"))
    assert edited["isError"] is False, editor.result_text(edited)
    assert "Edited on disk" in editor.result_text(edited) and "cannot reload" in editor.result_text(edited)
    assert editor.apply_edits == [] and editor.reload_requests == []
    assert path.read_bytes() == b"x = 11\n" and editor.text("app.py") == "x = 1\n"


async def test_a_dirty_buffer_whose_file_changed_is_a_conflict_and_nothing_is_written(
    make_editor, tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"one\ntwo\n")
    editor = await _start(make_editor)
    editor.open("notes.txt")
    editor.type("notes.txt", 0, 0, "USER ")
    bash = await editor.call("bash", {"command": "printf 'one\\nTWO\\n' > notes.txt"})
    assert editor.reload_requests == []  # a modified buffer is never reloaded
    assert "notes.txt" in editor.result_text(bash)  # the unsaved-files notice

    read = await editor.call("read", {"path": "notes.txt"}, "c2")
    assert editor.result_text(read).startswith("USER one\ntwo\n")  # the buffer, with the notice
    for call_id, name, args in [
        ("c3", "edit", _edit("notes.txt", "two", "2")),
        ("c4", "write", {"path": "notes.txt", "content": "replaced\n"}),
    ]:
        result = await editor.call(name, args, call_id)
        assert result["isError"] is True and editor.result_text(result).startswith("Conflict:"), name
    assert editor.apply_edits == []
    assert path.read_bytes() == b"one\nTWO\n" and editor.text("notes.txt") == "USER one\ntwo\n"


async def test_write_to_an_open_clean_file_goes_through_the_editor_with_minimal_edits_and_is_saved(
    make_editor, tmp_path: Path
) -> None:
    path = tmp_path / "list.txt"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(200)))
    editor = await _start(make_editor)
    editor.open("list.txt")
    new = "".join(f"line {i}\n" if i != 150 else "line one-fifty\n" for i in range(200))
    result = await editor.call("write", {"path": "list.txt", "content": new})
    assert result["isError"] is False, editor.result_text(result)
    assert editor.apply_edits[-1]["label"] == "pi: write list.txt"
    assert _text_edits(editor) == [
        {"range": {"start": {"line": 150, "character": 5}, "end": {"line": 150, "character": 8}}, "newText": "one-fifty"}
    ]
    assert editor.text("list.txt") == new and path.read_text(encoding="utf-8") == new


async def test_write_to_an_open_dirty_file_is_refused_until_read_then_keeps_the_users_edit_separate(
    make_editor, tmp_path: Path
) -> None:
    path = tmp_path / "draft.md"
    path.write_bytes(b"# Title\n\nbody\n")
    editor = await _start(make_editor)
    editor.open("draft.md")
    editor.type("draft.md", 2, 7, "Title (user draft)")  # the user's unsaved work
    refused = await editor.call("write", {"path": "draft.md", "content": "# Title\n\nnew body\n"})
    assert refused["isError"] is True and "Read the file first" in editor.result_text(refused)
    assert editor.apply_edits == []

    read = await editor.call("read", {"path": "draft.md"}, "c2")
    assert "Title (user draft)" in editor.result_text(read) and "Unsaved changes" in editor.result_text(read)
    written = await editor.call("write", {"path": "draft.md", "content": "# Title (user draft)\n\nnew body\n"}, "c3")
    assert written["isError"] is False, editor.result_text(written)
    # only the body changes: undoing the agent's edit leaves the user's typing in the buffer
    assert _text_edits(editor) == [
        {"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}}, "newText": "new "}
    ]
    assert editor.text("draft.md") == "# Title (user draft)\n\nnew body\n"
    assert path.read_bytes() == b"# Title\n\nbody\n" and editor.save_requests == []  # never saved for the user


async def test_write_to_an_open_clean_file_changed_on_disk_writes_the_disk_then_reloads(
    make_editor, tmp_path: Path
) -> None:
    path = tmp_path / "gen.txt"
    path.write_bytes(b"v1\n")
    editor = await _start(make_editor)
    editor.open("gen.txt")
    await _synced(editor)
    path.write_bytes(b"v2\n")
    result = await editor.call("write", {"path": "gen.txt", "content": "v3\n"})
    assert result["isError"] is False, editor.result_text(result)
    assert editor.result_text(result) == "Successfully wrote 3 bytes to gen.txt"
    assert editor.apply_edits == [] and editor.reload_requests == [{"uris": [path.as_uri()]}]
    assert path.read_bytes() == b"v3\n" and editor.text("gen.txt") == "v3\n"


async def test_a_formatter_that_changes_the_saved_bytes_is_reported(make_editor, tmp_path: Path) -> None:
    path = tmp_path / "fmt.py"
    path.write_bytes(b"a=1\n")
    editor = await _start(make_editor, formatter=lambda text: text.replace("=", " = "))
    editor.open("fmt.py")
    result = await editor.call("edit", _edit("fmt.py", "a=1", "a=2"))
    assert result["isError"] is False, editor.result_text(result)
    assert "differ from the expected ones" in editor.result_text(result)
    assert path.read_bytes() == b"a = 2\n"


async def test_bash_grep_and_find_results_name_the_unsaved_buffers(make_editor, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "calc.py").write_bytes(b"def add(a, b):\n    return a - b\n")
    (tmp_path / "clean.py").write_bytes(b"pass\n")
    editor = await _start(make_editor)
    await editor.request("pi/setActiveTools", {"names": ["read", "bash", "edit", "write", "grep", "find"]})
    editor.open("clean.py")
    editor.open("src/calc.py")
    quiet = await editor.call("bash", {"command": "echo hi"})
    assert editor.result_text(quiet) == "hi\n"  # nothing unsaved: no notice

    editor.type("src/calc.py", 28, 29, "+")  # the user's fix, not saved
    notice = "[Unsaved changes in the editor: src/calc.py. This result comes from the files on disk"
    for call_id, name, args in [
        ("c2", "bash", {"command": "grep -c 'a - b' src/calc.py"}),
        ("c3", "grep", {"pattern": "return"}),
        ("c4", "find", {"pattern": "*.py"}),
    ]:
        result = await editor.call(name, args, call_id)
        text = editor.result_text(result)
        assert notice in text and "clean.py," not in text, (name, text)
        assert text.rstrip().endswith("buffers.]"), (name, text)  # the last thing in the result
    failing = await editor.call("bash", {"command": "exit 3"}, "c5")
    assert failing["isError"] is True and notice in editor.result_text(failing)

    editor.save("src/calc.py")
    after = await editor.call("bash", {"command": "echo saved"}, "c6")
    assert editor.result_text(after) == "saved\n"


async def test_a_mixed_line_ending_file_is_edited_on_disk_for_a_client_that_normalises_them(
    make_editor, tmp_path: Path
) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"one\r\ntwo\nthree\rfour\r\n")
    editor = await _start(make_editor)  # vscode: normalizesLineEndings, editor route for closed files
    assert editor.capabilities.workspace.workspace_edit.normalizes_line_endings  # type: ignore[union-attr]
    result = await editor.call("edit", _edit("mixed.txt", "three", "THREE"))
    assert result["isError"] is False, editor.result_text(result)
    assert editor.apply_edits == []  # the editor would have rewritten every line ending
    assert path.read_bytes() == b"one\r\ntwo\nTHREE\rfour\r\n"

    (tmp_path / "plain.txt").write_bytes(b"one\ntwo\n")  # the same client, a normal file: editor route
    plain = await editor.call("edit", _edit("plain.txt", "two", "TWO"), "c2")
    assert plain["isError"] is False and len(editor.apply_edits) == 1
    assert (tmp_path / "plain.txt").read_bytes() == b"one\nTWO\n"
