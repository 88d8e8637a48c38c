"""``rename`` through a real daemon with FakeEditor's real pylsp (issue 17): the server's rename lands
as ONE versioned, annotated WorkspaceEdit (one TextDocumentEdit per file), is saved, journaled in
pi/changes; a dirty buffer is renamed but never saved; a protected file is refused."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.demo.fake_editor import FakeEditor
from tests.e2e.language_server_support import FAST_KNOWLEDGE, require_pylsp

LIB = "def compute(x):\n    return x * 2\n"
A = "from lib import compute\n\nprint(compute(1))\n"
B = "from lib import compute\n\nVALUE = compute(2)\n"


def _project(root: Path) -> None:
    (root / "lib.py").write_text(LIB, encoding="utf-8")
    (root / "a.py").write_text(A, encoding="utf-8")
    (root / "b.py").write_text(B, encoding="utf-8")


async def _editor(make_editor, root: Path) -> FakeEditor:
    return await make_editor(root, language_server=require_pylsp(), initialization_options={"pi": FAST_KNOWLEDGE})


async def test_rename_across_three_files_is_one_versioned_workspace_edit_saved_and_journaled(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await _editor(make_editor, tmp_path)
    editor.open("lib.py", version=3)
    editor.open("a.py", version=5)  # b.py is not open in the editor
    result = await editor.call("rename", {"path": "lib.py", "line": 1, "symbol": "compute", "newName": "double"})
    assert result["isError"] is False, editor.result_text(result)
    assert editor.result_text(result) == (
        "Renamed `compute` to `double`: 5 places in 3 files.\na.py: 2\nb.py: 2\nlib.py: 1"
    )
    assert len(editor.apply_edits) == 1
    applied = editor.apply_edits[0]
    assert applied["label"] == "pi: rename compute to double"
    changes = applied["edit"]["documentChanges"]
    versions = {Path(c["textDocument"]["uri"]).name: c["textDocument"]["version"] for c in changes}
    assert versions == {"lib.py": 3, "a.py": 5, "b.py": None}
    assert applied["edit"]["changeAnnotations"] == {"pi": {"label": "Rename compute to double", "needsConfirmation": False}}
    assert all(e["annotationId"] == "pi" for c in changes for e in c["edits"])
    # minimal edits, not the server's whole-file replacement
    edits = [e for c in changes for e in c["edits"]]
    assert len(edits) == 5 and all(
        e["range"]["start"]["line"] == e["range"]["end"]["line"] and e["newText"] in "double" for e in edits
    )
    for name, text in [("lib.py", LIB), ("a.py", A), ("b.py", B)]:
        assert (tmp_path / name).read_text(encoding="utf-8") == text.replace("compute", "double")
    assert editor.text("lib.py") == LIB.replace("compute", "double")
    saved = [d["uri"] for request in editor.save_requests for d in request["documents"]]
    assert sorted(Path(u).name for u in saved) == ["a.py", "b.py", "lib.py"]
    review = await editor.request("pi/changes", {"sessionId": "external"})
    files = {Path(f["path"]).name: f for f in review["files"]}
    assert set(files) == {"lib.py", "a.py", "b.py"}
    assert all(f["toolCalls"] == [{"toolCallId": "call-1", "toolName": "rename", "turn": "0"}] for f in files.values())
    assert all(f["state"] == "modified" for f in files.values())


async def test_a_dirty_buffer_is_renamed_but_not_saved(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await _editor(make_editor, tmp_path)
    editor.open("lib.py")
    editor.open("a.py", text=A + "# typed by the user\n")  # unsaved work
    result = await editor.call("rename", {"path": "lib.py", "line": 1, "symbol": "compute", "newName": "double"})
    assert result["isError"] is False, editor.result_text(result)
    assert "[Not saved: the editor's buffer of " in editor.result_text(result)
    assert editor.text("a.py") == (A + "# typed by the user\n").replace("compute", "double")
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == A  # the disk keeps the user's saved file
    assert (tmp_path / "lib.py").read_text(encoding="utf-8") == LIB.replace("compute", "double")


async def test_rename_touching_a_protected_file_is_refused_and_changes_nothing(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor: FakeEditor = await make_editor(
        tmp_path, language_server=require_pylsp(),
        initialization_options={"pi": {**FAST_KNOWLEDGE, "protectedPaths": ["b.py"]}},
    )
    result = await editor.call("rename", {"path": "lib.py", "line": 1, "symbol": "compute", "newName": "double"})
    assert result["isError"] is True
    assert "b.py is a protected path" in editor.result_text(result)
    assert "Nothing was renamed." in editor.result_text(result)
    assert editor.apply_edits == []
    assert (tmp_path / "lib.py").read_text(encoding="utf-8") == LIB
